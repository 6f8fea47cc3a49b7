package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

// bruteSessions is, per session of gapMS milliseconds of each key (rows at most a gap
// apart are one session, as in Flink), (k, rows, SUM(v),
// first id, last id, the number of distinct v).
func bruteSessions(evs []overEvent, gapMS int64) string {
	byKey := map[string][]overEvent{}
	for _, e := range evs {
		byKey[e.k] = append(byKey[e.k], e)
	}
	var rows []string
	for k, part := range byKey {
		slices.SortStableFunc(part, func(a, b overEvent) int { return int(a.ts - b.ts) })
		flush := func(s []overEvent) {
			var sum int64
			any := false
			lo, hi := s[0].seq, s[0].seq
			distinct := map[int64]bool{}
			for _, e := range s {
				if e.v >= 0 {
					sum += e.v
					any = true
					distinct[e.v] = true
				}
				lo, hi = min(lo, e.seq), max(hi, e.seq)
			}
			sv := "NULL"
			if any {
				sv = fmt.Sprint(sum)
			}
			rows = append(rows, fmt.Sprintf("(%s, %d, %s, %d, %d, %d)", k, len(s), sv, lo, hi, len(distinct)))
		}
		start := 0
		for i := 1; i <= len(part); i++ {
			if i == len(part) || part[i].ts-part[i-1].ts > gapMS {
				flush(part[start:i])
				start = i
			}
		}
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// TestSessionStopWithSavepointAndResume stops a session window job with a savepoint
// halfway (open sessions with their buffers in the state, rows out of order that bridge
// sessions) and resumes it: the sessions of both runs together are the brute-force ones,
// each once. COUNT(DISTINCT) of strings keeps value sets, which merge with their sessions.
func TestSessionStopWithSavepointAndResume(t *testing.T) {
	const n = 20000
	dir, evs := writeOverFixture(t, n, 4)
	query := "SELECT k, COUNT(*), SUM(v), MIN(id), MAX(id), COUNT(DISTINCT CAST(v AS STRING)) FROM e GROUP BY SESSION(rt, INTERVAL '2' SECOND), k;"
	spDir := t.TempDir()
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	var mu sync.Mutex
	var got []string
	collect := func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		if k != connectors.Insert {
			t.Errorf("a session window emitted %s", k)
		}
		got = append(got, rowString(r))
	}
	opts := Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "session", Collect: collect, BatchSize: 16}
	j, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'")+query), opts)
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "session window aggregate", 1, spDir)
	read := j.Metrics().Sources[0].RecordsRead
	if read >= n || read == 0 {
		t.Fatalf("the first run read %d of %d rows; the test needs it stopped halfway", read, n)
	}
	first := len(got)
	j2, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+path+"'")+query), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range append(j.Metrics().Operators, j2.Metrics().Operators...) {
		if m.LateDropped != 0 {
			t.Fatalf("%s dropped %d late rows; the fixture has none", m.Name, m.LateDropped)
		}
	}
	slices.Sort(got)
	t.Logf("stopped after %d of %d rows and %d sessions; %d sessions in all", read, n, first, len(got))
	if first == 0 {
		t.Fatal("no session was emitted before the stop: the resume restores no fired state")
	}
	if g, w := strings.Join(got, "\n"), bruteSessions(evs, 2000); g != w {
		t.Fatalf("--- pipesql (%d rows):\n%.2000s\n--- brute force:\n%.2000s", len(got), g, w)
	}
}

// TestSessionMergeAndLate: two sessions of a key apart by more than the gap, a row that
// bridges them merges them and their buffers into one, and a row whose session would end
// behind the watermark is late, dropped and counted.
func TestSessionMergeAndLate(t *testing.T) {
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), State: planner.StateCounter}
	sum := planner.AggCall{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, State: planner.StateSum}
	in := types.Schema{{Name: "k", Type: types.TypeString}, {Name: "v", Type: types.TypeBigInt}, {Name: "ts", Type: types.TimestampType(3)}}
	aggs, err := compileAggCalls([]planner.AggCall{count, sum}, in)
	if err != nil {
		t.Fatal(err)
	}
	out := types.Schema{in[0], {Name: "n", Type: count.T}, {Name: "s", Type: sum.T},
		{Name: "window_start", Type: types.TimestampType(3)}, {Name: "window_end", Type: types.TimestampType(3)}, {Name: "window_time", Type: types.TimestampType(3)}}
	cfg := &sessionConfig{gap: 5_000_000, tick: 1000, timeCol: 2, keys: []int{0}, aggs: aggs, width: 6, cols: newWindowColumns(out, 3, 1000)}
	m := newOpMetrics(0, "session window aggregate")
	op, err := newSessionAggOp(cfg, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan event, 16)
	ob := newOutbox(ch, 1, &counter{})
	ctx := context.Background()
	row := func(v, sec int64) types.Row {
		return types.Row{types.StringValue("a"), types.IntValue(types.BigInt, v), types.TimestampValue(sec * 1_000_000)}
	}
	steps := []struct {
		rows []types.Row
		wm   int64 // seconds
	}{
		{[]types.Row{row(1, 0), row(2, 12)}, 3},       // sessions [0, 5) and [12, 17)
		{[]types.Row{row(4, 7), row(8, 3)}, 4},        // [7, 12) joins the second, 3 bridges [0, 5) and [7, 17)
		{[]types.Row{row(100, -20), row(16, 20)}, 30}, // [-20, -15) ended: late; 20 opens [20, 25)
	}
	for _, s := range steps {
		if err := op.processBatch(ctx, batch{rows: s.rows}, ob); err != nil {
			t.Fatal(err)
		}
		if err := op.processWatermark(ctx, s.wm*1_000_000, ob); err != nil {
			t.Fatal(err)
		}
	}
	if err := ob.flush(ctx); err != nil {
		t.Fatal(err)
	}
	close(ch)
	var got []string
	for e := range ch {
		for _, r := range e.batch.rows {
			got = append(got, fmt.Sprintf("n=%s s=%s [%d, %d)", r[1], r[2], r[3].Int()/1_000_000, r[4].Int()/1_000_000))
		}
	}
	want := "n=4 s=15 [0, 17) n=1 s=16 [20, 25)"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("got %s, want %s", g, want)
	}
	if late := m.late.load(); late != 1 {
		t.Fatalf("%d rows counted late, want 1", late)
	}
}
