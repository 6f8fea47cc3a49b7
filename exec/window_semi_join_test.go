package exec

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/types"
)

// TestWindowSemiJoinOperatorRestores drives semi, anti and null-aware anti window joins
// by hand, both inputs interleaved with watermarks between them and NULL keys on both
// sides, restoring the checkpoint into a new operator halfway: the left rows emitted must
// be those a loop over each window's rows keeps.
func TestWindowSemiJoinOperatorRestores(t *testing.T) {
	const corr = `L.window_start = R.window_start AND L.window_end = R.window_end`
	cases := []struct {
		name, sql string
		keep      func(k types.Value, window []types.Value) bool // window: the right keys of the row's window
	}{
		{"IN", `SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L WHERE L.k IN (SELECT k FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R WHERE ` + corr + `)`,
			func(k types.Value, w []types.Value) bool {
				return !k.IsNull() && slices.ContainsFunc(w, func(v types.Value) bool { return !v.IsNull() && v.Int() == k.Int() })
			}},
		{"NOT EXISTS", `SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L WHERE NOT EXISTS (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R WHERE L.k = R.k AND ` + corr + `)`,
			func(k types.Value, w []types.Value) bool {
				return k.IsNull() || !slices.ContainsFunc(w, func(v types.Value) bool { return !v.IsNull() && v.Int() == k.Int() })
			}},
		{"NOT IN", `SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L WHERE L.k NOT IN (SELECT k FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R WHERE ` + corr + `)`,
			func(k types.Value, w []types.Value) bool {
				if len(w) == 0 {
					return true
				}
				return !k.IsNull() && !slices.ContainsFunc(w, func(v types.Value) bool { return v.IsNull() || v.Int() == k.Int() })
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog := planSQL(t, ijTestDDL+c.sql+";")
			n := findWindowJoin(prog.Pipelines[0].Root)
			if n == nil || !n.Type.Semi() {
				t.Fatalf("no semi window join in the plan")
			}
			cfg, err := compileWindowJoin(n, eval.Env{})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			type in struct {
				side int
				full types.Row // k, ts, id, window_start, window_end, window_time
			}
			var rows []in
			at := int64(1_700_000_000) * 1e6
			for i := range 800 {
				at += int64(rng.IntN(3000)) * 1000 // ~7 rows a window
				start := at / 10e6 * 10e6
				k := types.IntValue(types.Int, int64(rng.IntN(8)))
				if rng.IntN(30) == 0 {
					k = types.NullValue
				}
				rows = append(rows, in{rng.IntN(2), types.Row{k, types.TimestampValue(at), types.BigIntValue(int64(i)),
					types.TimestampValue(start), types.TimestampValue(start + 10e6), types.TimestampValue(start + 10e6 - 1000)}})
			}
			names := []string{"k", "ts", "id", "window_start", "window_end", "window_time"}
			project := func(side int, full types.Row) types.Row {
				s := n.Left.Schema()
				if side == 1 {
					s = n.Right.Schema()
				}
				var out types.Row
				for _, col := range s {
					out = append(out, full[slices.Index(names, col.Name)])
				}
				return out
			}
			ctx := context.Background()
			ch := make(chan event, 1<<16)
			out := newOutbox(ch, 1024, &counter{})
			op := newWindowJoinOp(cfg, nil)
			cps := newMemCheckpoints(t)
			for i, r := range rows {
				if err := op.processInput(ctx, r.side, batch{rows: []types.Row{project(r.side, r.full)}}, out); err != nil {
					t.Fatal(err)
				}
				if i%20 == 0 {
					if err := op.processWatermark(ctx, r.full[1].Int()-1, out); err != nil {
						t.Fatal(err)
					}
				}
				if i == len(rows)/2 {
					id := cps.snapshot(op)
					op = newWindowJoinOp(cfg, nil)
					if err := op.restoreState(cps.reader(id)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := op.processWatermark(ctx, MaxWatermark, out); err != nil {
				t.Fatal(err)
			}
			if err := out.flush(ctx); err != nil {
				t.Fatal(err)
			}
			close(ch)
			idCol := -1
			for i, col := range n.Out {
				if col.Name == "id" {
					idCol = i
				}
			}
			var got []int64
			for ev := range ch {
				for _, r := range ev.batch.rows {
					got = append(got, r[idCol].Int())
				}
			}
			var want []int64
			left := 0
			for _, l := range rows {
				if l.side != 0 {
					continue
				}
				left++
				var window []types.Value
				for _, r := range rows {
					if r.side == 1 && r.full[4].Int() == l.full[4].Int() {
						window = append(window, r.full[0])
					}
				}
				if c.keep(l.full[0], window) {
					want = append(want, l.full[2].Int())
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
			}
			if len(want) < left/10 || len(want) > left*9/10 {
				t.Fatalf("%d of %d left rows kept prove little", len(want), left)
			}
		})
	}
}
