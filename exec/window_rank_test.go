package exec

import (
	"slices"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// wrRow is a row (k, v, window_end, window_time) of a window table function's output.
func wrRow(k string, v int64, end string) types.Row {
	e := ts(end)
	return types.Row{types.StringValue(k), types.IntValue(types.Int, v), types.TimestampValue(e), types.TimestampValue(e - 1000)}
}

// TestWindowRankOverTVF: a WindowRank over a window table function ranks a window when
// the watermark reaches its window_time, keeps later windows buffered across a savepoint
// with the watermark, and drops (and counts) a row of a window already ranked.
func TestWindowRankOverTVF(t *testing.T) {
	cfg := &rankConfig{part: []int{2}, order: []planner.SortKey{{Col: 1, Desc: true}}, typ: planner.RowNumber, start: 1, end: 2, rankNumber: true, width: 4}
	tvf := &windowRankTVF{timeCol: 3}
	op := &windowRankOp{cfg: cfg, tvf: tvf, wm: NoWatermark}
	h := newHarness(t, op, &opMetrics{})
	const a, b = "2024-03-01 10:01:00.000", "2024-03-01 10:02:00.000"
	h.batch(wrRow("x", 3, a), wrRow("y", 9, b), wrRow("z", 5, a), wrRow("w", 1, a), wrRow("v", 4, b))
	h.watermark(ts("2024-03-01 10:00:59.998"))
	if got := h.emitted(); len(got) != 0 {
		t.Fatalf("before the watermark reached the window's time: %q", got)
	}
	h.watermark(ts("2024-03-01 10:00:59.999"))
	want := []string{"+I(z, 5, 2024-03-01 10:01:00.000, 2024-03-01 10:00:59.999, 1)", "+I(x, 3, 2024-03-01 10:01:00.000, 2024-03-01 10:00:59.999, 2)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("first window:\n got %q\nwant %q", got, want)
	}

	cps := newMemCheckpoints(t)
	id := cps.snapshot(op)
	op2 := &windowRankOp{cfg: cfg, tvf: tvf, wm: NoWatermark}
	if err := op2.restoreState(cps.reader(id)); err != nil {
		t.Fatal(err)
	}
	m := &opMetrics{}
	op2.m = m
	h2 := newHarness(t, op2, m)
	h2.batch(wrRow("late", 99, a), wrRow("u", 7, b))
	if n := m.late.load(); n != 1 {
		t.Fatalf("%d late rows counted, want 1", n)
	}
	h2.watermark(ts(b))
	want = []string{"+I(y, 9, 2024-03-01 10:02:00.000, 2024-03-01 10:01:59.999, 1)", "+I(u, 7, 2024-03-01 10:02:00.000, 2024-03-01 10:01:59.999, 2)"}
	if got := h2.emitted(); !slices.Equal(got, want) {
		t.Fatalf("second window after the restore:\n got %q\nwant %q", got, want)
	}
	if len(op2.rows) != 0 {
		t.Fatalf("%d rows still buffered after every window was ranked", len(op2.rows))
	}
}

// TestWindowDeduplicateKeepLastTies: keep-last keeps, of rows with the same time, the one
// that arrived last, keep-first the one that arrived first, as Flink's do.
func TestWindowDeduplicateKeepLastTies(t *testing.T) {
	const end = "2024-03-01 10:01:00.000"
	at := types.TimestampValue(ts("2024-03-01 10:00:30.000"))
	for _, last := range []bool{false, true} {
		// (k, v, window_end, window_time, t): ordered by t.
		cfg := &rankConfig{part: []int{2, 0}, order: []planner.SortKey{{Col: 4, Desc: last}}, typ: planner.RowNumber, start: 1, end: 1, width: 5}
		op := &windowRankOp{cfg: cfg, tvf: &windowRankTVF{timeCol: 3, lastWins: last}, wm: NoWatermark}
		h := newHarness(t, op, &opMetrics{})
		for v := range int64(3) {
			h.batch(append(wrRow("k", v, end), at))
		}
		h.watermark(ts(end))
		want := []string{"+I(k, 0, 2024-03-01 10:01:00.000, 2024-03-01 10:00:59.999, 2024-03-01 10:00:30.000)"}
		if last {
			want[0] = "+I(k, 2, 2024-03-01 10:01:00.000, 2024-03-01 10:00:59.999, 2024-03-01 10:00:30.000)"
		}
		if got := h.emitted(); !slices.Equal(got, want) {
			t.Fatalf("keep last %v:\n got %q\nwant %q", last, got, want)
		}
	}
}
