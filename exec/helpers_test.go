package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
	timers  fakeTimers
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.tickers {
		for !t.next.After(c.now) {
			select {
			case t.c <- t.next:
			default:
			}
			t.next = t.next.Add(t.d)
		}
	}
	c.timers.fire(c.now)
}

func (c *fakeClock) NewTimer(d time.Duration) connectors.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timers.add(c.now, d)
}

// fakeTimers are the timers of a test clock: each fires once the clock reaches its time.
type fakeTimers struct{ pending []*fakeTimer }

func (ts *fakeTimers) add(now time.Time, d time.Duration) *fakeTimer {
	t := &fakeTimer{c: make(chan time.Time, 1), at: now.Add(d)}
	if d <= 0 {
		t.c <- now
		return t
	}
	ts.pending = append(ts.pending, t)
	return t
}

func (ts *fakeTimers) fire(now time.Time) {
	keep := ts.pending[:0]
	for _, t := range ts.pending {
		switch {
		case t.stopped.Load():
		case !t.at.After(now):
			t.c <- now
		default:
			keep = append(keep, t)
		}
	}
	ts.pending = keep
}

type fakeTimer struct {
	c       chan time.Time
	at      time.Time
	stopped atomic.Bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop() bool          { return !t.stopped.Swap(true) }

func (c *fakeClock) NewTicker(d time.Duration) connectors.Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTicker{c: make(chan time.Time, 1), d: d, next: c.now.Add(d)}
	c.tickers = append(c.tickers, t)
	return t
}

type fakeTicker struct {
	c    chan time.Time
	d    time.Duration
	next time.Time
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }
func (t *fakeTicker) Stop()               {}

// pollStep is what one Poll of a memSource does, in order: run hook, advance the clock,
// then return batches (or err).
type pollStep struct {
	hook    func()
	advance time.Duration
	splits  []string // when non-nil, the splits from now on
	batches []connectors.SourceBatch
	err     error
}

// memSource is a Source over rows given by the test. It is a real implementation of
// connectors.Source: positions per split, snapshots, splits. When its steps are used up
// it ends (bounded) or waits for ctx (unbounded).
type memSource struct {
	clock     *fakeClock
	steps     []pollStep
	bounded   bool
	splits    []string
	positions map[string]int
	skipped   int64
	closed    bool
	completed []uint64
	// blocked is closed when an unbounded source has returned all its steps and waits.
	blocked   chan struct{}
	signalled bool
}

func (s *memSource) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if len(s.steps) == 0 {
		if s.bounded {
			return nil, io.EOF
		}
		if s.blocked != nil && !s.signalled {
			s.signalled = true
			close(s.blocked)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	if st.hook != nil {
		st.hook()
	}
	if st.advance > 0 && s.clock != nil {
		s.clock.Advance(st.advance)
	}
	if st.splits != nil {
		s.splits = st.splits
	}
	if st.err != nil {
		return nil, st.err
	}
	for _, b := range st.batches {
		s.positions[b.Split] += len(b.Rows)
	}
	return st.batches, nil
}

func (s *memSource) Splits() []string { return s.splits }

func (s *memSource) Snapshot() ([]byte, error) {
	total := 0
	for _, n := range s.positions {
		total += n
	}
	return []byte(strconv.Itoa(total)), nil
}

func (s *memSource) CheckpointComplete(_ context.Context, id uint64) error {
	s.completed = append(s.completed, id)
	return nil
}

func (s *memSource) Close() error { s.closed = true; return nil }

func (s *memSource) Skipped() int64 { return s.skipped }

func (s *memSource) SplitPositions() map[string]string {
	p := map[string]string{}
	for k, v := range s.positions {
		p[k] = strconv.Itoa(v)
	}
	return p
}

// memSink records what it is given, in order.
type memSink struct {
	mu       sync.Mutex
	log      []string // "write N", "flush", "close"
	kinds    []connectors.RowKind
	rows     []types.Row
	writeErr error
	wrote    chan struct{} // receives after each write when non-nil
}

func (s *memSink) Write(_ context.Context, b connectors.ChangeBatch) error {
	s.mu.Lock()
	if s.writeErr != nil {
		s.mu.Unlock()
		return s.writeErr
	}
	if len(b.Kinds) != len(b.Rows) {
		s.mu.Unlock()
		return fmt.Errorf("batch of %d rows with %d kinds", len(b.Rows), len(b.Kinds))
	}
	s.log = append(s.log, fmt.Sprintf("write %d", len(b.Rows)))
	s.kinds = append(s.kinds, b.Kinds...)
	s.rows = append(s.rows, b.Rows...)
	s.mu.Unlock()
	if s.wrote != nil {
		s.wrote <- struct{}{}
	}
	return nil
}

func (s *memSink) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, "flush")
	return nil
}

func (s *memSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, "close")
	return nil
}

func (s *memSink) changes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.rows))
	for i, r := range s.rows {
		out[i] = s.kinds[i].String() + rowString(r)
	}
	return out
}

func rowString(r types.Row) string {
	s := "("
	for i, v := range r {
		if i > 0 {
			s += ", "
		}
		s += v.String()
	}
	return s + ")"
}

// scanOf returns a scan of a table served by src.
func scanOf(table string, schema types.Schema, src *memSource) *planner.TableSourceScan {
	produce := make([]connectors.ProducedColumn, len(schema))
	for i, c := range schema {
		produce[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	src.positions = map[string]int{}
	f := &connectors.Factory{
		Name: "mem",
		NewSource: func(context.Context, connectors.SourceConfig) (connectors.Source, error) {
			return src, nil
		},
	}
	return &planner.TableSourceScan{
		Table: table, Connector: f, Info: connectors.TableInfo{Name: table, Schema: schema},
		Produce: produce, Out: schema,
	}
}

// sinkOf returns a sink node writing its input to sink.
func sinkOf(table string, input planner.Node, sink *memSink, changelog planner.Changelog) *planner.Sink {
	f := &connectors.Factory{
		Name: "mem",
		NewSink: func(context.Context, connectors.SinkConfig) (connectors.Sink, error) {
			return sink, nil
		},
	}
	return &planner.Sink{
		Input: input, Table: table, Connector: f, Info: connectors.TableInfo{Name: table},
		Changelog: changelog, Out: input.Schema(),
	}
}

func program(settings map[string]string, roots ...planner.Node) *planner.Program {
	p := &planner.Program{Settings: settings}
	for _, r := range roots {
		p.Pipelines = append(p.Pipelines, &planner.Pipeline{Root: r, Statement: "test"})
	}
	return p
}

// checkNoLeaks fails the test when goroutines started after before are still running.
// Run waits for its goroutines, but one that has called wg.Done may not have exited yet
// (and may be descheduled on another core), so it retries for a while, as goleak does,
// before calling them leaked.
func checkNoLeaks(t *testing.T, before int) {
	t.Helper()
	n := runtime.NumGoroutine()
	for i := 0; i < 2000 && n > before; i++ {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > before {
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%d goroutines before the job, %d after:\n%s", before, n, buf)
	}
}

// harness drives one operator by hand, collecting what it emits.
type harness struct {
	t   *testing.T
	op  operator
	ch  chan event
	out *outbox
	m   *opMetrics
}

func newHarness(t *testing.T, op operator, m *opMetrics) *harness {
	ch := make(chan event, 1<<16)
	return &harness{t: t, op: op, ch: ch, out: newOutbox(ch, 1024, &m.out), m: m}
}

func (h *harness) batch(rows ...types.Row) {
	h.t.Helper()
	h.m.in.add(len(rows))
	if err := h.op.processBatch(context.Background(), batch{rows: rows}, h.out); err != nil {
		h.t.Fatal(err)
	}
	if err := h.out.flush(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) watermark(wm int64) {
	h.t.Helper()
	if err := h.op.processWatermark(context.Background(), wm, h.out); err != nil {
		h.t.Fatal(err)
	}
	if err := h.out.flush(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// emitted returns the rows emitted since the last call, as strings with their kinds.
func (h *harness) emitted() []string {
	var out []string
	for {
		select {
		case ev := <-h.ch:
			if ev.kind != eventBatch {
				continue
			}
			for i, r := range ev.batch.rows {
				out = append(out, ev.batch.kind(i).String()+rowString(r))
			}
		default:
			return out
		}
	}
}

var errTest = errors.New("test failure")

// ts parses a wall-clock or UTC time "2006-01-02 15:04:05.000" into microseconds.
func ts(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05.999", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

// triggerCheckpoint starts a checkpoint of the running job from the calling goroutine,
// so that its barriers are queued at the sources when it returns (a source's poll hook
// calls it to place a barrier between two polls). The channel receives the outcome.
func triggerCheckpoint(j *Job) chan savepointResult {
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	reply := make(chan savepointResult, 1)
	c.trigger(false, "", reply)
	return reply
}
