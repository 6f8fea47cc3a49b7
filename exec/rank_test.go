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

// changeView is the result a changelog describes: each row and how many times it is in
// the result. applyChanges fails on a retraction of a row the result does not hold.
type changeView map[string]int

func (v changeView) apply(t *testing.T, changes []string) {
	t.Helper()
	for _, c := range changes {
		kind, row := c[:2], c[2:]
		switch kind {
		case "+I", "+U":
			v[row]++
		case "-U", "-D":
			if v[row] == 0 {
				t.Fatalf("%s retracts a row the result does not hold", c)
			}
			if v[row]--; v[row] == 0 {
				delete(v, row)
			}
		default:
			t.Fatalf("change %q", c)
		}
	}
}

func (v changeView) String() string {
	var rows []string
	for r, n := range v {
		for range n {
			rows = append(rows, r)
		}
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// liveRow is an input row with its arrival.
type liveRow struct {
	row types.Row
	at  int
}

// bruteTopN computes the Top-N result of the live rows the way a batch engine does:
// sort each partition (NULL first ascending, last descending; ties by arrival, the
// earlier first), number the rows as the ranking function does, keep start..end.
func bruteTopN(live []liveRow, part []int, order []planner.SortKey, typ planner.RankType, start, end int64, rankNumber bool) changeView {
	groups := map[string][]liveRow{}
	for _, r := range live {
		k := rowString(keyValues(r.row, part))
		groups[k] = append(groups[k], r)
	}
	cmpKeys := func(a, b types.Row) int {
		for _, k := range order {
			c := types.Compare(a[k.Col], b[k.Col])
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	view := changeView{}
	for _, g := range groups {
		slices.SortStableFunc(g, func(a, b liveRow) int {
			if c := cmpKeys(a.row, b.row); c != 0 {
				return c
			}
			return a.at - b.at
		})
		var rank, dense int64
		for i, r := range g {
			if i == 0 || cmpKeys(g[i-1].row, r.row) != 0 {
				dense++
				rank = int64(i) + 1
			}
			n := map[planner.RankType]int64{planner.RowNumber: int64(i) + 1, planner.RankFunc: rank, planner.DenseRank: dense}[typ]
			if n < start || n > end {
				continue
			}
			out := r.row
			if rankNumber {
				out = append(slices.Clone(r.row), types.BigIntValue(n))
			}
			view[rowString(out)]++
		}
	}
	return view
}

// bruteDedup keeps per key the first or last row by time (col) or by arrival (col < 0).
func bruteDedup(live []liveRow, keys []int, col int, keepLast bool) changeView {
	kept := map[string]types.Row{}
	for _, r := range live {
		k := rowString(keyValues(r.row, keys))
		prev, ok := kept[k]
		switch {
		case !ok, col < 0 && keepLast:
			kept[k] = r.row
		case col >= 0 && !keepLast && types.Compare(r.row[col], prev[col]) < 0:
			kept[k] = r.row
		case col >= 0 && keepLast && types.Compare(r.row[col], prev[col]) >= 0:
			kept[k] = r.row
		}
	}
	view := changeView{}
	for _, r := range kept {
		view[rowString(r)]++
	}
	return view
}

func rankRow(rng *rand.Rand) types.Row {
	x := types.IntValue(types.Int, int64(rng.IntN(6)))
	if rng.IntN(8) == 0 {
		x = types.NullValue
	}
	return types.Row{
		types.IntValue(types.Int, int64(rng.IntN(4))), // k: the partition
		x, // x: the order key, with ties and NULLs
		types.IntValue(types.BigInt, int64(rng.IntN(3))), // y: a second order key, or a payload
	}
}

// TestRankAgainstBruteForce feeds random rows (and, over an updating input, retractions
// of rows it sent) to the rank operator, checkpoints and restores it halfway, and after
// every batch compares the result its changelog describes with a brute-force Top-N of
// the rows so far.
func TestRankAgainstBruteForce(t *testing.T) {
	desc := []planner.SortKey{{Col: 1, Desc: true}}
	two := []planner.SortKey{{Col: 1}, {Col: 2, Desc: true}}
	cases := []struct {
		name       string
		typ        planner.RankType
		order      []planner.SortKey
		start, end int64
		rankNumber bool
		retract    bool
		part       []int
	}{
		{"row_number top3", planner.RowNumber, desc, 1, 3, true, false, []int{0}},
		{"row_number top3 without rank", planner.RowNumber, desc, 1, 3, false, false, []int{0}},
		{"row_number 2..4 two keys", planner.RowNumber, two, 2, 4, true, false, []int{0}},
		{"row_number top1 no partition", planner.RowNumber, two, 1, 1, false, false, nil},
		{"rank top2", planner.RankFunc, desc, 1, 2, true, false, []int{0}},
		{"rank top3 without rank", planner.RankFunc, two, 1, 3, false, false, []int{0}},
		{"dense_rank 2..3", planner.DenseRank, desc, 2, 3, true, false, []int{0}},
		{"dense_rank top2 without rank", planner.DenseRank, two, 1, 2, false, false, []int{0, 2}},
		{"retract row_number top3", planner.RowNumber, desc, 1, 3, true, true, []int{0}},
		{"retract row_number top2 without rank", planner.RowNumber, two, 1, 2, false, true, []int{0}},
		{"retract rank top2", planner.RankFunc, desc, 1, 2, true, true, []int{0}},
		{"retract dense_rank 1..2 without rank", planner.DenseRank, desc, 1, 2, false, true, nil},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := &rankConfig{part: c.part, order: c.order, typ: c.typ, start: c.start, end: c.end,
				rankNumber: c.rankNumber, retract: c.retract, width: 3}
			rng := rand.New(rand.NewPCG(uint64(ci), 99))
			op := newRankOp(cfg)
			h := newHarness(t, op, &opMetrics{})
			cps := newMemCheckpoints(t)
			view := changeView{}
			var live []liveRow
			arrivals := 0
			for step := range 120 {
				var b batch
				for range 1 + rng.IntN(6) {
					if c.retract && len(live) > 0 && rng.IntN(3) == 0 {
						i := rng.IntN(len(live))
						b.rows = append(b.rows, slices.Clone(live[i].row))
						kind := connectors.Delete
						if rng.IntN(2) == 0 {
							kind = connectors.UpdateBefore
						}
						b.kinds = append(b.kinds, kind)
						// Equal rows are interchangeable; the earliest equal one leaves.
						for j := range live {
							if rowsEqual(live[j].row, live[i].row) {
								live = slices.Delete(live, j, j+1)
								break
							}
						}
						continue
					}
					r := rankRow(rng)
					arrivals++
					live = append(live, liveRow{row: r, at: arrivals})
					b.rows = append(b.rows, r)
					if b.kinds != nil || c.retract {
						b.kinds = append(b.kinds, connectors.Insert)
					}
				}
				if err := op.processBatch(context.Background(), b, h.out); err != nil {
					t.Fatal(err)
				}
				if err := h.out.flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				view.apply(t, h.emitted())
				want := bruteTopN(live, c.part, c.order, c.typ, c.start, c.end, c.rankNumber)
				if got := view.String(); got != want.String() {
					t.Fatalf("after batch %d:\n--- changelog result:\n%s\n--- brute force:\n%s", step, got, want)
				}
				if step%25 == 10 {
					cps.snapshot(op)
				}
				if step == 60 {
					// Restore the last checkpoint into a new operator and replay what came
					// after it: the rows are the same, so the result continues exactly.
					id := cps.snapshot(op)
					op = newRankOp(cfg)
					if err := op.restoreState(cps.reader(id)); err != nil {
						t.Fatal(err)
					}
					h.op = op
				}
			}
		})
	}
}

// TestDedupAgainstBruteForce runs the four deduplications over random rows with equal
// times and compares with keeping the first or last row per key by a plain loop.
func TestDedupAgainstBruteForce(t *testing.T) {
	for ci, c := range []struct {
		name              string
		rowtime, keepLast bool
	}{
		{"first by proctime", false, false},
		{"last by proctime", false, true},
		{"first by rowtime", true, false},
		{"last by rowtime", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := &planner.Deduplicate{Input: &planner.Values{Out: types.Schema{{Name: "k"}, {Name: "t"}, {Name: "v"}}},
				Keys: []int{0}, KeepLast: c.keepLast, TimeCol: 1, RowTime: c.rowtime}
			n.Out = n.Input.Schema()
			cfg, err := compileDedup(n)
			if err != nil {
				t.Fatal(err)
			}
			op := newRankOp(cfg)
			h := newHarness(t, op, &opMetrics{})
			cps := newMemCheckpoints(t)
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			view := changeView{}
			var live []liveRow
			col := -1
			if c.rowtime {
				col = 1
			}
			for step := range 80 {
				var rows []types.Row
				for range 1 + rng.IntN(5) {
					r := types.Row{types.IntValue(types.Int, int64(rng.IntN(5))), types.IntValue(types.Timestamp, int64(rng.IntN(4))*1000), types.IntValue(types.BigInt, int64(step))}
					rows = append(rows, r)
					live = append(live, liveRow{row: r, at: len(live)})
				}
				h.batch(rows...)
				changes := h.emitted()
				for _, ch := range changes {
					if !c.keepLast && !c.rowtime && !strings.HasPrefix(ch, "+I") {
						t.Fatalf("keep-first by processing time emitted %s: it must be insert-only", ch)
					}
				}
				view.apply(t, changes)
				if got, want := view.String(), bruteDedup(live, []int{0}, col, c.keepLast).String(); got != want {
					t.Fatalf("after batch %d:\n--- changelog result:\n%s\n--- brute force:\n%s", step, got, want)
				}
				if step == 40 {
					id := cps.snapshot(op)
					op = newRankOp(cfg)
					if err := op.restoreState(cps.reader(id)); err != nil {
						t.Fatal(err)
					}
					h.op = op
				}
			}
		})
	}
}

// TestRankChangelog pins the changes of a Top-2 with and without the rank number, as
// Flink's rank operators emit them: ranks shift when a row enters above others.
func TestRankChangelog(t *testing.T) {
	row := func(k string, x int64) types.Row {
		return types.Row{types.StringValue(k), types.IntValue(types.Int, x)}
	}
	for _, c := range []struct {
		rankNumber bool
		want       []string
	}{
		{true, []string{
			"+I(a, 5, 1)",
			"-U(a, 5, 1)", "+U(a, 7, 1)", "+I(a, 5, 2)", // 7 enters first: 5 moves to rank 2
			"-U(a, 5, 2)", "+U(a, 6, 2)", // 6 pushes 5 out
			// 1 is below the top 2: nothing
		}},
		{false, []string{
			"+I(a, 5)",
			"+I(a, 7)",
			"-D(a, 5)", "+I(a, 6)",
		}},
	} {
		cfg := &rankConfig{part: []int{0}, order: []planner.SortKey{{Col: 1, Desc: true}}, typ: planner.RowNumber, start: 1, end: 2, rankNumber: c.rankNumber, width: 2}
		h := newHarness(t, newRankOp(cfg), &opMetrics{})
		h.batch(row("a", 5))
		h.batch(row("a", 7))
		h.batch(row("a", 6))
		h.batch(row("a", 1))
		if got := h.emitted(); !slices.Equal(got, c.want) {
			t.Errorf("rank number %v:\n got %q\nwant %q", c.rankNumber, got, c.want)
		}
	}
}

// TestRankIncrementalCheckpoint: a checkpoint rewrites only the key groups that changed.
func TestRankIncrementalCheckpoint(t *testing.T) {
	cfg := &rankConfig{part: []int{0}, order: []planner.SortKey{{Col: 1, Desc: true}}, typ: planner.RowNumber, start: 1, end: 3, rankNumber: true, width: 2}
	op := newRankOp(cfg)
	h := newHarness(t, op, &opMetrics{})
	var rows []types.Row
	for k := range 500 {
		rows = append(rows, types.Row{types.IntValue(types.Int, int64(k)), types.IntValue(types.Int, 1)})
	}
	h.batch(rows...)
	cps := newMemCheckpoints(t)
	cps.snapshot(op)
	if cps.puts != keyGroups {
		t.Fatalf("first checkpoint wrote %d key groups, want all %d", cps.puts, keyGroups)
	}
	h.batch(types.Row{types.IntValue(types.Int, 7), types.IntValue(types.Int, 9)})
	cps.puts, cps.reused = 0, 0
	id := cps.snapshot(op)
	if cps.puts != 1 || cps.reused != keyGroups-1 {
		t.Fatalf("after one row the checkpoint wrote %d and reused %d key groups, want 1 and %d", cps.puts, cps.reused, keyGroups-1)
	}
	op2 := newRankOp(cfg)
	if err := op2.restoreState(cps.reader(id)); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, op2, &opMetrics{})
	h2.batch(types.Row{types.IntValue(types.Int, 7), types.IntValue(types.Int, 8)})
	want := []string{"-U(7, 1, 2)", "+U(7, 8, 2)", "+I(7, 1, 3)"}
	if got := h2.emitted(); !slices.Equal(got, want) {
		t.Fatalf("restored operator emitted %q, want %q", got, want)
	}
}

// topNFixture is a JSON file of rows (k, x, id) with NULL keys and order values, ties,
// and its rows as the job reads them.
type topNFixture struct {
	dir  string
	rows []liveRow
}

func writeTopNFixture(t *testing.T, n, files int) topNFixture {
	t.Helper()
	f := topNFixture{dir: t.TempDir()}
	rng := rand.New(rand.NewPCG(11, 13))
	for file := range files {
		var b strings.Builder
		for i := file * n / files; i < (file+1)*n/files; i++ {
			kn, xn := rng.IntN(7), rng.IntN(300)
			k, kv := fmt.Sprintf(`"k%d"`, kn), types.StringValue(fmt.Sprintf("k%d", kn))
			x, xv := fmt.Sprint(xn), types.IntValue(types.Int, int64(xn))
			if rng.IntN(20) == 0 {
				k, kv = "null", types.NullValue
			}
			if rng.IntN(10) == 0 {
				x, xv = "null", types.NullValue
			}
			fmt.Fprintf(&b, `{"k":%s,"x":%s,"id":%d}`+"\n", k, x, i)
			f.rows = append(f.rows, liveRow{row: types.Row{kv, xv, types.BigIntValue(int64(i))}, at: i})
		}
		if err := os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("rows-%02d.json", file)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f topNFixture) ddl(sets ...string) string {
	var b strings.Builder
	for _, s := range sets {
		fmt.Fprintf(&b, "SET %s;\n", s)
	}
	fmt.Fprintf(&b, "CREATE TABLE t (k STRING, x INT, id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", f.dir)
	return b.String()
}

// TestTopNFromSQL runs Top-N queries through the planner and the runtime over a file and
// compares the final result of their changelogs with a brute-force Top-N of its rows.
func TestTopNFromSQL(t *testing.T) {
	f := writeTopNFixture(t, 3000, 1)
	for _, c := range []struct {
		query      string
		order      []planner.SortKey
		typ        planner.RankType
		start, end int64
		rankNumber bool
	}{
		{`SELECT * FROM (SELECT k, x, id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC, id) AS rn FROM t) WHERE rn <= 3`,
			[]planner.SortKey{{Col: 1, Desc: true}, {Col: 2}}, planner.RowNumber, 1, 3, true},
		{`SELECT k, x, id FROM (SELECT *, RANK() OVER (PARTITION BY k ORDER BY x DESC) AS r FROM t) WHERE r BETWEEN 2 AND 4`,
			[]planner.SortKey{{Col: 1, Desc: true}}, planner.RankFunc, 2, 4, false},
		{`SELECT k, x, id, dr FROM (SELECT *, DENSE_RANK() OVER (PARTITION BY k ORDER BY x DESC) AS dr FROM t) WHERE dr < 3`,
			[]planner.SortKey{{Col: 1, Desc: true}}, planner.DenseRank, 1, 2, true},
	} {
		t.Run(c.query, func(t *testing.T) {
			view := changeView{}
			changes := runSelect(t, f.ddl()+c.query+";")
			view.apply(t, changes)
			t.Logf("%d changes, %d result rows", len(changes), len(view))
			want := bruteTopN(f.rows, []int{0}, c.order, c.typ, c.start, c.end, c.rankNumber)
			if got := view.String(); got != want.String() {
				t.Fatalf("--- changelog result:\n%s\n--- brute force:\n%s", got, want)
			}
		})
	}
}

// TestTopNStopWithSavepointAndResume stops a Top-N job with a savepoint halfway and
// resumes it: the changelogs of both runs together describe the brute-force result.
func TestTopNStopWithSavepointAndResume(t *testing.T) {
	f := writeTopNFixture(t, 20000, 4)
	query := `SELECT * FROM (SELECT k, x, id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC, id) AS rn FROM t) WHERE rn <= 3;`
	spDir := t.TempDir()
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	var mu sync.Mutex
	var changes []string
	collect := func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, k.String()+rowString(r))
	}
	j, err := NewJob(planSQL(t, f.ddl("'execution.checkpointing.interval' = '100 ms'")+query),
		Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "topn", Collect: collect})
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "rank", 1, spDir)
	read := j.Metrics().Sources[0].RecordsRead
	if read >= 20000 || read == 0 {
		t.Fatalf("the first run read %d of 20000 rows; the test needs it stopped halfway", read)
	}
	j2, err := NewJob(planSQL(t, f.ddl("'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+path+"'")+query),
		Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "topn", Collect: collect})
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := j2.Metrics(); m.Sources[0].RecordsRead+read != 20000 {
		t.Fatalf("resumed and read %d more rows after %d, want the rest of 20000", m.Sources[0].RecordsRead, read)
	}
	t.Logf("stopped after %d of 20000 rows; %d changes in both runs", read, len(changes))
	view := changeView{}
	view.apply(t, changes)
	want := bruteTopN(f.rows, []int{0}, []planner.SortKey{{Col: 1, Desc: true}, {Col: 2}}, planner.RowNumber, 1, 3, true)
	if got := view.String(); got != want.String() {
		t.Fatalf("--- changelog result:\n%s\n--- brute force:\n%s", got, want)
	}
}
