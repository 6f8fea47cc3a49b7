package formats

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Protobuf option keys, as written after the 'protobuf.' prefix. descriptor-file,
// proto-file and import-paths are pipesql's: Flink finds the message as a generated Java
// class on its class path, pipesql in a descriptor set or a .proto file.
const (
	ProtobufMessageClassName       = "message-class-name"
	ProtobufIgnoreParseErrors      = "ignore-parse-errors"
	ProtobufReadDefaultValues      = "read-default-values"
	ProtobufWriteNullStringLiteral = "write-null-string-literal"
	ProtobufDescriptorFile         = "descriptor-file"
	ProtobufProtoFile              = "proto-file"
	ProtobufImportPaths            = "import-paths"
)

var protobufOptions = []connectors.OptionSpec{
	{Key: ProtobufMessageClassName, Type: connectors.StringOption, Required: true, Source: true, Sink: true,
		Description: "the message: its full protobuf name (com.example.Order) or the Java class protoc generates for it"},
	{Key: ProtobufDescriptorFile, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "pipesql: a FileDescriptorSet holding the message (protoc --include_imports --descriptor_set_out=FILE)"},
	{Key: ProtobufProtoFile, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "pipesql: a .proto file holding the message, compiled when the job starts (instead of descriptor-file)"},
	{Key: ProtobufImportPaths, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "pipesql: ';'-separated directories where proto-file and its imports are found (default: proto-file's directory)"},
	{Key: ProtobufIgnoreParseErrors, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "skip records that cannot be parsed instead of failing"},
	{Key: ProtobufReadDefaultValues, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "read an absent field that has presence (optional, message, oneof) as its default value instead of NULL"},
	{Key: ProtobufWriteNullStringLiteral, Type: connectors.StringOption, Source: false, Sink: true,
		Description: "the string written for a NULL element of an ARRAY or value of a MAP of strings (protobuf has no null)"},
}

// ProtobufFormat is the 'protobuf' format: one binary protobuf message per record,
// fields matched to columns by name.
var ProtobufFormat = &connectors.FormatFactory{
	Name:       "protobuf",
	Options:    protobufOptions,
	NewDecoder: NewProtobufDecoder,
	NewEncoder: NewProtobufEncoder,
	Check:      checkProtobuf,
}

// checkProtobuf finds the message and maps the table's columns to its fields, as the
// decoder and encoder will; a file or message that cannot be found is an error of the
// option naming it.
func checkProtobuf(schema types.Schema, opts map[string]string) error {
	cfg, err := readProtobufConfig(opts, true)
	if err != nil {
		return err
	}
	files, err := cfg.source.load()
	if err != nil {
		key, value := ProtobufDescriptorFile, cfg.source.descriptorFile
		if value == "" {
			key, value = ProtobufProtoFile, cfg.source.protoFile
		}
		return &connectors.OptionError{Key: "protobuf." + key, Value: value, Err: err}
	}
	md, err := findMessage(files, cfg.message)
	if err != nil {
		return &connectors.OptionError{Key: "protobuf." + ProtobufMessageClassName, Value: cfg.message, Err: err}
	}
	fields := make([]types.Field, len(schema))
	for i, c := range schema {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	_, err = buildPBMessage(md, fields, cfg, "")
	return err
}

// protobufConfig is the protobuf format's options, read and checked once.
type protobufConfig struct {
	message      string
	source       protoSource
	ignoreErrors bool
	readDefaults bool
	nullString   string
	// missingAsNull reads a column the message has no field for as NULL: a registry
	// schema older than the column (protobuf-confluent) rather than a mistake.
	missingAsNull bool
}

func readProtobufConfig(opts map[string]string, needMessage bool) (protobufConfig, error) {
	o := connectors.NewOptions("", opts, protobufOptions)
	var c protobufConfig
	var err error
	if c.ignoreErrors, err = o.Bool(ProtobufIgnoreParseErrors); err != nil {
		return c, err
	}
	if c.readDefaults, err = o.Bool(ProtobufReadDefaultValues); err != nil {
		return c, err
	}
	c.nullString = o.String(ProtobufWriteNullStringLiteral)
	if !needMessage {
		return c, nil
	}
	c.message = strings.TrimSpace(o.String(ProtobufMessageClassName))
	c.source.descriptorFile = strings.TrimSpace(o.String(ProtobufDescriptorFile))
	c.source.protoFile = strings.TrimSpace(o.String(ProtobufProtoFile))
	for _, p := range strings.Split(o.String(ProtobufImportPaths), ";") {
		if p = strings.TrimSpace(p); p != "" {
			c.source.importPaths = append(c.source.importPaths, p)
		}
	}
	switch {
	case c.message == "":
		return c, &connectors.OptionError{Key: "protobuf." + ProtobufMessageClassName,
			Err: fmt.Errorf("%w: the message is required (its full name, such as com.example.Order)", connectors.ErrInvalidOption)}
	case c.source.descriptorFile != "" && c.source.protoFile != "":
		return c, &connectors.OptionError{Key: "protobuf." + ProtobufProtoFile, Value: c.source.protoFile,
			Err: fmt.Errorf("%w: set either 'protobuf.descriptor-file' or 'protobuf.proto-file', not both", connectors.ErrInvalidOption)}
	case c.source.descriptorFile == "" && c.source.protoFile == "":
		return c, &connectors.OptionError{Key: "protobuf." + ProtobufDescriptorFile,
			Err: fmt.Errorf("%w: pipesql has no Java class path: set 'protobuf.descriptor-file' (protoc --include_imports --descriptor_set_out) or 'protobuf.proto-file'", connectors.ErrInvalidOption)}
	case len(c.source.importPaths) > 0 && c.source.protoFile == "":
		return c, &connectors.OptionError{Key: "protobuf." + ProtobufImportPaths, Value: o.String(ProtobufImportPaths),
			Err: fmt.Errorf("%w: import paths are for 'protobuf.proto-file'", connectors.ErrInvalidOption)}
	}
	return c, nil
}

// message loads the configured message's descriptor.
func (c protobufConfig) messageDescriptor() (protoreflect.MessageDescriptor, error) {
	files, err := c.source.load()
	if err != nil {
		return nil, err
	}
	return findMessage(files, c.message)
}

// NewProtobufDecoder returns a decoder filling cols from binary protobuf messages of the
// configured type. Only the named columns are converted; other fields are skipped on the
// wire without being decoded.
func NewProtobufDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	cfg, err := readProtobufConfig(opts, true)
	if err != nil {
		return nil, err
	}
	md, err := cfg.messageDescriptor()
	if err != nil {
		return nil, err
	}
	return newProtobufDecoder(md, cols, cfg)
}

func newProtobufDecoder(md protoreflect.MessageDescriptor, cols []connectors.ProducedColumn, cfg protobufConfig) (*protobufDecoder, error) {
	fields := make([]types.Field, 0, len(cols))
	slots := make([]int, 0, len(cols))
	for i, c := range cols {
		if c.Type.Kind == types.Null {
			continue
		}
		fields = append(fields, types.Field{Name: c.Name, Type: c.Type})
		slots = append(slots, i)
	}
	m, err := buildPBMessage(md, fields, cfg, "")
	if err != nil {
		return nil, err
	}
	for i := range m.fields {
		m.fields[i].slot = slots[m.fields[i].slot]
	}
	return &protobufDecoder{cfg: cfg, msg: m, width: len(cols), state: newPBState(m)}, nil
}

// pbField decodes one field of a message into one slot of its row.
type pbField struct {
	fd       protoreflect.FieldDescriptor
	path     string // for errors: "items", "items.price"
	slot     int
	kind     protoreflect.Kind
	col      types.Type // the column type (the element type for repeated fields)
	presence bool       // absent is NULL (unless read-default-values)
	oneof    int        // index of the field's oneof among the message's, -1 when none
	list     bool
	isMap    bool
	def      types.Value // the value read when the field is absent and not NULL
	sub      *pbMessage  // a message field (a map's entry for maps)
	ts       bool        // google.protobuf.Timestamp read as TIMESTAMP(_LTZ)
}

// pbMessage decodes one message type into the fields of a ROW (or the columns).
type pbMessage struct {
	name   protoreflect.FullName
	fields []pbField
	byNum  map[protowire.Number]int
	dense  []int // byNum as a slice for small field numbers: -1 where no column
	width  int
	oneofs int
}

const timestampMessage = "google.protobuf.Timestamp"

// buildPBMessage maps the fields (columns or a ROW's fields) to md's fields by name and
// checks each type against Flink's protobuf type mapping.
func buildPBMessage(md protoreflect.MessageDescriptor, fields []types.Field, cfg protobufConfig, path string) (*pbMessage, error) {
	m := &pbMessage{name: md.FullName(), byNum: map[protowire.Number]int{}, width: len(fields)}
	oneofIdx := map[protoreflect.FullName]int{}
	for i, f := range fields {
		fd := md.Fields().ByName(protoreflect.Name(f.Name))
		p := joinName(path, f.Name)
		if fd == nil && cfg.missingAsNull {
			continue
		}
		if fd == nil {
			return nil, fmt.Errorf("%w: column %s: message %s has no field '%s'%s", ErrUnsupportedType, p, md.FullName(), f.Name, closestField(md, f.Name))
		}
		pf := pbField{fd: fd, path: p, slot: i, kind: fd.Kind(), oneof: -1}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			idx, ok := oneofIdx[od.FullName()]
			if !ok {
				idx = len(oneofIdx)
				oneofIdx[od.FullName()] = idx
			}
			pf.oneof = idx
		}
		t := f.Type.WithoutTimeAttr()
		switch {
		case fd.IsMap():
			if t.Kind != types.Map {
				return nil, pbTypeError(p, fd, t, "MAP")
			}
			entry := fd.Message()
			sub, err := buildPBMessage(entry, []types.Field{{Name: "key", Type: *t.Key}, {Name: "value", Type: *t.Elem}}, cfg, p)
			if err != nil {
				return nil, err
			}
			pf.isMap, pf.sub, pf.col = true, sub, t
		case fd.IsList():
			if t.Kind != types.Array {
				return nil, pbTypeError(p, fd, t, "ARRAY")
			}
			pf.list, pf.col = true, *t.Elem
			if err := pf.setElem(cfg); err != nil {
				return nil, err
			}
		default:
			pf.col = t
			pf.presence = fd.HasPresence()
			if err := pf.setElem(cfg); err != nil {
				return nil, err
			}
			if !pf.presence || cfg.readDefaults {
				pf.def = pbDefault(&pf)
			}
		}
		m.byNum[fd.Number()] = len(m.fields)
		m.fields = append(m.fields, pf)
	}
	m.oneofs = len(oneofIdx)
	maxNum := protowire.Number(0)
	for n := range m.byNum {
		maxNum = max(maxNum, n)
	}
	if maxNum < 512 {
		m.dense = make([]int, maxNum+1)
		for i := range m.dense {
			m.dense[i] = -1
		}
		for n, i := range m.byNum {
			m.dense[n] = i
		}
	}
	return m, nil
}

// setElem checks the type of a single value of the field (an element for repeated
// fields) and builds the message decoder when it is one.
func (pf *pbField) setElem(cfg protobufConfig) error {
	t, fd := pf.col, pf.fd
	ok := false
	switch fd.Kind() {
	case protoreflect.BoolKind:
		ok = t.Kind == types.Boolean
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		ok = t.Kind == types.Int || t.Kind == types.BigInt
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		ok = t.Kind == types.Int || t.Kind == types.BigInt
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		ok = t.Kind == types.BigInt
	case protoreflect.FloatKind:
		ok = t.Kind == types.Float
	case protoreflect.DoubleKind:
		ok = t.Kind == types.Double
	case protoreflect.StringKind:
		ok = t.IsString()
	case protoreflect.BytesKind:
		ok = t.Kind == types.Bytes
	case protoreflect.EnumKind:
		ok = t.IsString() || t.Kind == types.Int || t.Kind == types.BigInt
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if fd.Message().FullName() == timestampMessage && t.IsTimestamp() {
			pf.ts = true
			return nil
		}
		if t.Kind != types.Struct {
			return pbTypeError(pf.path, fd, t, "ROW")
		}
		sub, err := buildPBMessage(fd.Message(), t.Fields, cfg, pf.path)
		if err != nil {
			return err
		}
		pf.sub = sub
		return nil
	}
	if !ok {
		return pbTypeError(pf.path, fd, t, pbSQLType(fd))
	}
	return nil
}

func pbSQLType(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "BOOLEAN"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "INT"
	case protoreflect.FloatKind:
		return "FLOAT"
	case protoreflect.DoubleKind:
		return "DOUBLE"
	case protoreflect.StringKind:
		return "STRING"
	case protoreflect.BytesKind:
		return "BYTES"
	case protoreflect.EnumKind:
		return "STRING (the name) or INT (the number)"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "ROW"
	}
	return "BIGINT"
}

func pbTypeError(path string, fd protoreflect.FieldDescriptor, t types.Type, want string) error {
	card := ""
	if fd.IsList() {
		card = "repeated "
	}
	kind := fd.Kind().String()
	switch {
	case fd.IsMap():
		kind = "map"
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.EnumKind:
		kind = string(fd.Message().FullName())
		if fd.Kind() == protoreflect.EnumKind {
			kind = "enum " + string(fd.Enum().FullName())
		}
	}
	return fmt.Errorf("%w: column %s: protobuf field %s is %s%s, read as %s, not %s", ErrUnsupportedType, path, fd.Name(), card, kind, want, t)
}

func closestField(md protoreflect.MessageDescriptor, name string) string {
	var names []string
	for i := 0; i < md.Fields().Len(); i++ {
		names = append(names, string(md.Fields().Get(i).Name()))
	}
	if c := config.Closest(name, names, config.SuggestionDistance(name)); c != "" {
		return ": did you mean '" + c + "'?"
	}
	if len(names) <= 12 {
		return " (fields: " + strings.Join(names, ", ") + ")"
	}
	return ""
}

// pbDefault is the value of an absent singular field: its declared default (proto2) or
// zero value; for a message, a ROW of its fields' defaults, as Java's default instance
// reads.
func pbDefault(pf *pbField) types.Value {
	fd, t := pf.fd, pf.col
	if pf.ts {
		return pbTimestampValue(t, 0, 0)
	}
	if pf.sub != nil {
		out := make([]types.Value, pf.sub.width)
		for i := range pf.sub.fields {
			f := &pf.sub.fields[i]
			switch {
			case f.list:
				out[f.slot] = types.ArrayValue([]types.Value{})
			case f.isMap:
				out[f.slot] = types.MapValue([]types.MapEntry{})
			default:
				out[f.slot] = pbDefault(f)
			}
		}
		return types.RowValue(out)
	}
	d := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return types.BoolValue(d.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return types.IntValue(t.Kind, d.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return pbUint(t, d.Uint(), fd.Kind())
	case protoreflect.FloatKind:
		return types.FloatValue(d.Float())
	case protoreflect.DoubleKind:
		return types.DoubleValue(d.Float())
	case protoreflect.StringKind:
		return types.StringValue(d.String())
	case protoreflect.BytesKind:
		return types.BytesValue(append([]byte{}, d.Bytes()...))
	case protoreflect.EnumKind:
		return pbEnumValue(fd, t, int32(d.Enum()))
	}
	return types.NullValue
}

func pbUint(t types.Type, v uint64, k protoreflect.Kind) types.Value {
	if k == protoreflect.Uint32Kind || k == protoreflect.Fixed32Kind {
		v = uint64(uint32(v))
		if t.Kind == types.Int {
			return types.IntValue(types.Int, int64(int32(uint32(v)))) // Java's int, as Flink reads it
		}
	}
	return types.IntValue(t.Kind, int64(v))
}

func pbEnumValue(fd protoreflect.FieldDescriptor, t types.Type, n int32) types.Value {
	if !t.IsString() {
		return types.IntValue(t.Kind, int64(n))
	}
	if ev := fd.Enum().Values().ByNumber(protoreflect.EnumNumber(n)); ev != nil {
		return types.StringValue(string(ev.Name()))
	}
	return types.StringValue(strconv.Itoa(int(n))) // a value newer than the descriptor
}

func pbTimestampValue(t types.Type, secs, nanos int64) types.Value {
	micros := secs*1_000_000 + nanos/1000
	if t.Kind == types.TimestampLTZ {
		return types.TimestampLTZValue(micros)
	}
	return types.TimestampValue(micros)
}

// pbState is the decoding state of one message: singular values as they arrive (the
// last one wins), repeated ones appended, nested messages merged, as protobuf parsers do.
type pbState struct {
	vals  []types.Value
	seen  []bool
	lists [][]types.Value
	maps  [][]types.MapEntry
	subs  []*pbState
}

func newPBState(m *pbMessage) *pbState {
	n := len(m.fields)
	return &pbState{vals: make([]types.Value, n), seen: make([]bool, n), lists: make([][]types.Value, n),
		maps: make([][]types.MapEntry, n), subs: make([]*pbState, n)}
}

func (st *pbState) reset() {
	clear(st.vals)
	clear(st.seen)
	clear(st.lists)
	clear(st.maps)
	for _, s := range st.subs {
		if s != nil {
			s.reset()
		}
	}
}

type protobufDecoder struct {
	cfg   protobufConfig
	msg   *pbMessage
	width int
	state *pbState
}

// pbWireError is a record that does not parse as the message: its field and what is wrong.
type pbWireError struct {
	path string
	err  error
}

func (e *pbWireError) Error() string { return e.err.Error() }

func (d *protobufDecoder) fail(data []byte, err error) error {
	field := ""
	var we *pbWireError
	if errors.As(err, &we) {
		field, err = we.path, we.err
	}
	return &DecodeError{Field: field, Err: err, Snippet: binarySnippet(data), Skipped: d.cfg.ignoreErrors}
}

// Decode fills dst from one binary protobuf message.
func (d *protobufDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != d.width {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), d.width)
	}
	return d.decodeInto(data, data, dst)
}

// decodeInto decodes msg (all of record, or its part after a wire-format header).
func (d *protobufDecoder) decodeInto(record, msg []byte, dst types.Row) error {
	st := d.state
	st.reset()
	if err := d.msg.decode(msg, st, d.cfg); err != nil {
		return d.fail(record, err)
	}
	for i := range dst {
		dst[i] = types.NullValue
	}
	d.msg.finish(st, dst)
	return nil
}

// finish writes the decoded fields of st into out.
func (m *pbMessage) finish(st *pbState, out []types.Value) {
	for i := range m.fields {
		f := &m.fields[i]
		switch {
		case f.list:
			l := st.lists[i]
			if l == nil {
				l = []types.Value{}
			}
			out[f.slot] = types.ArrayValue(l)
		case f.isMap:
			e := st.maps[i]
			if e == nil {
				e = []types.MapEntry{}
			}
			out[f.slot] = types.MapValue(e)
		case !st.seen[i]:
			out[f.slot] = f.def // NULL when the field has presence
		case f.sub != nil:
			row := make([]types.Value, f.sub.width)
			f.sub.finish(st.subs[i], row)
			out[f.slot] = types.RowValue(row)
		default:
			out[f.slot] = st.vals[i]
		}
	}
}

func wireName(t protowire.Type) string {
	switch t {
	case protowire.VarintType:
		return "varint"
	case protowire.Fixed32Type:
		return "fixed32"
	case protowire.Fixed64Type:
		return "fixed64"
	case protowire.BytesType:
		return "length-delimited"
	case protowire.StartGroupType:
		return "start-group"
	case protowire.EndGroupType:
		return "end-group"
	}
	return "wire type " + strconv.Itoa(int(t))
}

func wantWire(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// field returns the index of the field numbered num, -1 when no column wants it.
func (m *pbMessage) field(num protowire.Number) int {
	if m.dense != nil {
		if num >= 0 && int(num) < len(m.dense) {
			return m.dense[num]
		}
		return -1
	}
	if i, ok := m.byNum[num]; ok {
		return i
	}
	return -1
}

// decode reads the fields of one message from b into st. Fields without a column are
// skipped unread.
func (m *pbMessage) decode(b []byte, st *pbState, cfg protobufConfig) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return &pbWireError{err: fmt.Errorf("not a %s message: %v", m.name, protowire.ParseError(n))}
		}
		b = b[n:]
		i := m.field(num)
		if i < 0 {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return &pbWireError{err: fmt.Errorf("not a %s message: field number %d: %v", m.name, num, protowire.ParseError(n))}
			}
			b = b[n:]
			continue
		}
		f := &m.fields[i]
		n, err := m.decodeField(f, i, typ, b, st, cfg)
		if err != nil {
			var we *pbWireError
			if errors.As(err, &we) {
				return err
			}
			return &pbWireError{path: f.path, err: err}
		}
		b = b[n:]
	}
	return nil
}

func (m *pbMessage) decodeField(f *pbField, i int, typ protowire.Type, b []byte, st *pbState, cfg protobufConfig) (int, error) {
	want := wantWire(f.kind)
	switch {
	case f.isMap:
		if typ != protowire.BytesType {
			return 0, m.wrongWire(f, typ, protowire.BytesType)
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, m.truncated(f, n)
		}
		es := newPBState(f.sub)
		if err := f.sub.decode(v, es, cfg); err != nil {
			return 0, err
		}
		kv := make([]types.Value, 2)
		f.sub.finish(es, kv)
		st.maps[i] = append(st.maps[i], types.MapEntry{Key: kv[0], Value: kv[1]})
		return n, nil
	case f.list && typ == protowire.BytesType && want != protowire.BytesType:
		// a packed run of scalars
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, m.truncated(f, n)
		}
		for len(v) > 0 {
			val, k, err := m.scalar(f, want, v)
			if err != nil {
				return 0, err
			}
			st.lists[i] = append(st.lists[i], val)
			v = v[k:]
		}
		return n, nil
	}
	if typ != want {
		return 0, m.wrongWire(f, typ, want)
	}
	if f.sub != nil || f.ts {
		var v []byte
		var n int
		if typ == protowire.StartGroupType {
			v, n = protowire.ConsumeGroup(f.fd.Number(), b) // v: the body, without the end tag
		} else {
			v, n = protowire.ConsumeBytes(b)
		}
		if n < 0 {
			return 0, m.truncated(f, n)
		}
		if f.ts {
			val, err := decodeTimestamp(f, v)
			if err != nil {
				return 0, &pbWireError{path: f.path, err: err}
			}
			if f.list {
				st.lists[i] = append(st.lists[i], val)
			} else {
				m.store(f, i, st, val)
			}
			return n, nil
		}
		if f.list {
			es := newPBState(f.sub)
			if err := f.sub.decode(v, es, cfg); err != nil {
				return 0, err
			}
			row := make([]types.Value, f.sub.width)
			f.sub.finish(es, row)
			st.lists[i] = append(st.lists[i], types.RowValue(row))
			return n, nil
		}
		if st.subs[i] == nil {
			st.subs[i] = newPBState(f.sub)
		}
		if !st.seen[i] {
			st.subs[i].reset()
		}
		if err := f.sub.decode(v, st.subs[i], cfg); err != nil {
			return 0, err
		}
		m.markSeen(f, i, st)
		return n, nil
	}
	val, n, err := m.scalar(f, typ, b)
	if err != nil {
		return 0, err
	}
	if f.list {
		st.lists[i] = append(st.lists[i], val)
	} else {
		m.store(f, i, st, val)
	}
	return n, nil
}

// markSeen records that field i arrived, clearing the other members of its oneof: the
// last member on the wire is the one set.
func (m *pbMessage) markSeen(f *pbField, i int, st *pbState) {
	if f.oneof >= 0 {
		for j := range m.fields {
			if j != i && m.fields[j].oneof == f.oneof {
				st.seen[j] = false
			}
		}
	}
	st.seen[i] = true
}

func (m *pbMessage) store(f *pbField, i int, st *pbState, v types.Value) {
	st.vals[i] = v
	m.markSeen(f, i, st)
}

func (m *pbMessage) wrongWire(f *pbField, got, want protowire.Type) error {
	return &pbWireError{path: f.path, err: fmt.Errorf("protobuf field %d (%s %s) arrived as %s, not %s: the record is not a %s message",
		f.fd.Number(), f.fd.Kind(), f.fd.Name(), wireName(got), wireName(want), m.name)}
}

func (m *pbMessage) truncated(f *pbField, n int) error {
	return &pbWireError{path: f.path, err: fmt.Errorf("protobuf field %d: %v: the record is not a %s message", f.fd.Number(), protowire.ParseError(n), m.name)}
}

// scalar reads one non-message value of field f of wire type typ from b.
func (m *pbMessage) scalar(f *pbField, typ protowire.Type, b []byte) (types.Value, int, error) {
	t := f.col
	switch typ {
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return types.Value{}, 0, m.truncated(f, n)
		}
		switch f.kind {
		case protoreflect.BoolKind:
			return types.BoolValue(v != 0), n, nil
		case protoreflect.Int32Kind:
			return types.IntValue(t.Kind, int64(int32(v))), n, nil
		case protoreflect.Sint32Kind:
			return types.IntValue(t.Kind, int64(int32(protowire.DecodeZigZag(v&math.MaxUint32)))), n, nil
		case protoreflect.Uint32Kind:
			return pbUint(t, v, f.kind), n, nil
		case protoreflect.Int64Kind, protoreflect.Uint64Kind:
			return types.IntValue(t.Kind, int64(v)), n, nil
		case protoreflect.Sint64Kind:
			return types.IntValue(t.Kind, protowire.DecodeZigZag(v)), n, nil
		case protoreflect.EnumKind:
			return pbEnumValue(f.fd, t, int32(v)), n, nil
		}
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(b)
		if n < 0 {
			return types.Value{}, 0, m.truncated(f, n)
		}
		switch f.kind {
		case protoreflect.FloatKind:
			return types.FloatValue(float64(math.Float32frombits(v))), n, nil
		case protoreflect.Sfixed32Kind:
			return types.IntValue(t.Kind, int64(int32(v))), n, nil
		}
		return pbUint(t, uint64(v), f.kind), n, nil
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return types.Value{}, 0, m.truncated(f, n)
		}
		if f.kind == protoreflect.DoubleKind {
			return types.DoubleValue(math.Float64frombits(v)), n, nil
		}
		return types.IntValue(t.Kind, int64(v)), n, nil
	case protowire.BytesType:
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return types.Value{}, 0, m.truncated(f, n)
		}
		if f.kind == protoreflect.BytesKind {
			return types.BytesValue(append([]byte(nil), v...)), n, nil
		}
		if f.fd.Syntax() == protoreflect.Proto3 && !utf8.Valid(v) {
			return types.Value{}, 0, &pbWireError{path: f.path, err: fmt.Errorf("protobuf field %d (string %s) is not valid UTF-8: the record is not a %s message", f.fd.Number(), f.fd.Name(), m.name)}
		}
		return types.StringValue(string(v)), n, nil
	}
	return types.Value{}, 0, m.wrongWire(f, typ, wantWire(f.kind))
}

// decodeTimestamp reads a google.protobuf.Timestamp (seconds = 1, nanos = 2).
func decodeTimestamp(f *pbField, b []byte) (types.Value, error) {
	var secs, nanos int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return types.Value{}, fmt.Errorf("google.protobuf.Timestamp: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == 1 || num == 2) {
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return types.Value{}, fmt.Errorf("google.protobuf.Timestamp: %v", protowire.ParseError(k))
			}
			if num == 1 {
				secs = int64(v)
			} else {
				nanos = int64(int32(v))
			}
			b = b[k:]
			continue
		}
		k := protowire.ConsumeFieldValue(num, typ, b)
		if k < 0 {
			return types.Value{}, fmt.Errorf("google.protobuf.Timestamp: %v", protowire.ParseError(k))
		}
		b = b[k:]
	}
	return pbTimestampValue(f.col, secs, nanos), nil
}
