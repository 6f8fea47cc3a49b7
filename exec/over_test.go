package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// overEvent is one input row of the OVER tests, with its line number.
type overEvent struct {
	k   string
	v   int64 // -1: NULL
	ts  int64 // milliseconds
	seq int
}

// writeOverFixture writes n events in event-time order across files (each file later
// than the one before, rows out of order within a file by less than the watermark delay),
// many at the same millisecond.
func writeOverFixture(t *testing.T, n, files int) (string, []overEvent) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 8))
	var evs []overEvent
	ms := int64(1_700_000_000_000)
	for f := range files {
		var b strings.Builder
		ms += 5000 // files apart in time: rows of one time are in one file, in its order
		for i := f * n / files; i < (f+1)*n/files; i++ {
			ms += int64(rng.IntN(3)) * 500
			e := overEvent{k: fmt.Sprintf("k%d", rng.IntN(5)), v: int64(rng.IntN(100)), ts: ms, seq: i}
			if i > (f*n/files)+3 && rng.IntN(5) == 0 {
				e.ts -= 1000
			}
			if rng.IntN(10) == 0 {
				e.v = -1
			}
			v := fmt.Sprint(e.v)
			if e.v < 0 {
				v = "null"
			}
			fmt.Fprintf(&b, `{"k":"%s","v":%s,"ts":%d,"id":%d}`+"\n", e.k, v, e.ts, i)
			evs = append(evs, e)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("e%02d.json", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, evs
}

func overDDL(dir string, sets ...string) string {
	var b strings.Builder
	for _, s := range sets {
		fmt.Fprintf(&b, "SET %s;\n", s)
	}
	fmt.Fprintf(&b, `CREATE TABLE e (k STRING, v INT, ts BIGINT, id BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
	return b.String()
}

// bruteOver computes, per event, (id, SUM(v), COUNT(*), LAG(v), COUNT(DISTINCT v)) over its partition's rows
// ordered by (ts, arrival): a RANGE frame of rangeMS milliseconds back with its peers, or
// every row before it when rangeMS < 0 (ROWS UNBOUNDED PRECEDING, no peers).
func bruteOver(evs []overEvent, rangeMS int64) string {
	byKey := map[string][]overEvent{}
	for _, e := range evs {
		byKey[e.k] = append(byKey[e.k], e)
	}
	var rows []string
	for _, part := range byKey {
		slices.SortStableFunc(part, func(a, b overEvent) int { return int(a.ts - b.ts) })
		for i, e := range part {
			var sum, n int64
			any := false
			distinct := map[int64]bool{}
			for j, o := range part {
				in := j <= i
				if rangeMS >= 0 {
					in = o.ts <= e.ts && o.ts >= e.ts-rangeMS
				}
				if !in {
					continue
				}
				n++
				if o.v >= 0 {
					sum += o.v
					any = true
					distinct[o.v] = true
				}
			}
			s, lag := "NULL", "NULL"
			if any {
				s = fmt.Sprint(sum)
			}
			if i > 0 && part[i-1].v >= 0 {
				lag = fmt.Sprint(part[i-1].v)
			}
			rows = append(rows, fmt.Sprintf("(%d, %s, %d, %s, %d)", e.seq, s, n, lag, len(distinct)))
		}
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// TestOverStopWithSavepointAndResume stops OVER aggregate jobs with a savepoint halfway
// (rows waiting for the watermark, kept frames, running buffers, COUNT(DISTINCT)'s value
// set among them, in the state) and resumes
// them: the rows of both runs together are the brute-force result, each once.
func TestOverStopWithSavepointAndResume(t *testing.T) {
	const n = 20000
	dir, evs := writeOverFixture(t, n, 4)
	for _, c := range []struct {
		name, window string
		rangeMS      int64
	}{
		{"range", "PARTITION BY k ORDER BY rt RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW", 2000},
		{"unbounded rows", "PARTITION BY k ORDER BY rt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			query := fmt.Sprintf("SELECT id, SUM(v) OVER w, COUNT(*) OVER w, LAG(v) OVER w, COUNT(DISTINCT v) OVER w FROM e WINDOW w AS (%s);", c.window)
			spDir := t.TempDir()
			clock := newStepClock(20 * time.Millisecond)
			clock.autoAdvance(100 * time.Millisecond)
			var mu sync.Mutex
			var got []string
			collect := func(k connectors.RowKind, r types.Row) {
				mu.Lock()
				defer mu.Unlock()
				if k != connectors.Insert {
					t.Errorf("an OVER aggregate emitted %s", k)
				}
				got = append(got, rowString(r))
			}
			opts := Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "over", Collect: collect, BatchSize: 16}
			j, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'")+query), opts)
			if err != nil {
				t.Fatal(err)
			}
			path := runStoppedHalfway(t, j, "over aggregate", 1, spDir)
			read := j.Metrics().Sources[0].RecordsRead
			if read >= n || read == 0 {
				t.Fatalf("the first run read %d of %d rows; the test needs it stopped halfway", read, n)
			}
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
			t.Logf("stopped after %d of %d rows", read, n)
			if g, w := strings.Join(got, "\n"), bruteOver(evs, c.rangeMS); g != w {
				t.Fatalf("--- pipesql (%d rows):\n%.2000s\n--- brute force:\n%.2000s", len(got), g, w)
			}
		})
	}
}

// TestOverLateRows: a row at or behind the operator's watermark is dropped and counted;
// the rows around it are computed without it, and a RANGE frame takes a row's peers.
func TestOverLateRows(t *testing.T) {
	sum := planner.AggCall{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, State: planner.StateSum}
	cfg := &overConfig{part: []int{0}, orderCol: 2, rowTime: true, preceding: 5_000_000, width: 3,
		calls:    []planner.OverCall{{Func: "SUM", Arg: 1, Default: -1, Agg: sum, T: types.TypeBigInt, Name: "w0$o0"}},
		argTypes: []types.Type{types.TypeBigInt}}
	m := newOpMetrics(0, "over aggregate")
	op, err := newOverOp(cfg, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan event, 16)
	out := newOutbox(ch, 1, &counter{})
	ctx := context.Background()
	row := func(v, ms int64) types.Row {
		return types.Row{types.StringValue("a"), types.IntValue(types.BigInt, v), types.IntValue(types.BigInt, ms*1000)}
	}
	steps := []struct {
		rows []types.Row
		wm   int64 // milliseconds
	}{
		{[]types.Row{row(1, 10_000), row(2, 20_000)}, 18_000},
		{[]types.Row{row(100, 17_000), row(200, 18_000), row(4, 18_001), row(8, 20_000)}, 30_000},
	}
	for _, s := range steps {
		if err := op.processBatch(ctx, batch{rows: s.rows}, out); err != nil {
			t.Fatal(err)
		}
		if err := op.processWatermark(ctx, s.wm*1000, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.flush(ctx); err != nil {
		t.Fatal(err)
	}
	close(ch)
	var got []string
	for e := range ch {
		for _, r := range e.batch.rows {
			got = append(got, fmt.Sprintf("%d@%d=%s", r[1].Int(), r[2].Int()/1000, r[3]))
		}
	}
	want := "1@10000=1 4@18001=4 2@20000=14 8@20000=14"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("got %s, want %s", g, want)
	}
	if late := m.late.load(); late != 2 {
		t.Fatalf("%d rows counted late, want 2 (at and behind the watermark)", late)
	}
}
