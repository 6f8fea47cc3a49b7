package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// operator is one step of a pipeline after its source task. Each operator runs in its
// own goroutine (a task), reads the events of its input channel and writes what it
// emits to an outbox; the task turns events into these calls, forwards watermarks,
// barriers and the end of the stream, and counts records.
//
// An operator's configuration is fixed when the job is compiled; its state is created
// by the build function of its opSpec for each run, so a run starts from empty state
// (or, with checkpoints, from restoreState).
type operator interface {
	// open acquires what the operator needs to run (a sink connects here).
	open(ctx context.Context) error
	// processBatch handles rows in order.
	processBatch(ctx context.Context, b batch, out *outbox) error
	// processWatermark handles an advance of the input watermark; the task forwards the
	// watermark after it returns.
	processWatermark(ctx context.Context, wm int64, out *outbox) error
	// finish is called once when the input ends: endOfInput is true at the end of a
	// bounded input (after the final watermark), false when the job was cancelled, in
	// which case the operator emits only what it already owes (sinks flush).
	finish(ctx context.Context, endOfInput bool, out *outbox) error
	// close releases resources; it is called exactly once, after open, whatever happened.
	close() error
}

// stateful is implemented by operators whose state belongs in a checkpoint. The task
// calls snapshotState when a barrier arrives, after every row before the barrier and
// before any row after it, so the snapshot is part of a consistent cut; it is the
// in-line pause of the checkpoint, so it only captures what changed: large state (roaring
// bitmaps, dictionary entries) is frozen in line and serialized later on the checkpoint
// writer's goroutine, through the writer's deferred puts (checkpoint.go). State is written
// as key/value pairs (a key per window and key group, say) so that a checkpoint can
// carry over the keys that did not change since the previous one instead of rewriting
// them, which is what state.Writer.Reuse does. Values start with a version byte.
//
// restoreState is called after the operator is built and before open, with its part of
// the checkpoint the run starts from (only when that checkpoint has one).
type stateful interface {
	snapshotState(ctx context.Context, w stateWriter) error
	restoreState(r stateReader) error
}

// stateWriter receives one operator's part of a checkpoint.
type stateWriter interface {
	// ID is the checkpoint being written.
	ID() uint64
	// Base is the completed checkpoint that Unchanged refers to, 0 when there is none
	// (then everything must be Put). An operator may only call Unchanged when its
	// previous snapshot was for Base: after a failed checkpoint it writes everything.
	Base() uint64
	// Put stores value under key. The writer takes value over: the caller must not
	// change it afterwards.
	Put(key string, value []byte) error
	// Unchanged says key holds the value it had in checkpoint Base.
	Unchanged(key string) error
}

// stateReader gives back one operator's part of a checkpoint.
type stateReader interface {
	// ID is the checkpoint read (for a savepoint, the checkpoint it was taken from).
	ID() uint64
	// Scan calls fn for each key in byte order; value is only valid during fn.
	Scan(fn func(key string, value []byte) error) error
}

// committer is implemented by operators that act when a checkpoint completes (a sink
// publishing what it staged).
type committer interface {
	checkpointComplete(ctx context.Context, id uint64) error
}

// timerOperator is implemented by operators that act on the wall clock (processing-time
// windows): onTimer is called about every timerInterval.
type timerOperator interface {
	timerInterval() time.Duration
	onTimer(ctx context.Context, now time.Time, out *outbox) error
}

// opSpec is a compiled operator: its name, its counters and how to build it with
// fresh state for a run.
type opSpec struct {
	name    string
	id      string // unique in its pipeline: position and name
	metrics *opMetrics
	build   func(rt *runEnv, m *opMetrics) (operator, error)
	// stateID names the operator's state in checkpoints: "<pipeline>/<name>", numbered
	// when a pipeline has several of a kind, so that adding a stateless operator does not
	// rename it. stateDesc describes the state's layout (state.Operator.Desc); both are
	// "" for operators without state.
	stateID, stateDesc string
}

// nopOperator provides the methods an operator does not need.
type nopOperator struct{}

func (nopOperator) open(context.Context) error                             { return nil }
func (nopOperator) processWatermark(context.Context, int64, *outbox) error { return nil }
func (nopOperator) finish(context.Context, bool, *outbox) error            { return nil }
func (nopOperator) close() error                                           { return nil }

// opTask runs one operator in its goroutine.
type opTask struct {
	pipeline int
	spec     *opSpec
	op       operator
	in       <-chan event
	out      *outbox // nil for the root (sink or collect)
	rt       *runEnv
	// notify carries checkpoint completions to a root that commits on them.
	notify *commitNotifier
}

func (t *opTask) fail(err error) error {
	if err == nil {
		return nil
	}
	var oe *OperatorError
	if errors.As(err, &oe) {
		return err
	}
	return &OperatorError{Pipeline: t.pipeline, Operator: t.spec.name, Err: err}
}

// run processes events until the end of the stream or until ctx is cancelled because
// another task failed.
func (t *opTask) run(ctx context.Context) (err error) {
	defer func() {
		if cerr := t.op.close(); err == nil && cerr != nil {
			err = t.fail(cerr)
		}
	}()
	if err := t.op.open(ctx); err != nil {
		return t.fail(err)
	}
	var tick <-chan time.Time
	if to, ok := t.op.(timerOperator); ok && to.timerInterval() > 0 {
		ticker := t.rt.clock.NewTicker(to.timerInterval())
		defer ticker.Stop()
		tick = ticker.C()
	}
	samples, stopSampling := t.stateTicks() // observe.go
	defer stopSampling()
	m := t.spec.metrics
	lastWM := NoWatermark
	var notified <-chan struct{}
	if t.notify != nil {
		notified = t.notify.ch
	}
	for {
		var ev event
		select {
		case ev = <-t.in:
		case <-notified:
			if err := t.commit(ctx); err != nil {
				return t.fail(err)
			}
			continue
		case <-samples:
			t.observeState()
			continue
		case now := <-tick:
			if err := t.op.(timerOperator).onTimer(ctx, now, t.out); err != nil {
				return t.fail(err)
			}
			if err := t.flush(ctx); err != nil {
				return err
			}
			continue
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		switch ev.kind {
		case eventBatch:
			m.in.add(len(ev.batch.rows))
			if hook := t.rt.failHook; hook != nil {
				if err := hook(t.pipeline, t.spec.name); err != nil {
					return t.fail(err)
				}
			}
			if err := t.op.processBatch(ctx, ev.batch, t.out); err != nil {
				return t.fail(err)
			}
			if err := t.flush(ctx); err != nil {
				return err
			}
		case eventWatermark:
			if ev.watermark <= lastWM {
				continue
			}
			lastWM = ev.watermark
			m.watermark.Store(ev.watermark)
			if err := t.op.processWatermark(ctx, ev.watermark, t.out); err != nil {
				return t.fail(err)
			}
			if err := t.forward(ctx, ev); err != nil {
				return err
			}
		case eventBarrier:
			if err := t.barrier(ctx, ev.barrier); err != nil {
				return t.fail(err)
			}
			if err := t.forward(ctx, ev); err != nil {
				return err
			}
		case eventEnd, eventStop:
			// A final checkpoint completed before the end was sent: commit on it first.
			if err := t.commit(ctx); err != nil {
				return t.fail(err)
			}
			if err := t.op.finish(ctx, ev.kind == eventEnd, t.out); err != nil {
				return t.fail(err)
			}
			return t.forward(ctx, ev)
		}
	}
}

func (t *opTask) flush(ctx context.Context) error {
	if t.out == nil {
		return nil
	}
	return t.out.flush(ctx)
}

// forward sends ev downstream after the rows emitted before it; the root has no downstream.
func (t *opTask) forward(ctx context.Context, ev event) error {
	if t.out == nil {
		return nil
	}
	return t.out.send(ctx, ev)
}

// barrier snapshots the operator's state for checkpoint id, timing the pause it takes.
// The root acknowledges the checkpoint to the coordinator.
func (t *opTask) barrier(ctx context.Context, id uint64) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	c := t.rt.coord
	if c == nil {
		return nil
	}
	start := t.rt.clock.Now()
	if s, ok := t.op.(stateful); ok {
		if err := s.snapshotState(ctx, c.writer(id, t.spec.stateID)); err != nil {
			return fmt.Errorf("snapshot for checkpoint %d: %w", id, err)
		}
	}
	pause := t.rt.clock.Now().Sub(start)
	t.spec.metrics.pause.Store(int64(pause))
	c.recordPause(id, pause)
	if t.out == nil {
		c.ack(ctx, id, t.pipeline)
	}
	return nil
}

// commit tells a committing operator of the last completed checkpoint.
func (t *opTask) commit(ctx context.Context) error {
	if t.notify == nil {
		return nil
	}
	cm, ok := t.op.(committer)
	if !ok {
		return nil
	}
	if id := t.notify.id.Load(); id > 0 {
		return cm.checkpointComplete(ctx, id)
	}
	return nil
}

// group runs the tasks of a job: the first error cancels the others, and wait returns it.
// fail fails the job from outside a task (the checkpoint coordinator).
type group struct {
	wg    sync.WaitGroup
	abort context.CancelCauseFunc
	mu    sync.Mutex
	err   error
}

// spawn runs fn in a goroutine. A panic (a bug) fails the job like an error instead of
// crashing the process, which may run other jobs and must report what happened.
func (g *group) spawn(pipeline int, name string, log *slog.Logger, fn func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("operator panicked", "operator", name, "panic", r, "stack", string(debug.Stack()))
					err = &OperatorError{Pipeline: pipeline, Operator: name, Err: fmt.Errorf("%w: %v", ErrInternal, r)}
				}
			}()
			return fn()
		}()
		if err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
			g.abort(err)
		}
	}()
}

func (g *group) fail(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
	g.abort(err)
}

func (g *group) wait() error {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
