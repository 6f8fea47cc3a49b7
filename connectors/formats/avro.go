package formats

import (
	"errors"
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// avro option keys, as written after the 'avro.' prefix.
const (
	AvroEncoding         = "encoding"
	AvroCodec            = "codec"
	AvroTimestampMapping = "timestamp_mapping.legacy"
)

var avroOptions = []connectors.OptionSpec{
	{Key: AvroEncoding, Type: connectors.EnumOption, Default: "binary", Enum: []string{"binary"}, Source: true, Sink: true,
		Description: "binary (Avro's JSON encoding, Flink's 'json', is not supported yet)"},
	{Key: AvroCodec, Type: connectors.EnumOption, Enum: []string{"null", "deflate", "snappy", "bzip2", "xz"}, Sink: true,
		Description: "the compression of Avro files, for the filesystem connector (which does not read or write avro yet)"},
	{Key: AvroTimestampMapping, Type: connectors.BoolOption, Default: "true", Source: true, Sink: true,
		Description: "true: TIMESTAMP is timestamp-millis/micros as before Flink 1.19; false: local-timestamp-millis/micros (TIMESTAMP_LTZ is timestamp-* either way)"},
}

// AvroFormat is Flink's 'avro' format: each record is the Avro binary encoding of a
// record whose schema is derived from the table (see avroSchemaJSON), without a schema
// header; reader and writer must agree on the table.
var AvroFormat = &connectors.FormatFactory{
	Name:       "avro",
	Options:    avroOptions,
	NewDecoder: NewAvroDecoder,
	NewEncoder: NewAvroEncoder,
}

func readAvroConfig(opts map[string]string) (legacy bool, err error) {
	o := connectors.NewOptions("", opts, avroOptions)
	if _, err := o.Enum(AvroEncoding, "binary"); err != nil {
		return false, err
	}
	if _, err := o.Enum(AvroCodec, "null", "deflate", "snappy", "bzip2", "xz"); err != nil {
		return false, err
	}
	return o.Bool(AvroTimestampMapping)
}

// avroColumns are the reader's fields (NULL-typed: not wanted) and the table's columns
// as the writer declared them.
func avroColumns(cols []connectors.ProducedColumn) (reader []types.Field, declared types.Schema, err error) {
	reader = make([]types.Field, len(cols))
	declared = make(types.Schema, len(cols))
	for i, c := range cols {
		reader[i] = types.Field{Name: c.Name, Type: c.Type}
		t := c.Type
		if t.Kind == types.Null {
			t = c.Declared
		}
		declared[i] = types.Column{Name: c.Name, Type: t}
	}
	return reader, declared, nil
}

type avroDecoder struct {
	rec *avroRecordDec
	r   avroReader // reused: a reader on the stack would escape through the compiled closures
}

// NewAvroDecoder returns a decoder of records written with the schema derived from the
// table's columns (cols, with the declared types of the unwanted ones).
func NewAvroDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	legacy, err := readAvroConfig(opts)
	if err != nil {
		return nil, err
	}
	reader, declared, err := avroColumns(cols)
	if err != nil {
		return nil, err
	}
	for _, c := range declared {
		if c.Type.Kind == types.Null {
			return nil, fmt.Errorf("column %s: the avro format needs the type of every physical column (its schema is derived from the table)", c.Name)
		}
	}
	w, _, err := avroSchemaFor(declared, legacy)
	if err != nil {
		return nil, err
	}
	rec, err := compileAvroRecord(w, reader)
	if err != nil {
		return nil, avroColumnError(err)
	}
	return &avroDecoder{rec: rec}, nil
}

// avroColumnError turns a compile error with a field path into "column x: ...".
func avroColumnError(err error) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return fmt.Errorf("column %s: %w", pe.path, pe.err)
	}
	return err
}

func (d *avroDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != d.rec.width {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), d.rec.width)
	}
	return avroDecodeBody(d.rec, &d.r, data, data, dst, false)
}

// avroDecodeBody decodes one record body into dst; record is the whole record, for the
// error's snippet.
func avroDecodeBody(rec *avroRecordDec, r *avroReader, body, record []byte, dst types.Row, skipped bool) error {
	*r = avroReader{b: body}
	if err := rec.read(r, dst); err != nil {
		field := ""
		var pe *pathError
		if errors.As(err, &pe) {
			field, err = pe.path, pe.err
		}
		return &DecodeError{Field: field, Err: err, Snippet: binarySnippet(record), Skipped: skipped}
	}
	if r.i != len(body) {
		return &DecodeError{Err: fmt.Errorf("%d bytes after the end of the avro record", len(body)-r.i),
			Snippet: binarySnippet(record), Skipped: skipped}
	}
	return nil
}

type avroEncoder struct {
	rec *avroRecordEnc
}

// NewAvroEncoder returns an encoder of rows of schema with the schema derived from it.
func NewAvroEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	legacy, err := readAvroConfig(opts)
	if err != nil {
		return nil, err
	}
	w, _, err := avroSchemaFor(schema, legacy)
	if err != nil {
		return nil, err
	}
	rec, err := compileAvroRecordEnc(w, avroFields(schema))
	if err != nil {
		return nil, avroColumnError(err)
	}
	return &avroEncoder{rec: rec}, nil
}

func avroFields(schema types.Schema) []types.Field {
	fields := make([]types.Field, len(schema))
	for i, c := range schema {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	return fields
}

func (e *avroEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	out, err := e.rec.write(dst, row)
	if err != nil {
		return dst, avroEncodeError(err)
	}
	return out, nil
}

func avroEncodeError(err error) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return fmt.Errorf("avro: column %s: %w", pe.path, pe.err)
	}
	return fmt.Errorf("avro: %w", err)
}

// parseAvroSchema parses a schema text with its own cache of named types (hamba's
// default cache is global: two jobs' schemas with a record of one name would clash).
func parseAvroSchema(text string, cache *avro.SchemaCache) (avro.Schema, error) {
	if cache == nil {
		cache = &avro.SchemaCache{}
	}
	return avro.ParseWithCache(text, "", cache)
}
