package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/types"
)

// Avro binary encoding
//
// The decoder is compiled from two schemas: the writer's (the record's, from the
// registry or derived from the table) and the reader's (the columns the plan wants).
// Fields are resolved by name as Avro's schema resolution does: a writer field nobody
// wants is skipped without being converted, a wanted column the writer lacks is NULL,
// numbers are promoted (int to long, float or double; long to float or double; float to
// double), string and bytes read as each other, and a union is read by its branch. The
// encoder is compiled from a writer schema and the table's types. hamba/avro parses and
// checks the schemas; the bytes are read and written here, without reflection, so that
// a record becomes a row without intermediate Go values.

// avroReader reads Avro binary data.
type avroReader struct {
	b []byte
	i int
}

// errAvroTruncated is wrapped by the error of a record that ends inside a value.
var errAvroTruncated = errors.New("truncated avro record")

func (r *avroReader) short(need int) error {
	return fmt.Errorf("%w: a value at byte %d needs %d more bytes than the %d left", errAvroTruncated, r.i, need-(len(r.b)-r.i), len(r.b)-r.i)
}

func (r *avroReader) long() (int64, error) {
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if r.i >= len(r.b) {
			return 0, r.short(1)
		}
		if shift >= 64 {
			return 0, fmt.Errorf("varint at byte %d is longer than 10 bytes", r.i)
		}
		c := r.b[r.i]
		r.i++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

func (r *avroReader) int() (int64, error) {
	n, err := r.long()
	if err == nil && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, fmt.Errorf("int at byte %d out of range: %d", r.i, n)
	}
	return n, err
}

func (r *avroReader) fixed(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.i < n {
		return nil, r.short(n)
	}
	b := r.b[r.i : r.i+n]
	r.i += n
	return b, nil
}

func (r *avroReader) bytes() ([]byte, error) {
	start := r.i
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("negative length %d at byte %d", n, start)
	}
	if int64(len(r.b)-r.i) < n {
		return nil, r.short(int(min(n, math.MaxInt32)))
	}
	return r.fixed(int(n))
}

// blockCount reads the count of an array or map block; a negative count is followed
// by the block's size in bytes.
func (r *avroReader) blockCount() (int64, error) {
	n, err := r.long()
	if err != nil || n >= 0 {
		return n, err
	}
	if _, err := r.long(); err != nil {
		return 0, err
	}
	return -n, nil
}

// blocks reads the blocks of an array or a map, calling item for each element; more
// than limit elements in all is an error.
func (r *avroReader) blocks(limit int64, item func() error) error {
	var seen int64
	for {
		n, err := r.blockCount()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n > limit-seen {
			return fmt.Errorf("array of more than %d elements", limit)
		}
		for i := int64(0); i < n; i++ {
			if err := item(); err != nil {
				return err
			}
		}
		seen += max(n, 0) // n < 0 only for the count -2^63, which blockCount cannot negate
	}
}

// avroMaxItems bounds the elements of one array, so that a corrupt count cannot make
// the decoder loop over billions of empty (null) elements.
const avroMaxItems = 1 << 24

// avroDec reads one value of a writer schema as a column's type.
type avroDec func(r *avroReader) (types.Value, error)

// avroFieldStep is one writer field of a record: read into slot (or skipped, slot -1).
type avroFieldStep struct {
	slot int
	name string
	dec  avroDec
	skip func(r *avroReader) error
}

// avroRecordDec reads a writer record into a row of the reader's fields.
type avroRecordDec struct {
	steps []avroFieldStep
	width int
}

func (d *avroRecordDec) read(r *avroReader, dst []types.Value) error {
	for i := range dst {
		dst[i] = types.NullValue
	}
	for i := range d.steps {
		s := &d.steps[i]
		if s.slot < 0 {
			if err := s.skip(r); err != nil {
				return nest(s.name, err)
			}
			continue
		}
		v, err := s.dec(r)
		if err != nil {
			return nest(s.name, err)
		}
		dst[s.slot] = v
	}
	return nil
}

func deref(s avro.Schema) avro.Schema {
	for {
		ref, ok := s.(*avro.RefSchema)
		if !ok {
			return s
		}
		s = ref.Schema()
	}
}

// compileAvroRecord resolves a writer record against reader fields (a field of the NULL
// type is not wanted).
func compileAvroRecord(w avro.Schema, fields []types.Field) (*avroRecordDec, error) {
	rec, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("the writer schema is a %s, not a record", deref(w).Type())
	}
	d := &avroRecordDec{width: len(fields)}
	found := make([]bool, len(fields))
	for _, wf := range rec.Fields() {
		slot := -1
		for i, f := range fields {
			if f.Name == wf.Name() && f.Type.Kind != types.Null {
				slot = i
				break
			}
		}
		step := avroFieldStep{slot: slot, name: wf.Name()}
		if slot < 0 {
			step.skip = avroSkipper(wf.Type())
		} else {
			dec, err := compileAvroDec(wf.Type(), fields[slot].Type)
			if err != nil {
				return nil, nest(wf.Name(), err)
			}
			step.dec = dec
			found[slot] = true
		}
		d.steps = append(d.steps, step)
	}
	for i, f := range fields {
		if !found[i] && f.Type.Kind != types.Null && f.Type.NotNull {
			return nil, &pathError{path: f.Name, err: fmt.Errorf("the writer schema %s has no such field, and the column is NOT NULL", rec.FullName())}
		}
	}
	return d, nil
}

func cannotRead(w avro.Schema, t types.Type) error {
	return fmt.Errorf("%w: avro %s cannot be read as %s", ErrUnsupportedType, avroTypeName(w), t)
}

func avroTypeName(w avro.Schema) string {
	w = deref(w)
	if l, ok := w.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return string(w.Type()) + " (" + string(l.Logical().Type()) + ")"
	}
	if n, ok := w.(avro.NamedSchema); ok {
		return string(w.Type()) + " " + n.FullName()
	}
	return string(w.Type())
}

func logicalOf(w avro.Schema) avro.LogicalSchema {
	if l, ok := w.(avro.LogicalTypeSchema); ok {
		return l.Logical()
	}
	return nil
}

// compileAvroDec compiles the reading of writer schema w as type t.
func compileAvroDec(w avro.Schema, t types.Type) (avroDec, error) {
	w = deref(w)
	t = t.WithoutTimeAttr()
	if u, ok := w.(*avro.UnionSchema); ok {
		branches := u.Types()
		decs := make([]avroDec, len(branches))
		readable := false
		for i, b := range branches {
			if deref(b).Type() == avro.Null {
				decs[i] = func(*avroReader) (types.Value, error) { return types.NullValue, nil }
				continue
			}
			dec, err := compileAvroDec(b, t)
			if err != nil {
				// Avro fails only when a record holds the branch the reader cannot read.
				msg := err
				dec = func(*avroReader) (types.Value, error) { return types.Value{}, msg }
			} else {
				readable = true
			}
			decs[i] = dec
		}
		if !readable {
			return nil, cannotRead(w, t)
		}
		return func(r *avroReader) (types.Value, error) {
			at := r.i
			n, err := r.long()
			if err != nil {
				return types.Value{}, err
			}
			if n < 0 || n >= int64(len(decs)) {
				return types.Value{}, fmt.Errorf("union branch %d at byte %d: the union has %d", n, at, len(decs))
			}
			return decs[n](r)
		}, nil
	}
	lt := logicalOf(w)
	var ltype avro.LogicalType
	if lt != nil {
		ltype = lt.Type()
	}
	switch w.Type() {
	case avro.Null:
		return func(*avroReader) (types.Value, error) { return types.NullValue, nil }, nil
	case avro.Boolean:
		if t.Kind != types.Boolean {
			return nil, cannotRead(w, t)
		}
		return func(r *avroReader) (types.Value, error) {
			b, err := r.fixed(1)
			if err != nil {
				return types.Value{}, err
			}
			return types.BoolValue(b[0] != 0), nil
		}, nil
	case avro.Int, avro.Long:
		return compileAvroNumber(w, ltype, t)
	case avro.Float:
		switch t.Kind {
		case types.Float, types.Double:
			k := t.Kind
			return func(r *avroReader) (types.Value, error) {
				b, err := r.fixed(4)
				if err != nil {
					return types.Value{}, err
				}
				f := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
				if k == types.Float {
					return types.FloatValue(f), nil
				}
				return types.DoubleValue(f), nil
			}, nil
		}
		return nil, cannotRead(w, t)
	case avro.Double:
		if t.Kind != types.Double {
			return nil, cannotRead(w, t)
		}
		return func(r *avroReader) (types.Value, error) {
			b, err := r.fixed(8)
			if err != nil {
				return types.Value{}, err
			}
			return types.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(b))), nil
		}, nil
	case avro.String, avro.Bytes:
		if ltype == avro.Decimal && w.Type() == avro.Bytes {
			if t.Kind != types.Decimal {
				return nil, cannotRead(w, t)
			}
			ws := lt.(*avro.DecimalLogicalSchema).Scale()
			return func(r *avroReader) (types.Value, error) {
				b, err := r.bytes()
				if err != nil {
					return types.Value{}, err
				}
				return avroDecimal(b, ws, t), nil
			}, nil
		}
		text := w.Type() == avro.String
		switch {
		case t.IsString():
			return func(r *avroReader) (types.Value, error) {
				b, err := r.bytes()
				if err != nil {
					return types.Value{}, err
				}
				if text && !utf8.Valid(b) {
					return types.Value{}, errors.New("string is not valid UTF-8")
				}
				return types.StringValue(string(b)), nil
			}, nil
		case t.Kind == types.Bytes:
			return func(r *avroReader) (types.Value, error) {
				b, err := r.bytes()
				if err != nil {
					return types.Value{}, err
				}
				return types.BytesValue(b), nil
			}, nil
		}
		return nil, cannotRead(w, t)
	case avro.Fixed:
		size := w.(*avro.FixedSchema).Size()
		if ltype == avro.Decimal {
			if t.Kind != types.Decimal {
				return nil, cannotRead(w, t)
			}
			ws := lt.(*avro.DecimalLogicalSchema).Scale()
			return func(r *avroReader) (types.Value, error) {
				b, err := r.fixed(size)
				if err != nil {
					return types.Value{}, err
				}
				return avroDecimal(b, ws, t), nil
			}, nil
		}
		if t.Kind != types.Bytes {
			return nil, cannotRead(w, t)
		}
		return func(r *avroReader) (types.Value, error) {
			b, err := r.fixed(size)
			if err != nil {
				return types.Value{}, err
			}
			return types.BytesValue(b), nil
		}, nil
	case avro.Enum:
		if !t.IsString() {
			return nil, cannotRead(w, t)
		}
		symbols := w.(*avro.EnumSchema).Symbols()
		vals := make([]types.Value, len(symbols))
		for i, s := range symbols {
			vals[i] = types.StringValue(s)
		}
		return func(r *avroReader) (types.Value, error) {
			at := r.i
			n, err := r.int()
			if err != nil {
				return types.Value{}, err
			}
			if n < 0 || n >= int64(len(vals)) {
				return types.Value{}, fmt.Errorf("enum symbol %d at byte %d: the enum has %d", n, at, len(vals))
			}
			return vals[n], nil
		}, nil
	case avro.Array:
		if t.Kind != types.Array {
			return nil, cannotRead(w, t)
		}
		elem, err := compileAvroDec(w.(*avro.ArraySchema).Items(), *t.Elem)
		if err != nil {
			return nil, nest("[]", err)
		}
		return func(r *avroReader) (types.Value, error) {
			var out []types.Value
			err := r.blocks(avroMaxItems, func() error {
				v, err := elem(r)
				if err != nil {
					return nest(fmt.Sprintf("[%d]", len(out)), err)
				}
				out = append(out, v)
				return nil
			})
			if err != nil {
				return types.Value{}, err
			}
			if out == nil {
				out = []types.Value{}
			}
			return types.ArrayValue(out), nil
		}, nil
	case avro.Map:
		if t.Kind != types.Map || !t.Key.IsString() {
			return nil, cannotRead(w, t)
		}
		val, err := compileAvroDec(w.(*avro.MapSchema).Values(), *t.Elem)
		if err != nil {
			return nil, nest("[]", err)
		}
		return func(r *avroReader) (types.Value, error) {
			var out []types.MapEntry
			// no bound on the entries: each key takes at least a byte of the record
			err := r.blocks(math.MaxInt64, func() error {
				k, err := r.bytes()
				if err != nil {
					return err
				}
				v, err := val(r)
				if err != nil {
					return nest("["+string(k)+"]", err)
				}
				out = append(out, types.MapEntry{Key: types.StringValue(string(k)), Value: v})
				return nil
			})
			if err != nil {
				return types.Value{}, err
			}
			if out == nil {
				out = []types.MapEntry{}
			}
			return types.MapValue(out), nil
		}, nil
	case avro.Record:
		if t.Kind != types.Struct {
			return nil, cannotRead(w, t)
		}
		rd, err := compileAvroRecord(w, t.Fields)
		if err != nil {
			return nil, nestDot(err)
		}
		return func(r *avroReader) (types.Value, error) {
			row := make([]types.Value, rd.width)
			if err := rd.read(r, row); err != nil {
				return types.Value{}, nestDot(err)
			}
			return types.RowValue(row), nil
		}, nil
	}
	return nil, cannotRead(w, t)
}

// nestDot makes a nested field path read "parent.child".
func nestDot(err error) error {
	var pe *pathError
	if errors.As(err, &pe) && !strings.HasPrefix(pe.path, "[") && !strings.HasPrefix(pe.path, ".") {
		return &pathError{path: "." + pe.path, err: pe.err}
	}
	return err
}

// compileAvroNumber reads an int or long (with its logical type) as t.
func compileAvroNumber(w avro.Schema, lt avro.LogicalType, t types.Type) (avroDec, error) {
	read := (*avroReader).long
	if w.Type() == avro.Int {
		read = (*avroReader).int
	}
	conv := func(f func(n int64) types.Value) avroDec {
		return func(r *avroReader) (types.Value, error) {
			n, err := read(r)
			if err != nil {
				return types.Value{}, err
			}
			return f(n), nil
		}
	}
	switch lt {
	case avro.Date:
		if t.Kind == types.Date {
			return conv(types.DateValue), nil
		}
	case avro.TimeMillis, avro.TimeMicros:
		if t.Kind == types.Time {
			scale := int64(1000)
			if lt == avro.TimeMicros {
				scale = 1
			}
			return conv(func(n int64) types.Value { return types.TimeValue(n * scale) }), nil
		}
	case avro.TimestampMillis, avro.TimestampMicros, avro.LocalTimestampMillis, avro.LocalTimestampMicros:
		if t.IsTimestamp() {
			scale := int64(1000)
			if lt == avro.TimestampMicros || lt == avro.LocalTimestampMicros {
				scale = 1
			}
			return conv(avroTimestamp(t, scale)), nil
		}
	}
	switch t.Kind {
	case types.TinyInt, types.SmallInt, types.Int:
		if w.Type() != avro.Int {
			return nil, cannotRead(w, t)
		}
		k := t.Kind
		bits := map[types.Kind]uint{types.TinyInt: 8, types.SmallInt: 16, types.Int: 32}[k]
		// Flink narrows with Java's byteValue/shortValue: the low bits.
		return conv(func(n int64) types.Value { return types.IntValue(k, n<<(64-bits)>>(64-bits)) }), nil
	case types.BigInt:
		return conv(types.BigIntValue), nil
	case types.Float:
		return conv(func(n int64) types.Value { return types.FloatValue(float64(float32(n))) }), nil
	case types.Double:
		return conv(func(n int64) types.Value { return types.DoubleValue(float64(n)) }), nil
	case types.Date:
		if w.Type() == avro.Int {
			return conv(types.DateValue), nil
		}
	case types.Time:
		if w.Type() == avro.Int {
			return conv(func(n int64) types.Value { return types.TimeValue(n * 1000) }), nil
		}
		if w.Type() == avro.Long && avroConnectName(w) == "io.debezium.time.MicroTime" {
			return conv(types.TimeValue), nil
		}
	case types.Timestamp, types.TimestampLTZ:
		if w.Type() == avro.Long {
			// No logical type: milliseconds, as Flink's converter reads a long, unless
			// Kafka Connect's name says otherwise (Debezium's MicroTimestamp, with
			// time.precision.mode adaptive, the default).
			switch avroConnectName(w) {
			case "io.debezium.time.MicroTimestamp":
				return conv(avroTimestamp(t, 1)), nil
			case "io.debezium.time.NanoTimestamp":
				return conv(func(n int64) types.Value { return avroTimestamp(t, 1)(floorDiv(n, 1000)) }), nil
			}
			return conv(avroTimestamp(t, 1000)), nil
		}
	}
	return nil, cannotRead(w, t)
}

// avroConnectName is the "connect.name" property Kafka Connect's AvroConverter gives a
// schema of a logical type of its own ("" when none).
func avroConnectName(w avro.Schema) string {
	p, ok := w.(interface{ Prop(string) any })
	if !ok {
		return ""
	}
	name, _ := p.Prop("connect.name").(string)
	return name
}

func avroTimestamp(t types.Type, scale int64) func(int64) types.Value {
	trunc := int64(1)
	for p := t.Prec; p < 6; p++ {
		trunc *= 10
	}
	mk := types.TimestampValue
	if t.Kind == types.TimestampLTZ {
		mk = types.TimestampLTZValue
	}
	return func(n int64) types.Value {
		us := n * scale
		if trunc > 1 {
			us -= ((us % trunc) + trunc) % trunc
		}
		return mk(us)
	}
}

// avroDecimal reads a big-endian two's complement unscaled value of scale ws as
// DECIMAL(p, s): rounded half up to s, NULL when it does not fit p digits (as Flink's
// DecimalData.fromBigDecimal).
func avroDecimal(b []byte, ws int, t types.Type) types.Value {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	r := new(big.Rat).SetFrac(u, pow10(ws))
	unscaled := u
	if ws != t.Scale {
		unscaled = roundUnscaled(r, t.Scale)
		r = new(big.Rat).SetFrac(unscaled, pow10(t.Scale))
	}
	if t.Prec > 0 && new(big.Int).Abs(unscaled).Cmp(pow10(t.Prec)) >= 0 {
		return types.NullValue
	}
	return types.DecimalValue(r)
}

// avroSkipper returns a function that skips one value of schema w.
func avroSkipper(w avro.Schema) func(r *avroReader) error {
	w = deref(w)
	switch w.Type() {
	case avro.Null:
		return func(*avroReader) error { return nil }
	case avro.Boolean:
		return func(r *avroReader) error { _, err := r.fixed(1); return err }
	case avro.Int, avro.Long, avro.Enum:
		return func(r *avroReader) error { _, err := r.long(); return err }
	case avro.Float:
		return func(r *avroReader) error { _, err := r.fixed(4); return err }
	case avro.Double:
		return func(r *avroReader) error { _, err := r.fixed(8); return err }
	case avro.String, avro.Bytes:
		return func(r *avroReader) error { _, err := r.bytes(); return err }
	case avro.Fixed:
		n := w.(*avro.FixedSchema).Size()
		return func(r *avroReader) error { _, err := r.fixed(n); return err }
	case avro.Union:
		branches := w.(*avro.UnionSchema).Types()
		skips := make([]func(*avroReader) error, len(branches))
		for i, b := range branches {
			skips[i] = avroLazySkipper(b)
		}
		return func(r *avroReader) error {
			n, err := r.long()
			if err != nil {
				return err
			}
			if n < 0 || n >= int64(len(skips)) {
				return fmt.Errorf("union branch %d: the union has %d", n, len(skips))
			}
			return skips[n](r)
		}
	case avro.Array, avro.Map:
		var item func(*avroReader) error
		isMap := w.Type() == avro.Map
		if isMap {
			item = avroLazySkipper(w.(*avro.MapSchema).Values())
		} else {
			item = avroLazySkipper(w.(*avro.ArraySchema).Items())
		}
		return func(r *avroReader) error {
			for {
				n, err := r.long()
				if err != nil {
					return err
				}
				if n == 0 {
					return nil
				}
				if n < 0 { // a block with its size: skip it whole
					size, err := r.long()
					if err != nil {
						return err
					}
					if _, err := r.fixed(int(min(size, math.MaxInt32))); err != nil {
						return err
					}
					continue
				}
				for ; n > 0; n-- {
					if isMap {
						if _, err := r.bytes(); err != nil {
							return err
						}
					}
					if err := item(r); err != nil {
						return err
					}
				}
			}
		}
	case avro.Record:
		fields := w.(*avro.RecordSchema).Fields()
		skips := make([]func(*avroReader) error, len(fields))
		for i, f := range fields {
			skips[i] = avroLazySkipper(f.Type())
		}
		return func(r *avroReader) error {
			for _, s := range skips {
				if err := s(r); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return func(*avroReader) error { return fmt.Errorf("cannot skip avro %s", w.Type()) }
}

// avroLazySkipper compiles the skipper of a named type on first use, so that a
// recursive schema (a record referring to itself) compiles.
func avroLazySkipper(w avro.Schema) func(r *avroReader) error {
	if _, ok := w.(*avro.RefSchema); !ok {
		return avroSkipper(w)
	}
	var skip func(*avroReader) error
	return func(r *avroReader) error {
		if skip == nil {
			skip = avroSkipper(w)
		}
		return skip(r)
	}
}

// Encoding

// avroEnc appends one value.
type avroEnc func(dst []byte, v types.Value) ([]byte, error)

func appendAvroLong(dst []byte, n int64) []byte {
	u := uint64(n<<1) ^ uint64(n>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

func appendAvroBytes(dst []byte, s string) []byte {
	dst = appendAvroLong(dst, int64(len(s)))
	return append(dst, s...)
}

// avroRecordEnc writes a row as a writer record: each field from a column (by name) or,
// when no column has its name, its default.
type avroRecordEnc struct {
	fields []avroFieldEnc
}

type avroFieldEnc struct {
	name string
	col  int // -1: write def
	enc  avroEnc
	def  []byte
}

func (e *avroRecordEnc) write(dst []byte, row []types.Value) ([]byte, error) {
	var err error
	for i := range e.fields {
		f := &e.fields[i]
		if f.col < 0 {
			dst = append(dst, f.def...)
			continue
		}
		if dst, err = f.enc(dst, row[f.col]); err != nil {
			return dst, nest(f.name, err)
		}
	}
	return dst, nil
}

func compileAvroRecordEnc(w avro.Schema, fields []types.Field) (*avroRecordEnc, error) {
	rec, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("the schema is a %s, not a record", deref(w).Type())
	}
	e := &avroRecordEnc{}
	used := make([]bool, len(fields))
	for _, wf := range rec.Fields() {
		fe := avroFieldEnc{name: wf.Name(), col: -1}
		for i, f := range fields {
			if f.Name == wf.Name() {
				fe.col = i
				used[i] = true
				enc, err := compileAvroEnc(wf.Type(), f.Type)
				if err != nil {
					return nil, nest(f.Name, err)
				}
				fe.enc = enc
				break
			}
		}
		if fe.col < 0 {
			if !wf.HasDefault() {
				return nil, &pathError{path: wf.Name(), err: fmt.Errorf("the schema's field has no column of that name and no default")}
			}
			def, err := avroDefaultBytes(wf)
			if err != nil {
				return nil, nest(wf.Name(), err)
			}
			fe.def = def
		}
		e.fields = append(e.fields, fe)
	}
	for i, f := range fields {
		if !used[i] {
			return nil, &pathError{path: f.Name, err: fmt.Errorf("the schema %s has no field for the column", rec.FullName())}
		}
	}
	return e, nil
}

// avroDefaultBytes encodes a field's default with hamba/avro (defaults are JSON values
// in the schema, which hamba has already converted to Go values of the field's type).
func avroDefaultBytes(f *avro.Field) ([]byte, error) {
	d := f.Default()
	s := f.Type()
	if u, ok := deref(s).(*avro.UnionSchema); ok && d == nil {
		// a null default is the first branch, which must be null
		if deref(u.Types()[0]).Type() == avro.Null {
			return []byte{0}, nil
		}
	}
	return avro.Marshal(s, d)
}

func cannotWrite(w avro.Schema, t types.Type) error {
	return fmt.Errorf("%w: %s cannot be written as avro %s", ErrUnsupportedType, t, avroTypeName(w))
}

// compileAvroEnc compiles the writing of type t as writer schema w.
func compileAvroEnc(w avro.Schema, t types.Type) (avroEnc, error) {
	w = deref(w)
	t = t.WithoutTimeAttr()
	if u, ok := w.(*avro.UnionSchema); ok {
		nullIdx, valIdx := -1, -1
		var val avroEnc
		var firstErr error
		for i, b := range u.Types() {
			if deref(b).Type() == avro.Null {
				if nullIdx < 0 {
					nullIdx = i
				}
				continue
			}
			if val != nil {
				continue
			}
			enc, err := compileAvroEnc(b, t)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			val, valIdx = enc, i
		}
		if val == nil {
			if firstErr == nil {
				firstErr = cannotWrite(w, t)
			}
			return nil, firstErr
		}
		return func(dst []byte, v types.Value) ([]byte, error) {
			if v.IsNull() {
				if nullIdx < 0 {
					return dst, errors.New("NULL cannot be written: the union has no null branch")
				}
				return appendAvroLong(dst, int64(nullIdx)), nil
			}
			return val(appendAvroLong(dst, int64(valIdx)), v)
		}, nil
	}
	enc, err := compileAvroEncNonNull(w, t)
	if err != nil {
		return nil, err
	}
	if w.Type() == avro.Null {
		return enc, nil
	}
	return func(dst []byte, v types.Value) ([]byte, error) {
		if v.IsNull() {
			return dst, errors.New("NULL cannot be written: the avro type is not nullable")
		}
		return enc(dst, v)
	}, nil
}

func compileAvroEncNonNull(w avro.Schema, t types.Type) (avroEnc, error) {
	lt := logicalOf(w)
	var ltype avro.LogicalType
	if lt != nil {
		ltype = lt.Type()
	}
	long := func(f func(v types.Value) int64) avroEnc {
		return func(dst []byte, v types.Value) ([]byte, error) { return appendAvroLong(dst, f(v)), nil }
	}
	switch w.Type() {
	case avro.Null:
		return func(dst []byte, v types.Value) ([]byte, error) {
			if !v.IsNull() {
				return dst, errors.New("a value cannot be written as avro null")
			}
			return dst, nil
		}, nil
	case avro.Boolean:
		if t.Kind == types.Boolean {
			return func(dst []byte, v types.Value) ([]byte, error) {
				if v.Bool() {
					return append(dst, 1), nil
				}
				return append(dst, 0), nil
			}, nil
		}
	case avro.Int:
		switch {
		case ltype == avro.Date && t.Kind == types.Date, ltype == "" && (t.Kind == types.TinyInt || t.Kind == types.SmallInt || t.Kind == types.Int):
			return long(types.Value.Int), nil
		case ltype == avro.TimeMillis && t.Kind == types.Time:
			return long(func(v types.Value) int64 { return v.Int() / 1000 }), nil
		}
	case avro.Long:
		switch {
		case ltype == "" && t.IsInteger():
			return long(types.Value.Int), nil
		case ltype == avro.TimeMicros && t.Kind == types.Time:
			return long(types.Value.Int), nil
		case (ltype == avro.TimestampMillis || ltype == avro.LocalTimestampMillis) && t.IsTimestamp():
			return long(func(v types.Value) int64 { return floorDiv(v.Int(), 1000) }), nil
		case (ltype == avro.TimestampMicros || ltype == avro.LocalTimestampMicros) && t.IsTimestamp():
			return long(types.Value.Int), nil
		}
	case avro.Float:
		if t.Kind == types.Float || t.IsInteger() {
			return func(dst []byte, v types.Value) ([]byte, error) {
				return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v.Float()))), nil
			}, nil
		}
	case avro.Double:
		if t.Kind == types.Double || t.Kind == types.Float || t.IsInteger() {
			return func(dst []byte, v types.Value) ([]byte, error) {
				return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float())), nil
			}, nil
		}
	case avro.String:
		if t.IsString() {
			return func(dst []byte, v types.Value) ([]byte, error) { return appendAvroBytes(dst, v.Str()), nil }, nil
		}
	case avro.Bytes:
		if ltype == avro.Decimal {
			if t.Kind != types.Decimal && !t.IsInteger() {
				break
			}
			scale := lt.(*avro.DecimalLogicalSchema).Scale()
			return func(dst []byte, v types.Value) ([]byte, error) {
				b := avroUnscaledBytes(v.Rat(), scale)
				dst = appendAvroLong(dst, int64(len(b)))
				return append(dst, b...), nil
			}, nil
		}
		if t.Kind == types.Bytes || t.IsString() {
			return func(dst []byte, v types.Value) ([]byte, error) { return appendAvroBytes(dst, v.Str()), nil }, nil
		}
	case avro.Fixed:
		size := w.(*avro.FixedSchema).Size()
		if ltype == avro.Decimal && (t.Kind == types.Decimal || t.IsInteger()) {
			scale := lt.(*avro.DecimalLogicalSchema).Scale()
			return func(dst []byte, v types.Value) ([]byte, error) {
				b := avroUnscaledBytes(v.Rat(), scale)
				if len(b) > size {
					return dst, fmt.Errorf("decimal %s does not fit avro fixed(%d)", v, size)
				}
				pad := byte(0)
				if len(b) > 0 && b[0]&0x80 != 0 {
					pad = 0xff
				}
				for i := len(b); i < size; i++ {
					dst = append(dst, pad)
				}
				return append(dst, b...), nil
			}, nil
		}
		if t.Kind == types.Bytes {
			return func(dst []byte, v types.Value) ([]byte, error) {
				if len(v.Str()) != size {
					return dst, fmt.Errorf("%d bytes cannot be written as avro fixed(%d)", len(v.Str()), size)
				}
				return append(dst, v.Str()...), nil
			}, nil
		}
	case avro.Enum:
		if t.IsString() {
			symbols := w.(*avro.EnumSchema).Symbols()
			return func(dst []byte, v types.Value) ([]byte, error) {
				for i, s := range symbols {
					if s == v.Str() {
						return appendAvroLong(dst, int64(i)), nil
					}
				}
				return dst, fmt.Errorf("%q is not a symbol of enum %s", v.Str(), w.(*avro.EnumSchema).FullName())
			}, nil
		}
	case avro.Array:
		if t.Kind == types.Array {
			elem, err := compileAvroEnc(w.(*avro.ArraySchema).Items(), *t.Elem)
			if err != nil {
				return nil, nest("[]", err)
			}
			return func(dst []byte, v types.Value) ([]byte, error) {
				es := v.Elems()
				var err error
				if len(es) > 0 {
					dst = appendAvroLong(dst, int64(len(es)))
					for i, e := range es {
						if dst, err = elem(dst, e); err != nil {
							return dst, nest(fmt.Sprintf("[%d]", i), err)
						}
					}
				}
				return append(dst, 0), nil
			}, nil
		}
	case avro.Map:
		if t.Kind == types.Map && t.Key.IsString() {
			val, err := compileAvroEnc(w.(*avro.MapSchema).Values(), *t.Elem)
			if err != nil {
				return nil, nest("[]", err)
			}
			return func(dst []byte, v types.Value) ([]byte, error) {
				es := v.Entries()
				var err error
				if len(es) > 0 {
					dst = appendAvroLong(dst, int64(len(es)))
					for _, e := range es {
						if e.Key.IsNull() {
							return dst, errors.New("a NULL map key cannot be written in avro")
						}
						dst = appendAvroBytes(dst, e.Key.Str())
						if dst, err = val(dst, e.Value); err != nil {
							return dst, nest("["+e.Key.Str()+"]", err)
						}
					}
				}
				return append(dst, 0), nil
			}, nil
		}
	case avro.Record:
		if t.Kind == types.Struct {
			re, err := compileAvroRecordEnc(w, t.Fields)
			if err != nil {
				return nil, nestDot(err)
			}
			return func(dst []byte, v types.Value) ([]byte, error) {
				dst, err := re.write(dst, v.Elems())
				return dst, nestDot(err)
			}, nil
		}
	}
	return nil, cannotWrite(w, t)
}

// avroUnscaledBytes is r at scale as the minimal big-endian two's complement bytes
// (Java's BigInteger.toByteArray, what Avro's decimal conversion writes).
func avroUnscaledBytes(r *big.Rat, scale int) []byte {
	u := roundUnscaled(r, scale)
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// two's complement of a negative number: 2^(8n) + u for the smallest n that keeps the sign bit
	n := (u.BitLen() + 8) / 8
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	m.Add(m, u)
	b := m.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	// drop redundant leading 0xff bytes
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}
