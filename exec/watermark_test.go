package exec

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

var tsSchema = types.Schema{{Name: "ts", Type: rowtime3}}

func tsRow(at string) types.Row { return types.Row{types.TimestampValue(ts("2024-01-01 " + at))} }

// withWatermark puts WATERMARK FOR ts AS ts - INTERVAL delay on scan.
func withWatermark(scan planner.Node, delay, idle time.Duration) *planner.WatermarkAssigner {
	ts := &planner.ColumnRef{Index: 0, Name: "ts", T: rowtime3}
	return &planner.WatermarkAssigner{
		Input: scan, RowtimeCol: 0, IdleTimeout: idle,
		Expr: &planner.Call{Func: "-", T: rowtime3.WithoutTimeAttr(), Args: []planner.Expr{
			ts, &planner.Literal{Value: types.IntervalValue(delay.Microseconds()), T: types.TypeInterval},
		}},
	}
}

// sourceEvents runs the source task of the pipeline ending in root alone and returns
// the events it sent: "rows N", "watermark <time>", "end".
func sourceEvents(t *testing.T, root planner.Node, clock connectors.Clock) []string {
	return sourceEventsWith(t, root, clock, false)
}

// sourceEventsWith is sourceEvents; generic makes the source evaluate the watermark
// expression per row instead of taking the largest rowtime minus the delay.
func sourceEventsWith(t *testing.T, root planner.Node, clock connectors.Clock, generic bool) []string {
	t.Helper()
	c := &compiler{opts: Options{Collect: func(_ connectors.RowKind, _ types.Row) {}}, wmInterval: defaultWatermarkInterval}
	ps, err := c.pipeline(0, &planner.Pipeline{Root: &planner.Collect{Input: root}})
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range ps.sources[0].stages {
		if stage.wm != nil && generic {
			stage.wm.hasDelay = false
		}
	}
	ch := make(chan event, 1024)
	st := &sourceTask{
		spec: ps.sources[0], out: newOutbox(ch, 1024, &ps.sources[0].metrics.out),
		rt: &runEnv{clock: clock, log: slog.New(slog.DiscardHandler), batchSize: 1024, stop: context.Background()},
	}
	if err := st.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(ch)
	var got []string
	for ev := range ch {
		switch ev.kind {
		case eventBatch:
			got = append(got, "rows "+strconv.Itoa(len(ev.batch.rows)))
		case eventWatermark:
			if ev.watermark == MaxWatermark {
				got = append(got, "watermark +inf")
			} else {
				got = append(got, "watermark "+types.FormatTimestamp(ev.watermark, 3)[11:])
			}
		default:
			got = append(got, ev.kind.String())
		}
	}
	return got
}

// TestWatermarkMinOverSplits checks that the source's watermark is the minimum over its
// splits of the largest watermark expression value in each.
func TestWatermarkMinOverSplits(t *testing.T) {
	for _, generic := range []bool{false, true} {
		clock := newFakeClock()
		src := &memSource{clock: clock, bounded: true, steps: []pollStep{
			{advance: time.Second, splits: []string{"a", "b"}, batches: append(oneBatch("a", tsRow("00:00:20"), tsRow("00:00:15")), oneBatch("b", tsRow("00:00:10"))...)},
			{advance: time.Second, batches: oneBatch("b", tsRow("00:00:30"))},
		}}
		got := sourceEventsWith(t, withWatermark(scanOf("events", tsSchema, src), 2*time.Second, 0), clock, generic)
		want := []string{"rows 3", "watermark 00:00:08.000", "rows 1", "watermark 00:00:18.000", "watermark +inf", "end"}
		if !slices.Equal(got, want) {
			t.Fatalf("generic expression %v: got %v, want %v", generic, got, want)
		}
	}
}

// TestIdleSplitReleasesWatermark checks that a split without data holds the watermark
// back until it has been idle for the idle timeout, and forever without one.
func TestIdleSplitReleasesWatermark(t *testing.T) {
	steps := func() []pollStep {
		return []pollStep{
			{advance: time.Second, splits: []string{"a", "b"}, batches: oneBatch("a", tsRow("00:00:10"))},
			{advance: 3 * time.Second, batches: oneBatch("a", tsRow("00:00:11"))},
			{advance: 3 * time.Second, batches: oneBatch("a", tsRow("00:00:12"))},
		}
	}
	t.Run("idle timeout", func(t *testing.T) {
		clock := newFakeClock()
		src := &memSource{clock: clock, bounded: true, steps: steps()}
		got := sourceEvents(t, withWatermark(scanOf("events", tsSchema, src), 2*time.Second, 5*time.Second), clock)
		// b was first seen 1 s in; 6 s later it is idle and a alone sets the watermark.
		want := []string{"rows 1", "rows 1", "rows 1", "watermark 00:00:10.000", "watermark +inf", "end"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("no idle timeout", func(t *testing.T) {
		clock := newFakeClock()
		src := &memSource{clock: clock, bounded: true, steps: steps()}
		got := sourceEvents(t, withWatermark(scanOf("events", tsSchema, src), 2*time.Second, 0), clock)
		want := []string{"rows 1", "rows 1", "rows 1", "watermark +inf", "end"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

// TestWatermarkNullRowtimeDropped checks that rows without an event time are dropped
// and counted by the source.
func TestWatermarkNullRowtimeDropped(t *testing.T) {
	clock := newFakeClock()
	src := &memSource{clock: clock, bounded: true, skipped: 4, steps: []pollStep{
		{splits: []string{"a"}, batches: oneBatch("a", tsRow("00:00:10"), types.Row{types.NullValue})},
	}}
	root := withWatermark(scanOf("events", tsSchema, src), 0, 0)
	var rows int
	j, err := NewJob(program(nil, &planner.Collect{Input: root}), Options{Clock: clock, Collect: func(connectors.RowKind, types.Row) { rows++ }})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := j.Metrics().Sources[0]
	if rows != 1 || m.NullRowtime != 1 || m.RecordsRead != 2 || m.Skipped != 4 || m.Watermark != MaxWatermark {
		t.Fatalf("collected %d rows, metrics %+v: want 1 row, 1 NULL rowtime, 2 read, 4 skipped, final watermark", rows, m)
	}
}
