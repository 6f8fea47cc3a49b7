package exec

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// currentWatermarkCalc is SELECT ts, CURRENT_WATERMARK(ts) [WHERE CURRENT_WATERMARK(ts) IS
// NULL OR ts > CURRENT_WATERMARK(ts)] over in, whose column 0 is the rowtime.
func currentWatermarkCalc(in planner.Node, filter bool) *planner.Calc {
	ts := &planner.ColumnRef{Index: 0, Name: "ts", T: rowtime3}
	cwm := func() planner.Expr {
		return &planner.Call{Func: "CURRENT_WATERMARK", Args: []planner.Expr{ts}, T: types.TimestampType(3)}
	}
	c := &planner.Calc{Input: in, Projections: []planner.Expr{ts, cwm()},
		Out: types.Schema{{Name: "ts", Type: rowtime3}, {Name: "wm", Type: types.TimestampType(3)}}}
	if filter {
		boolT := types.TypeBoolean
		c.Filter = &planner.Call{Func: "OR", T: boolT, Args: []planner.Expr{
			&planner.Call{Func: "IS NULL", T: boolT.WithNotNull(true), Args: []planner.Expr{cwm()}},
			&planner.Call{Func: ">", T: boolT, Args: []planner.Expr{ts, cwm()}},
		}}
	}
	return c
}

// watermarkSteps: with WATERMARK FOR ts AS ts - 2 s and one split, the source emits the
// watermarks 00:00:08 after the first poll and 00:00:18 after the second.
func watermarkSteps() []pollStep {
	return []pollStep{
		{advance: time.Second, splits: []string{"a"}, batches: oneBatch("a", tsRow("00:00:10"), tsRow("00:00:05"))},
		{advance: time.Second, batches: oneBatch("a", tsRow("00:00:07"), tsRow("00:00:09"), tsRow("00:00:20"))},
		{advance: time.Second, batches: oneBatch("a", tsRow("00:00:18"), tsRow("00:00:19"))},
	}
}

func runCurrentWatermark(t *testing.T, root planner.Node, clock *fakeClock) []string {
	t.Helper()
	var got []string
	j, err := NewJob(program(nil, &planner.Collect{Input: root}), Options{Clock: clock, Collect: func(_ connectors.RowKind, r types.Row) {
		wm := "NULL"
		if !r[1].IsNull() {
			wm = types.FormatTimestamp(r[1].Int(), 3)[11:19]
		}
		got = append(got, types.FormatTimestamp(r[0].Int(), 3)[11:19]+"@"+wm)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCurrentWatermarkInSource: a Calc fused into the source task reads the last
// watermark the source emitted, NULL before the first; Flink's filter of late rows keeps
// the rows after the watermark.
func TestCurrentWatermarkInSource(t *testing.T) {
	clock := newFakeClock()
	src := &memSource{clock: clock, bounded: true, steps: watermarkSteps()}
	root := currentWatermarkCalc(withWatermark(scanOf("events", tsSchema, src), 2*time.Second, 0), true)
	got := runCurrentWatermark(t, root, clock)
	want := []string{"00:00:10@NULL", "00:00:05@NULL", "00:00:09@00:00:08", "00:00:20@00:00:08", "00:00:19@00:00:18"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestCurrentWatermarkInOperator: a Calc after a temporal sort reads the last watermark
// its task received: the sort emits the rows a watermark releases before it forwards
// that watermark, so they see the one before.
func TestCurrentWatermarkInOperator(t *testing.T) {
	clock := newFakeClock()
	src := &memSource{clock: clock, bounded: true, steps: watermarkSteps()}
	sorted := &planner.TemporalSort{Input: withWatermark(scanOf("events", tsSchema, src), 2*time.Second, 0), OrderBy: []planner.SortKey{{Col: 0}}}
	got := runCurrentWatermark(t, currentWatermarkCalc(sorted, false), clock)
	// 00:00:07 and 00:00:18 are at or behind the sort's watermark when they arrive: late.
	want := []string{"00:00:05@NULL", "00:00:09@00:00:08", "00:00:10@00:00:08", "00:00:19@00:00:18", "00:00:20@00:00:18"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
