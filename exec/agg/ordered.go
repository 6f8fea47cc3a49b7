package agg

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Aggregates of the input's order
//
// FIRST_VALUE, LAST_VALUE, LISTAGG and ARRAY_AGG depend on the order rows arrive in, as
// Flink's do (FIRST_VALUE is the first non-NULL value an operator saw, not the smallest
// time). Each value a Func adds gets the next number of a counter the Func owns, so that
// Merge, which combines the buffers of window slices in whatever order the operator
// merges them, still yields arrival order: values are merged by their numbers. The
// numbers are checkpointed with the values, and a restored buffer moves the counter past
// its own, so that rows added after a restore come after it.
//
// FIRST_VALUE and LAST_VALUE over an insert-only input keep one value (StateValue). Over
// an updating input (NewRetracting), and for LISTAGG and ARRAY_AGG, the buffer keeps
// every value in order (StateValueList); Retract takes back the earliest equal value,
// as Flink's ListAggWithRetractAggFunction removes the first equal element. NULLs are
// ignored but by ARRAY_AGG, which keeps them (Flink's RESPECT NULLS default).

// tagValueList is the layout tag of an ordered buffer. Part of the snapshot format:
// never renumber (codec.go and retract.go hold the others).
const tagValueList byte = 14

// orderedFunc is the Func of an aggregate of the input's order.
type orderedFunc struct {
	call  planner.AggCall
	check *function // COUNT(x) over the argument type: checks the values, owns nothing shared
	keep  keepMode
	name  string
	next  uint64 // the number the next added value gets
}

type keepMode uint8

const (
	keepAll   keepMode = iota // every value, in order
	keepFirst                 // the first non-NULL value only
	keepLast                  // the last non-NULL value only
)

func isOrdered(fn planner.AggFunc) bool {
	switch fn {
	case planner.AggFirstValue, planner.AggLastValue, planner.AggListAgg, planner.AggArrayAgg:
		return true
	}
	return false
}

// newOrdered compiles an aggregate of the input's order; retracting keeps every value
// so that any can be taken back.
func newOrdered(call planner.AggCall, argType types.Type, retracting bool) (Func, error) {
	name := callName(call, argType)
	if call.Arg < 0 || argType.Kind == types.Null {
		return nil, &CallError{Call: name, Err: fmt.Errorf("%w: %s needs a typed argument", ErrUnsupported, call.Func)}
	}
	if call.Distinct {
		return nil, &CallError{Call: name, Err: fmt.Errorf("%w: %s(DISTINCT ...)", ErrUnsupported, call.Func)}
	}
	if call.Func == planner.AggListAgg && !argType.IsString() {
		return nil, &CallError{Call: name, Err: fmt.Errorf("%w: LISTAGG of %s (it joins strings)", ErrValueType, argType)}
	}
	p, err := New(planner.AggCall{Func: planner.AggCount, Arg: call.Arg, Filter: -1, T: types.TypeBigInt.WithNotNull(true)}, argType)
	if err != nil {
		return nil, err
	}
	f := &orderedFunc{call: call, check: p.(*function), name: name}
	switch {
	case retracting:
	case call.Func == planner.AggFirstValue:
		f.keep = keepFirst
	case call.Func == planner.AggLastValue:
		f.keep = keepLast
	}
	if retracting {
		f.name = "retracting " + name
	}
	return f, nil
}

func (f *orderedFunc) NewBuffer() Buffer { return &ordered{f: f, dirty: true} }

func (f *orderedFunc) RestoreBuffer(data []byte) (Buffer, error) {
	r, err := openSnapshot(f.name, data, tagValueList)
	if err != nil {
		return nil, err
	}
	b := &ordered{f: f}
	n := r.count(2)
	for range n {
		seq := r.uvarint()
		v := r.value()
		if r.err != nil {
			break
		}
		if len(b.vals) > 0 && seq <= b.vals[len(b.vals)-1].seq {
			r.fail("value %d is not after the one before it", seq)
			break
		}
		if !v.IsNull() && f.check.checkValue(v) != nil {
			r.fail("%s value in a %s buffer", v.Kind(), f.name)
			break
		}
		b.vals = append(b.vals, seqValue{seq: seq, v: v})
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	if f.keep != keepAll && len(b.vals) > 1 {
		return nil, fmt.Errorf("%s: %d values in a one-value buffer", f.name, len(b.vals))
	}
	if len(b.vals) > 0 {
		f.next = max(f.next, b.vals[len(b.vals)-1].seq+1)
	}
	return b, nil
}

func (f *orderedFunc) AppendShared(dst []byte) ([]byte, error) { return f.check.AppendShared(dst) }
func (f *orderedFunc) RestoreShared(data []byte) error         { return f.check.RestoreShared(data) }
func (f *orderedFunc) SharedMark() uint64                      { return f.check.SharedMark() }
func (f *orderedFunc) AppendSharedSince(dst []byte, mark uint64) ([]byte, error) {
	return f.check.AppendSharedSince(dst, mark)
}
func (f *orderedFunc) SharedView(mark uint64) (*SharedSnapshot, error) {
	return f.check.SharedView(mark)
}
func (f *orderedFunc) SharedBytes() int                  { return 0 }
func (f *orderedFunc) CompactShared(live []Buffer) error { return nil }
func (f *orderedFunc) StateKind() planner.StateKind {
	if f.keep == keepAll {
		return planner.StateValueList
	}
	return planner.StateValue
}

type seqValue struct {
	seq uint64
	v   types.Value
}

// ordered is the buffer of an orderedFunc: its values by increasing number.
type ordered struct {
	f     *orderedFunc
	vals  []seqValue
	dirty bool
}

func (b *ordered) Add(v types.Value) error {
	if v.IsNull() {
		if b.f.call.Func != planner.AggArrayAgg {
			return nil
		}
	} else if err := b.f.check.checkValue(v); err != nil {
		return err
	}
	sv := seqValue{seq: b.f.next, v: ownValue(v)}
	b.f.next++
	switch b.f.keep {
	case keepFirst:
		if len(b.vals) > 0 {
			return nil
		}
		b.vals = append(b.vals, sv)
	case keepLast:
		b.vals = append(b.vals[:0], sv)
	default:
		b.vals = append(b.vals, sv)
	}
	b.dirty = true
	return nil
}

// Retract takes back the earliest value equal to v (NULL equal to NULL for ARRAY_AGG);
// a value that is not there is ignored, as Flink ignores it.
func (b *ordered) Retract(v types.Value) error {
	if v.IsNull() && b.f.call.Func != planner.AggArrayAgg {
		return nil
	}
	if b.f.keep != keepAll {
		return fmt.Errorf("%w: %s cannot retract (it keeps one value)", ErrUnsupported, b.f.name)
	}
	for i, x := range b.vals {
		if x.v.IsNull() == v.IsNull() && (v.IsNull() || types.Compare(x.v, v) == 0) {
			b.vals = slices.Delete(b.vals, i, i+1)
			b.dirty = true
			return nil
		}
	}
	return nil
}

// Merge adds other's values, in the order of their numbers.
func (b *ordered) Merge(other Buffer) error {
	o, ok := other.(*ordered)
	if !ok || o.f != b.f {
		return fmt.Errorf("%w: cannot merge %T into %s", ErrUnsupported, other, b.f.name)
	}
	if len(o.vals) == 0 {
		return nil
	}
	merged := make([]seqValue, 0, len(b.vals)+len(o.vals))
	i, j := 0, 0
	for i < len(b.vals) && j < len(o.vals) {
		if b.vals[i].seq < o.vals[j].seq {
			merged = append(merged, b.vals[i])
			i++
		} else {
			merged = append(merged, o.vals[j])
			j++
		}
	}
	merged = append(append(merged, b.vals[i:]...), o.vals[j:]...)
	switch b.f.keep {
	case keepFirst:
		merged = merged[:1]
	case keepLast:
		merged = merged[len(merged)-1:]
	}
	b.vals = merged
	b.dirty = true
	return nil
}

func (b *ordered) Result() types.Value {
	if len(b.vals) == 0 {
		return types.NullValue
	}
	switch b.f.call.Func {
	case planner.AggFirstValue:
		return b.vals[0].v
	case planner.AggLastValue:
		return b.vals[len(b.vals)-1].v
	case planner.AggListAgg:
		var s strings.Builder
		for i, x := range b.vals {
			if i > 0 {
				s.WriteString(b.f.call.Separator)
			}
			s.WriteString(x.v.Str())
		}
		return types.StringValue(s.String())
	default: // ARRAY_AGG
		elems := make([]types.Value, len(b.vals))
		for i, x := range b.vals {
			elems[i] = x.v
		}
		return types.ArrayValue(elems)
	}
}

func (b *ordered) Dirty() bool { return b.dirty }

func (b *ordered) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, tagValueList)
	dst = binary.AppendUvarint(dst, uint64(len(b.vals)))
	for _, x := range b.vals {
		dst = binary.AppendUvarint(dst, x.seq)
		dst = appendValue(dst, x.v, false)
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}
