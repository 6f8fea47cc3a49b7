package agg

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Aggregates over an updating input
//
// A GroupAggregate over a changelog (a CDC source, an aggregate of an aggregate) must
// take rows back: a -U or -D retracts a row added before. Retracter is the buffer
// method for that. COUNT, SUM and AVG retract by subtracting (their counter and numeric
// buffers). MIN and MAX cannot: the next smallest value is gone once the smallest is
// retracted, so under retraction they keep every value with its count (Flink's
// MinWithRetractAggFunction keeps the same map), and so do the DISTINCT aggregates
// (COUNT(DISTINCT x) counts the values whose count is above zero): a bitmap cannot tell
// whether a retracted value is still there. NewRetracting picks these buffers; New's
// roaring bitmaps stay the state of insert-only input.

// Retracter is implemented by the buffers of NewRetracting's Funcs.
type Retracter interface {
	// Retract takes back one value Add added; NULLs are ignored as Add ignores them.
	Retract(v types.Value) error
}

// tagMultiset is the layout tag of a multiset buffer (values with their counts). It is
// part of the snapshot format: never renumber (codec.go holds the others).
const tagMultiset byte = 13

// NewRetracting is New for an aggregation over an updating input: every buffer of the
// returned Func implements Retracter.
func NewRetracting(call planner.AggCall, argType types.Type) (Func, error) {
	if call.Func == planner.AggCollect {
		return newCollect(call, argType)
	}
	if isOrdered(call.Func) {
		return newOrdered(call, argType, true) // ordered.go
	}
	if call.Func != planner.AggMin && call.Func != planner.AggMax && !call.Distinct && call.Func != planner.AggApproxCountDi {
		call.State = "" // counter, sum, or sum and count: they subtract
		return New(call, argType)
	}
	// Check the call as New would, and compute the non-distinct call over the values.
	plainCall := call
	plainCall.Distinct, plainCall.State = false, ""
	if call.Func == planner.AggApproxCountDi {
		plainCall.Func = planner.AggCount
	}
	p, err := New(plainCall, argType)
	if err != nil {
		return nil, err
	}
	if call.Distinct || call.Func == planner.AggApproxCountDi {
		check := call
		check.State = ""
		if _, err := New(check, argType); err != nil {
			return nil, err
		}
	}
	pf := p.(*function)
	return &multisetFunc{plain: pf, distinct: call.Distinct || call.Func == planner.AggApproxCountDi,
		name: "retracting " + callName(call, argType)}, nil
}

// newCollect is COLLECT(x): the multiset of the values is the state and the result
// (a MAP of each value to its count, once each under DISTINCT), whether or not the
// input retracts.
func newCollect(call planner.AggCall, argType types.Type) (Func, error) {
	if call.Arg < 0 || argType.Kind == types.Null {
		return nil, &CallError{Call: callName(call, argType), Err: fmt.Errorf("%w: COLLECT needs a typed argument", ErrUnsupported)}
	}
	// COUNT(x) checks the values as COLLECT takes them: any type, NULLs ignored.
	p, err := New(planner.AggCall{Func: planner.AggCount, Arg: call.Arg, Filter: -1, T: types.TypeBigInt.WithNotNull(true)}, argType)
	if err != nil {
		return nil, err
	}
	return &multisetFunc{plain: p.(*function), distinct: call.Distinct, collect: true, name: callName(call, argType)}, nil
}

// multisetFunc keeps, per buffer, each value with the number of times it was added
// minus the times it was retracted.
type multisetFunc struct {
	plain    *function // the call without DISTINCT, computed over the values
	distinct bool      // each value counts once
	collect  bool      // COLLECT: the result is the values with their counts
	name     string
}

func (f *multisetFunc) NewBuffer() Buffer {
	return &multiset{f: f, vals: map[string]*msEntry{}, dirty: true}
}

func (f *multisetFunc) RestoreBuffer(data []byte) (Buffer, error) {
	r, err := openSnapshot(f.name, data, tagMultiset)
	if err != nil {
		return nil, err
	}
	b := &multiset{f: f, vals: map[string]*msEntry{}}
	n := r.count(2)
	for range n {
		v := r.value()
		c := r.varint()
		if r.err != nil {
			break
		}
		if c <= 0 {
			r.fail("count %d of a value", c)
			break
		}
		if v.IsNull() || family(v.Kind()) != f.plain.argFamily {
			r.fail("%s value in a %s buffer", v.Kind(), f.name)
			break
		}
		k := string(appendValue(nil, v, true))
		if b.vals[k] != nil {
			r.fail("a value appears twice")
			break
		}
		b.vals[k] = &msEntry{v: v, n: c}
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	b.recompute()
	return b, nil
}

func (f *multisetFunc) AppendShared(dst []byte) ([]byte, error) {
	return f.plain.AppendShared(dst)
}
func (f *multisetFunc) RestoreShared(data []byte) error { return f.plain.RestoreShared(data) }
func (f *multisetFunc) SharedMark() uint64              { return f.plain.SharedMark() }
func (f *multisetFunc) AppendSharedSince(dst []byte, mark uint64) ([]byte, error) {
	return f.plain.AppendSharedSince(dst, mark)
}
func (f *multisetFunc) SharedView(mark uint64) (*SharedSnapshot, error) {
	return f.plain.SharedView(mark)
}
func (f *multisetFunc) SharedBytes() int                  { return 0 }
func (f *multisetFunc) CompactShared(live []Buffer) error { return nil }
func (f *multisetFunc) StateKind() planner.StateKind      { return planner.StateRetractMultiset }

type msEntry struct {
	v types.Value
	n int64
}

// multiset is the buffer of a multisetFunc. MIN and MAX keep their result and look for
// the next one only when the last copy of the result is retracted.
type multiset struct {
	f     *multisetFunc
	vals  map[string]*msEntry
	res   types.Value
	dirty bool
	key   []byte
}

func (b *multiset) Add(v types.Value) error { return b.change(v, 1) }

func (b *multiset) Retract(v types.Value) error { return b.change(v, -1) }

func (b *multiset) change(v types.Value, d int64) error {
	if v.IsNull() {
		return nil
	}
	if err := b.f.plain.checkValue(v); err != nil {
		return err
	}
	b.key = appendValue(b.key[:0], v, true)
	e := b.vals[string(b.key)]
	switch {
	case e == nil && d < 0:
		return nil // retracting a value that is not there: nothing to take back, as Flink
	case e == nil:
		e = &msEntry{v: ownValue(v)}
		b.vals[string(b.key)] = e
	}
	e.n += d
	b.dirty = true
	gone := e.n <= 0
	if gone {
		delete(b.vals, string(b.key))
	}
	switch b.f.plain.call.Func {
	case planner.AggMin, planner.AggMax:
		max := b.f.plain.call.Func == planner.AggMax
		switch {
		case d > 0 && (b.res.IsNull() || better(v, b.res, max)):
			b.res = e.v
		case gone && !b.res.IsNull() && types.Compare(v, b.res) == 0:
			b.recompute()
		}
	default:
		b.res = types.Value{}
	}
	return nil
}

// better reports whether v beats the current result r: larger for MAX, smaller for MIN.
func better(v, r types.Value, max bool) bool {
	c := types.Compare(v, r)
	return max && c > 0 || !max && c < 0
}

// recompute computes the result from the values.
func (b *multiset) recompute() {
	switch b.f.plain.call.Func {
	case planner.AggMin, planner.AggMax:
		max := b.f.plain.call.Func == planner.AggMax
		b.res = types.NullValue
		for _, e := range b.vals {
			if b.res.IsNull() || better(e.v, b.res, max) {
				b.res = e.v
			}
		}
	default:
		b.res = types.Value{}
	}
}

func (b *multiset) Merge(other Buffer) error {
	o, ok := other.(*multiset)
	if !ok || o.f != b.f {
		return fmt.Errorf("%w: cannot merge %T into %s", ErrUnsupported, other, b.f.name)
	}
	for _, e := range o.vals {
		for range e.n {
			if err := b.Add(e.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *multiset) Result() types.Value {
	if b.f.collect {
		return b.collected()
	}
	switch b.f.plain.call.Func {
	case planner.AggMin, planner.AggMax:
		if b.res.Kind() == types.Null {
			return types.NullValue
		}
		return b.res
	}
	// COUNT, SUM, AVG (DISTINCT): the plain call over each value (once when distinct).
	buf := b.f.plain.NewBuffer()
	keys := make([]string, 0, len(b.vals))
	for k := range b.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a float sum does not depend on map order
	for _, k := range keys {
		e := b.vals[k]
		n := e.n
		if b.f.distinct {
			n = 1
		}
		if nb, ok := buf.(*numeric); ok && !b.f.distinct {
			nb.addTimes(e.v, n)
			continue
		}
		for range n {
			_ = buf.Add(e.v) // checked when added
		}
	}
	return buf.Result()
}

// collected is COLLECT's result: the values in the order of their encoding (so that
// equal multisets print alike), each with its count.
func (b *multiset) collected() types.Value {
	keys := make([]string, 0, len(b.vals))
	for k := range b.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	entries := make([]types.MapEntry, len(keys))
	for i, k := range keys {
		e := b.vals[k]
		n := e.n
		if b.f.distinct {
			n = 1
		}
		entries[i] = types.MapEntry{Key: e.v, Value: types.IntValue(types.Int, n)}
	}
	return types.MapValue(entries)
}

func (b *multiset) Dirty() bool { return b.dirty }

func (b *multiset) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, tagMultiset)
	keys := make([]string, 0, len(b.vals))
	for k := range b.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		e := b.vals[k]
		dst = appendValue(dst, e.v, false)
		dst = binary.AppendVarint(dst, e.n)
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}

// addTimes adds v n times.
func (b *numeric) addTimes(v types.Value, n int64) {
	b.count += n
	switch b.f.acc {
	case accInt:
		b.i += v.Int() * n
	case accFloat:
		b.x += v.Float() * float64(n)
	case accDec:
		if b.d == nil {
			b.d = new(big.Rat)
		}
		b.d.Add(b.d, new(big.Rat).Mul(v.Rat(), new(big.Rat).SetInt64(n)))
	}
	b.dirty = true
}

// Retract takes back a COUNT input.
func (b *counter) Retract(v types.Value) error {
	if !v.IsNull() {
		b.n--
		b.dirty = true
	}
	return nil
}

// Retract takes back a SUM or AVG input: the sum and the count go down.
func (b *numeric) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if err := b.f.checkValue(v); err != nil {
		return err
	}
	b.count--
	switch b.f.acc {
	case accInt:
		b.i -= v.Int()
	case accFloat:
		b.x -= v.Float()
	case accDec:
		if b.d == nil {
			b.d = new(big.Rat)
		}
		b.d.Sub(b.d, v.Rat())
	}
	if b.count == 0 {
		// Nothing left: drop the float residue of adding and subtracting.
		b.i, b.x, b.d = 0, 0, nil
	}
	b.dirty = true
	return nil
}
