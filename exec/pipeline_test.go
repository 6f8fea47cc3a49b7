package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

var kvSchema = types.Schema{{Name: "k", Type: types.TypeString}, {Name: "v", Type: types.TypeBigInt}}

func kv(k string, v int64) types.Row { return types.Row{types.StringValue(k), types.BigIntValue(v)} }

func oneBatch(split string, rows ...types.Row) []connectors.SourceBatch {
	return []connectors.SourceBatch{{Split: split, Rows: rows}}
}

// groupSum is SELECT k, SUM(v) FROM input GROUP BY k.
func groupSum(input planner.Node) *planner.GroupAggregate {
	return &planner.GroupAggregate{
		Input: input, Keys: []int{0},
		Aggs: []planner.AggCall{{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, Name: "s"}},
		Out:  types.Schema{kvSchema[0], {Name: "s", Type: types.TypeBigInt}},
	}
}

// TestGroupAggregateChangelog checks the updating changelog of a non-windowed GROUP BY:
// +I for a new key, -U/+U when its result changes, nothing when it does not.
func TestGroupAggregateChangelog(t *testing.T) {
	for _, miniBatch := range []bool{false, true} {
		src := &memSource{bounded: true, steps: []pollStep{
			{batches: oneBatch("p0", kv("a", 1), kv("b", 2), kv("a", 0), kv("a", 5))},
			{batches: oneBatch("p0", kv("b", 1))},
		}}
		sink := &memSink{}
		root := sinkOf("out", groupSum(scanOf("events", kvSchema, src)), sink, planner.Updating)
		settings := map[string]string{}
		want := []string{"+I(a, 1)", "+I(b, 2)", "-U(a, 1)", "+U(a, 6)", "-U(b, 2)", "+U(b, 3)"}
		if miniBatch {
			settings["table.exec.mini-batch.enabled"] = "true"
			want = []string{"+I(a, 6)", "+I(b, 2)", "-U(b, 2)", "+U(b, 3)"}
		}
		j, err := NewJob(program(settings, root), Options{Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := sink.changes(); !slices.Equal(got, want) {
			t.Errorf("mini-batch %v: got %v, want %v", miniBatch, got, want)
		}
		if !src.closed || sink.log[len(sink.log)-2] != "flush" || sink.log[len(sink.log)-1] != "close" {
			t.Errorf("source closed %v, sink log %v: want both closed, the sink after a flush", src.closed, sink.log)
		}
	}
}

// TestSourceErrorFailsJob checks that a source error fails the job with the table's
// name, closes everything and leaves no goroutine behind.
func TestSourceErrorFailsJob(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &memSource{steps: []pollStep{
		{batches: oneBatch("p0", kv("a", 1))},
		{err: errors.Join(errTest, errors.New("partition 3 offset 42: bad record"))},
	}}
	sink := &memSink{}
	j, err := NewJob(program(nil, sinkOf("out", groupSum(scanOf("events", kvSchema, src)), sink, planner.Updating)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Run(context.Background())
	var oe *OperatorError
	if !errors.As(err, &oe) || oe.Operator != "source events" || !errors.Is(err, errTest) {
		t.Fatalf("got %v, want an OperatorError of source events wrapping the source's error", err)
	}
	if !strings.Contains(err.Error(), "source events: ") || !strings.Contains(err.Error(), "partition 3 offset 42") {
		t.Fatalf("error %q does not name the table and the position", err)
	}
	if !src.closed || !slices.Contains(sink.log, "close") {
		t.Fatalf("source closed %v, sink log %v: want both closed", src.closed, sink.log)
	}
	checkNoLeaks(t, before)
}

// TestSinkErrorStopsBlockedSource checks that a failing sink stops a source that is
// waiting for data, and that Run reports the sink.
func TestSinkErrorStopsBlockedSource(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &memSource{steps: []pollStep{{batches: oneBatch("p0", kv("a", 1))}}} // then waits forever
	sink := &memSink{writeErr: errTest}
	j, err := NewJob(program(nil, sinkOf("out", groupSum(scanOf("events", kvSchema, src)), sink, planner.Updating)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Run(context.Background())
	var oe *OperatorError
	if !errors.As(err, &oe) || oe.Operator != "sink out" || !errors.Is(err, errTest) {
		t.Fatalf("got %v, want an OperatorError of sink out", err)
	}
	if !src.closed {
		t.Fatal("source not closed")
	}
	checkNoLeaks(t, before)
}

// TestBadRowWidthFailsJob checks that a connector returning rows of the wrong width is
// an error naming the split, not a panic.
func TestBadRowWidthFailsJob(t *testing.T) {
	src := &memSource{bounded: true, steps: []pollStep{{batches: oneBatch("p7", types.Row{types.StringValue("a")})}}}
	j, err := NewJob(program(nil, sinkOf("out", groupSum(scanOf("events", kvSchema, src)), &memSink{}, planner.Updating)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Run(context.Background())
	if !errors.Is(err, ErrBadRow) || !strings.Contains(err.Error(), "p7") {
		t.Fatalf("got %v, want ErrBadRow naming split p7", err)
	}
}

// TestCancelDrainsAndFlushes checks a clean stop: rows already read reach the operators,
// windows that have not ended do not fire, sinks flush and close, and Run returns nil.
func TestCancelDrainsAndFlushes(t *testing.T) {
	before := runtime.NumGoroutine()
	src1 := &memSource{blocked: make(chan struct{}), steps: []pollStep{{batches: oneBatch("p0", kv("a", 1), kv("a", 2))}}}
	sink1 := &memSink{wrote: make(chan struct{}, 16)}
	p1 := sinkOf("totals", groupSum(scanOf("events", kvSchema, src1)), sink1, planner.Updating)

	wschema := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "v", Type: types.TypeBigInt}}
	src2 := &memSource{blocked: make(chan struct{}), steps: []pollStep{{batches: oneBatch("p0",
		types.Row{types.TimestampValue(ts("2024-01-01 00:00:01")), types.BigIntValue(1)},
		types.Row{types.TimestampValue(ts("2024-01-01 00:00:02")), types.BigIntValue(2)},
		types.Row{types.TimestampValue(ts("2024-01-01 00:00:03")), types.BigIntValue(3)},
	)}}}
	sum := planner.AggCall{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, Name: "s"}
	wagg := &planner.WindowAggregate{
		Input: scanOf("ticks", wschema, src2), Window: planner.Window{Kind: planner.Tumble, Size: time.Hour, Slide: time.Hour},
		Aggs: []planner.AggCall{sum}, Out: windowOut(nil, []planner.AggCall{sum}, rowtime3),
	}
	sink2 := &memSink{}
	p2 := sinkOf("hourly", wagg, sink2, planner.InsertOnly)

	j, err := NewJob(program(nil, p1, p2), Options{Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- j.Run(ctx) }()
	<-sink1.wrote // the first pipeline has written
	<-src1.blocked
	<-src2.blocked // both sources have returned their rows and wait for more
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	if got, want := sink1.changes(), []string{"+I(a, 1)", "-U(a, 1)", "+U(a, 3)"}; !slices.Equal(got, want) {
		t.Fatalf("sink totals got %v, want %v", got, want)
	}
	if n := len(sink1.log); n < 2 || sink1.log[n-2] != "flush" || sink1.log[n-1] != "close" {
		t.Fatalf("sink totals log %v, want a flush then close at the end", sink1.log)
	}
	if !slices.Equal(sink2.log, []string{"flush", "close"}) {
		t.Fatalf("sink hourly log %v: the open window must not fire on cancel", sink2.log)
	}
	for _, m := range j.Metrics().Operators {
		if m.Name == "window aggregate" && m.RecordsIn != 3 {
			t.Fatalf("window aggregate saw %d rows, want the 3 in flight drained to it", m.RecordsIn)
		}
	}
	checkNoLeaks(t, before)
}

// TestBarrierFollowsRecords checks that a barrier injected at the source reaches the
// sink after every record read before it and before any read after it, that the
// checkpoint completes with the source position at the barrier, that the source is
// told, and that the end of the input takes a final checkpoint.
func TestBarrierFollowsRecords(t *testing.T) {
	var j *Job
	var done chan savepointResult
	src := &memSource{bounded: true}
	src.steps = []pollStep{
		{hook: func() { done = triggerCheckpoint(j) }, batches: oneBatch("p0", kv("a", 1), kv("b", 2), kv("c", 3))},
		{hook: func() {
			if r := <-done; r.err != nil || r.id != 1 {
				t.Errorf("checkpoint: %+v, want checkpoint 1", r)
			}
		}, batches: oneBatch("p0", kv("d", 4), kv("e", 5))},
		{batches: oneBatch("p0", kv("f", 6))},
	}
	sink := &memSink{}
	store := state.NewMemory(state.Options{NumRetained: 5})
	j, err := NewJob(program(map[string]string{"execution.checkpointing.interval": "1 h"},
		sinkOf("out", scanOf("events", kvSchema, src), sink, planner.InsertOnly)),
		Options{Clock: newFakeClock(), Store: store, JobKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The memSink does not commit in two phases: it flushes at each barrier, at the final
	// checkpoint and at the end.
	want := []string{"write 3", "flush", "write 2", "write 1", "flush", "flush", "close"}
	if !slices.Equal(sink.log, want) {
		t.Fatalf("sink saw %v, want %v", sink.log, want)
	}
	cp, err := store.Open("test", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pos, err := cp.Get("0/source events", sourceConnectorKey); err != nil || string(pos) != "3" {
		t.Fatalf("checkpoint 1 has the source at %q (%v), want 3", pos, err)
	}
	final, err := store.Latest("test")
	if err != nil || final.ID() != 2 || final.Meta().Props[propFinished] != "true" {
		t.Fatalf("latest checkpoint %v (%v), want the final checkpoint 2, marked finished", final, err)
	}
	if pos, _ := final.Get("0/source events", sourceConnectorKey); string(pos) != "6" {
		t.Fatalf("final checkpoint has the source at %q, want 6", pos)
	}
	if !slices.Equal(src.completed, []uint64{1, 2}) {
		t.Fatalf("source told of checkpoints %v, want [1 2]", src.completed)
	}
}

// orderSource is a memSource that checks the order of Snapshot and CheckpointComplete:
// when told of checkpoint id, its last snapshot must be id's (checkpoints here never fail,
// so the id-th snapshot), or a source confirming its last snapshot upstream on completion
// (postgres-cdc's slot) would confirm a position no completed checkpoint holds.
type orderSource struct {
	memSource
	snapshots uint64
	wrong     []string
}

func (s *orderSource) Snapshot() ([]byte, error) {
	s.snapshots++
	return s.memSource.Snapshot()
}

func (s *orderSource) CheckpointComplete(ctx context.Context, id uint64) error {
	if s.snapshots != id {
		s.wrong = append(s.wrong, fmt.Sprintf("told of checkpoint %d after snapshot %d", id, s.snapshots))
	}
	return s.memSource.CheckpointComplete(ctx, id)
}

// TestSourceToldOfCompletionBeforeNextSnapshot runs a slow source under checkpoints
// every millisecond, so that at each poll checkpoint N's completion and N+1's barrier
// are both queued: the completion must reach the source first.
func TestSourceToldOfCompletionBeforeNextSnapshot(t *testing.T) {
	src := &orderSource{memSource: memSource{bounded: true}}
	for i := range 100 {
		src.steps = append(src.steps, pollStep{hook: func() { time.Sleep(3 * time.Millisecond) },
			batches: oneBatch("p0", kv("a", int64(i)))})
	}
	scan := scanOf("events", kvSchema, &src.memSource)
	scan.Connector.NewSource = func(context.Context, connectors.SourceConfig) (connectors.Source, error) { return src, nil }
	j, err := NewJob(program(map[string]string{"execution.checkpointing.interval": "1 ms"},
		sinkOf("out", scan, &memSink{}, planner.InsertOnly)),
		Options{Store: state.NewMemory(state.Options{NumRetained: 2}), JobKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(src.completed) < 10 {
		t.Fatalf("only %d checkpoints completed: the test did not make them race", len(src.completed))
	}
	if len(src.wrong) > 0 {
		t.Fatalf("%d of %d completions came after a later snapshot, first %v", len(src.wrong), len(src.completed), src.wrong[:min(5, len(src.wrong))])
	}
}

func TestNewJobErrors(t *testing.T) {
	src := &memSource{}
	scan := scanOf("events", kvSchema, src)
	if _, err := NewJob(program(nil, &planner.Collect{Input: scan}), Options{}); !errors.Is(err, ErrNoCollector) {
		t.Errorf("select without Collect: got %v, want ErrNoCollector", err)
	}
	if _, err := NewJob(program(nil, groupSum(scan)), Options{}); !errors.Is(err, ErrUnsupportedPlan) {
		t.Errorf("pipeline without a sink: got %v, want ErrUnsupportedPlan", err)
	}
	twice := sinkOf("out", groupSum(groupSum(scan)), &memSink{}, planner.Updating)
	if _, err := NewJob(program(nil, twice), Options{}); !errors.Is(err, ErrUnsupportedPlan) {
		t.Errorf("aggregate over an updating input: got %v, want ErrUnsupportedPlan", err)
	}
	bad := map[string]string{"pipeline.auto-watermark-interval": "soon"}
	if _, err := NewJob(program(bad, sinkOf("out", scan, &memSink{}, planner.InsertOnly)), Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("bad watermark interval: got %v, want ErrInvalidOptions", err)
	}
}

// TestCollect checks that a SELECT's rows reach Options.Collect in order with their kinds.
func TestCollect(t *testing.T) {
	src := &memSource{bounded: true, steps: []pollStep{{batches: oneBatch("p0", kv("a", 1), kv("a", 2))}}}
	var got []string
	j, err := NewJob(program(nil, &planner.Collect{Input: groupSum(scanOf("events", kvSchema, src)), Changelog: planner.Updating}),
		Options{Collect: func(k connectors.RowKind, r types.Row) { got = append(got, k.String()+rowString(r)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I(a, 1)", "-U(a, 1)", "+U(a, 3)"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	m := j.Metrics()
	if len(m.Sources) != 1 || m.Sources[0].RecordsRead != 2 || len(m.Sources[0].Splits) != 1 || m.Sources[0].Splits[0].Position != "2" {
		t.Fatalf("source metrics %+v, want 2 rows read from split p0 at position 2", m.Sources)
	}
}

// panicSink is a sink with a bug.
type panicSink struct{ memSink }

func (*panicSink) Write(context.Context, connectors.ChangeBatch) error { panic("index out of range") }

// TestOperatorPanicFailsJob checks that a panic in an operator fails the job with an
// error naming it instead of crashing the process, and stops everything.
func TestOperatorPanicFailsJob(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &memSource{steps: []pollStep{{batches: oneBatch("p0", kv("a", 1))}}}
	sink := &panicSink{}
	root := sinkOf("out", scanOf("events", kvSchema, src), &sink.memSink, planner.InsertOnly)
	root.Connector.NewSink = func(context.Context, connectors.SinkConfig) (connectors.Sink, error) { return sink, nil }
	j, err := NewJob(program(nil, root), Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Run(context.Background())
	var oe *OperatorError
	if !errors.As(err, &oe) || oe.Operator != "sink out" || !errors.Is(err, ErrInternal) {
		t.Fatalf("got %v, want an internal error of sink out", err)
	}
	if !src.closed {
		t.Fatal("source not closed")
	}
	checkNoLeaks(t, before)
}

func TestConnectorLogNamesTableOnce(t *testing.T) {
	var buf bytes.Buffer
	log := connLogger{slog.New(slog.NewTextHandler(&buf, nil)).With("table", "events")}
	log.Warn("discovery failed", "table", "events", "attempts", 3)
	if n := strings.Count(buf.String(), "table="); n != 1 {
		t.Errorf("table= appears %d times: %s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "attempts=3") {
		t.Errorf("other attributes lost: %s", buf.String())
	}
}
