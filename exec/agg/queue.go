package agg

import (
	"unsafe"

	"github.com/pipesql/pipesql/types"
)

// batchSize is how many dictionary lookups a Func queues before resolving them
// together. A cold lookup waits for one or two cache misses (~200-500 ns here); a batch
// overlaps the misses of all its keys (see stringDict.lookupBatch). 32 keys are enough
// to keep the processor's outstanding-miss slots busy while the queue stays in L1.
const batchSize = 32

// idSink is a buffer waiting for the dictionary ids of values it was given.
type idSink interface{ addID(id uint32) }

// lookupQueue holds the values added to dictionary-encoded buffers of one Func whose
// ids are not looked up yet, with the buffer each goes to. It belongs to the Func, not
// to a buffer, so that a GROUP BY with a million groups holds one small queue, not a
// million. Every method that observes a buffer or the dictionary flushes it first, so
// the batching is invisible: only the order of dictionary ids (first-seen order across
// a batch) depends on it, and no result does.
type lookupQueue struct {
	sinks  []idSink
	keys   []byte // string keys back to back (the values are copied: inputs may alias reused buffers)
	ends   []int
	ints   []uint64
	views  []string
	hashes []uint64
	ids    []uint32
}

func (f *function) initQueue() {
	q := &f.queue
	q.sinks = make([]idSink, 0, batchSize)
	q.ends = make([]int, 0, batchSize)
	q.ints = make([]uint64, 0, batchSize)
	q.views = make([]string, 0, batchSize)
	q.hashes = make([]uint64, batchSize)
	q.ids = make([]uint32, batchSize)
}

// enqueue queues v (not NULL, already checked) for sink. A full batch is resolved at once.
func (f *function) enqueue(sink idSink, v types.Value) error {
	if f.err != nil {
		return f.err
	}
	q := &f.queue
	if f.dictLen()+len(q.sinks) >= f.dictMaxLen()-batchSize {
		// Near the end of the id space: resolve now, so that ErrDictionaryFull is returned
		// by the Add whose value did not fit.
		if err := f.flush(); err != nil {
			return err
		}
		id, err := f.lookupNow(v)
		if err != nil {
			return &CallError{Call: f.name, Err: err}
		}
		sink.addID(id)
		return nil
	}
	switch {
	case f.ints != nil:
		k, err := f.key64(v)
		if err != nil {
			return err
		}
		q.ints = append(q.ints, k)
	case f.argFamily == types.Varchar || f.argFamily == types.Bytes:
		q.keys = append(q.keys, v.Str()...)
		q.ends = append(q.ends, len(q.keys))
	default:
		q.keys = appendValue(q.keys, v, true)
		q.ends = append(q.ends, len(q.keys))
	}
	q.sinks = append(q.sinks, sink)
	if len(q.sinks) == batchSize {
		return f.flush()
	}
	return nil
}

// enqueueKey64 queues a 64-bit key that is already mapped (BIGINT values outside the
// direct range of bitmap64).
func (f *function) enqueueKey64(sink idSink, k uint64) error {
	if f.err != nil {
		return f.err
	}
	q := &f.queue
	if f.dictLen()+len(q.sinks) >= f.dictMaxLen()-batchSize {
		if err := f.flush(); err != nil {
			return err
		}
		id, err := f.ints.lookup(k)
		if err != nil {
			return &CallError{Call: f.name, Err: err}
		}
		sink.addID(id)
		return nil
	}
	q.ints = append(q.ints, k)
	q.sinks = append(q.sinks, sink)
	if len(q.sinks) == batchSize {
		return f.flush()
	}
	return nil
}

func (f *function) lookupNow(v types.Value) (uint32, error) {
	switch {
	case f.ints != nil:
		k, err := f.key64(v)
		if err != nil {
			return 0, err
		}
		return f.ints.lookup(k)
	case f.argFamily == types.Varchar || f.argFamily == types.Bytes:
		return f.strs.lookup(v.Str())
	}
	return f.strs.lookupBytes(appendValue(nil, v, true))
}

// flush resolves the queued values and hands each id to its buffer. A failure (the
// dictionary cannot grow) loses the queued values, so it poisons the Func: every later
// call that can return an error returns it.
func (f *function) flush() error {
	if f.err != nil {
		return f.err
	}
	q := &f.queue
	n := len(q.sinks)
	if n == 0 {
		return nil
	}
	var err error
	if f.ints != nil {
		err = f.ints.lookupBatch(q.ints, q.hashes, q.ids)
	} else {
		q.views = q.views[:0]
		start := 0
		for _, end := range q.ends {
			k := q.keys[start:end]
			q.views = append(q.views, unsafe.String(unsafe.SliceData(k), len(k)))
			start = end
		}
		err = f.strs.lookupBatch(q.views, q.hashes, q.ids)
	}
	if err == nil {
		for k, sink := range q.sinks {
			sink.addID(q.ids[k])
		}
	}
	clear(q.sinks) // drop the buffer references
	q.sinks, q.keys, q.ends, q.ints, q.views = q.sinks[:0], q.keys[:0], q.ends[:0], q.ints[:0], q.views[:0]
	if cap(q.keys) > 64<<10 {
		q.keys = nil // one huge value must not pin its memory
	}
	if err != nil {
		f.err = &CallError{Call: f.name, Err: err}
	}
	return f.err
}
