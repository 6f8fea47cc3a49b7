package exec

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

func findWindowJoin(n planner.Node) *planner.WindowJoin {
	if j, ok := n.(*planner.WindowJoin); ok {
		return j
	}
	for _, c := range n.Children() {
		if j := findWindowJoin(c); j != nil {
			return j
		}
	}
	return nil
}

// TestWindowJoinOperatorRestores drives a FULL window join by hand with both inputs
// interleaved and watermarks between them, restoring its checkpoint into a new operator
// halfway: the output must be what a loop over windows and keys gives.
func TestWindowJoinOperatorRestores(t *testing.T) {
	prog := planSQL(t, ijTestDDL+`SELECT L.k, L.id, R.k, R.id FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L
FULL JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;`)
	n := findWindowJoin(prog.Pipelines[0].Root)
	if n == nil {
		t.Fatal("no window join in the plan")
	}
	cfg, err := compileWindowJoin(n, eval.Env{})
	if err != nil {
		t.Fatal(err)
	}
	// Each input's rows as the window table function gives them: the input's columns
	// (k, ts, id) then window_start, window_end, window_time.
	ls, rs := n.Left.Schema(), n.Right.Schema()
	if len(ls) != 6 || len(rs) != 6 || n.LeftEnd != 4 || n.RightEnd != 4 {
		t.Fatalf("unexpected inputs %v / %v", ls, rs)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	type in struct {
		side int
		row  types.Row
	}
	var rows []in
	at := int64(1_700_000_000) * 1e6
	for i := range 600 {
		at += int64(rng.IntN(300)) * 1000
		start := at / 10e6 * 10e6
		k := types.IntValue(types.Int, int64(rng.IntN(6)))
		if rng.IntN(25) == 0 {
			k = types.NullValue
		}
		rows = append(rows, in{rng.IntN(2), types.Row{k, types.TimestampValue(at), types.BigIntValue(int64(i)),
			types.TimestampValue(start), types.TimestampValue(start + 10e6), types.TimestampValue(start + 10e6 - 1000)}})
	}
	ctx := context.Background()
	ch := make(chan event, 1<<16)
	out := newOutbox(ch, 1024, &counter{})
	op := newWindowJoinOp(cfg, nil)
	cps := newMemCheckpoints(t)
	for i, r := range rows {
		if err := op.processInput(ctx, r.side, batch{rows: []types.Row{r.row}}, out); err != nil {
			t.Fatal(err)
		}
		if i%20 == 0 {
			if err := op.processWatermark(ctx, r.row[1].Int()-1, out); err != nil {
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
	var got []string
	for ev := range ch {
		for _, r := range ev.batch.rows {
			got = append(got, rowString(types.Row{r[0], r[2], r[6], r[8]}))
		}
	}
	var want []string
	matched := map[int64]bool{}
	for _, l := range rows {
		for _, r := range rows {
			if l.side != 0 || r.side != 1 || l.row[0].IsNull() || r.row[0].IsNull() || l.row[0].Int() != r.row[0].Int() || l.row[4].Int() != r.row[4].Int() {
				continue
			}
			want = append(want, rowString(types.Row{l.row[0], l.row[2], r.row[0], r.row[2]}))
			matched[l.row[2].Int()], matched[r.row[2].Int()] = true, true
		}
	}
	for _, x := range rows {
		if matched[x.row[2].Int()] {
			continue
		}
		if x.side == 0 {
			want = append(want, rowString(types.Row{x.row[0], x.row[2], types.NullValue, types.NullValue}))
		} else {
			want = append(want, rowString(types.Row{types.NullValue, types.NullValue, x.row[0], x.row[2]}))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%d rows, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
}
