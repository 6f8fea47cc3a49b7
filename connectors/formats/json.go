package formats

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// JSON option keys, as written after the 'json.' prefix.
const (
	JSONFailOnMissingField      = "fail-on-missing-field"
	JSONIgnoreParseErrors       = "ignore-parse-errors"
	JSONTimestampFormatStandard = "timestamp-format.standard"
	JSONMapNullKeyMode          = "map-null-key.mode"
	JSONMapNullKeyLiteral       = "map-null-key.literal"
	JSONEncodeDecimalPlain      = "encode.decimal-as-plain-number"
	JSONEncodeIgnoreNullFields  = "encode.ignore-null-fields"
)

var jsonOptions = []connectors.OptionSpec{
	{Key: JSONFailOnMissingField, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "fail when a field of the schema is missing from a record (NULL otherwise)"},
	{Key: JSONIgnoreParseErrors, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "skip records that cannot be parsed instead of failing"},
	{Key: JSONTimestampFormatStandard, Type: connectors.EnumOption, Default: "SQL", Enum: []string{"SQL", "ISO-8601"},
		Source: true, Sink: true,
		Description: "SQL reads and writes 'yyyy-MM-dd HH:mm:ss.SSS', ISO-8601 'yyyy-MM-ddTHH:mm:ss.SSS'"},
	{Key: JSONMapNullKeyMode, Type: connectors.EnumOption, Default: "FAIL", Enum: []string{"FAIL", "DROP", "LITERAL"},
		Sink: true, Description: "what to do with a NULL map key when writing"},
	{Key: JSONMapNullKeyLiteral, Type: connectors.StringOption, Default: "null", Sink: true,
		Description: "the key written for a NULL map key when map-null-key.mode is LITERAL"},
	{Key: JSONEncodeDecimalPlain, Type: connectors.BoolOption, Default: "false", Sink: true,
		Description: "write decimals without scientific notation"},
	{Key: JSONEncodeIgnoreNullFields, Type: connectors.BoolOption, Default: "false", Sink: true,
		Description: "leave NULL fields out of written objects"},
}

// jsonConfig is the json format's options, read and checked once.
type jsonConfig struct {
	failOnMissing   bool
	ignoreErrors    bool
	iso             bool // timestamp-format.standard = ISO-8601
	nullKeyMode     string
	nullKeyLiteral  string
	decimalPlain    bool
	ignoreNullField bool
}

func readJSONConfig(opts map[string]string) (jsonConfig, error) {
	o := connectors.NewOptions("", opts, jsonOptions)
	var c jsonConfig
	var err error
	if c.failOnMissing, err = o.Bool(JSONFailOnMissingField); err != nil {
		return c, err
	}
	if c.ignoreErrors, err = o.Bool(JSONIgnoreParseErrors); err != nil {
		return c, err
	}
	if c.failOnMissing && c.ignoreErrors {
		return c, &connectors.OptionError{Key: "json." + JSONFailOnMissingField, Value: "true",
			Err: fmt.Errorf("%w: fail-on-missing-field and ignore-parse-errors cannot both be true", connectors.ErrInvalidOption)}
	}
	std, err := o.Enum(JSONTimestampFormatStandard, "SQL", "ISO-8601")
	if err != nil {
		return c, err
	}
	c.iso = std == "ISO-8601"
	if c.nullKeyMode, err = o.Enum(JSONMapNullKeyMode, "FAIL", "DROP", "LITERAL"); err != nil {
		return c, err
	}
	c.nullKeyLiteral = o.String(JSONMapNullKeyLiteral)
	if c.decimalPlain, err = o.Bool(JSONEncodeDecimalPlain); err != nil {
		return c, err
	}
	if c.ignoreNullField, err = o.Bool(JSONEncodeIgnoreNullFields); err != nil {
		return c, err
	}
	return c, nil
}

// JSONFormat is the 'json' format: one JSON object per record, fields matched to
// columns by name (case-sensitively), with Flink's conversions.
var JSONFormat = &connectors.FormatFactory{
	Name:       "json",
	Options:    jsonOptions,
	NewDecoder: NewJSONDecoder,
	NewEncoder: NewJSONEncoder,
}

// jsonConv converts one JSON value (never nil, never JSON null) to a column's type.
// It returns a plain error; the decoder adds the field path and the record.
type jsonConv func(d *jsonDecoder, v *fastjson.Value) (types.Value, error)

type jsonColumn struct {
	name   string
	conv   jsonConv
	scalar jsonScalar // nil for a composite column (or one not wanted)
}

type jsonDecoder struct {
	cfg     jsonConfig
	cols    []jsonColumn // conv nil: a column the caller does not want
	parser  fastjson.Parser
	scratch []byte
	// flat is true when every wanted column is a scalar, so that decodeFlat can read
	// records without the full parser.
	flat bool
}

// NewJSONDecoder returns a decoder filling cols from JSON objects. Only the named
// columns are converted (the projection is pushed down): the rest of the object is
// scanned for validity, never converted. Columns of the NULL type are skipped.
func NewJSONDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	cfg, err := readJSONConfig(opts)
	if err != nil {
		return nil, err
	}
	d := &jsonDecoder{cfg: cfg, cols: make([]jsonColumn, len(cols)), flat: len(cols) <= maxFlatColumns}
	for i, c := range cols {
		d.cols[i].name = c.Name
		if c.Type.Kind == types.Null {
			continue
		}
		if d.cols[i].conv, err = jsonConverter(c.Type, cfg); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		if d.cols[i].scalar = jsonScalarConverter(c.Type, cfg); d.cols[i].scalar == nil {
			d.flat = false
		}
	}
	return d, nil
}

func (d *jsonDecoder) fail(field string, data []byte, err error) error {
	return &DecodeError{Field: field, Err: err, Snippet: Snippet(data), Skipped: d.cfg.ignoreErrors}
}

// Decode fills dst from one JSON object.
func (d *jsonDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != len(d.cols) {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), len(d.cols))
	}
	if d.flat && d.decodeFlat(data, dst) {
		return nil
	}
	if len(trimSpace(data)) == 0 {
		return d.fail("", data, errors.New("empty record"))
	}
	v, err := d.parser.ParseBytes(data)
	if err != nil {
		return d.fail("", data, fmt.Errorf("invalid json: %v", err))
	}
	obj, err := v.Object()
	if err != nil {
		return d.fail("", data, fmt.Errorf("record is a json %s, not an object", v.Type()))
	}
	return d.decodeObject(obj, data, dst, "")
}

// decodeObject fills dst from the fields of obj, a part of record data (the after image
// of a debezium record, at path: "after."), for errors.
func (d *jsonDecoder) decodeObject(obj *fastjson.Object, data []byte, dst types.Row, path string) error {
	for i := range d.cols {
		c := &d.cols[i]
		if c.conv == nil {
			dst[i] = types.NullValue
			continue
		}
		fv := obj.Get(c.name)
		if fv == nil {
			if d.cfg.failOnMissing {
				return d.fail(path+c.name, data, errors.New("field is missing"))
			}
			dst[i] = types.NullValue
			continue
		}
		if fv.Type() == fastjson.TypeNull {
			dst[i] = types.NullValue
			continue
		}
		val, err := c.conv(d, fv)
		if err != nil {
			var pe *pathError
			if errors.As(err, &pe) {
				return d.fail(path+c.name+pe.path, data, pe.err)
			}
			return d.fail(path+c.name, data, err)
		}
		dst[i] = val
	}
	return nil
}

// pathError carries the position inside a nested value up to the column.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

func nest(prefix string, err error) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return &pathError{path: prefix + pe.path, err: pe.err}
	}
	return &pathError{path: prefix, err: err}
}

// raw returns the JSON text of a scalar value: the unescaped text of a string, the
// literal of a number or boolean. It reuses the decoder's scratch buffer.
func (d *jsonDecoder) raw(v *fastjson.Value) []byte {
	if v.Type() == fastjson.TypeString {
		b, _ := v.StringBytes()
		return b
	}
	d.scratch = v.MarshalTo(d.scratch[:0])
	return d.scratch
}

func cannotParse(text []byte, t types.Type) error {
	return fmt.Errorf("cannot parse %s as %s", quoteSnippet(text), t)
}

func quoteSnippet(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "..."
	}
	return strconv.Quote(string(b))
}

func wrongJSONType(got fastjson.Type, want string, t types.Type) error {
	return fmt.Errorf("expected a json %s for %s, got %s", want, t, got)
}

// jsonScalar converts one JSON value to a scalar column's type from its JSON type (never
// TypeNull) and its text: the unescaped content of a string, the literal of a number or
// boolean, the JSON text of an object or array. Both decoding paths share it: the full
// parser (through scalarConv) and decodeFlat's scanner, so they convert alike.
type jsonScalar func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error)

// scalarConv is the jsonConv of a scalar column.
func scalarConv(s jsonScalar) jsonConv {
	return func(d *jsonDecoder, v *fastjson.Value) (types.Value, error) {
		return s(d, v.Type(), d.raw(v))
	}
}

func jsonConverter(t types.Type, cfg jsonConfig) (jsonConv, error) {
	if s := jsonScalarConverter(t, cfg); s != nil {
		return scalarConv(s), nil
	}
	t = t.WithoutTimeAttr()
	switch t.Kind {
	case types.Array:
		elem, err := jsonConverter(*t.Elem, cfg)
		if err != nil {
			return nil, err
		}
		return func(d *jsonDecoder, v *fastjson.Value) (types.Value, error) {
			arr, err := v.Array()
			if err != nil {
				return types.Value{}, wrongJSONType(v.Type(), "array", t)
			}
			out := make([]types.Value, len(arr))
			for i, e := range arr {
				if e.Type() == fastjson.TypeNull {
					continue
				}
				if out[i], err = elem(d, e); err != nil {
					return types.Value{}, nest("["+strconv.Itoa(i)+"]", err)
				}
			}
			return types.ArrayValue(out), nil
		}, nil
	case types.Map:
		key, err := jsonMapKeyConverter(*t.Key, cfg)
		if err != nil {
			return nil, err
		}
		val, err := jsonConverter(*t.Elem, cfg)
		if err != nil {
			return nil, err
		}
		return func(d *jsonDecoder, v *fastjson.Value) (types.Value, error) {
			obj, err := v.Object()
			if err != nil {
				return types.Value{}, wrongJSONType(v.Type(), "object", t)
			}
			out := make([]types.MapEntry, 0, obj.Len())
			var ferr error
			obj.Visit(func(k []byte, e *fastjson.Value) {
				if ferr != nil {
					return
				}
				kv, err := key(k)
				if err != nil {
					ferr = nest("."+string(k), err)
					return
				}
				var ev types.Value
				if e.Type() != fastjson.TypeNull {
					if ev, err = val(d, e); err != nil {
						ferr = nest("."+string(k), err)
						return
					}
				}
				out = append(out, types.MapEntry{Key: kv, Value: ev})
			})
			if ferr != nil {
				return types.Value{}, ferr
			}
			return types.MapValue(out), nil
		}, nil
	case types.Struct:
		names := make([]string, len(t.Fields))
		convs := make([]jsonConv, len(t.Fields))
		for i, f := range t.Fields {
			names[i] = f.Name
			c, err := jsonConverter(f.Type, cfg)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			convs[i] = c
		}
		return func(d *jsonDecoder, v *fastjson.Value) (types.Value, error) {
			obj, err := v.Object()
			if err != nil {
				return types.Value{}, wrongJSONType(v.Type(), "object", t)
			}
			out := make([]types.Value, len(names))
			for i, name := range names {
				fv := obj.Get(name)
				if fv == nil {
					if d.cfg.failOnMissing {
						return types.Value{}, nest("."+name, errors.New("field is missing"))
					}
					continue
				}
				if fv.Type() == fastjson.TypeNull {
					continue
				}
				if out[i], err = convs[i](d, fv); err != nil {
					return types.Value{}, nest("."+name, err)
				}
			}
			return types.RowValue(out), nil
		}, nil
	}
	return nil, fmt.Errorf("%w: json cannot read %s", ErrUnsupportedType, t)
}

// jsonScalarConverter returns the converter of a scalar type, nil for a composite one.
func jsonScalarConverter(t types.Type, cfg jsonConfig) jsonScalar {
	t = t.WithoutTimeAttr()
	switch t.Kind {
	case types.Boolean:
		// Flink: a JSON boolean, else Boolean.parseBoolean of the text ("true" in any case)
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			switch jt {
			case fastjson.TypeTrue:
				return types.BoolValue(true), nil
			case fastjson.TypeFalse:
				return types.BoolValue(false), nil
			case fastjson.TypeObject, fastjson.TypeArray:
				return types.Value{}, wrongJSONType(jt, "boolean", t)
			}
			return types.BoolValue(strings.EqualFold(string(trimSpace(text)), "true")), nil
		}
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		bits := map[types.Kind]int{types.TinyInt: 8, types.SmallInt: 16, types.Int: 32, types.BigInt: 64}[t.Kind]
		lo, hi := -math.Pow(2, float64(bits-1)), math.Pow(2, float64(bits-1))
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			switch jt {
			case fastjson.TypeNumber, fastjson.TypeString:
			default:
				return types.Value{}, wrongJSONType(jt, "number", t)
			}
			text = trimSpace(text)
			n, err := strconv.ParseInt(string(text), 10, bits)
			if err == nil {
				return types.IntValue(t.Kind, n), nil
			}
			// Flink's INT and BIGINT take a JSON number with a fraction or exponent when it
			// fits (Jackson's asInt truncates); text must be an integer.
			if jt == fastjson.TypeNumber && bits >= 32 {
				f, ferr := strconv.ParseFloat(string(text), 64)
				if ferr == nil && f >= lo && f < hi {
					return types.IntValue(t.Kind, int64(f)), nil
				}
			}
			return types.Value{}, cannotParse(text, t)
		}
	case types.Float, types.Double:
		bits := 64
		mk := types.DoubleValue
		if t.Kind == types.Float {
			bits, mk = 32, types.FloatValue
		}
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			switch jt {
			case fastjson.TypeNumber, fastjson.TypeString:
			default:
				return types.Value{}, wrongJSONType(jt, "number", t)
			}
			text = trimSpace(text)
			f, err := strconv.ParseFloat(string(text), bits)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return types.Value{}, cannotParse(text, t)
			}
			return mk(f), nil
		}
	case types.Decimal:
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			switch jt {
			case fastjson.TypeNumber, fastjson.TypeString:
			default:
				return types.Value{}, wrongJSONType(jt, "number", t)
			}
			val, null, ok := parseDecimal(text, t.Prec, t.Scale)
			if !ok {
				return types.Value{}, cannotParse(text, t)
			}
			if null {
				return types.NullValue, nil // Flink: a decimal that does not fit is NULL
			}
			return val, nil
		}
	case types.Char, types.Varchar:
		// Flink: a string's content, any other JSON value as its JSON text
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			return types.StringValue(string(text)), nil
		}
	case types.Bytes:
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			if jt != fastjson.TypeString {
				return types.Value{}, wrongJSONType(jt, "base64 string", t)
			}
			out, err := base64.StdEncoding.DecodeString(string(text))
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot decode %s as base64 for %s", quoteSnippet(text), t)
			}
			return types.BytesValue(out), nil
		}
	case types.Date:
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			days, ok := parseDate(text)
			if !ok || jt != fastjson.TypeString {
				return types.Value{}, cannotParse(text, t)
			}
			return types.DateValue(days), nil
		}
	case types.Time:
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			micros, n, ok := types.ParseTime(text, 0)
			if ok && len(text) == n+1 && (text[n] == 'Z' || text[n] == 'z') {
				n++
			}
			if !ok || n != len(text) || jt != fastjson.TypeString {
				return types.Value{}, cannotParse(text, t)
			}
			return types.TimeValue(micros), nil
		}
	case types.Timestamp, types.TimestampLTZ:
		sep, hint := byte(' '), "'yyyy-MM-dd HH:mm:ss.SSS'"
		if cfg.iso {
			sep, hint = 'T', "'yyyy-MM-ddTHH:mm:ss.SSS'"
		}
		mk := types.TimestampValue
		if t.Kind == types.TimestampLTZ {
			mk = types.TimestampLTZValue
			hint = hint[:len(hint)-1] + "Z'"
		}
		syn := timestampSyntax(sep, cfg.iso || t.Kind == types.TimestampLTZ)
		return func(d *jsonDecoder, jt fastjson.Type, text []byte) (types.Value, error) {
			micros, ok := types.ParseTimestamp(text, syn)
			if !ok || jt != fastjson.TypeString {
				return types.Value{}, fmt.Errorf("%w (expected %s)", cannotParse(text, t), hint)
			}
			return mk(micros), nil
		}
	}
	return nil
}

// jsonMapKeyConverter converts an object key (always text in JSON) to a map's key type,
// as Flink converts it through a text node.
func jsonMapKeyConverter(t types.Type, cfg jsonConfig) (func(k []byte) (types.Value, error), error) {
	conv, err := jsonConverter(t, cfg)
	if err != nil {
		return nil, err
	}
	var arena fastjson.Arena
	return func(k []byte) (types.Value, error) {
		arena.Reset()
		var d jsonDecoder
		return conv(&d, arena.NewStringBytes(k))
	}, nil
}
