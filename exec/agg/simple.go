package agg

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// counter is COUNT(*) and COUNT(x).
type counter struct {
	f     *function
	n     int64
	dirty bool
}

func (b *counter) Add(v types.Value) error {
	if !v.IsNull() {
		b.n++
		b.dirty = true
	}
	return nil
}

func (b *counter) Merge(other Buffer) error {
	o, ok := other.(*counter)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	if o.n != 0 {
		b.n += o.n
		b.dirty = true
	}
	return nil
}

func (b *counter) Result() types.Value { return intResult(b.f.resultKind, b.n) }

func (b *counter) Dirty() bool { return b.dirty }

func (b *counter) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, b.f.tag)
	dst = binary.AppendVarint(dst, b.n)
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreCounter(r *reader) Buffer {
	b := &counter{f: f, n: r.varint()}
	if b.n < 0 {
		r.fail("negative count %d", b.n)
	}
	return b
}

// intResult makes an integer of kind k from n, wrapping to k's width as Java's integer
// arithmetic (and so Flink's SUM(INT)) does on overflow.
func intResult(k types.Kind, n int64) types.Value {
	switch k {
	case types.TinyInt:
		n = int64(int8(n))
	case types.SmallInt:
		n = int64(int16(n))
	case types.Int:
		n = int64(int32(n))
	}
	return types.IntValue(k, n)
}

// numeric is SUM and AVG: a count of non-NULL inputs and their sum, kept as the result
// type needs (see accKind).
type numeric struct {
	f     *function
	count int64
	i     int64
	x     float64
	d     *big.Rat
	dirty bool
}

func (b *numeric) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if err := b.f.checkValue(v); err != nil {
		return err
	}
	b.count++
	switch b.f.acc {
	case accInt:
		b.i += v.Int()
	case accFloat:
		b.x += v.Float()
	case accDec:
		if b.d == nil {
			b.d = new(big.Rat)
		}
		b.d.Add(b.d, v.Rat())
	}
	b.dirty = true
	return nil
}

func (b *numeric) Merge(other Buffer) error {
	o, ok := other.(*numeric)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	if o.count == 0 {
		return nil
	}
	b.count += o.count
	b.i += o.i
	b.x += o.x
	if o.d != nil {
		if b.d == nil {
			b.d = new(big.Rat)
		}
		b.d.Add(b.d, o.d)
	}
	b.dirty = true
	return nil
}

func (b *numeric) Result() types.Value {
	if b.count == 0 {
		return types.NullValue
	}
	f := b.f
	avg := f.kind == planner.StateAvg
	switch f.acc {
	case accInt:
		if avg {
			return intResult(f.resultKind, b.i/b.count) // Go and Java both truncate toward zero
		}
		return intResult(f.resultKind, b.i)
	case accFloat:
		x := b.x
		if avg {
			x /= float64(b.count)
		}
		if f.resultKind == types.Float {
			return types.FloatValue(float64(float32(x)))
		}
		return types.DoubleValue(x)
	}
	sum := new(big.Rat).Set(b.d)
	if avg {
		sum.Quo(sum, new(big.Rat).SetInt64(b.count))
		sum = roundHalfUp(sum, f.resultType.Scale)
	}
	return types.DecimalValue(sum)
}

// roundHalfUp rounds r to scale decimal digits, halves away from zero (Java's
// RoundingMode.HALF_UP, which Flink's decimal division uses).
func roundHalfUp(r *big.Rat, scale int) *big.Rat {
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(scale, 0))), nil)
	num := new(big.Int).Mul(r.Num(), pow)
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if m.Abs(m).Lsh(m, 1).Cmp(r.Denom()) >= 0 {
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return new(big.Rat).SetFrac(q, pow)
}

func (b *numeric) Dirty() bool { return b.dirty }

func (b *numeric) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, b.f.tag)
	dst = binary.AppendVarint(dst, b.count)
	if b.count > 0 {
		switch b.f.acc {
		case accInt:
			dst = binary.AppendVarint(dst, b.i)
		case accFloat:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(b.x))
		case accDec:
			dst = types.AppendDecimal(dst, b.d)
		}
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreNumeric(r *reader) Buffer {
	b := &numeric{f: f, count: r.varint()}
	switch {
	case b.count < 0:
		r.fail("negative count %d", b.count)
	case b.count == 0:
	case f.acc == accInt:
		b.i = r.varint()
	case f.acc == accFloat:
		b.x = math.Float64frombits(r.u64())
	default:
		b.d = r.rat()
	}
	return b
}

// minMax is MIN and MAX (with or without DISTINCT, which changes nothing).
type minMax struct {
	f     *function
	v     types.Value // NULL until the first input
	dirty bool
}

func (b *minMax) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if err := b.f.checkValue(v); err != nil {
		return err
	}
	b.offer(v)
	return nil
}

func (b *minMax) offer(v types.Value) {
	if !b.v.IsNull() {
		c := types.Compare(v, b.v)
		if b.f.isMax && c <= 0 || !b.f.isMax && c >= 0 {
			return
		}
	}
	b.v = ownValue(v)
	b.dirty = true
}

// ownValue copies the bytes of a string value: decoders may hand out strings that alias
// a reused input buffer, and a MIN/MAX outlives the row it came from.
func ownValue(v types.Value) types.Value {
	switch v.Kind() {
	case types.Char, types.Varchar:
		return types.StringValue(strings.Clone(v.Str()))
	case types.Bytes:
		return types.BytesValue([]byte(v.Str()))
	}
	return v
}

func (b *minMax) Merge(other Buffer) error {
	o, ok := other.(*minMax)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	if !o.v.IsNull() {
		b.offer(o.v)
	}
	return nil
}

func (b *minMax) Result() types.Value { return b.v }

func (b *minMax) Dirty() bool { return b.dirty }

func (b *minMax) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, b.f.tag)
	dst = appendValue(dst, b.v, false)
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreMinMax(r *reader) Buffer {
	b := &minMax{f: f, v: r.value()}
	if r.err == nil && !b.v.IsNull() && family(b.v.Kind()) != f.argFamily {
		r.fail("%s value in a %s buffer", b.v.Kind(), f.name)
	}
	return b
}
