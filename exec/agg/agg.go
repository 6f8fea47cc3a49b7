package agg

import (
	"fmt"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Func is one compiled aggregate call of an aggregation operator. State shared by all
// buffers of the call (e.g. a string dictionary) lives in the Func.
//
// A Func and its buffers are not safe for concurrent use: each operator subtask
// compiles its own.
type Func interface {
	NewBuffer() Buffer
	// RestoreBuffer decodes a buffer written by Buffer.AppendSnapshot (version byte first).
	// Restore the shared state first: a dictionary-encoded buffer is checked against it.
	RestoreBuffer(data []byte) (Buffer, error)
	// AppendShared / RestoreShared checkpoint the state shared by buffers (the dictionary).
	// AppendShared writes all of it; RestoreShared replaces the shared state with a full
	// snapshot, or extends it with a delta from AppendSharedSince.
	AppendShared(dst []byte) ([]byte, error)
	RestoreShared(data []byte) error
	// SharedMark says how much shared state there is (the number of dictionary entries,
	// and in the high 32 bits how many times CompactShared ran). Between compactions the
	// shared state only grows, so the entries added since a checkpoint are those at or
	// past the mark taken when it was written.
	SharedMark() uint64
	// AppendSharedSince writes the shared state added since mark (a delta): restoring the
	// full snapshot and then each delta in order rebuilds the shared state. A mark of 0
	// writes everything, like AppendShared; a mark from before a CompactShared is
	// refused with ErrSharedGap.
	AppendSharedSince(dst []byte, mark uint64) ([]byte, error)
	// SharedView captures, in O(chunks), what AppendSharedSince(dst, mark) would write,
	// for SharedSnapshot.AppendTo to serialize later on another goroutine while the Func
	// goes on (the shared state only grows past the mark; see sharedview.go).
	SharedView(mark uint64) (*SharedSnapshot, error)
	// SharedBytes is the memory the shared state holds, for metrics.
	SharedBytes() int
	// CompactShared drops shared state no buffer in live needs (dictionary entries of
	// users only closed windows counted) and rewrites the live buffers to match; other
	// buffers of the Func become invalid. Write a full shared snapshot afterwards.
	CompactShared(live []Buffer) error
	StateKind() planner.StateKind
}

// Buffer is the running state of one aggregate call for one group (and window).
type Buffer interface {
	// Add adds one input value. COUNT(*) is called with a non-NULL placeholder for every row.
	// COUNT(x), SUM, MIN, MAX, AVG, COUNT(DISTINCT x) ignore NULLs as SQL does.
	Add(v types.Value) error
	// Merge adds the other buffer's content (same Func); bitmaps merge by OR, counts and sums add.
	Merge(other Buffer) error
	// Result is typed as the call's T: COUNT -> BIGINT NOT NULL, SUM of ints -> the same
	// int type (wrapping on overflow as Flink's does), AVG of ints truncates, MIN/MAX keep
	// the input type, NULL when there was no input.
	Result() types.Value
	// AppendSnapshot appends the buffer's state: version byte first; bitmaps in the
	// portable roaring format.
	AppendSnapshot(dst []byte) ([]byte, error)
	// Dirty reports whether the buffer changed since the last AppendSnapshot (for
	// incremental checkpoints). A new buffer is dirty; a restored one is not.
	Dirty() bool
}

// New compiles one aggregate call over an argument of type argType (ignored for
// COUNT(*)). When call.State is empty New picks the state kind (see doc.go); when the
// planner set it, New checks that the kind can compute the call exactly and uses it.
func New(call planner.AggCall, argType types.Type) (Func, error) {
	if call.Func == planner.AggCollect {
		return newCollect(call, argType) // retract.go
	}
	if isOrdered(call.Func) {
		return newOrdered(call, argType, call.State == planner.StateValueList && (call.Func == planner.AggFirstValue || call.Func == planner.AggLastValue)) // ordered.go
	}
	if call.State == planner.StateRetractMultiset {
		return NewRetracting(call, argType) // retract.go
	}
	f := &function{call: call, arg: argType, name: callName(call, argType)}
	kind, err := f.chooseKind()
	if err != nil {
		return nil, &CallError{Call: f.name, Err: err}
	}
	f.kind = kind
	if err := f.compile(); err != nil {
		return nil, &CallError{Call: f.name, Err: err}
	}
	return f, nil
}

func callName(call planner.AggCall, arg types.Type) string {
	switch {
	case call.Func == planner.AggCount && call.Arg < 0:
		return "COUNT(*)"
	case call.Distinct:
		return fmt.Sprintf("%s(DISTINCT %s)", call.Func, arg)
	}
	return fmt.Sprintf("%s(%s)", call.Func, arg)
}

// distinctCount reports whether the call counts distinct values. APPROX_COUNT_DISTINCT is
// computed exactly: the bitmaps are small enough that an estimate would save nothing.
func (f *function) distinctCount() bool {
	return f.call.Func == planner.AggApproxCountDi || f.call.Func == planner.AggCount && f.call.Distinct
}

// chooseKind returns the state kind for the call: the planner's if it set one that
// fits, else the default.
func (f *function) chooseKind() (planner.StateKind, error) {
	c := f.call
	switch c.Func {
	case planner.AggCount, planner.AggApproxCountDi:
		if c.Arg < 0 && f.distinctCount() {
			return "", fmt.Errorf("%w: DISTINCT needs an argument", ErrUnsupported)
		}
	case planner.AggSum, planner.AggAvg:
		if c.Arg < 0 || !f.arg.IsNumeric() {
			return "", fmt.Errorf("%w: %s needs a numeric argument, not %s", ErrUnsupported, c.Func, f.arg)
		}
		if !c.T.IsNumeric() {
			return "", fmt.Errorf("%w: %s cannot return %s", ErrUnsupported, c.Func, c.T)
		}
	case planner.AggMin, planner.AggMax:
		if c.Arg < 0 {
			return "", fmt.Errorf("%w: %s needs an argument", ErrUnsupported, c.Func)
		}
		switch f.arg.Kind {
		case types.Null, types.Map:
			return "", fmt.Errorf("%w: %s over %s has no order", ErrUnsupported, c.Func, f.arg)
		}
	default:
		return "", fmt.Errorf("%w: unknown aggregate function %q", ErrUnsupported, c.Func)
	}
	if f.distinctCount() && f.arg.Kind == types.Null {
		return "", fmt.Errorf("%w: COUNT(DISTINCT) of an untyped NULL", ErrUnsupported)
	}
	if c.State == "" {
		return f.defaultKind(), nil
	}
	if !f.fits(c.State) {
		return "", fmt.Errorf("%w: %q cannot hold %s exactly (the default would be %q)",
			ErrStateKind, c.State, f.name, f.defaultKind())
	}
	return c.State, nil
}

func (f *function) defaultKind() planner.StateKind {
	c := f.call
	switch {
	case f.distinctCount():
		switch {
		case fits32(f.arg.Kind):
			return planner.StateRoaring32
		case f.arg.Kind == types.BigInt:
			return planner.StateRoaring64
		}
		return planner.StateRoaringDict
	case c.Func == planner.AggMin || c.Func == planner.AggMax:
		return planner.StateMinMax // DISTINCT changes nothing
	case c.Distinct:
		return planner.StateDistinctValues
	case c.Func == planner.AggCount:
		return planner.StateCounter
	case c.Func == planner.AggSum:
		return planner.StateSum
	}
	return planner.StateAvg
}

// fits reports whether kind computes the call exactly.
func (f *function) fits(kind planner.StateKind) bool {
	c := f.call
	switch kind {
	case planner.StateCounter:
		return c.Func == planner.AggCount && !f.distinctCount()
	case planner.StateSum:
		return c.Func == planner.AggSum && !c.Distinct
	case planner.StateAvg:
		return c.Func == planner.AggAvg && !c.Distinct
	case planner.StateMinMax:
		return c.Func == planner.AggMin || c.Func == planner.AggMax
	case planner.StateRoaring32:
		return f.distinctCount() && fits32(f.arg.Kind)
	case planner.StateRoaring64:
		return f.distinctCount() && (fits32(f.arg.Kind) || fits64(f.arg.Kind))
	case planner.StateRoaringDict:
		return f.distinctCount()
	case planner.StateDistinctValues:
		return c.Distinct || f.distinctCount()
	}
	return false
}

// fits32 reports whether every value of kind k maps one-to-one onto a uint32.
func fits32(k types.Kind) bool {
	switch k {
	case types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.Date:
		return true
	}
	return false
}

// fits64 reports whether every value of kind k maps one-to-one onto a uint64.
func fits64(k types.Kind) bool {
	switch k {
	case types.BigInt, types.Time, types.Timestamp, types.TimestampLTZ, types.IntervalDayTime,
		types.IntervalYearMonth, types.Float, types.Double:
		return true
	}
	return fits32(k)
}

// family groups the value kinds one argument type may arrive as: a CHAR column's
// values are VARCHAR values, an INT expression may be computed as any integer kind.
func family(k types.Kind) types.Kind {
	switch k {
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return types.BigInt
	case types.Char:
		return types.Varchar
	case types.Float:
		return types.Double
	}
	return k
}

// checkValue rejects a non-NULL value whose kind does not belong to the argument type.
func (f *function) checkValue(v types.Value) error {
	if f.accept&(1<<(v.Kind()&63)) == 0 {
		return fmt.Errorf("%w: %s got a %s value", ErrValueType, f.name, v.Kind())
	}
	return nil
}
