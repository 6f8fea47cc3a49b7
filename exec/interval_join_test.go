package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// findIntervalJoin returns the interval join of a planned query.
func findIntervalJoin(n planner.Node) *planner.IntervalJoin {
	if j, ok := n.(*planner.IntervalJoin); ok {
		return j
	}
	for _, c := range n.Children() {
		if j := findIntervalJoin(c); j != nil {
			return j
		}
	}
	return nil
}

const ijTestDDL = `
CREATE TABLE l (k INT, ts TIMESTAMP(3), id BIGINT, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE r (k INT, ts TIMESTAMP(3), id BIGINT, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen');
`

// TestIntervalJoinOperator drives the operator by hand with both inputs interleaved at
// random, each in time order but for swaps within its 5 s watermark delay, the
// watermark the minimum of both sides' and a checkpoint restored into a new operator
// halfway. What it emits must be what a nested loop over all the rows gives, and after
// every watermark it must hold exactly the rows a later row could still join.
func TestIntervalJoinOperator(t *testing.T) {
	for _, tc := range []struct {
		typ, cond    string
		lower, upper int64 // seconds: l.ts - r.ts in [lower, upper]
		strictL      bool
		strictU      bool
	}{
		{"JOIN", "l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts", -10, 0, false, false},
		{"LEFT JOIN", "l.ts > r.ts - INTERVAL '10' SECOND AND l.ts < r.ts + INTERVAL '5' SECOND", -10, 5, true, true},
		{"RIGHT JOIN", "r.ts BETWEEN l.ts + INTERVAL '2' SECOND AND l.ts + INTERVAL '20' SECOND", -20, -2, false, false},
		{"FULL JOIN", "l.ts = r.ts", 0, 0, false, false},
		{"FULL JOIN", "l.ts >= r.ts + INTERVAL '3' SECOND AND l.ts <= r.ts + INTERVAL '30' SECOND", 3, 30, false, false},
	} {
		t.Run(tc.typ+" "+tc.cond, func(t *testing.T) {
			prog := planSQL(t, ijTestDDL+fmt.Sprintf("SELECT l.k, l.ts, l.id, r.k, r.ts, r.id FROM l %s r ON l.k = r.k AND %s;", tc.typ, tc.cond))
			n := findIntervalJoin(prog.Pipelines[0].Root)
			if n == nil || len(n.Left.Schema()) != 3 || len(n.Right.Schema()) != 3 || n.LeftTime != 1 || n.RightTime != 1 {
				t.Fatalf("unexpected plan for the test: %+v", n)
			}
			cfg, err := compileIntervalJoin(n, eval.Env{})
			if err != nil {
				t.Fatal(err)
			}
			for seed := range uint64(4) {
				checkIntervalJoin(t, cfg, seed, tc.lower*1e6, tc.upper*1e6, tc.strictL, tc.strictU)
			}
		})
	}
}

type ijEvent struct {
	side int
	row  types.Row
	wm   int64 // the side's watermark after the row
}

func checkIntervalJoin(t *testing.T, cfg *intervalJoinConfig, seed uint64, lower, upper int64, strictL, strictU bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	// Each side: rows in time order, neighbours swapped within 4 s, at times that hit the
	// bounds (a grid of whole seconds).
	var sides [2][]types.Row
	var events []ijEvent
	id := int64(0)
	for s := range 2 {
		at := int64(1_700_000_000) * 1e6
		var rows []types.Row
		for range 300 + rng.IntN(200) {
			at += int64(rng.IntN(3)) * 1e6
			k := types.IntValue(types.Int, int64(rng.IntN(8)))
			if rng.IntN(20) == 0 {
				k = types.NullValue
			}
			id++
			rows = append(rows, types.Row{k, types.TimestampValue(at), types.BigIntValue(id)})
		}
		for i := 0; i+1 < len(rows); i++ {
			if rows[i+1][1].Int()-rows[i][1].Int() < 4e6 && rng.IntN(3) == 0 {
				rows[i], rows[i+1] = rows[i+1], rows[i]
				i++
			}
		}
		sides[s] = rows
	}
	// Interleave the two sides at random, each side's watermark its max time - 5 s.
	var next [2]int
	var maxTS = [2]int64{NoWatermark, NoWatermark}
	for next[0] < len(sides[0]) || next[1] < len(sides[1]) {
		s := rng.IntN(2)
		if next[s] == len(sides[s]) {
			s = 1 - s
		}
		row := sides[s][next[s]]
		next[s]++
		maxTS[s] = max(maxTS[s], row[1].Int())
		events = append(events, ijEvent{side: s, row: row, wm: maxTS[s] - 5e6 - 1})
	}

	ctx := context.Background()
	ch := make(chan event, 1<<20)
	out := newOutbox(ch, 1024, &counter{})
	op := newIntervalJoinOp(cfg, nil)
	cps := newMemCheckpoints(t)
	wms := [2]int64{NoWatermark, NoWatermark}
	seen := [2][]types.Row{}
	lastWM := NoWatermark
	expiry := func(s int, ts int64) int64 {
		if s == 0 {
			return ts - lower
		}
		return ts + upper
	}
	for i, ev := range events {
		if err := op.processInput(ctx, ev.side, batch{rows: []types.Row{ev.row}}, out); err != nil {
			t.Fatal(err)
		}
		seen[ev.side] = append(seen[ev.side], ev.row)
		wms[ev.side] = ev.wm
		if wm := min(wms[0], wms[1]); wm > lastWM && rng.IntN(4) == 0 {
			lastWM = wm
			if err := op.processWatermark(ctx, wm, out); err != nil {
				t.Fatal(err)
			}
			// Exactly the rows a later row can still join are kept.
			var want int64
			for s := range 2 {
				for _, r := range seen[s] {
					if !r[0].IsNull() && expiry(s, r[1].Int()) > wm {
						want++
					}
				}
			}
			if got := op.measureState().Groups; got != want {
				t.Fatalf("seed %d: after watermark %d the join holds %d rows, want %d", seed, wm, got, want)
			}
		}
		if i == len(events)/2 {
			id := cps.snapshot(op)
			op = newIntervalJoinOp(cfg, nil)
			if err := op.restoreState(cps.reader(id)); err != nil {
				t.Fatal(err)
			}
			// A restored operator knows no watermark until the next one.
			lastWM = NoWatermark
		}
	}
	if err := op.processWatermark(ctx, MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := out.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := op.measureState().Groups; n != 0 {
		t.Fatalf("%d rows left after the final watermark", n)
	}
	close(ch)
	var got []string
	for ev := range ch {
		for _, r := range ev.batch.rows {
			got = append(got, rowString(r))
		}
	}
	// The nested loop.
	pad := types.Row{types.NullValue, types.NullValue, types.NullValue}
	var want []string
	matched := [2]map[int64]bool{{}, {}}
	for _, l := range sides[0] {
		for _, r := range sides[1] {
			if l[0].IsNull() || r[0].IsNull() || l[0].Int() != r[0].Int() {
				continue
			}
			d := l[1].Int() - r[1].Int()
			if d < lower || d > upper || strictL && d == lower || strictU && d == upper {
				continue
			}
			want = append(want, rowString(append(slices.Clone(l), r...)))
			matched[0][l[2].Int()], matched[1][r[2].Int()] = true, true
		}
	}
	for s, outer := range cfg.outer {
		if !outer {
			continue
		}
		for _, row := range sides[s] {
			if matched[s][row[2].Int()] {
				continue
			}
			if s == 0 {
				want = append(want, rowString(append(slices.Clone(row), pad...)))
			} else {
				want = append(want, rowString(append(slices.Clone(pad), row...)))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d: %d rows, want %d\ngot  %v\nwant %v", seed, len(got), len(want), got, want)
	}
	if len(want) < 20 {
		t.Fatalf("seed %d: %d rows prove little", seed, len(want))
	}
}
