package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
)

// The value encoding writes one Value as its kind byte and a payload:
//
//	BOOLEAN, integers, DATE, TIME, TIMESTAMP[_LTZ], INTERVAL  varint
//	FLOAT, DOUBLE                                             float64 bits, little endian
//	DECIMAL                                                   sign byte (1 negative), uvarint length
//	                                                          and big-endian magnitude of the numerator,
//	                                                          then of the denominator
//	CHAR, VARCHAR, BYTES                                      uvarint length, bytes
//	ARRAY, ROW                                                uvarint count, values
//	MAP                                                       uvarint count, key and value pairs
//
// It is self-delimiting, so values concatenate. An Encoding changes it where it says;
// checkpointed state stores values this way (exec with TextDecimals, exec/agg without),
// and a group key's bytes choose its key group, so none of these layouts changes
// without a state version.

// An Encoding selects a variant of the value encoding.
type Encoding uint8

const (
	// FoldKinds encodes every integer kind as BIGINT, CHAR as VARCHAR and FLOAT as DOUBLE.
	FoldKinds Encoding = 1 << iota
	// FoldFloats encodes -0.0 as 0.0 and every NaN as one NaN.
	FoldFloats
	// TextDecimals writes a DECIMAL as the uvarint length and text of big.Rat.RatString
	// rather than as AppendDecimal's sign, numerator and denominator.
	TextDecimals
)

// Canonical gives values that SQL considers equal the same bytes (a DECIMAL is its value
// whatever its scale in every encoding): the identity of a value in distinct-value sets
// and dictionaries.
const Canonical = FoldKinds | FoldFloats

// AppendValue appends the encoding enc of v to dst.
func AppendValue(dst []byte, v Value, enc Encoding) []byte {
	k := v.k
	if enc&FoldKinds != 0 {
		switch k {
		case TinyInt, SmallInt, Int:
			k = BigInt
		case Char:
			k = Varchar
		case Float:
			k = Double
		}
	}
	dst = append(dst, byte(k))
	switch k {
	case Null:
	case Boolean, TinyInt, SmallInt, Int, BigInt, Date, Time, Timestamp, TimestampLTZ,
		IntervalDayTime, IntervalYearMonth:
		dst = binary.AppendVarint(dst, v.Int())
	case Float, Double:
		f := v.Float()
		if enc&FoldFloats != 0 {
			f = CanonicalFloat(f)
		}
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	case Decimal:
		if enc&TextDecimals != 0 {
			dst = appendLenBytes(dst, []byte(v.Rat().RatString()))
		} else {
			dst = AppendDecimal(dst, v.Rat())
		}
	case Char, Varchar, Bytes:
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	case Array, Struct:
		elems := v.Elems()
		dst = binary.AppendUvarint(dst, uint64(len(elems)))
		for _, e := range elems {
			dst = AppendValue(dst, e, enc)
		}
	case Map:
		entries := v.Entries()
		dst = binary.AppendUvarint(dst, uint64(len(entries)))
		for _, e := range entries {
			dst = AppendValue(dst, e.Key, enc)
			dst = AppendValue(dst, e.Value, enc)
		}
	}
	return dst
}

// CanonicalFloat folds the float values SQL compares as equal onto one bit pattern:
// -0.0 onto 0.0, every NaN onto one NaN.
func CanonicalFloat(f float64) float64 {
	switch {
	case f == 0:
		return 0
	case math.IsNaN(f):
		return math.NaN()
	}
	return f
}

// AppendDecimal appends the payload of an encoded DECIMAL (after its kind byte): a sign
// byte, 1 for negative, then the uvarint length and big-endian magnitude of the
// numerator and of the denominator. A normalized big.Rat makes it canonical.
func AppendDecimal(dst []byte, r *big.Rat) []byte {
	sign := byte(0)
	if r.Sign() < 0 {
		sign = 1
	}
	dst = append(dst, sign)
	dst = appendLenBytes(dst, r.Num().Bytes()) // the magnitude
	return appendLenBytes(dst, r.Denom().Bytes())
}

// DecodeDecimal reads what AppendDecimal wrote at the start of b and returns it and the
// number of bytes it took.
func DecodeDecimal(b []byte) (*big.Rat, int, error) {
	d := valueDecoder{data: b}
	r := d.decimal()
	if d.err != nil {
		return nil, 0, fmt.Errorf("byte %d of a decimal: %w", d.off, d.err)
	}
	return r, d.off, nil
}

func appendLenBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// maxValueDepth bounds the nesting of ARRAY, ROW and MAP values read back, so that
// damaged input cannot recurse without end.
const maxValueDepth = 64

// errTruncated is returned when the input ends inside a value.
var errTruncated = errors.New("truncated")

// DecodeValue reads a value that AppendValue wrote with enc at the start of b (of enc
// only TextDecimals matters: folded values read back as their folded kinds), and
// returns it and the number of bytes it took. Damaged input is an error, never a panic.
func DecodeValue(b []byte, enc Encoding) (Value, int, error) {
	d := valueDecoder{data: b, textDecimals: enc&TextDecimals != 0}
	v := d.value(0)
	if d.err != nil {
		return NullValue, 0, fmt.Errorf("byte %d of a value: %w", d.off, d.err)
	}
	return v, d.off, nil
}

type valueDecoder struct {
	data         []byte
	off          int
	err          error
	textDecimals bool
}

func (d *valueDecoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *valueDecoder) byte() byte {
	if d.err != nil || d.off >= len(d.data) {
		d.fail(errTruncated)
		return 0
	}
	d.off++
	return d.data[d.off-1]
}

func (d *valueDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	n, w := binary.Uvarint(d.data[d.off:])
	if w <= 0 {
		d.fail(errors.New("bad uvarint"))
		return 0
	}
	d.off += w
	return n
}

func (d *valueDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	n, w := binary.Varint(d.data[d.off:])
	if w <= 0 {
		d.fail(errors.New("bad varint"))
		return 0
	}
	d.off += w
	return n
}

func (d *valueDecoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.data)-d.off) {
		d.fail(errTruncated)
		return nil
	}
	b := d.data[d.off : d.off+int(n)]
	d.off += int(n)
	return b
}

func (d *valueDecoder) lenBytes() []byte { return d.bytes(d.uvarint()) }

// count reads a count of items of at least minSize bytes each, refusing one the rest of
// the input cannot hold (so damaged input cannot make a huge allocation).
func (d *valueDecoder) count(minSize int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64((len(d.data)-d.off)/minSize) {
		d.fail(fmt.Errorf("count %d exceeds the remaining %d bytes", n, len(d.data)-d.off))
		return 0
	}
	return int(n)
}

func (d *valueDecoder) value(depth int) Value {
	if depth > maxValueDepth {
		d.fail(fmt.Errorf("values nested deeper than %d", maxValueDepth))
		return NullValue
	}
	k := Kind(d.byte())
	if d.err != nil {
		return NullValue
	}
	switch k {
	case Null:
		return NullValue
	case Boolean:
		return BoolValue(d.varint() != 0)
	case TinyInt, SmallInt, Int, BigInt, Date, Time, Timestamp, TimestampLTZ,
		IntervalDayTime, IntervalYearMonth:
		return Value{k: k, n: d.varint()} // what IntValue, DateValue, ... build
	case Float, Double:
		b := d.bytes(8)
		if d.err != nil {
			return NullValue
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if k == Float {
			return FloatValue(f)
		}
		return DoubleValue(f)
	case Decimal:
		if r := d.decimal(); r != nil {
			return DecimalValue(r)
		}
		return NullValue
	case Char, Varchar:
		return StringValue(string(d.lenBytes()))
	case Bytes:
		return BytesValue(d.lenBytes())
	case Array, Struct:
		elems := make([]Value, d.count(1))
		for i := range elems {
			elems[i] = d.value(depth + 1)
		}
		if k == Array {
			return ArrayValue(elems)
		}
		return RowValue(elems)
	case Map:
		entries := make([]MapEntry, d.count(2))
		for i := range entries {
			entries[i].Key = d.value(depth + 1)
			entries[i].Value = d.value(depth + 1)
		}
		return MapValue(entries)
	}
	d.fail(fmt.Errorf("unknown value kind %d", k))
	return NullValue
}

func (d *valueDecoder) decimal() *big.Rat {
	if d.textDecimals {
		s := d.lenBytes()
		if d.err != nil {
			return nil
		}
		r, ok := new(big.Rat).SetString(string(s))
		if !ok {
			d.fail(fmt.Errorf("bad decimal %q", s))
		}
		return r
	}
	sign := d.byte()
	num := new(big.Int).SetBytes(d.lenBytes())
	den := new(big.Int).SetBytes(d.lenBytes())
	if d.err != nil {
		return nil
	}
	if sign > 1 || den.Sign() == 0 {
		d.fail(errors.New("bad decimal"))
		return nil
	}
	if sign == 1 {
		num.Neg(num)
	}
	return new(big.Rat).SetFrac(num, den)
}
