package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// raw option keys, as written after the 'raw.' prefix.
const (
	RawCharset    = "charset"
	RawEndianness = "endianness"
)

var rawOptions = []connectors.OptionSpec{
	{Key: RawCharset, Type: connectors.StringOption, Default: "UTF-8", Source: true, Sink: true,
		Description: "the charset of a string column: UTF-8, US-ASCII, ISO-8859-1, UTF-16BE, UTF-16LE or UTF-16"},
	{Key: RawEndianness, Type: connectors.EnumOption, Default: "big-endian", Enum: []string{"big-endian", "little-endian"},
		Source: true, Sink: true, Description: "the byte order of a numeric column"},
}

// RawFormat is Flink's 'raw' format: the whole record is the value of the table's one
// physical column, a string in raw.charset, bytes as they are, or a number in its
// fixed-size binary form (raw.endianness). A Kafka record without a value (NULL) is a
// NULL. It is also a key.format.
var RawFormat = &connectors.FormatFactory{
	Name:       "raw",
	Options:    rawOptions,
	NewDecoder: NewRawDecoder,
	NewEncoder: NewRawEncoder,
}

// rawCharsets are the charsets raw.charset accepts, by Java's canonical names and the
// aliases Java's Charset.forName also takes, upper-cased.
var rawCharsets = map[string]string{
	"UTF-8": "UTF-8", "UTF8": "UTF-8",
	"US-ASCII": "US-ASCII", "ASCII": "US-ASCII",
	"ISO-8859-1": "ISO-8859-1", "ISO8859_1": "ISO-8859-1", "LATIN1": "ISO-8859-1", "ISO-LATIN-1": "ISO-8859-1",
	"UTF-16BE": "UTF-16BE", "UTF_16BE": "UTF-16BE",
	"UTF-16LE": "UTF-16LE", "UTF_16LE": "UTF-16LE",
	"UTF-16": "UTF-16", "UTF_16": "UTF-16",
}

type rawConfig struct {
	charset string // canonical name
	little  bool
}

func readRawConfig(opts map[string]string) (rawConfig, error) {
	o := connectors.NewOptions("", opts, rawOptions)
	var c rawConfig
	cs := strings.TrimSpace(o.String(RawCharset))
	canon, ok := rawCharsets[strings.ToUpper(cs)]
	if !ok {
		return c, &connectors.OptionError{Key: "raw." + RawCharset, Value: cs,
			Err: fmt.Errorf("%w: unsupported charset (supported: UTF-8, US-ASCII, ISO-8859-1, UTF-16BE, UTF-16LE, UTF-16)", connectors.ErrInvalidOption)}
	}
	c.charset = canon
	e, err := o.Enum(RawEndianness, "big-endian", "little-endian")
	if err != nil {
		return c, err
	}
	c.little = e == "little-endian"
	return c, nil
}

// rawSize is the byte size of a numeric or boolean column in the raw format (0: a
// string or bytes column).
func rawSize(t types.Type) (int, error) {
	switch t.Kind {
	case types.Char, types.Varchar, types.Bytes:
		return 0, nil
	case types.Boolean, types.TinyInt:
		return 1, nil
	case types.SmallInt:
		return 2, nil
	case types.Int, types.Float:
		return 4, nil
	case types.BigInt, types.Double:
		return 8, nil
	}
	return 0, fmt.Errorf("%w: the 'raw' format does not support %s as column type (it reads one CHAR, VARCHAR, STRING, BINARY, VARBINARY, BYTES, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE column)",
		ErrUnsupportedType, t)
}

// rawColumn picks the one column raw reads or writes. Columns of the NULL type (not
// wanted by a source) do not count, but the table must still have one physical column.
func rawColumn(n int, name func(int) string) error {
	if n == 1 {
		return nil
	}
	names := make([]string, n)
	for i := range names {
		names[i] = name(i)
	}
	return fmt.Errorf("%w: the 'raw' format reads and writes a single physical column, the table has %d: %s",
		ErrUnsupportedType, n, strings.Join(names, ", "))
}

type rawDecoder struct {
	cfg  rawConfig
	typ  types.Type
	size int
	skip bool // the column is not wanted
}

// NewRawDecoder returns a decoder of the one column cols must hold.
func NewRawDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	cfg, err := readRawConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := rawColumn(len(cols), func(i int) string { return cols[i].Name }); err != nil {
		return nil, err
	}
	d := &rawDecoder{cfg: cfg, typ: cols[0].Type}
	if d.typ.Kind == types.Null {
		d.skip = true
		return d, nil
	}
	if d.size, err = rawSize(d.typ); err != nil {
		return nil, fmt.Errorf("column %s: %w", cols[0].Name, err)
	}
	return d, nil
}

func (d *rawDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != 1 {
		return fmt.Errorf("decode into %d columns, want 1", len(dst))
	}
	if d.skip || data == nil {
		dst[0] = types.NullValue
		return nil
	}
	if d.size > 0 && len(data) != d.size {
		return &DecodeError{Err: fmt.Errorf("a raw %s is %d bytes, the record has %d", d.typ.Kind, d.size, len(data)), Snippet: binarySnippet(data)}
	}
	var order binary.ByteOrder = binary.BigEndian
	if d.cfg.little {
		order = binary.LittleEndian
	}
	switch d.typ.Kind {
	case types.Char, types.Varchar:
		s, err := rawDecodeString(data, d.cfg.charset)
		if err != nil {
			return &DecodeError{Err: err, Snippet: binarySnippet(data)}
		}
		dst[0] = types.StringValue(s)
	case types.Bytes:
		dst[0] = types.BytesValue(data)
	case types.Boolean:
		dst[0] = types.BoolValue(data[0] != 0)
	case types.TinyInt:
		dst[0] = types.IntValue(types.TinyInt, int64(int8(data[0])))
	case types.SmallInt:
		dst[0] = types.IntValue(types.SmallInt, int64(int16(order.Uint16(data))))
	case types.Int:
		dst[0] = types.IntValue(types.Int, int64(int32(order.Uint32(data))))
	case types.BigInt:
		dst[0] = types.BigIntValue(int64(order.Uint64(data)))
	case types.Float:
		dst[0] = types.FloatValue(float64(math.Float32frombits(order.Uint32(data))))
	case types.Double:
		dst[0] = types.DoubleValue(math.Float64frombits(order.Uint64(data)))
	}
	return nil
}

// rawDecodeString decodes text in a charset as Java's String(bytes, charset) does, except
// that invalid input is an error rather than replaced.
func rawDecodeString(b []byte, charset string) (string, error) {
	switch charset {
	case "UTF-8":
		if !utf8.Valid(b) {
			return "", errors.New("record is not valid UTF-8")
		}
		return string(b), nil
	case "US-ASCII":
		for i, c := range b {
			if c >= 0x80 {
				return "", fmt.Errorf("byte %d (0x%02x) is not US-ASCII", i, c)
			}
		}
		return string(b), nil
	case "ISO-8859-1":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	}
	// UTF-16 variants
	if len(b)%2 != 0 {
		return "", fmt.Errorf("a %s record has an even number of bytes, this one %d", charset, len(b))
	}
	little := charset == "UTF-16LE"
	if charset == "UTF-16" && len(b) >= 2 {
		switch {
		case b[0] == 0xFE && b[1] == 0xFF:
			b = b[2:]
		case b[0] == 0xFF && b[1] == 0xFE:
			b, little = b[2:], true
		}
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		if little {
			u[i] = binary.LittleEndian.Uint16(b[2*i:])
		} else {
			u[i] = binary.BigEndian.Uint16(b[2*i:])
		}
	}
	return string(utf16.Decode(u)), nil
}

type rawEncoder struct {
	cfg rawConfig
	typ types.Type
}

// NewRawEncoder returns an encoder of rows of one column.
func NewRawEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	cfg, err := readRawConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := rawColumn(len(schema), func(i int) string { return schema[i].Name }); err != nil {
		return nil, err
	}
	if _, err := rawSize(schema[0].Type); err != nil {
		return nil, fmt.Errorf("column %s: %w", schema[0].Name, err)
	}
	return &rawEncoder{cfg: cfg, typ: schema[0].Type}, nil
}

// Encode appends the value's bytes. NULL appends nothing: the record is empty (Flink
// writes a Kafka record without a value).
func (e *rawEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	if len(row) != 1 {
		return dst, fmt.Errorf("encode %d columns, want 1", len(row))
	}
	v := row[0]
	if v.IsNull() {
		return dst, nil
	}
	var order binary.AppendByteOrder = binary.BigEndian
	if e.cfg.little {
		order = binary.LittleEndian
	}
	switch e.typ.Kind {
	case types.Char, types.Varchar:
		return rawEncodeString(dst, v.Str(), e.cfg.charset)
	case types.Bytes:
		return append(dst, v.Str()...), nil
	case types.Boolean:
		if v.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case types.TinyInt:
		return append(dst, byte(int8(v.Int()))), nil
	case types.SmallInt:
		return order.AppendUint16(dst, uint16(int16(v.Int()))), nil
	case types.Int:
		return order.AppendUint32(dst, uint32(int32(v.Int()))), nil
	case types.BigInt:
		return order.AppendUint64(dst, uint64(v.Int())), nil
	case types.Float:
		return order.AppendUint32(dst, math.Float32bits(float32(v.Float()))), nil
	case types.Double:
		return order.AppendUint64(dst, math.Float64bits(v.Float())), nil
	}
	return dst, fmt.Errorf("%w: raw %s", ErrUnsupportedType, e.typ)
}

// rawEncodeString encodes s as Java's String.getBytes(charset) does, except that a
// character the charset cannot hold is an error rather than '?'.
func rawEncodeString(dst []byte, s, charset string) ([]byte, error) {
	switch charset {
	case "UTF-8":
		return append(dst, s...), nil
	case "US-ASCII", "ISO-8859-1":
		limit := rune(0x7f)
		if charset == "ISO-8859-1" {
			limit = 0xff
		}
		for _, r := range s {
			if r > limit {
				return dst, fmt.Errorf("%w: character %q cannot be written in %s", ErrBadRecord, r, charset)
			}
			dst = append(dst, byte(r))
		}
		return dst, nil
	}
	little := charset == "UTF-16LE"
	if charset == "UTF-16" {
		dst = append(dst, 0xFE, 0xFF) // Java writes a big-endian byte order mark
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if little {
			dst = binary.LittleEndian.AppendUint16(dst, u)
		} else {
			dst = binary.BigEndian.AppendUint16(dst, u)
		}
	}
	return dst, nil
}

// binarySnippet shows the start of a binary record (raw, avro, protobuf) in hex, for error messages.
func binarySnippet(data []byte) string {
	const max = 48
	if len(data) <= max {
		return fmt.Sprintf("0x%x (%d bytes)", data, len(data))
	}
	return fmt.Sprintf("0x%x... (%d bytes)", data[:max], len(data))
}
