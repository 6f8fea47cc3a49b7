package exec

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Watermarks are event-time instants in microseconds, the unit of types.Value timestamps.
const (
	// NoWatermark is the watermark of a stream that has not produced one yet.
	NoWatermark int64 = math.MinInt64
	// MaxWatermark is the watermark sent at the end of a bounded input: it fires every window.
	MaxWatermark int64 = math.MaxInt64
)

// eventKind is the tag of the event sum type.
type eventKind uint8

const (
	// eventBatch carries rows (and their change kinds).
	eventBatch eventKind = iota + 1
	// eventWatermark says no more rows with an event time at or before watermark will follow.
	eventWatermark
	// eventBarrier is a checkpoint barrier: every row before it belongs to checkpoint barrier.
	eventBarrier
	// eventEnd is the end of a bounded input, after the final watermark.
	eventEnd
	// eventStop ends the stream because the job was cancelled: operators drain what they
	// have in flight but fire nothing they would not have fired anyway.
	eventStop
)

func (k eventKind) String() string {
	switch k {
	case eventBatch:
		return "batch"
	case eventWatermark:
		return "watermark"
	case eventBarrier:
		return "barrier"
	case eventEnd:
		return "end"
	case eventStop:
		return "stop"
	}
	return "invalid"
}

// event is what flows between operators: one of a batch, a watermark, a barrier or the
// end of the stream, told apart by kind. Only the field of its kind is meaningful.
type event struct {
	kind      eventKind
	batch     batch
	watermark int64
	barrier   uint64
}

// batch is rows in order with their change kinds. kinds is nil when every row is an
// insert, which is what append-only streams (the common case) carry, so they never
// allocate kinds. The receiver owns the batch; the sender does not touch it again.
type batch struct {
	rows  []types.Row
	kinds []connectors.RowKind
}

// kind returns the change kind of row i.
func (b batch) kind(i int) connectors.RowKind {
	if b.kinds == nil {
		return connectors.Insert
	}
	return b.kinds[i]
}

// outbox collects the rows an operator emits into batches of at most size rows and sends
// them, in order with the other events, to the next operator's channel.
type outbox struct {
	ch    chan<- event
	size  int
	rows  []types.Row
	kinds []connectors.RowKind // nil while every pending row is an insert
	out   *counter             // records out of the operator
	// blocked adds up the nanoseconds sends waited for room in the next operator's
	// input queue: the operator's backpressure. nil: not measured.
	blocked *atomic.Int64
}

func newOutbox(ch chan<- event, size int, out *counter) *outbox {
	return &outbox{ch: ch, size: size, out: out}
}

// emit appends one row, sending a batch when size rows are pending.
func (o *outbox) emit(ctx context.Context, kind connectors.RowKind, row types.Row) error {
	if kind != connectors.Insert && o.kinds == nil {
		// connectors.Insert is the zero RowKind, so the rows so far need no filling in.
		o.kinds = make([]connectors.RowKind, len(o.rows), max(o.size, len(o.rows)+1))
	}
	if o.rows == nil {
		o.rows = make([]types.Row, 0, o.size)
	}
	o.rows = append(o.rows, row)
	if o.kinds != nil {
		o.kinds = append(o.kinds, kind)
	}
	if len(o.rows) >= o.size {
		return o.flush(ctx)
	}
	return nil
}

// emitBatch sends a whole batch after the pending rows, without copying it when it is
// large enough to travel alone.
func (o *outbox) emitBatch(ctx context.Context, b batch) error {
	if len(b.rows) == 0 {
		return nil
	}
	if len(o.rows)+len(b.rows) > o.size || len(b.rows) >= o.size/2 {
		if err := o.flush(ctx); err != nil {
			return err
		}
		o.out.add(len(b.rows))
		return o.send(ctx, event{kind: eventBatch, batch: b})
	}
	for i, r := range b.rows {
		if err := o.emit(ctx, b.kind(i), r); err != nil {
			return err
		}
	}
	return nil
}

// flush sends the pending rows, if any.
func (o *outbox) flush(ctx context.Context) error {
	if len(o.rows) == 0 {
		return nil
	}
	b := batch{rows: o.rows, kinds: o.kinds}
	o.rows, o.kinds = nil, nil
	o.out.add(len(b.rows))
	return o.send(ctx, event{kind: eventBatch, batch: b})
}

// send flushes pending rows and then sends ev, so that a watermark, barrier or end
// never overtakes the rows emitted before it.
func (o *outbox) send(ctx context.Context, ev event) error {
	if ev.kind != eventBatch {
		if err := o.flush(ctx); err != nil {
			return err
		}
	}
	// Only a send that would block is timed, so a job that is not backpressured pays
	// one non-blocking send and no clock read.
	select {
	case o.ch <- ev:
		return nil
	default:
	}
	var start time.Time
	if o.blocked != nil {
		start = time.Now()
	}
	select {
	case o.ch <- ev:
		if o.blocked != nil {
			o.blocked.Add(int64(time.Since(start)))
		}
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
