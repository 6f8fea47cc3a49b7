package formats

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// CSV option keys, as written after the 'csv.' prefix.
const (
	CSVFieldDelimiter         = "field-delimiter"
	CSVDisableQuoteCharacter  = "disable-quote-character"
	CSVQuoteCharacter         = "quote-character"
	CSVAllowComments          = "allow-comments"
	CSVIgnoreParseErrors      = "ignore-parse-errors"
	CSVArrayElementDelimiter  = "array-element-delimiter"
	CSVEscapeCharacter        = "escape-character"
	CSVNullLiteral            = "null-literal"
	CSVWriteDecimalScientific = "write-bigdecimal-in-scientific-notation"
)

var csvOptions = []connectors.OptionSpec{
	{Key: CSVFieldDelimiter, Type: connectors.StringOption, Default: ",", Source: true, Sink: true,
		Description: "the field delimiter, one character ('\\t' for a tab)"},
	{Key: CSVDisableQuoteCharacter, Type: connectors.BoolOption, Default: "false", Source: true, Sink: true,
		Description: "read and write values without quoting"},
	{Key: CSVQuoteCharacter, Type: connectors.StringOption, Default: `"`, Source: true, Sink: true,
		Description: "the character enclosing quoted values"},
	{Key: CSVAllowComments, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "skip lines starting with '#'"},
	{Key: CSVIgnoreParseErrors, Type: connectors.BoolOption, Default: "false", Source: true,
		Description: "skip records that cannot be parsed instead of failing; missing fields become NULL"},
	{Key: CSVArrayElementDelimiter, Type: connectors.StringOption, Default: ";", Source: true, Sink: true,
		Description: "the delimiter between elements of ARRAY and ROW values"},
	{Key: CSVEscapeCharacter, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "the escape character (none by default)"},
	{Key: CSVNullLiteral, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "the text read and written as NULL (none by default: NULL is written empty)"},
	{Key: CSVWriteDecimalScientific, Type: connectors.BoolOption, Default: "true", Sink: true,
		Description: "write tiny decimals in scientific notation as BigDecimal.toString does"},
}

// CSVFormat is the 'csv' format. Fields are matched to the table's physical columns by
// position, so its decoder expects all physical columns with the unwanted ones typed
// NULL (see connectors.NewProjectedDecoder).
var CSVFormat = &connectors.FormatFactory{
	Name:       "csv",
	Options:    csvOptions,
	NewDecoder: NewCSVDecoder,
	NewEncoder: NewCSVEncoder,
}

type csvConfig struct {
	delim         byte
	quote         byte
	quoting       bool
	escape        byte
	escaping      bool
	comments      bool
	ignoreErrors  bool
	arrayDelim    string
	nullLiteral   string
	hasNull       bool
	decimalPlain  bool
	timestampSep  byte
	timestampZone string
}

// oneChar reads an option holding a single character, allowing '\t'-style escapes.
func oneChar(o connectors.Options, key string) (byte, bool, error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false, nil
	}
	s := v
	switch v {
	case `\t`:
		s = "\t"
	case `\n`:
		s = "\n"
	case `\r`:
		s = "\r"
	case `\\`:
		s = `\`
	case `\0`:
		s = "\x00"
	}
	if strings.HasPrefix(v, `\u`) && len(v) == 6 {
		if n, err := strconv.ParseUint(v[2:], 16, 8); err == nil {
			s = string([]byte{byte(n)})
		}
	}
	if len(s) != 1 {
		return 0, true, &connectors.OptionError{Key: "csv." + key, Value: v,
			Err: fmt.Errorf("%w: must be a single character", connectors.ErrInvalidOption)}
	}
	return s[0], true, nil
}

func readCSVConfig(opts map[string]string) (csvConfig, error) {
	o := connectors.NewOptions("", opts, csvOptions)
	c := csvConfig{timestampSep: ' '}
	var err error
	if c.delim, _, err = oneChar(o, CSVFieldDelimiter); err != nil {
		return c, err
	}
	disable, err := o.Bool(CSVDisableQuoteCharacter)
	if err != nil {
		return c, err
	}
	if disable && o.IsSet(CSVQuoteCharacter) {
		return c, &connectors.OptionError{Key: "csv." + CSVQuoteCharacter, Value: opts[CSVQuoteCharacter],
			Err: fmt.Errorf("%w: cannot set a quote character when disable-quote-character is true", connectors.ErrInvalidOption)}
	}
	if !disable {
		if c.quote, c.quoting, err = oneChar(o, CSVQuoteCharacter); err != nil {
			return c, err
		}
	}
	if c.escape, c.escaping, err = oneChar(o, CSVEscapeCharacter); err != nil {
		return c, err
	}
	if c.comments, err = o.Bool(CSVAllowComments); err != nil {
		return c, err
	}
	if c.ignoreErrors, err = o.Bool(CSVIgnoreParseErrors); err != nil {
		return c, err
	}
	c.arrayDelim = o.String(CSVArrayElementDelimiter)
	if c.arrayDelim == "" {
		return c, &connectors.OptionError{Key: "csv." + CSVArrayElementDelimiter, Value: "",
			Err: fmt.Errorf("%w: must not be empty", connectors.ErrInvalidOption)}
	}
	c.nullLiteral, c.hasNull = o.Get(CSVNullLiteral)
	sci, err := o.Bool(CSVWriteDecimalScientific)
	if err != nil {
		return c, err
	}
	c.decimalPlain = !sci
	if c.delim == c.quote && c.quoting {
		return c, &connectors.OptionError{Key: "csv." + CSVQuoteCharacter, Value: string(c.quote),
			Err: fmt.Errorf("%w: the quote character must differ from the field delimiter", connectors.ErrInvalidOption)}
	}
	return c, nil
}

// csvConv converts the text of one field (already unquoted and not the null literal).
type csvConv func(d *csvDecoder, text []byte) (types.Value, error)

type csvDecoder struct {
	cfg   csvConfig
	names []string
	convs []csvConv // nil: a column the caller does not want
	spans []csvSpan
	buf   []byte
}

// csvSpan locates one field's text in the record or, when unescaping changed it, in buf.
type csvSpan struct {
	inBuf bool
	a, b  int
}

// NewCSVDecoder returns a decoder that fills cols from CSV records by position: the
// i-th field is the i-th column. Columns of the NULL type are skipped, so a source
// passes the table's physical columns with the unwanted ones typed NULL.
func NewCSVDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	cfg, err := readCSVConfig(opts)
	if err != nil {
		return nil, err
	}
	d := &csvDecoder{cfg: cfg, names: make([]string, len(cols)), convs: make([]csvConv, len(cols))}
	for i, c := range cols {
		d.names[i] = c.Name
		if c.Type.Kind == types.Null {
			continue
		}
		if d.convs[i], err = csvConverter(c.Type, cfg, true); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return d, nil
}

func (d *csvDecoder) fail(field string, data []byte, err error) error {
	return &DecodeError{Field: field, Err: err, Snippet: Snippet(data), Skipped: d.cfg.ignoreErrors}
}

// split cuts a record into fields, honouring quotes and the escape character.
func (d *csvDecoder) split(line []byte) error {
	d.spans = d.spans[:0]
	d.buf = d.buf[:0]
	c := &d.cfg
	i := 0
	for {
		if c.quoting && i < len(line) && line[i] == c.quote {
			start := len(d.buf)
			i++
			closed := false
			for i < len(line) {
				ch := line[i]
				switch {
				case c.escaping && ch == c.escape && i+1 < len(line):
					d.buf = append(d.buf, line[i+1])
					i += 2
					continue
				case ch == c.quote && i+1 < len(line) && line[i+1] == c.quote:
					d.buf = append(d.buf, ch)
					i += 2
					continue
				case ch == c.quote:
					closed = true
					i++
				default:
					d.buf = append(d.buf, ch)
					i++
					continue
				}
				break
			}
			if !closed {
				return fmt.Errorf("field %d: unterminated quoted value", len(d.spans)+1)
			}
			d.spans = append(d.spans, csvSpan{inBuf: true, a: start, b: len(d.buf)})
			if i == len(line) {
				return nil
			}
			if line[i] != c.delim {
				return fmt.Errorf("field %d: unexpected %q after a closing quote", len(d.spans), line[i])
			}
			i++
			continue
		}
		start := i
		escaped := false
		for i < len(line) && line[i] != c.delim {
			if c.escaping && line[i] == c.escape && i+1 < len(line) {
				escaped = true
				i++
			}
			i++
		}
		if escaped {
			bstart := len(d.buf)
			for j := start; j < i; j++ {
				if line[j] == c.escape && j+1 < i {
					j++
				}
				d.buf = append(d.buf, line[j])
			}
			d.spans = append(d.spans, csvSpan{inBuf: true, a: bstart, b: len(d.buf)})
		} else {
			d.spans = append(d.spans, csvSpan{a: start, b: i})
		}
		if i == len(line) {
			return nil
		}
		i++ // the delimiter
	}
}

func (d *csvDecoder) text(line []byte, s csvSpan) []byte {
	if s.inBuf {
		return d.buf[s.a:s.b]
	}
	return line[s.a:s.b]
}

// Decode fills dst from one CSV record (a trailing line break is ignored).
func (d *csvDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != len(d.convs) {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), len(d.convs))
	}
	line := bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("\r"))
	if len(line) == 0 {
		return d.fail("", data, errors.New("empty record"))
	}
	if d.cfg.comments && line[0] == '#' {
		return &DecodeError{Err: ErrComment, Snippet: Snippet(data), Skipped: true}
	}
	if err := d.split(line); err != nil {
		return d.fail("", data, err)
	}
	if len(d.spans) != len(d.convs) && !d.cfg.ignoreErrors {
		return d.fail("", data, fmt.Errorf("row length mismatch: %d fields expected but was %d", len(d.convs), len(d.spans)))
	}
	for i, conv := range d.convs {
		if conv == nil || i >= len(d.spans) {
			dst[i] = types.NullValue
			continue
		}
		text := d.text(line, d.spans[i])
		if d.cfg.hasNull && string(text) == d.cfg.nullLiteral {
			dst[i] = types.NullValue
			continue
		}
		v, err := conv(d, text)
		if err != nil {
			return d.fail(d.names[i], data, err)
		}
		dst[i] = v
	}
	return nil
}

func csvConverter(t types.Type, cfg csvConfig, top bool) (csvConv, error) {
	t = t.WithoutTimeAttr()
	switch t.Kind {
	case types.Char, types.Varchar:
		return func(_ *csvDecoder, text []byte) (types.Value, error) { return types.StringValue(string(text)), nil }, nil
	case types.Boolean:
		// Flink: Boolean.parseBoolean of the trimmed text
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			return types.BoolValue(strings.EqualFold(string(trimSpace(text)), "true")), nil
		}, nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		bits := map[types.Kind]int{types.TinyInt: 8, types.SmallInt: 16, types.Int: 32, types.BigInt: 64}[t.Kind]
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			n, err := strconv.ParseInt(string(trimSpace(text)), 10, bits)
			if err != nil {
				return types.Value{}, cannotParse(text, t)
			}
			return types.IntValue(t.Kind, n), nil
		}, nil
	case types.Float, types.Double:
		bits := 64
		mk := types.DoubleValue
		if t.Kind == types.Float {
			bits, mk = 32, types.FloatValue
		}
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			f, err := strconv.ParseFloat(string(trimSpace(text)), bits)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return types.Value{}, cannotParse(text, t)
			}
			return mk(f), nil
		}, nil
	case types.Decimal:
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			v, null, ok := parseDecimal(text, t.Prec, t.Scale)
			if !ok {
				return types.Value{}, cannotParse(text, t)
			}
			if null {
				return types.NullValue, nil
			}
			return v, nil
		}, nil
	case types.Bytes:
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			out, err := base64.StdEncoding.DecodeString(string(text))
			if err != nil {
				return types.Value{}, fmt.Errorf("cannot decode %s as base64 for %s", quoteSnippet(text), t)
			}
			return types.BytesValue(out), nil
		}, nil
	case types.Date:
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			days, ok := parseDate(trimSpace(text))
			if !ok {
				return types.Value{}, cannotParse(text, t)
			}
			return types.DateValue(days), nil
		}, nil
	case types.Time:
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			b := trimSpace(text)
			micros, n, ok := types.ParseTime(b, 0)
			if !ok || n != len(b) {
				return types.Value{}, cannotParse(text, t)
			}
			return types.TimeValue(micros), nil
		}, nil
	case types.Timestamp, types.TimestampLTZ:
		mk := types.TimestampValue
		if t.Kind == types.TimestampLTZ {
			mk = types.TimestampLTZValue
		}
		syn := timestampSyntax(cfg.timestampSep, t.Kind == types.TimestampLTZ)
		return func(_ *csvDecoder, text []byte) (types.Value, error) {
			micros, ok := types.ParseTimestamp(trimSpace(text), syn)
			if !ok {
				return types.Value{}, fmt.Errorf("%w (expected 'yyyy-MM-dd HH:mm:ss.SSS')", cannotParse(text, t))
			}
			return mk(micros), nil
		}, nil
	case types.Array, types.Struct:
		if !top {
			return nil, fmt.Errorf("%w: csv cannot read nested %s", ErrUnsupportedType, t)
		}
		var elems []csvConv
		if t.Kind == types.Array {
			e, err := csvConverter(*t.Elem, cfg, false)
			if err != nil {
				return nil, err
			}
			elems = []csvConv{e}
		} else {
			for _, f := range t.Fields {
				e, err := csvConverter(f.Type, cfg, false)
				if err != nil {
					return nil, err
				}
				elems = append(elems, e)
			}
		}
		delim := []byte(cfg.arrayDelim)
		return func(d *csvDecoder, text []byte) (types.Value, error) {
			parts := bytes.Split(text, delim)
			if t.Kind == types.Struct && len(parts) != len(elems) {
				return types.Value{}, fmt.Errorf("%s has %d fields but the value %s has %d", t, len(elems), quoteSnippet(text), len(parts))
			}
			if t.Kind == types.Array && len(text) == 0 {
				return types.ArrayValue(nil), nil
			}
			out := make([]types.Value, len(parts))
			for i, p := range parts {
				if cfg.hasNull && string(p) == cfg.nullLiteral {
					continue
				}
				conv := elems[0]
				if t.Kind == types.Struct {
					conv = elems[i]
				}
				v, err := conv(d, p)
				if err != nil {
					return types.Value{}, fmt.Errorf("element %d: %w", i+1, err)
				}
				out[i] = v
			}
			if t.Kind == types.Struct {
				return types.RowValue(out), nil
			}
			return types.ArrayValue(out), nil
		}, nil
	}
	return nil, fmt.Errorf("%w: csv cannot read %s", ErrUnsupportedType, t)
}

// csvEncoder writes rows as CSV records ending in a line break.
type csvEncoder struct {
	cfg     csvConfig
	names   []string
	encs    []csvEnc
	scratch []byte
}

type csvEnc func(dst []byte, v types.Value) []byte

// NewCSVEncoder returns an encoder writing rows of schema as CSV lines, quoting a value
// when it holds the delimiter, the quote or escape character, a line break, or leading
// or trailing spaces.
func NewCSVEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	cfg, err := readCSVConfig(opts)
	if err != nil {
		return nil, err
	}
	e := &csvEncoder{cfg: cfg}
	for _, c := range schema {
		enc, err := csvEncoderFor(c.Type, cfg, true)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		e.names = append(e.names, c.Name)
		e.encs = append(e.encs, enc)
	}
	return e, nil
}

func (e *csvEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	if len(row) != len(e.encs) {
		return dst, fmt.Errorf("encode a row of %d columns, want %d", len(row), len(e.encs))
	}
	for i, v := range row {
		if i > 0 {
			dst = append(dst, e.cfg.delim)
		}
		if v.IsNull() {
			if e.cfg.hasNull {
				dst = e.appendField(dst, []byte(e.cfg.nullLiteral))
			}
			continue
		}
		e.scratch = e.encs[i](e.scratch[:0], v)
		dst = e.appendField(dst, e.scratch)
	}
	return append(dst, '\n'), nil
}

func (e *csvEncoder) needsQuotes(text []byte) bool {
	if len(text) == 0 {
		return false
	}
	if text[0] == ' ' || text[len(text)-1] == ' ' || (e.cfg.comments && text[0] == '#') {
		return true
	}
	for _, c := range text {
		if c == e.cfg.delim || c == '\n' || c == '\r' || (e.cfg.quoting && c == e.cfg.quote) || (e.cfg.escaping && c == e.cfg.escape) {
			return true
		}
	}
	return false
}

func (e *csvEncoder) appendField(dst, text []byte) []byte {
	c := &e.cfg
	if !c.quoting {
		if !c.escaping {
			return append(dst, text...)
		}
		for _, ch := range text {
			if ch == c.delim || ch == c.escape {
				dst = append(dst, c.escape)
			}
			dst = append(dst, ch)
		}
		return dst
	}
	if !e.needsQuotes(text) {
		return append(dst, text...)
	}
	dst = append(dst, c.quote)
	for _, ch := range text {
		switch {
		case ch == c.quote:
			dst = append(dst, c.quote, c.quote)
		case c.escaping && ch == c.escape:
			dst = append(dst, c.escape, c.escape)
		default:
			dst = append(dst, ch)
		}
	}
	return append(dst, c.quote)
}

func csvEncoderFor(t types.Type, cfg csvConfig, top bool) (csvEnc, error) {
	switch t.Kind {
	case types.Char, types.Varchar:
		return func(dst []byte, v types.Value) []byte { return append(dst, v.Str()...) }, nil
	case types.Boolean:
		return func(dst []byte, v types.Value) []byte { return strconv.AppendBool(dst, v.Bool()) }, nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return func(dst []byte, v types.Value) []byte { return strconv.AppendInt(dst, v.Int(), 10) }, nil
	case types.Float:
		return func(dst []byte, v types.Value) []byte { return appendJavaFloat(dst, v.Float(), 32) }, nil
	case types.Double:
		return func(dst []byte, v types.Value) []byte { return appendJavaFloat(dst, v.Float(), 64) }, nil
	case types.Decimal:
		return func(dst []byte, v types.Value) []byte {
			return appendJavaDecimal(dst, v.Rat(), t.Scale, cfg.decimalPlain)
		}, nil
	case types.Bytes:
		return func(dst []byte, v types.Value) []byte {
			return base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
		}, nil
	case types.Date:
		return func(dst []byte, v types.Value) []byte { return types.AppendDate(dst, v.Int()) }, nil
	case types.Time:
		return func(dst []byte, v types.Value) []byte { return types.AppendTime(dst, v.Int(), 0) }, nil
	case types.Timestamp:
		return func(dst []byte, v types.Value) []byte { return types.AppendTimestamp(dst, v.Int(), ' ', 0) }, nil
	case types.TimestampLTZ:
		return func(dst []byte, v types.Value) []byte {
			return append(types.AppendTimestamp(dst, v.Int(), ' ', 0), 'Z')
		}, nil
	case types.Array, types.Struct:
		if !top {
			return nil, fmt.Errorf("%w: csv cannot write nested %s", ErrUnsupportedType, t)
		}
		var elems []csvEnc
		if t.Kind == types.Array {
			e, err := csvEncoderFor(*t.Elem, cfg, false)
			if err != nil {
				return nil, err
			}
			elems = []csvEnc{e}
		} else {
			for _, f := range t.Fields {
				e, err := csvEncoderFor(f.Type, cfg, false)
				if err != nil {
					return nil, err
				}
				elems = append(elems, e)
			}
		}
		return func(dst []byte, v types.Value) []byte {
			for i, e := range v.Elems() {
				if i > 0 {
					dst = append(dst, cfg.arrayDelim...)
				}
				if e.IsNull() {
					dst = append(dst, cfg.nullLiteral...)
					continue
				}
				enc := elems[0]
				if t.Kind == types.Struct {
					enc = elems[min(i, len(elems)-1)]
				}
				dst = enc(dst, e)
			}
			return dst
		}, nil
	}
	return nil, fmt.Errorf("%w: csv cannot write %s", ErrUnsupportedType, t)
}
