package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// avro-confluent option keys, as written after the 'avro-confluent.' prefix.
const (
	AvroConfluentURL                     = "url"
	AvroConfluentSubject                 = "subject"
	AvroConfluentURLDeprecated           = "schema-registry.url"     // Flink's fallback key of url
	AvroConfluentSubjectDeprecated       = "schema-registry.subject" // Flink's fallback key of subject
	AvroConfluentSchema                  = "schema"
	AvroConfluentBasicAuthSource         = "basic-auth.credentials-source"
	AvroConfluentBasicAuthUserInfo       = "basic-auth.user-info"
	AvroConfluentBearerAuthSource        = "bearer-auth.credentials-source"
	AvroConfluentBearerAuthToken         = "bearer-auth.token"
	AvroConfluentKeystoreLocation        = "ssl.keystore.location"
	AvroConfluentKeystorePassword        = "ssl.keystore.password"
	AvroConfluentTruststoreLocation      = "ssl.truststore.location"
	AvroConfluentTruststorePassword      = "ssl.truststore.password"
	avroConfluentPropertiesPrefix        = "properties."
	avroConfluentWireHeader              = 5 // magic byte 0, then the schema id as a big-endian int32
	avroConfluentMagic              byte = 0
)

// avroConfluentOptions are Flink's avro-confluent options (also those of
// debezium-avro-confluent, which shares the registry settings).
var avroConfluentOptions = avroWithProperties([]connectors.OptionSpec{
	// url is required, but may be written under its fallback key, so the kafka connector
	// checks that one of them is set (kafka.Validate) rather than the planner.
	{Key: AvroConfluentURL, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "the URL of the Confluent Schema Registry (several, comma-separated, are tried in turn); required"},
	{Key: AvroConfluentURLDeprecated, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "Flink's deprecated name of url"},
	{Key: AvroConfluentSubjectDeprecated, Type: connectors.StringOption, Sink: true,
		Description: "Flink's deprecated name of subject"},
	{Key: AvroConfluentSubject, Type: connectors.StringOption, Sink: true,
		Description: "the subject the written schema is registered under; kafka's default is '<topic>-value' or '<topic>-key'"},
	{Key: AvroConfluentSchema, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "the Avro schema to write (and check the table against) instead of the one derived from the table"},
	{Key: AvroConfluentBasicAuthSource, Type: connectors.EnumOption, Enum: []string{"USER_INFO", "URL"}, Source: true, Sink: true,
		Description: "where basic auth credentials come from: USER_INFO (basic-auth.user-info) or URL (user:password@ in the url)"},
	{Key: AvroConfluentBasicAuthUserInfo, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "basic auth credentials as 'user:password'"},
	{Key: AvroConfluentBearerAuthSource, Type: connectors.EnumOption, Enum: []string{"STATIC_TOKEN"}, Source: true, Sink: true,
		Description: "where the bearer token comes from: STATIC_TOKEN (bearer-auth.token)"},
	{Key: AvroConfluentBearerAuthToken, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "the bearer token sent as 'Authorization: Bearer <token>'"},
	{Key: AvroConfluentKeystoreLocation, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "a PEM file with the client certificate and its unencrypted key, for TLS client authentication"},
	{Key: AvroConfluentKeystorePassword, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "not supported: keystores are PEM files with an unencrypted key"},
	{Key: AvroConfluentTruststoreLocation, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "a PEM file of the certificate authorities that sign the registry's certificate"},
	{Key: AvroConfluentTruststorePassword, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "not supported: truststores are PEM files, which have no password"},
})

// avroWithProperties adds properties.*: the registry client properties pipesql maps,
// each a key of its own so that a misspelt one fails at CREATE TABLE with the closest
// valid key.
func avroWithProperties(specs []connectors.OptionSpec) []connectors.OptionSpec {
	for _, p := range avroConfluentProperties {
		specs = append(specs, connectors.OptionSpec{Key: avroConfluentPropertiesPrefix + p,
			Type: connectors.StringOption, Source: true, Sink: true, Description: "the registry client's " + p})
	}
	return specs
}

// avroConfluentProperties are the registry client properties 'properties.*' may set
// (the Java client's names).
var avroConfluentProperties = []string{
	"basic.auth.credentials.source", "basic.auth.user.info",
	"bearer.auth.credentials.source", "bearer.auth.token",
	"schema.registry.ssl.keystore.location", "schema.registry.ssl.truststore.location",
}

// AvroConfluentFormat is Flink's 'avro-confluent' format: Avro records in the Confluent
// Schema Registry's wire format (a zero magic byte, the writer schema's id as a
// big-endian int32, the binary record), read with the schema the id names (fetched
// once per id and cached) and written with the schema derived from the table (or
// avro-confluent.schema), registered under the subject when the first record is
// written.
var AvroConfluentFormat = &connectors.FormatFactory{
	Name:       "avro-confluent",
	Options:    avroConfluentOptions,
	NewDecoder: NewAvroConfluentDecoder,
	NewEncoder: NewAvroConfluentEncoder,
}

// avroWriterSchema is a schema fetched from the registry, compiled for a decoder's columns.
type avroWriterSchema struct {
	rec *avroRecordDec
	err error // the id names no usable schema: every record with it is bad
}

type avroConfluentDecoder struct {
	cfg     registryConfig
	client  schemaregistry.Client
	reader  []types.Field
	schemas map[uint32]*avroWriterSchema
	r       avroReader
	// compile compiles a writer schema for the reader (avro-confluent: the record;
	// debezium-avro-confluent: its envelope).
	compile func(w avro.Schema) (*avroRecordDec, error)
}

// NewAvroConfluentDecoder returns a decoder of Confluent-framed Avro records.
func NewAvroConfluentDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	cfg, err := readRegistryConfig(opts, "avro-confluent")
	if err != nil {
		return nil, err
	}
	reader, _, _ := avroColumns(cols)
	if cfg.schema != "" {
		// The explicit schema must fit the table, as Flink checks.
		w, err := parseAvroSchema(cfg.schema, nil)
		if err != nil {
			return nil, &connectors.OptionError{Key: "avro-confluent." + AvroConfluentSchema, Value: cfg.schema, Err: fmt.Errorf("%w: %v", connectors.ErrInvalidOption, err)}
		}
		if _, err := compileAvroRecord(w, reader); err != nil {
			return nil, fmt.Errorf("avro-confluent.schema does not match the table: %w", avroColumnError(err))
		}
	}
	return newAvroConfluentDecoder(cfg, reader, func(w avro.Schema) (*avroRecordDec, error) {
		return compileAvroRecord(w, reader)
	})
}

func newAvroConfluentDecoder(cfg registryConfig, reader []types.Field, compile func(avro.Schema) (*avroRecordDec, error)) (*avroConfluentDecoder, error) {
	client, err := newRegistryClient(cfg)
	if err != nil {
		return nil, err
	}
	return &avroConfluentDecoder{cfg: cfg, client: client, reader: reader,
		schemas: map[uint32]*avroWriterSchema{}, compile: compile}, nil
}

// writer returns the compiled writer schema of a record: its schema id's.
func (d *avroConfluentDecoder) writer(data []byte) (*avroRecordDec, error) {
	if len(data) < avroConfluentWireHeader {
		return nil, &DecodeError{Err: fmt.Errorf("a record of %d bytes is shorter than the 5-byte header (magic byte 0 and schema id) of the Confluent wire format", len(data)),
			Snippet: binarySnippet(data)}
	}
	if data[0] != avroConfluentMagic {
		return nil, &DecodeError{Err: fmt.Errorf("unknown magic byte 0x%02x: not the Confluent Schema Registry wire format, whose records start with 0x00", data[0]),
			Snippet: binarySnippet(data)}
	}
	id := binary.BigEndian.Uint32(data[1:5])
	ws, ok := d.schemas[id]
	if !ok {
		var err error
		if ws, err = d.fetch(id); err != nil {
			return nil, err
		}
		d.schemas[id] = ws
	}
	if ws.err != nil {
		return nil, &DecodeError{Err: ws.err, Snippet: binarySnippet(data)}
	}
	return ws.rec, nil
}

// fetch gets and compiles schema id. An id the registry does not know, or a schema that
// cannot be read as the table, is a bad record (remembered); a failed request is an
// ErrRegistryUnavailable, not remembered.
func (d *avroConfluentDecoder) fetch(id uint32) (*avroWriterSchema, error) {
	info, err := d.client.GetBySubjectAndID("", int(id))
	if err != nil {
		var re *rest.Error
		if errors.As(err, &re) && re.Code == 40403 {
			return &avroWriterSchema{err: fmt.Errorf("schema id %d is not in the schema registry at %s", id, d.cfg.url)}, nil
		}
		return nil, fmt.Errorf("%w: %s: fetching schema id %d: %v", ErrRegistryUnavailable, d.cfg.url, id, err)
	}
	if info.SchemaType != "" && !strings.EqualFold(info.SchemaType, "AVRO") {
		return &avroWriterSchema{err: fmt.Errorf("schema id %d is a %s schema, not Avro", id, info.SchemaType)}, nil
	}
	cache := &avro.SchemaCache{}
	if err := d.parseReferences(info.References, cache, 0); err != nil {
		return nil, err
	}
	w, err := parseAvroSchema(info.Schema, cache)
	if err != nil {
		return &avroWriterSchema{err: fmt.Errorf("schema id %d does not parse: %v", id, err)}, nil
	}
	rec, err := d.compile(w)
	if err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("field %q: %w", pe.path, pe.err)
		}
		return &avroWriterSchema{err: fmt.Errorf("schema id %d cannot be read as the table: %w", id, err)}, nil
	}
	return &avroWriterSchema{rec: rec}, nil
}

// parseReferences parses the schemas a schema refers to (named types registered under
// other subjects) into cache, depth first.
func (d *avroConfluentDecoder) parseReferences(refs []schemaregistry.Reference, cache *avro.SchemaCache, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%w: schema references nest more than 32 deep", ErrRegistryUnavailable)
	}
	for _, ref := range refs {
		md, err := d.client.GetSchemaMetadata(ref.Subject, ref.Version)
		if err != nil {
			return fmt.Errorf("%w: %s: fetching reference %s (subject %s version %d): %v", ErrRegistryUnavailable, d.cfg.url, ref.Name, ref.Subject, ref.Version, err)
		}
		if err := d.parseReferences(md.References, cache, depth+1); err != nil {
			return err
		}
		if _, err := parseAvroSchema(md.Schema, cache); err != nil {
			return fmt.Errorf("reference %s (subject %s version %d) does not parse: %w", ref.Name, ref.Subject, ref.Version, err)
		}
	}
	return nil
}

func (d *avroConfluentDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != len(d.reader) {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), len(d.reader))
	}
	rec, err := d.writer(data)
	if err != nil {
		return err
	}
	return avroDecodeBody(rec, &d.r, data[avroConfluentWireHeader:], data, dst, false)
}

type avroConfluentEncoder struct {
	cfg    registryConfig
	client schemaregistry.Client
	text   string // the writer schema
	rec    *avroRecordEnc
	header []byte // magic byte and id, once registered
}

// NewAvroConfluentEncoder returns an encoder that registers its schema under the
// subject (on the first record) and frames records with its id.
func NewAvroConfluentEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	cfg, err := readRegistryConfig(opts, "avro-confluent")
	if err != nil {
		return nil, err
	}
	w, text, err := avroConfluentWriterSchema(cfg, schema)
	if err != nil {
		return nil, err
	}
	rec, err := compileAvroRecordEnc(w, avroFields(schema))
	if err != nil {
		return nil, avroColumnError(err)
	}
	return newAvroConfluentEncoder(cfg, text, rec)
}

func avroConfluentWriterSchema(cfg registryConfig, schema types.Schema) (avro.Schema, string, error) {
	if cfg.schema == "" {
		return avroSchemaFor(schema, true)
	}
	w, err := parseAvroSchema(cfg.schema, nil)
	if err != nil {
		return nil, "", &connectors.OptionError{Key: "avro-confluent." + AvroConfluentSchema, Value: cfg.schema, Err: fmt.Errorf("%w: %v", connectors.ErrInvalidOption, err)}
	}
	return w, cfg.schema, nil
}

func newAvroConfluentEncoder(cfg registryConfig, text string, rec *avroRecordEnc) (*avroConfluentEncoder, error) {
	if cfg.subject == "" {
		return nil, &connectors.OptionError{Key: "avro-confluent." + AvroConfluentSubject,
			Err: fmt.Errorf("%w: writing needs the subject to register the schema under (kafka derives '<topic>-value' from a single 'topic')", connectors.ErrInvalidOption)}
	}
	client, err := newRegistryClient(cfg)
	if err != nil {
		return nil, err
	}
	return &avroConfluentEncoder{cfg: cfg, client: client, text: text, rec: rec}, nil
}

func (e *avroConfluentEncoder) register() error {
	id, err := registerSchema(e.client, e.cfg, schemaregistry.SchemaInfo{Schema: e.text})
	if err != nil {
		return err
	}
	e.header = confluentHeader(id)
	return nil
}

func (e *avroConfluentEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	if e.header == nil {
		if err := e.register(); err != nil {
			return dst, err
		}
	}
	out, err := e.rec.write(append(dst, e.header...), row)
	if err != nil {
		return dst, avroEncodeError(err)
	}
	return out, nil
}
