package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
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

// watermarkHolder is implemented by operators whose output lags their input in event
// time (an interval join emits pairs whose times are behind its input watermark by up to
// its bounds): the task forwards outputWatermark(wm) rather than wm.
type watermarkHolder interface {
	outputWatermark(wm int64) int64
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
	// inputs is the number of inputs (1 but for joins and unions); the output goes to
	// input port of ops[to] of the pipeline, to is -1 for the root.
	inputs   int
	to, port int
	// recent keeps the latest rows of a sink or collect (Job.RecentRows), nil for
	// other operators.
	recent *recentRows
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
	ins      []<-chan event // one per input
	out      *outbox        // nil for the root (sink or collect)
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

// multiInput is implemented by operators with several inputs that tell them apart
// (a join): each batch comes with the index of the input it arrived on.
type multiInput interface {
	processInput(ctx context.Context, input int, b batch, out *outbox) error
}

// inputState is what a task knows of its inputs.
type inputState struct {
	wm      []int64 // the watermark of each input
	ended   []bool  // the input sent its end (or stop)
	blocked []bool  // the input's barrier arrived and waits for the others'
	open    int     // inputs not ended
	stopped bool    // an input was stopped rather than ended
	// aligning is the checkpoint whose barriers are being aligned, 0 when none.
	aligning uint64
}

func newInputState(n int) *inputState {
	s := &inputState{wm: make([]int64, n), ended: make([]bool, n), blocked: make([]bool, n), open: n}
	for i := range s.wm {
		s.wm[i] = NoWatermark
	}
	return s
}

// watermark is the minimum over the inputs' watermarks: a task is as far in event time as
// its slowest input. An input at its end holds nothing back; one that stopped (the job
// is stopping) stays where it was, so that a stop fires nothing.
func (s *inputState) watermark() int64 {
	wm := MaxWatermark
	for _, w := range s.wm {
		wm = min(wm, w)
	}
	return wm
}

// aligned reports whether every input that has not ended delivered the barrier being aligned.
func (s *inputState) aligned() bool {
	for i := range s.blocked {
		if !s.blocked[i] && !s.ended[i] {
			return false
		}
	}
	return true
}

func (s *inputState) unblock() { clear(s.blocked) }

// run processes events until the end of every input or until ctx is cancelled because
// another task failed.
//
// With several inputs, checkpoint barriers are aligned (exactly once): an input whose
// barrier arrived is not read until the barrier arrived on every other input that has
// not ended, so that the state snapshot holds exactly the rows before the barrier of
// each input. A barrier of a newer checkpoint abandons the alignment of an older one (a
// source skipped a checkpoint that expired); the older one's late barriers are dropped.
// The task's watermark is the minimum of its inputs' watermarks, and its input ends when
// every input ended.
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
	in := newInputState(len(t.ins))
	multi, _ := t.op.(multiInput)
	var cases []reflect.SelectCase // for more than two inputs
	for {
		// The inputs read now: not ended, not held back by an alignment.
		var a, b <-chan event
		if !in.ended[0] && !in.blocked[0] {
			a = t.ins[0]
		}
		if len(t.ins) > 1 && !in.ended[1] && !in.blocked[1] {
			b = t.ins[1]
		}
		var ev event
		from := 0
		if len(t.ins) > 2 {
			var ok bool
			from, ev, ok, err = t.recvMany(ctx, in, &cases, notified, samples, tick)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		} else {
			select {
			case ev = <-a:
			case ev = <-b:
				from = 1
			case <-notified:
				if err := t.commit(ctx); err != nil {
					return t.fail(err)
				}
				continue
			case <-samples:
				t.observeState()
				continue
			case now := <-tick:
				if err := t.timer(ctx, now); err != nil {
					return err
				}
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		switch ev.kind {
		case eventBatch:
			m.in.add(len(ev.batch.rows))
			if hook := t.rt.failHook; hook != nil {
				if err := hook(t.pipeline, t.spec.name); err != nil {
					return t.fail(err)
				}
			}
			if multi != nil {
				err = multi.processInput(ctx, from, ev.batch, t.out)
			} else {
				err = t.op.processBatch(ctx, ev.batch, t.out)
			}
			if err != nil {
				return t.fail(err)
			}
			if err := t.flush(ctx); err != nil {
				return err
			}
		case eventWatermark:
			in.wm[from] = max(in.wm[from], ev.watermark)
			if err := t.advance(ctx, in, &lastWM); err != nil {
				return err
			}
		case eventBarrier:
			if len(t.ins) > 1 {
				switch {
				case ev.barrier < in.aligning:
					continue // of a checkpoint abandoned for a newer one
				case ev.barrier > in.aligning:
					in.unblock()
					in.aligning = ev.barrier
				}
				in.blocked[from] = true
				if !in.aligned() {
					continue
				}
				in.unblock()
			}
			if err := t.barrier(ctx, ev.barrier); err != nil {
				return t.fail(err)
			}
			if err := t.forward(ctx, ev); err != nil {
				return err
			}
		case eventEnd, eventStop:
			in.ended[from] = true
			in.open--
			if ev.kind == eventStop {
				in.stopped = true
			} else {
				in.wm[from] = MaxWatermark
			}
			if in.open > 0 {
				// The other inputs go on: the watermark may advance, and a barrier
				// waiting for this input is aligned now.
				if err := t.advance(ctx, in, &lastWM); err != nil {
					return err
				}
				if in.aligning != 0 && anyTrue(in.blocked) && in.aligned() {
					in.unblock()
					if err := t.barrier(ctx, in.aligning); err != nil {
						return t.fail(err)
					}
					if err := t.forward(ctx, event{kind: eventBarrier, barrier: in.aligning}); err != nil {
						return err
					}
				}
				continue
			}
			if !in.stopped {
				// Every input is at its end, whether or not it said so with a watermark.
				if err := t.advance(ctx, in, &lastWM); err != nil {
					return err
				}
			}
			// A final checkpoint completed before the end was sent: commit on it first.
			if err := t.commit(ctx); err != nil {
				return t.fail(err)
			}
			if err := t.op.finish(ctx, !in.stopped, t.out); err != nil {
				return t.fail(err)
			}
			end := event{kind: eventEnd}
			if in.stopped {
				end.kind = eventStop
			}
			return t.forward(ctx, end)
		}
	}
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// advance passes the task's watermark on when it advanced.
func (t *opTask) advance(ctx context.Context, in *inputState, lastWM *int64) error {
	wm := in.watermark()
	if wm == NoWatermark || wm <= *lastWM {
		return nil
	}
	*lastWM = wm
	t.spec.metrics.watermark.Store(wm)
	if err := t.op.processWatermark(ctx, wm, t.out); err != nil {
		return t.fail(err)
	}
	if h, ok := t.op.(watermarkHolder); ok {
		wm = h.outputWatermark(wm)
	}
	return t.forward(ctx, event{kind: eventWatermark, watermark: wm})
}

func (t *opTask) timer(ctx context.Context, now time.Time) error {
	if err := t.op.(timerOperator).onTimer(ctx, now, t.out); err != nil {
		return t.fail(err)
	}
	return t.flush(ctx)
}

// recvMany receives the next event of a task with more than two inputs; ok is false
// when what arrived was not an event (a commit, a state sample, a timer).
func (t *opTask) recvMany(ctx context.Context, in *inputState, cases *[]reflect.SelectCase,
	notified <-chan struct{}, samples <-chan time.Time, tick <-chan time.Time) (from int, ev event, ok bool, err error) {
	n := len(t.ins)
	if *cases == nil {
		cs := make([]reflect.SelectCase, n+4)
		for i := range cs {
			cs[i].Dir = reflect.SelectRecv
		}
		cs[n].Chan = reflect.ValueOf(ctx.Done())
		cs[n+1].Chan = reflect.ValueOf(notified)
		cs[n+2].Chan = reflect.ValueOf(samples)
		cs[n+3].Chan = reflect.ValueOf(tick)
		*cases = cs
	}
	cs := *cases
	for i := range n {
		if in.ended[i] || in.blocked[i] {
			cs[i].Chan = reflect.Value{}
		} else {
			cs[i].Chan = reflect.ValueOf(t.ins[i])
		}
	}
	chosen, v, _ := reflect.Select(cs)
	switch chosen {
	case n:
		return 0, event{}, false, context.Cause(ctx)
	case n + 1:
		if err := t.commit(ctx); err != nil {
			return 0, event{}, false, t.fail(err)
		}
		return 0, event{}, false, nil
	case n + 2:
		t.observeState()
		return 0, event{}, false, nil
	case n + 3:
		return 0, event{}, false, t.timer(ctx, v.Interface().(time.Time))
	}
	return chosen, v.Interface().(event), true, nil
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
