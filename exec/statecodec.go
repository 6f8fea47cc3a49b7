package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/pipesql/pipesql/types"
)

// Checkpointed operator state is written with this small codec: uvarints, varints and
// SQL values (group keys, last results). Aggregate buffers bring their own format
// (exec/agg, version byte first); each value an operator writes starts with
// stateVersion so that a later layout can be told apart.

// stateVersion is the first byte of every value exec writes to a checkpoint.
const stateVersion = 1

// stateDecoder reads what the append functions wrote, keeping the first error: a
// truncated or malformed value becomes an error naming the offset, never a panic.
type stateDecoder struct {
	data []byte
	off  int
	err  error
}

func (d *stateDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("byte %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

func (d *stateDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.data) {
		d.fail("truncated")
		return 0
	}
	b := d.data[d.off]
	d.off++
	return b
}

func (d *stateDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad unsigned number")
		return 0
	}
	d.off += n
	return v
}

func (d *stateDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.off += n
	return v
}

// count reads a count of items that take at least minSize bytes each, refusing counts
// the remaining bytes cannot hold (a corrupt count must not allocate gigabytes).
func (d *stateDecoder) count(minSize int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.data)-d.off)/uint64(max(minSize, 1)) {
		d.fail("count %d exceeds the remaining %d bytes", n, len(d.data)-d.off)
		return 0
	}
	return int(n)
}

func (d *stateDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.data)-d.off {
		d.fail("truncated: %d bytes wanted, %d left", n, len(d.data)-d.off)
		return nil
	}
	b := d.data[d.off : d.off+n]
	d.off += n
	return b
}

func (d *stateDecoder) lenBytes() []byte { return d.bytes(d.count(1)) }

// version checks the leading version byte.
func (d *stateDecoder) version() {
	if v := d.byte(); d.err == nil && v != stateVersion {
		d.fail("state version %d, this pipesql reads %d", v, stateVersion)
	}
}

// finish reports trailing bytes as an error.
func (d *stateDecoder) finish() error {
	if d.err == nil && d.off != len(d.data) {
		d.fail("%d unexpected trailing bytes", len(d.data)-d.off)
	}
	return d.err
}

func appendLenBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendStateValue appends v: its kind, then its payload.
func appendStateValue(dst []byte, v types.Value) []byte {
	k := v.Kind()
	dst = append(dst, byte(k))
	switch k {
	case types.Null:
	case types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.BigInt,
		types.Date, types.Time, types.Timestamp, types.TimestampLTZ,
		types.IntervalDayTime, types.IntervalYearMonth:
		dst = binary.AppendVarint(dst, v.Int())
	case types.Float, types.Double:
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float()))
	case types.Decimal:
		dst = appendLenBytes(dst, []byte(v.Rat().RatString()))
	case types.Char, types.Varchar, types.Bytes:
		dst = binary.AppendUvarint(dst, uint64(len(v.Str())))
		dst = append(dst, v.Str()...)
	case types.Array, types.Struct:
		elems := v.Elems()
		dst = binary.AppendUvarint(dst, uint64(len(elems)))
		for _, e := range elems {
			dst = appendStateValue(dst, e)
		}
	case types.Map:
		entries := v.Entries()
		dst = binary.AppendUvarint(dst, uint64(len(entries)))
		for _, e := range entries {
			dst = appendStateValue(dst, e.Key)
			dst = appendStateValue(dst, e.Value)
		}
	}
	return dst
}

// maxValueDepth bounds the nesting of composite values read back, so that corrupt data
// cannot recurse without end.
const maxValueDepth = 64

func (d *stateDecoder) value(depth int) types.Value {
	if depth > maxValueDepth {
		d.fail("values nested deeper than %d", maxValueDepth)
		return types.NullValue
	}
	k := types.Kind(d.byte())
	if d.err != nil {
		return types.NullValue
	}
	switch k {
	case types.Null:
		return types.NullValue
	case types.Boolean:
		return types.BoolValue(d.varint() != 0)
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt,
		types.Date, types.Time, types.Timestamp, types.TimestampLTZ,
		types.IntervalDayTime, types.IntervalYearMonth:
		n := d.varint()
		switch k {
		case types.Date:
			return types.DateValue(n)
		case types.Time:
			return types.TimeValue(n)
		case types.Timestamp:
			return types.TimestampValue(n)
		case types.TimestampLTZ:
			return types.TimestampLTZValue(n)
		case types.IntervalDayTime:
			return types.IntervalValue(n)
		case types.IntervalYearMonth:
			return types.IntervalMonthsValue(n)
		}
		return types.IntValue(k, n)
	case types.Float, types.Double:
		b := d.bytes(8)
		if d.err != nil {
			return types.NullValue
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if k == types.Float {
			return types.FloatValue(f)
		}
		return types.DoubleValue(f)
	case types.Decimal:
		s := d.lenBytes()
		r, ok := new(big.Rat).SetString(string(s))
		if d.err == nil && !ok {
			d.fail("bad decimal %q", s)
		}
		if d.err != nil {
			return types.NullValue
		}
		return types.DecimalValue(r)
	case types.Char, types.Varchar:
		return types.StringValue(string(d.lenBytes()))
	case types.Bytes:
		return types.BytesValue(d.lenBytes())
	case types.Array, types.Struct:
		elems := make([]types.Value, d.count(1))
		for i := range elems {
			elems[i] = d.value(depth + 1)
		}
		if k == types.Array {
			return types.ArrayValue(elems)
		}
		return types.RowValue(elems)
	case types.Map:
		entries := make([]types.MapEntry, d.count(2))
		for i := range entries {
			entries[i].Key = d.value(depth + 1)
			entries[i].Value = d.value(depth + 1)
		}
		return types.MapValue(entries)
	}
	d.fail("unknown value kind %d", k)
	return types.NullValue
}

// appendStateRow appends a row of values, its length first.
func appendStateRow(dst []byte, r types.Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	for _, v := range r {
		dst = appendStateValue(dst, v)
	}
	return dst
}

func (d *stateDecoder) row() types.Row {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	r := make(types.Row, n)
	for i := range r {
		r[i] = d.value(0)
	}
	return r
}
