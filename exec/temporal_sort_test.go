package exec

import (
	"cmp"
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

// sortedOver is the fixture's events in the order of ORDER BY rt, v DESC, k: a stable sort
// of the arrival order (NULL is the lowest value, so last when descending), as id rows.
func sortedOver(evs []overEvent) []string {
	s := slices.Clone(evs)
	slices.SortStableFunc(s, func(a, b overEvent) int {
		if c := cmp.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		if c := cmp.Compare(b.v, a.v); c != 0 { // -1 (NULL) below every value
			return c
		}
		return strings.Compare(a.k, b.k)
	})
	out := make([]string, len(s))
	for i, e := range s {
		out[i] = fmt.Sprint(e.seq)
	}
	return out
}

func sortCollect(t *testing.T, mu *sync.Mutex, got *[]string) func(connectors.RowKind, types.Row) {
	return func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		if k != connectors.Insert {
			t.Errorf("a temporal sort emitted %s", k)
		}
		*got = append(*got, r[0].String())
	}
}

// TestTemporalSortOrder: out-of-order input with many ties on the time and on the other
// keys comes out in exactly the order of a Go stable sort of the same rows, also when
// the keys are not selected; LIMIT after it keeps the first rows of that order.
func TestTemporalSortOrder(t *testing.T) {
	const n = 5000
	dir, evs := writeOverFixture(t, n, 3)
	want := sortedOver(evs)
	if slices.IsSortedFunc(evs, func(a, b overEvent) int { return cmp.Compare(a.ts, b.ts) }) {
		t.Fatal("the fixture is in time order; the test needs it out of order")
	}
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"all", "SELECT id, k, v, rt FROM e ORDER BY rt, v DESC, k;", want},
		{"limit", "SELECT id, k, v, rt FROM e ORDER BY rt, v DESC, k LIMIT 7;", want[:7]},
		{"keys not selected", "SELECT id FROM e ORDER BY rt, v DESC, k;", want},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			j, err := NewJob(planSQL(t, overDDL(dir)+c.query),
				Options{Collect: sortCollect(t, &mu, &got), BatchSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, m := range j.Metrics().Operators {
				if m.LateDropped != 0 {
					t.Fatalf("%s dropped %d late rows; the fixture has none", m.Name, m.LateDropped)
				}
			}
			if g, w := strings.Join(got, " "), strings.Join(c.want, " "); g != w {
				t.Fatalf("--- pipesql (%d rows):\n%.1000s\n--- Go sort (%d rows):\n%.1000s", len(got), g, len(c.want), w)
			}
		})
	}
}

// TestTemporalSortStopWithSavepointAndResume stops a sort with rows waiting for the
// watermark in its state and resumes it: the rows of both runs, in the order emitted, are
// the Go sort's, each once.
func TestTemporalSortStopWithSavepointAndResume(t *testing.T) {
	const n = 20000
	dir, evs := writeOverFixture(t, n, 4)
	query := "SELECT id, k, v, rt FROM e ORDER BY rt, v DESC, k;"
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	var mu sync.Mutex
	var got []string
	opts := Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "sort", Collect: sortCollect(t, &mu, &got), BatchSize: 16}
	j, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'")+query), opts)
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "temporal sort", 1, t.TempDir())
	read := j.Metrics().Sources[0].RecordsRead
	if read >= n || read == 0 {
		t.Fatalf("the first run read %d of %d rows; the test needs it stopped halfway", read, n)
	}
	mu.Lock()
	first := len(got)
	mu.Unlock()
	j2, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+path+"'")+query), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped after %d of %d rows read, %d emitted", read, n, first)
	if g, w := strings.Join(got, " "), strings.Join(sortedOver(evs), " "); g != w {
		t.Fatalf("--- pipesql (%d rows):\n%.1000s\n--- Go sort:\n%.1000s", len(got), g, w)
	}
}

// TestTemporalSortLateRows: a row at or behind the watermark is dropped and counted; the
// rows due at a watermark come out sorted, the others wait.
func TestTemporalSortLateRows(t *testing.T) {
	cfg := &temporalSortConfig{timeCol: 1, keys: []planner.SortKey{{Col: 1}, {Col: 0, Desc: true}}, width: 2}
	m := newOpMetrics(0, "temporal sort")
	op := &temporalSortOp{cfg: cfg, m: m, wm: NoWatermark}
	ch := make(chan event, 16)
	out := newOutbox(ch, 1, &counter{})
	ctx := context.Background()
	row := func(v, ms int64) types.Row {
		return types.Row{types.IntValue(types.BigInt, v), types.IntValue(types.BigInt, ms*1000)}
	}
	steps := []struct {
		rows []types.Row
		wm   int64 // milliseconds
	}{
		{[]types.Row{row(1, 20), row(2, 10), row(3, 10), row(4, 30)}, 20},
		{[]types.Row{row(5, 19), row(6, 20), row(7, 21), row(8, 25)}, 25},
	}
	for _, s := range steps {
		if err := op.processBatch(ctx, batch{rows: s.rows}, out); err != nil {
			t.Fatal(err)
		}
		if err := op.processWatermark(ctx, s.wm*1000, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.finish(ctx, true, out); err != nil {
		t.Fatal(err)
	}
	if err := out.flush(ctx); err != nil {
		t.Fatal(err)
	}
	close(ch)
	var got []string
	for e := range ch {
		for _, r := range e.batch.rows {
			got = append(got, fmt.Sprintf("%d@%d", r[0].Int(), r[1].Int()/1000))
		}
	}
	if g, w := strings.Join(got, " "), "3@10 2@10 1@20 7@21 8@25 4@30"; g != w {
		t.Fatalf("emitted %s, want %s", g, w)
	}
	if l := m.late.n.Load(); l != 2 {
		t.Fatalf("%d late rows counted, want 2 (at 19 and 20 behind the watermark 20)", l)
	}
}

// TestTemporalSortAfterWindowAggregate: the rows of a window aggregate, sorted by their
// window_time and then by count descending, against the counts computed in Go.
func TestTemporalSortAfterWindowAggregate(t *testing.T) {
	dir, evs := writeOverFixture(t, 3000, 3)
	type wk struct {
		start int64
		k     string
	}
	counts := map[wk]int{}
	for _, e := range evs {
		counts[wk{e.ts - e.ts%5000, e.k}]++
	}
	keys := make([]wk, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b wk) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a.k, b.k)
	})
	var want []string
	for _, k := range keys {
		want = append(want, fmt.Sprintf("%d %s %d", k.start, k.k, counts[k]))
	}
	var got []string
	var mu sync.Mutex
	query := `SELECT window_time, k, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(rt), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, window_time, k ORDER BY window_time, c DESC, k;`
	j, err := NewJob(planSQL(t, overDDL(dir)+query), Options{BatchSize: 16, Collect: func(kind connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		if kind != connectors.Insert {
			t.Errorf("emitted %s", kind)
		}
		got = append(got, fmt.Sprintf("%d %s %d", (r[0].Int()/1000+1)-5000, r[1].String(), r[2].Int()))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range j.Metrics().Operators {
		if m.LateDropped != 0 {
			t.Fatalf("%s dropped %d late rows", m.Name, m.LateDropped)
		}
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Fatalf("--- pipesql:\n%.1500s\n--- Go:\n%.1500s", g, w)
	}
}
