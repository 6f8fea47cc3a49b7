package agg

import (
	"fmt"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// function is the one Func implementation: configuration decided by New, plus the
// dictionary its buffers share when the state kind needs one.
type function struct {
	// configuration, fixed by New
	call       planner.AggCall
	arg        types.Type
	argFamily  types.Kind
	accept     uint64 // bit k set: values of kind k belong to the argument type (see family)
	name       string
	kind       planner.StateKind
	tag        byte
	resultKind types.Kind
	resultType types.Type
	acc        accKind   // SUM and AVG: how the sum is kept
	isMax      bool      // MIN/MAX: which one
	plain      *function // distinct value sets: the non-distinct call computed over the set

	// shared state: at most one of them, for dictionary-encoded bitmaps
	strs *stringDict
	ints *int64Dict

	queue lookupQueue // dictionary lookups not resolved yet (see queue.go)
	epoch uint32      // CompactShared count: the high half of SharedMark
	err   error       // sticky: the dictionary failed to grow and queued values were lost

	scratch []byte // canonical encodings for distinct value sets; Funcs are single-goroutine
}

// accKind is how SUM and AVG keep their running sum, chosen by the result type the
// way Flink does: integer results sum in int64 (wrapping), DOUBLE/FLOAT in float64,
// DECIMAL exactly.
type accKind uint8

const (
	accInt accKind = iota
	accFloat
	accDec
)

func (f *function) compile() error {
	c := f.call
	f.argFamily = family(f.arg.Kind)
	for k := types.Kind(0); k < 64; k++ {
		if k != types.Null && family(k) == f.argFamily {
			f.accept |= 1 << k
		}
	}
	f.resultType = c.T
	f.resultKind = c.T.Kind
	if f.resultKind == types.Null { // planner left T unset: use Flink's defaults
		switch {
		case c.Func == planner.AggCount || f.distinctCount():
			f.resultType = types.TypeBigInt.WithNotNull(true)
		default:
			f.resultType = f.arg.Nullable()
		}
		f.resultKind = f.resultType.Kind
	}
	switch f.kind {
	case planner.StateCounter:
		f.tag = tagCounter
		if !f.resultType.IsInteger() {
			return fmt.Errorf("%w: COUNT cannot return %s", ErrUnsupported, f.resultType)
		}
	case planner.StateSum, planner.StateAvg:
		acc, err := accFor(f.resultType, f.arg)
		if err != nil {
			return err
		}
		f.acc = acc
		f.tag = [...]byte{accInt: tagSumInt, accFloat: tagSumFloat, accDec: tagSumDec}[acc]
		if f.kind == planner.StateAvg {
			f.tag = [...]byte{accInt: tagAvgInt, accFloat: tagAvgFloat, accDec: tagAvgDec}[acc]
		}
	case planner.StateMinMax:
		f.tag = tagMinMax
		f.isMax = c.Func == planner.AggMax
	case planner.StateRoaring32:
		f.tag = tagRoaring32
	case planner.StateRoaring64:
		f.tag = tagRoaring64
		f.ints = newInt64Dict()
		f.initQueue()
	case planner.StateRoaringDict:
		f.tag = tagDict
		if fits64(f.arg.Kind) {
			f.ints = newInt64Dict()
		} else {
			f.strs = newStringDict()
		}
		f.initQueue()
	case planner.StateDistinctValues:
		f.tag = tagValueSet
		plainCall := c
		plainCall.Distinct, plainCall.State = false, ""
		if f.distinctCount() {
			plainCall.Func = planner.AggCount
		}
		p, err := New(plainCall, f.arg)
		if err != nil {
			return err
		}
		f.plain = p.(*function)
	}
	if (f.distinctCount() || f.kind == planner.StateCounter) && !f.resultType.IsInteger() {
		return fmt.Errorf("%w: %s cannot return %s", ErrUnsupported, c.Func, f.resultType)
	}
	return nil
}

func accFor(t, arg types.Type) (accKind, error) {
	switch {
	case t.IsInteger() && arg.IsInteger():
		return accInt, nil
	case t.Kind == types.Float || t.Kind == types.Double:
		return accFloat, nil
	case t.Kind == types.Decimal && (arg.IsInteger() || arg.Kind == types.Decimal):
		return accDec, nil
	}
	return 0, fmt.Errorf("%w: cannot sum %s into %s", ErrUnsupported, arg, t)
}

func (f *function) StateKind() planner.StateKind { return f.kind }

func (f *function) NewBuffer() Buffer {
	switch f.tag {
	case tagCounter:
		return &counter{f: f, dirty: true}
	case tagSumInt, tagSumFloat, tagSumDec, tagAvgInt, tagAvgFloat, tagAvgDec:
		return &numeric{f: f, dirty: true}
	case tagMinMax:
		return &minMax{f: f, dirty: true}
	case tagRoaring32:
		return newBitmap32(f)
	case tagRoaring64:
		return newBitmap64(f)
	case tagDict:
		return newDictBitmap(f)
	}
	return newValueSet(f)
}

func (f *function) RestoreBuffer(data []byte) (Buffer, error) {
	b, err := f.restoreBuffer(data)
	if err != nil {
		return nil, &CallError{Call: f.name, Err: err}
	}
	return b, nil
}

func (f *function) restoreBuffer(data []byte) (Buffer, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	r, err := openSnapshot("buffer", data, f.tag)
	if err != nil {
		return nil, err
	}
	var b Buffer
	switch f.tag {
	case tagCounter:
		b = f.restoreCounter(r)
	case tagSumInt, tagSumFloat, tagSumDec, tagAvgInt, tagAvgFloat, tagAvgDec:
		b = f.restoreNumeric(r)
	case tagMinMax:
		b = f.restoreMinMax(r)
	case tagRoaring32:
		b = f.restoreBitmap32(r)
	case tagRoaring64:
		b = f.restoreBitmap64(r)
	case tagDict:
		b = f.restoreDictBitmap(r)
	default:
		b = f.restoreValueSet(r)
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return b, nil
}

func (f *function) sharedTag() byte {
	switch {
	case f.strs != nil:
		return tagSharedString
	case f.ints != nil:
		return tagSharedInt64
	}
	return tagSharedNone
}

func (f *function) AppendShared(dst []byte) ([]byte, error) { return f.AppendSharedSince(dst, 0) }

func (f *function) AppendSharedSince(dst []byte, mark uint64) ([]byte, error) {
	s, err := f.SharedView(mark)
	if err != nil {
		return dst, err
	}
	return s.AppendTo(dst)
}

func (f *function) SharedView(mark uint64) (*SharedSnapshot, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	now := f.SharedMark()
	since := mark & (1<<32 - 1)
	switch {
	case since == 0: // everything, whatever the epoch
	case mark>>32 != now>>32:
		return nil, &CallError{Call: f.name, Err: fmt.Errorf("%w: the dictionary was compacted after mark %#x; write it whole",
			ErrSharedGap, mark)}
	case since > now&(1<<32-1):
		return nil, &CallError{Call: f.name, Err: fmt.Errorf("%w: mark %d is past the shared state's %d entries",
			ErrSharedGap, since, now&(1<<32-1))}
	}
	switch {
	case f.strs != nil:
		return f.strs.view(int(since)), nil
	case f.ints != nil:
		return f.ints.view(int(since)), nil
	}
	return &SharedSnapshot{tag: tagSharedNone}, nil
}

func (f *function) RestoreShared(data []byte) error {
	if err := f.flush(); err != nil {
		return err
	}
	r, err := openSnapshot("shared state", data, f.sharedTag())
	if err == nil {
		switch {
		case f.strs != nil:
			err = f.strs.restore(r)
		case f.ints != nil:
			err = f.ints.restore(r)
		default:
			err = r.finish()
		}
	}
	if err != nil {
		return &CallError{Call: f.name, Err: err}
	}
	return nil
}

// SharedMark is the dictionary's epoch (how many times it was compacted) in the high 32
// bits and its number of entries in the low 32.
func (f *function) SharedMark() uint64 {
	_ = f.flush() // a failure is returned by the next call that can return one
	n := 0
	switch {
	case f.strs != nil:
		n = f.strs.len()
	case f.ints != nil:
		n = f.ints.len()
	}
	return uint64(f.epoch)<<32 | uint64(n)
}

func (f *function) SharedBytes() int {
	_ = f.flush()
	switch {
	case f.strs != nil:
		return f.strs.bytes()
	case f.ints != nil:
		return f.ints.bytes()
	}
	return 0
}

// mergeError is the error of merging a buffer that is not of this Func.
func (f *function) mergeError(other Buffer) error {
	return &CallError{Call: f.name, Err: fmt.Errorf("%w: got a %T", ErrMerge, other)}
}
