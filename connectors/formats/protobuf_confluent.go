package formats

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// protobufConfluentOptions are avro-confluent's registry options (url, subject, basic
// and bearer auth, ssl, properties.*), without its 'schema', and the protobuf format's
// reading and writing options; message-class-name, proto-file and import-paths
// (pipesql's) choose the schema written instead of one derived from the table.
var protobufConfluentOptions = func() []connectors.OptionSpec {
	var specs []connectors.OptionSpec
	for _, s := range avroConfluentOptions {
		if s.Key != AvroConfluentSchema {
			specs = append(specs, s)
		}
	}
	return append(specs,
		connectors.OptionSpec{Key: ProtobufIgnoreParseErrors, Type: connectors.BoolOption, Default: "false", Source: true,
			Description: "skip records that cannot be parsed (or whose schema id is unknown) instead of failing"},
		connectors.OptionSpec{Key: ProtobufReadDefaultValues, Type: connectors.BoolOption, Default: "false", Source: true,
			Description: "read an absent field that has presence as its default value instead of NULL"},
		connectors.OptionSpec{Key: ProtobufWriteNullStringLiteral, Type: connectors.StringOption, Sink: true,
			Description: "the string written for a NULL element of an ARRAY or value of a MAP of strings"},
		connectors.OptionSpec{Key: ProtobufMessageClassName, Type: connectors.StringOption, Sink: true,
			Description: "pipesql: the message written, from proto-file (default: a message Row derived from the table)"},
		connectors.OptionSpec{Key: ProtobufProtoFile, Type: connectors.StringOption, Sink: true,
			Description: "pipesql: the .proto file registered and written (importing only google/protobuf/*.proto)"},
		connectors.OptionSpec{Key: ProtobufImportPaths, Type: connectors.StringOption, Sink: true,
			Description: "pipesql: ';'-separated directories where proto-file is found"},
	)
}()

// ProtobufConfluentFormat is the 'protobuf-confluent' format: Confluent's wire format
// (magic byte 0, the schema id, the message indexes, then the message) with schemas in
// a Confluent Schema Registry, as Confluent's KafkaProtobufSerializer writes them.
var ProtobufConfluentFormat = &connectors.FormatFactory{
	Name:       "protobuf-confluent",
	Options:    protobufConfluentOptions,
	NewDecoder: NewProtobufConfluentDecoder,
	NewEncoder: NewProtobufConfluentEncoder,
	Check:      checkProtobufConfluent,
}

// checkProtobufConfluent checks the registry options and that every column has a
// protobuf type; the schemas themselves are the registry's, seen when records arrive.
func checkProtobufConfluent(schema types.Schema, opts map[string]string) error {
	if _, err := readRegistryConfig(opts, "protobuf-confluent"); err != nil {
		return err
	}
	for _, c := range schema {
		if err := checkProtoColumnType(c.Type.WithoutTimeAttr()); err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return nil
}

// parseConfluentHeader returns the schema id and the rest of a record (Confluent's wire
// format, as avro-confluent's: see confluentHeader).
func parseConfluentHeader(data []byte) (id int, rest []byte, err error) {
	if len(data) < avroConfluentWireHeader {
		return 0, nil, fmt.Errorf("record of %d bytes is too short for Confluent's wire format (magic byte and 4-byte schema id)", len(data))
	}
	if data[0] != avroConfluentMagic {
		return 0, nil, fmt.Errorf("record does not start with Confluent's magic byte 0 but 0x%02x: not written by a schema registry serializer", data[0])
	}
	return int(binary.BigEndian.Uint32(data[1:avroConfluentWireHeader])), data[avroConfluentWireHeader:], nil
}

var firstMessage = []int{0}

// parseMessageIndexes reads Confluent's message indexes (zig-zag varints: a count, then
// the index path of the message in its file; a count of 0 means the first message).
func parseMessageIndexes(b []byte) ([]int, []byte, error) {
	n, k := binary.Varint(b)
	if k <= 0 || n < 0 || n > 100 {
		return nil, nil, errors.New("bad message indexes after the schema id")
	}
	b = b[k:]
	if n == 0 {
		return firstMessage, b, nil
	}
	idx := make([]int, n)
	for i := range idx {
		v, k := binary.Varint(b)
		if k <= 0 || v < 0 {
			return nil, nil, errors.New("bad message indexes after the schema id")
		}
		idx[i], b = int(v), b[k:]
	}
	return idx, b, nil
}

func appendMessageIndexes(dst []byte, idx []int) []byte {
	if len(idx) == 1 && idx[0] == 0 {
		return append(dst, 0) // Confluent's shorthand for the first message
	}
	dst = binary.AppendVarint(dst, int64(len(idx)))
	for _, i := range idx {
		dst = binary.AppendVarint(dst, int64(i))
	}
	return dst
}

// compileRegistrySchema compiles a PROTOBUF schema of the registry, fetching the files
// it references by subject and version; google/protobuf imports are built in.
func compileRegistrySchema(cl schemaregistry.Client, info schemaregistry.SchemaInfo) (protoreflect.FileDescriptor, error) {
	const root = "pipesql-registry-schema.proto"
	sources := map[string]string{root: info.Schema}
	var fetch func(refs []schemaregistry.Reference) error
	fetch = func(refs []schemaregistry.Reference) error {
		for _, r := range refs {
			if _, done := sources[r.Name]; done {
				continue
			}
			md, err := cl.GetSchemaMetadata(r.Subject, r.Version)
			if err != nil {
				return fmt.Errorf("%w: reference %s (subject %s version %d): %v", ErrRegistryUnavailable, r.Name, r.Subject, r.Version, err)
			}
			sources[r.Name] = md.Schema
			if err := fetch(md.References); err != nil {
				return err
			}
		}
		return nil
	}
	if err := fetch(info.References); err != nil {
		return nil, err
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(path string) (io.ReadCloser, error) {
			if s, ok := sources[path]; ok {
				return io.NopCloser(strings.NewReader(s)), nil
			}
			return nil, os.ErrNotExist
		},
	})}
	files, err := c.Compile(context.Background(), root)
	if err != nil {
		return nil, fmt.Errorf("the registry's schema does not compile: %v", err)
	}
	return files[0], nil
}

// messageAt finds the message at Confluent's index path in fd.
func messageAt(fd protoreflect.FileDescriptor, idx []int) (protoreflect.MessageDescriptor, error) {
	ms := fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range idx {
		if i >= ms.Len() {
			return nil, fmt.Errorf("message indexes %v name no message of the schema", idx)
		}
		md = ms.Get(i)
		ms = md.Messages()
	}
	return md, nil
}

// messageIndexes is the index path of md in its file.
func messageIndexes(md protoreflect.MessageDescriptor) []int {
	var idx []int
	var d protoreflect.Descriptor = md
	for {
		idx = append([]int{d.Index()}, idx...)
		p := d.Parent()
		if _, top := p.(protoreflect.FileDescriptor); top || p == nil {
			return idx
		}
		d = p
	}
}

type protobufConfluentDecoder struct {
	cfg    protobufConfig
	url    string // the registry's, for messages
	cols   []connectors.ProducedColumn
	client schemaregistry.Client
	byID   map[string]*pbWriter // by schema id and message indexes
}

// pbWriter is the decoder of one writer schema and message, or why there is none: a
// schema id names one schema forever, so what is wrong with it stays wrong.
type pbWriter struct {
	dec *protobufDecoder
	err error
}

// NewProtobufConfluentDecoder returns a decoder of records in Confluent's wire format:
// each record's schema is fetched from the registry by id (once), and its message found
// by the record's message indexes. Columns match the writer's fields by name; a column
// the writer's message does not have is NULL (a field added in a later schema).
func NewProtobufConfluentDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	rc, err := readRegistryConfig(opts, "protobuf-confluent")
	if err != nil {
		return nil, err
	}
	cfg, err := readProtobufConfig(opts, false)
	if err != nil {
		return nil, err
	}
	cfg.missingAsNull = true
	for _, c := range cols {
		if c.Type.Kind != types.Null {
			if err := checkProtoColumnType(c.Type); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
		}
	}
	cl, err := newRegistryClient(rc)
	if err != nil {
		return nil, err
	}
	return &protobufConfluentDecoder{cfg: cfg, url: rc.url, cols: cols, client: cl, byID: map[string]*pbWriter{}}, nil
}

func (d *protobufConfluentDecoder) fail(data []byte, err error) error {
	return &DecodeError{Err: err, Snippet: binarySnippet(data), Skipped: d.cfg.ignoreErrors}
}

func (d *protobufConfluentDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != len(d.cols) {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), len(d.cols))
	}
	id, rest, err := parseConfluentHeader(data)
	if err != nil {
		return d.fail(data, err)
	}
	idx, msg, err := parseMessageIndexes(rest)
	if err != nil {
		return d.fail(data, err)
	}
	// The schema id and the index bytes name the decoder; the lookup does not allocate.
	key := data[1 : len(data)-len(msg)]
	w, ok := d.byID[string(key)]
	if !ok {
		dec, err := d.decoderFor(id, idx)
		if err != nil && errors.Is(err, ErrRegistryUnavailable) {
			// Not remembered, and not a bad record (ignore-parse-errors must not skip
			// records while the registry is down): the registry may answer later.
			return fmt.Errorf("schema id %d: %w", id, err)
		}
		w = &pbWriter{dec: dec, err: err}
		d.byID[string(key)] = w
	}
	if w.err != nil {
		return d.fail(data, fmt.Errorf("schema id %d: %w", id, w.err))
	}
	return w.dec.decodeInto(data, msg, dst)
}

func (d *protobufConfluentDecoder) decoderFor(id int, idx []int) (*protobufDecoder, error) {
	info, err := d.client.GetBySubjectAndID("", id)
	if err != nil {
		var re *rest.Error
		if errors.As(err, &re) && re.Code == 40403 {
			return nil, fmt.Errorf("not in the schema registry at %s", d.url)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrRegistryUnavailable, d.url, err)
	}
	if info.SchemaType != "PROTOBUF" {
		t := info.SchemaType
		if t == "" {
			t = "AVRO"
		}
		return nil, fmt.Errorf("the registry's schema is %s, not PROTOBUF", t)
	}
	fd, err := compileRegistrySchema(d.client, info)
	if err != nil {
		return nil, err
	}
	md, err := messageAt(fd, idx)
	if err != nil {
		return nil, err
	}
	dec, err := newProtobufDecoder(md, d.cols, d.cfg)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", md.FullName(), err)
	}
	return dec, nil
}

// checkProtoColumnType refuses, when the table is opened, a column type no protobuf
// field maps to.
func checkProtoColumnType(t types.Type) error {
	switch t.Kind {
	case types.Boolean, types.Int, types.BigInt, types.Float, types.Double, types.Char, types.Varchar,
		types.Bytes, types.Timestamp, types.TimestampLTZ:
		return nil
	case types.Array:
		if t.Elem.Kind == types.Array || t.Elem.Kind == types.Map {
			return fmt.Errorf("%w: protobuf has no repeated field of %s", ErrUnsupportedType, t.Elem.Kind)
		}
		return checkProtoColumnType(*t.Elem)
	case types.Map:
		switch t.Key.Kind {
		case types.Boolean, types.Int, types.BigInt, types.Char, types.Varchar:
		default:
			return fmt.Errorf("%w: a protobuf map key cannot be %s", ErrUnsupportedType, t.Key)
		}
		if t.Elem.Kind == types.Array || t.Elem.Kind == types.Map {
			return fmt.Errorf("%w: a protobuf map value cannot be %s", ErrUnsupportedType, t.Elem.Kind)
		}
		return checkProtoColumnType(*t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if err := checkProtoColumnType(f.Type); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: protobuf cannot hold %s (no protobuf type maps to it)", ErrUnsupportedType, t)
}

// deriveProtoSchema writes the proto3 schema of a table: a message Row with one field
// per column in order (numbered from 1), nullable scalars 'optional' so that NULL and
// zero differ, ROWs as nested messages, TIMESTAMP(_LTZ) as google.protobuf.Timestamp.
func deriveProtoSchema(schema types.Schema) (string, error) {
	var b strings.Builder
	var body strings.Builder
	usesTS := false
	fields := make([]types.Field, len(schema))
	for i, c := range schema {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	if err := writeProtoMessage(&body, "Row", fields, "", &usesTS); err != nil {
		return "", err
	}
	b.WriteString("syntax = \"proto3\";\n\n")
	if usesTS {
		b.WriteString("import \"google/protobuf/timestamp.proto\";\n\n")
	}
	b.WriteString(body.String())
	return b.String(), nil
}

func protoIdent(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func writeProtoMessage(b *strings.Builder, name string, fields []types.Field, indent string, usesTS *bool) error {
	fmt.Fprintf(b, "%smessage %s {\n", indent, name)
	nested := map[string]bool{}
	for i, f := range fields {
		if !protoIdent(f.Name) {
			return fmt.Errorf("%w: column %s is not a protobuf field name (letters, digits and _)", ErrUnsupportedType, f.Name)
		}
		if err := checkProtoColumnType(f.Type); err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		t := f.Type
		label := ""
		if !t.NotNull && t.Kind != types.Array && t.Kind != types.Map && t.Kind != types.Struct && !t.IsTimestamp() {
			label = "optional "
		}
		typeName := func(t types.Type, suffix string) (string, error) {
			if t.Kind == types.Struct {
				n := protoCamel(f.Name) + suffix
				for nested[n] {
					n += "_"
				}
				nested[n] = true
				if err := writeProtoMessage(b, n, t.Fields, indent+"  ", usesTS); err != nil {
					return "", err
				}
				return n, nil
			}
			if t.IsTimestamp() {
				*usesTS = true
				return "google.protobuf.Timestamp", nil
			}
			return protoScalar(t), nil
		}
		var decl string
		switch t.Kind {
		case types.Array:
			n, err := typeName(*t.Elem, "Element")
			if err != nil {
				return err
			}
			decl = "repeated " + n
		case types.Map:
			n, err := typeName(*t.Elem, "Value")
			if err != nil {
				return err
			}
			decl = "map<" + protoScalar(*t.Key) + ", " + n + ">"
		default:
			n, err := typeName(t, "Row")
			if err != nil {
				return err
			}
			decl = label + n
		}
		fmt.Fprintf(b, "%s  %s %s = %d;\n", indent, decl, f.Name, i+1)
	}
	fmt.Fprintf(b, "%s}\n", indent)
	return nil
}

func protoCamel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

func protoScalar(t types.Type) string {
	switch t.Kind {
	case types.Boolean:
		return "bool"
	case types.Int:
		return "int32"
	case types.BigInt:
		return "int64"
	case types.Float:
		return "float"
	case types.Double:
		return "double"
	case types.Bytes:
		return "bytes"
	}
	return "string"
}

type protobufConfluentEncoder struct {
	header []byte
	enc    *protobufEncoder
}

// NewProtobufConfluentEncoder returns an encoder writing Confluent's wire format. The
// schema (derived from the table, or protobuf-confluent.proto-file) is registered
// under the subject when the encoder is made (the registry answers the id of an
// identical schema already there).
func NewProtobufConfluentEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	o := connectors.NewOptions("", opts, protobufConfluentOptions)
	rc, err := readRegistryConfig(opts, "protobuf-confluent")
	if err != nil {
		return nil, err
	}
	if rc.subject == "" {
		return nil, &connectors.OptionError{Key: "protobuf-confluent." + AvroConfluentSubject,
			Err: fmt.Errorf("%w: the subject to register the schema under is required (kafka tables default it to '<topic>-value')", connectors.ErrInvalidOption)}
	}
	cfg, err := readProtobufConfig(opts, false)
	if err != nil {
		return nil, err
	}
	var text string
	var md protoreflect.MessageDescriptor
	if path := strings.TrimSpace(o.String(ProtobufProtoFile)); path != "" {
		cfg.message = strings.TrimSpace(o.String(ProtobufMessageClassName))
		cfg.source = protoSource{protoFile: path}
		for _, p := range strings.Split(o.String(ProtobufImportPaths), ";") {
			if p = strings.TrimSpace(p); p != "" {
				cfg.source.importPaths = append(cfg.source.importPaths, p)
			}
		}
		if cfg.message == "" {
			return nil, &connectors.OptionError{Key: "protobuf-confluent." + ProtobufMessageClassName,
				Err: fmt.Errorf("%w: proto-file needs the message written", connectors.ErrInvalidOption)}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProtoMessage, err)
		}
		if md, err = cfg.messageDescriptor(); err != nil {
			return nil, err
		}
		imps := md.ParentFile().Imports()
		for i := 0; i < imps.Len(); i++ {
			if p := imps.Get(i).Path(); !strings.HasPrefix(p, "google/protobuf/") {
				return nil, fmt.Errorf("%w: %s imports %s: registering imported files as schema references is not supported yet", ErrUnsupportedType, path, p)
			}
		}
		text = string(data)
	} else {
		if o.IsSet(ProtobufMessageClassName) {
			return nil, &connectors.OptionError{Key: "protobuf-confluent." + ProtobufMessageClassName, Value: o.String(ProtobufMessageClassName),
				Err: fmt.Errorf("%w: the message is taken from 'protobuf-confluent.proto-file', which is not set", connectors.ErrInvalidOption)}
		}
		if text, err = deriveProtoSchema(schema); err != nil {
			return nil, err
		}
		fd, err := compileRegistrySchema(nil, schemaregistry.SchemaInfo{Schema: text})
		if err != nil {
			return nil, err
		}
		md = fd.Messages().Get(0)
	}
	cl, err := newRegistryClient(rc)
	if err != nil {
		return nil, err
	}
	id, err := registerSchema(cl, rc, schemaregistry.SchemaInfo{Schema: text, SchemaType: "PROTOBUF"})
	if err != nil {
		return nil, err
	}
	enc, err := newProtobufEncoder(md, schema, cfg)
	if err != nil {
		return nil, err
	}
	return &protobufConfluentEncoder{header: appendMessageIndexes(confluentHeader(id), messageIndexes(md)), enc: enc}, nil
}

func (e *protobufConfluentEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	dst = append(dst, e.header...)
	return e.enc.Encode(dst, row)
}
