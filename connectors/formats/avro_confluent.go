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

type avroConfluentConfig struct {
	url     string
	subject string
	schema  string
	client  *schemaregistry.Config
}

// readAvroConfluentConfig reads the registry options of opts (keys without the
// format's prefix); format names the format in errors.
func readAvroConfluentConfig(opts map[string]string, format string) (avroConfluentConfig, error) {
	o := connectors.NewOptions("", opts, avroConfluentOptions)
	var c avroConfluentConfig
	bad := func(key, msg string, args ...any) error {
		return &connectors.OptionError{Key: format + "." + key, Value: opts[key],
			Err: fmt.Errorf("%w: "+msg, append([]any{connectors.ErrInvalidOption}, args...)...)}
	}
	c.url = strings.TrimSpace(o.String(AvroConfluentURL))
	if c.url == "" {
		c.url = strings.TrimSpace(o.String(AvroConfluentURLDeprecated))
	}
	if c.url == "" {
		return c, bad(AvroConfluentURL, "the schema registry URL is required")
	}
	c.subject = strings.TrimSpace(o.String(AvroConfluentSubjectDeprecated))
	if s := strings.TrimSpace(o.String(AvroConfluentSubject)); s != "" {
		c.subject = s
	}
	c.schema = o.String(AvroConfluentSchema)
	conf := schemaregistry.NewConfig(c.url)
	conf.MaxRetries = 2
	props := map[string]string{}
	for k, v := range opts {
		if p, ok := strings.CutPrefix(k, avroConfluentPropertiesPrefix); ok {
			supported := false
			for _, s := range avroConfluentProperties {
				supported = supported || s == p
			}
			if !supported {
				return c, bad(k, "unsupported registry client property (supported: %s)", strings.Join(avroConfluentProperties, ", "))
			}
			props[p] = v
		}
	}
	pick := func(key, prop string) string {
		if v := strings.TrimSpace(opts[key]); v != "" {
			return v
		}
		return strings.TrimSpace(props[prop])
	}
	basicSource := strings.ToUpper(pick(AvroConfluentBasicAuthSource, "basic.auth.credentials.source"))
	userInfo := pick(AvroConfluentBasicAuthUserInfo, "basic.auth.user.info")
	if userInfo != "" && basicSource == "" {
		basicSource = "USER_INFO"
	}
	switch basicSource {
	case "":
	case "USER_INFO":
		if !strings.Contains(userInfo, ":") {
			return c, bad(AvroConfluentBasicAuthUserInfo, "USER_INFO needs basic-auth.user-info as 'user:password'")
		}
		conf.BasicAuthCredentialsSource, conf.BasicAuthUserInfo = "USER_INFO", userInfo
	case "URL":
		conf.BasicAuthCredentialsSource = "URL"
	default:
		return c, bad(AvroConfluentBasicAuthSource, "unsupported credentials source %q (supported: USER_INFO, URL; SASL_INHERIT is not)", basicSource)
	}
	bearerSource := strings.ToUpper(pick(AvroConfluentBearerAuthSource, "bearer.auth.credentials.source"))
	token := pick(AvroConfluentBearerAuthToken, "bearer.auth.token")
	if token != "" && bearerSource == "" {
		bearerSource = "STATIC_TOKEN"
	}
	switch bearerSource {
	case "":
	case "STATIC_TOKEN":
		if basicSource != "" {
			return c, bad(AvroConfluentBearerAuthSource, "set basic or bearer auth, not both")
		}
		if token == "" {
			return c, bad(AvroConfluentBearerAuthToken, "STATIC_TOKEN needs bearer-auth.token")
		}
		// The Go client's own STATIC_TOKEN insists on Confluent Cloud's identity pool
		// and logical cluster; a custom provider sends just the token, as Flink does.
		conf.BearerAuthCredentialsSource = "CUSTOM"
		conf.AuthenticationHeaderProvider = bearerToken(token)
	default:
		return c, bad(AvroConfluentBearerAuthSource, "unsupported credentials source %q (supported: STATIC_TOKEN)", bearerSource)
	}
	for _, k := range []string{AvroConfluentKeystorePassword, AvroConfluentTruststorePassword} {
		if opts[k] != "" {
			return c, bad(k, "not supported: give the keystore and truststore as PEM files (an unencrypted key; a truststore has no password)")
		}
	}
	if ks := pick(AvroConfluentKeystoreLocation, "schema.registry.ssl.keystore.location"); ks != "" {
		conf.SslCertificateLocation, conf.SslKeyLocation = ks, ks
	}
	conf.SslCaLocation = pick(AvroConfluentTruststoreLocation, "schema.registry.ssl.truststore.location")
	c.client = conf
	return c, nil
}

// bearerToken is an authentication header provider of a static bearer token.
type bearerToken string

func (t bearerToken) GetAuthenticationHeader() (string, error) { return "Bearer " + string(t), nil }
func (t bearerToken) GetIdentityPoolID() (string, error)       { return "", nil }
func (t bearerToken) GetLogicalCluster() (string, error)       { return "", nil }

// avroRegistry returns a registry client for a decoder or encoder. Each has its own:
// ids are immutable in a registry, but a client shared by URL would carry one
// registry's ids over to another later served at the same address (tests' servers on
// reused ports); a decoder fetches each id once anyway.
func avroRegistry(c avroConfluentConfig) (schemaregistry.Client, error) {
	cl, err := schemaregistry.NewClient(c.client)
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %w", c.url, err)
	}
	return cl, nil
}

// avroWriterSchema is a schema fetched from the registry, compiled for a decoder's columns.
type avroWriterSchema struct {
	rec *avroRecordDec
	err error // the id names no usable schema: every record with it is bad
}

type avroConfluentDecoder struct {
	cfg     avroConfluentConfig
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
	cfg, err := readAvroConfluentConfig(opts, "avro-confluent")
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

func newAvroConfluentDecoder(cfg avroConfluentConfig, reader []types.Field, compile func(avro.Schema) (*avroRecordDec, error)) (*avroConfluentDecoder, error) {
	client, err := avroRegistry(cfg)
	if err != nil {
		return nil, err
	}
	return &avroConfluentDecoder{cfg: cfg, client: client, reader: reader,
		schemas: map[uint32]*avroWriterSchema{}, compile: compile}, nil
}

// ErrRegistryUnavailable is returned (wrapped) when the schema registry cannot be reached or
// answers an error other than "not found": the record may be fine, the job should
// fail and retry rather than count it as bad.
var ErrRegistryUnavailable = errors.New("schema registry request failed")

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
	cfg    avroConfluentConfig
	client schemaregistry.Client
	text   string // the writer schema
	rec    *avroRecordEnc
	header []byte // magic byte and id, once registered
}

// NewAvroConfluentEncoder returns an encoder that registers its schema under the
// subject (on the first record) and frames records with its id.
func NewAvroConfluentEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	cfg, err := readAvroConfluentConfig(opts, "avro-confluent")
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

func avroConfluentWriterSchema(cfg avroConfluentConfig, schema types.Schema) (avro.Schema, string, error) {
	if cfg.schema == "" {
		return avroSchemaFor(schema, true)
	}
	w, err := parseAvroSchema(cfg.schema, nil)
	if err != nil {
		return nil, "", &connectors.OptionError{Key: "avro-confluent." + AvroConfluentSchema, Value: cfg.schema, Err: fmt.Errorf("%w: %v", connectors.ErrInvalidOption, err)}
	}
	return w, cfg.schema, nil
}

func newAvroConfluentEncoder(cfg avroConfluentConfig, text string, rec *avroRecordEnc) (*avroConfluentEncoder, error) {
	if cfg.subject == "" {
		return nil, &connectors.OptionError{Key: "avro-confluent." + AvroConfluentSubject,
			Err: fmt.Errorf("%w: writing needs the subject to register the schema under (kafka derives '<topic>-value' from a single 'topic')", connectors.ErrInvalidOption)}
	}
	client, err := avroRegistry(cfg)
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

// registerSchema registers info under cfg's subject (avro-confluent's and
// protobuf-confluent's encoders) and returns its id. A schema the registry refuses
// (incompatible, invalid) is an error of the job; a failed request is an
// ErrRegistryUnavailable.
func registerSchema(cl schemaregistry.Client, cfg avroConfluentConfig, info schemaregistry.SchemaInfo) (int, error) {
	id, err := cl.Register(cfg.subject, info, false)
	if err != nil {
		var re *rest.Error
		if errors.As(err, &re) && (re.Code == 409 || re.Code == 42201) {
			return 0, fmt.Errorf("schema registry %s refused the schema for subject %s: %s (error %d)", cfg.url, cfg.subject, re.Message, re.Code)
		}
		return 0, fmt.Errorf("%w: %s: registering the schema under subject %s: %v", ErrRegistryUnavailable, cfg.url, cfg.subject, err)
	}
	return id, nil
}

// confluentHeader is the Confluent wire format's header of schema id: the magic byte,
// then the id as a big-endian int32.
func confluentHeader(id int) []byte {
	return binary.BigEndian.AppendUint32([]byte{avroConfluentMagic}, uint32(id))
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
