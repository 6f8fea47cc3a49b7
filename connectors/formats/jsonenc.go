package formats

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// jsonEnc appends one non-NULL value of a column's type as JSON.
type jsonEnc func(dst []byte, v types.Value) ([]byte, error)

type jsonEncoder struct {
	cfg   jsonConfig
	cols  []string
	names [][]byte // each field name already quoted, with the colon
	encs  []jsonEnc
}

// NewJSONEncoder returns an encoder writing rows of schema as JSON objects, fields in
// schema order, values as Flink's JSON format writes them.
func NewJSONEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	cfg, err := readJSONConfig(opts)
	if err != nil {
		return nil, err
	}
	e := &jsonEncoder{cfg: cfg}
	for _, c := range schema {
		enc, err := jsonEncoderFor(c.Type, cfg)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		name := appendJSONString(nil, c.Name)
		e.cols = append(e.cols, c.Name)
		e.names = append(e.names, append(name, ':'))
		e.encs = append(e.encs, enc)
	}
	return e, nil
}

func (e *jsonEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	if len(row) != len(e.encs) {
		return dst, fmt.Errorf("encode a row of %d columns, want %d", len(row), len(e.encs))
	}
	dst = append(dst, '{')
	first := true
	for i, v := range row {
		if v.IsNull() && e.cfg.ignoreNullField {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, e.names[i]...)
		if v.IsNull() {
			dst = append(dst, "null"...)
			continue
		}
		var err error
		if dst, err = e.encs[i](dst, v); err != nil {
			return dst, fmt.Errorf("column %s: %w", e.cols[i], err)
		}
	}
	return append(dst, '}'), nil
}

func jsonEncoderFor(t types.Type, cfg jsonConfig) (jsonEnc, error) {
	switch t.Kind {
	case types.Boolean:
		return func(dst []byte, v types.Value) ([]byte, error) { return strconv.AppendBool(dst, v.Bool()), nil }, nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return func(dst []byte, v types.Value) ([]byte, error) { return strconv.AppendInt(dst, v.Int(), 10), nil }, nil
	case types.Float, types.Double:
		bits := 64
		if t.Kind == types.Float {
			bits = 32
		}
		return func(dst []byte, v types.Value) ([]byte, error) {
			f := v.Float()
			start := len(dst)
			dst = appendJavaFloat(dst, f, bits)
			// NaN and Infinity are no JSON numbers: Jackson writes them as strings
			if c := dst[start]; c == 'N' || c == 'I' || (c == '-' && dst[start+1] == 'I') {
				s := string(dst[start:])
				dst = appendJSONString(dst[:start], s)
			}
			return dst, nil
		}, nil
	case types.Decimal:
		return func(dst []byte, v types.Value) ([]byte, error) {
			return appendJavaDecimal(dst, v.Rat(), t.Scale, cfg.decimalPlain), nil
		}, nil
	case types.Char, types.Varchar:
		return func(dst []byte, v types.Value) ([]byte, error) { return appendJSONString(dst, v.Str()), nil }, nil
	case types.Bytes:
		return func(dst []byte, v types.Value) ([]byte, error) {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
			return append(dst, '"'), nil
		}, nil
	case types.Date:
		return func(dst []byte, v types.Value) ([]byte, error) {
			dst = append(dst, '"')
			dst = types.AppendDate(dst, v.Int())
			return append(dst, '"'), nil
		}, nil
	case types.Time:
		return func(dst []byte, v types.Value) ([]byte, error) {
			dst = append(dst, '"')
			dst = types.AppendTime(dst, v.Int(), 0)
			return append(dst, '"'), nil
		}, nil
	case types.Timestamp, types.TimestampLTZ:
		sep := byte(' ')
		if cfg.iso {
			sep = 'T'
		}
		zone := ""
		if t.Kind == types.TimestampLTZ {
			zone = "Z"
		}
		return func(dst []byte, v types.Value) ([]byte, error) {
			dst = append(dst, '"')
			dst = types.AppendTimestamp(dst, v.Int(), sep, 0)
			dst = append(dst, zone...)
			return append(dst, '"'), nil
		}, nil
	case types.Array:
		elem, err := jsonEncoderFor(*t.Elem, cfg)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, v types.Value) ([]byte, error) {
			dst = append(dst, '[')
			for i, e := range v.Elems() {
				if i > 0 {
					dst = append(dst, ',')
				}
				if e.IsNull() {
					dst = append(dst, "null"...)
					continue
				}
				var err error
				if dst, err = elem(dst, e); err != nil {
					return dst, err
				}
			}
			return append(dst, ']'), nil
		}, nil
	case types.Map:
		key, err := jsonEncoderFor(*t.Key, cfg)
		if err != nil {
			return nil, err
		}
		val, err := jsonEncoderFor(*t.Elem, cfg)
		if err != nil {
			return nil, err
		}
		keyIsString := t.Key.IsString()
		return func(dst []byte, v types.Value) ([]byte, error) {
			dst = append(dst, '{')
			first := true
			for _, e := range v.Entries() {
				if e.Key.IsNull() {
					switch cfg.nullKeyMode {
					case "DROP":
						continue
					case "LITERAL":
					default:
						return dst, ErrMapNullKey
					}
				}
				if !first {
					dst = append(dst, ',')
				}
				first = false
				switch {
				case e.Key.IsNull():
					dst = appendJSONString(dst, cfg.nullKeyLiteral)
				case keyIsString:
					dst = appendJSONString(dst, e.Key.Str())
				default:
					// object keys are text: write the key's JSON, quoted unless it already is
					start := len(dst)
					var err error
					if dst, err = key(dst, e.Key); err != nil {
						return dst, err
					}
					if dst[start] != '"' {
						s := string(dst[start:])
						dst = appendJSONString(dst[:start], s)
					}
				}
				dst = append(dst, ':')
				if e.Value.IsNull() {
					dst = append(dst, "null"...)
					continue
				}
				var err error
				if dst, err = val(dst, e.Value); err != nil {
					return dst, err
				}
			}
			return append(dst, '}'), nil
		}, nil
	case types.Struct:
		schema := make(types.Schema, len(t.Fields))
		for i, f := range t.Fields {
			schema[i] = types.Column{Name: f.Name, Type: f.Type}
		}
		inner, err := NewJSONEncoder(schema, nil)
		if err != nil {
			return nil, err
		}
		ie := inner.(*jsonEncoder)
		ie.cfg = cfg
		return func(dst []byte, v types.Value) ([]byte, error) {
			return ie.Encode(dst, v.Elems())
		}, nil
	}
	return nil, fmt.Errorf("%w: json cannot write %s", ErrUnsupportedType, t)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so the
// output is always valid JSON; non-ASCII text is written as is, as Jackson does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"':
				dst = append(dst, `\"`...)
			case '\\':
				dst = append(dst, `\\`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				dst = append(dst, `\u00`...)
				dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
