package exec

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

// bruteMatch finds the matches of a pattern over complete, sorted partitions by
// enumerating every assignment of rows to variables in order of preference and taking
// the first: no watermarks, no waiting, no continuations. Each output line is
// "k|first id|last id|rows|extra".
type bruteCase struct {
	name    string
	pattern string
	define  string // the SQL DEFINE list
	skip    string // the SQL AFTER MATCH SKIP strategy
	within  string // the SQL WITHIN interval, "" for none
	withinM int64  // the same in milliseconds
	conds   map[string]func(rows []overEvent, start int, assign []string) bool
	skipVar string
	// extra, when set, formats more measures of a match, after "|".
	extra func(rows []overEvent, start int, assign []string) string
}

func bruteMatch(evs []overEvent, c bruteCase, pat *parser.Pattern) []string {
	return bruteMatchIn(evs, c, pat, false)
}

// bruteMatchIn is bruteMatch over rows in arrival order when arrival is set.
func bruteMatchIn(evs []overEvent, c bruteCase, pat *parser.Pattern, arrival bool) []string {
	byKey := map[string][]overEvent{}
	for _, e := range evs {
		byKey[e.k] = append(byKey[e.k], e)
	}
	var out []string
	for k, rows := range byKey {
		if !arrival {
			slices.SortStableFunc(rows, func(a, b overEvent) int { return cmp.Compare(a.ts, b.ts) })
		}
		var gen func(n *parser.Pattern, start int, assign []string) [][]string
		once := func(n *parser.Pattern, start int, assign []string) [][]string {
			switch n.Kind {
			case parser.PatVar:
				pos := start + len(assign)
				if pos >= len(rows) || c.withinM > 0 && rows[pos].ts-rows[start].ts > c.withinM {
					return nil
				}
				a := append(slices.Clone(assign), n.Var)
				if f := c.conds[n.Var]; f != nil && !f(rows, start, a) {
					return nil
				}
				return [][]string{a}
			case parser.PatConcat:
				res := [][]string{assign}
				for _, it := range n.Items {
					var next [][]string
					for _, r := range res {
						next = append(next, gen(it, start, r)...)
					}
					res = next
				}
				return res
			default:
				var res [][]string
				for _, it := range n.Items {
					res = append(res, gen(it, start, assign)...)
				}
				return res
			}
		}
		gen = func(n *parser.Pattern, start int, assign []string) [][]string {
			if n.Min == 1 && n.Max == 1 {
				return once(n, start, assign)
			}
			var rep func(count int, r []string) [][]string
			rep = func(count int, r []string) [][]string {
				var more, done [][]string
				if n.Max < 0 || count < n.Max {
					for _, r2 := range once(n, start, r) {
						if len(r2) > len(r) {
							more = append(more, rep(count+1, r2)...)
						}
					}
				}
				if count >= n.Min {
					done = [][]string{r}
				}
				if n.Reluctant {
					return append(done, more...)
				}
				return append(more, done...)
			}
			return rep(0, assign)
		}
		for start := 0; start < len(rows); {
			res := gen(pat, start, nil)
			if len(res) == 0 || len(res[0]) == 0 {
				start++
				continue
			}
			a := res[0]
			line := fmt.Sprintf("%s|%d|%d|%d", k, rows[start].seq, rows[start+len(a)-1].seq, len(a))
			if c.extra != nil {
				line += "|" + c.extra(rows, start, a)
			}
			out = append(out, line)
			next := start + 1
			switch c.skip {
			case "PAST LAST ROW":
				next = start + len(a)
			case "TO FIRST", "TO LAST":
				found := -1
				for i, v := range a {
					if v == c.skipVar && (found < 0 || c.skip == "TO LAST") {
						found = start + i
					}
				}
				if found > start {
					next = found
				}
			}
			start = next
		}
	}
	slices.Sort(out)
	return out
}

// lastOf is the value of the off-th last row mapped to v (-1: none or NULL).
func lastOf(rows []overEvent, start int, assign []string, v string, off int) int64 {
	for i := len(assign) - 1; i >= 0; i-- {
		if assign[i] == v {
			if off == 0 {
				return rows[start+i].v
			}
			off--
		}
	}
	return -1
}

// prevOf is the value of the row before the last row mapped to v (-1: none or NULL).
func prevOf(rows []overEvent, start int, assign []string, v string) int64 {
	for i := len(assign) - 1; i >= 0; i-- {
		if assign[i] == v {
			if start+i-1 < 0 {
				return -1
			}
			return rows[start+i-1].v
		}
	}
	return -1
}

func cur(rows []overEvent, start int, assign []string) int64 { return rows[start+len(assign)-1].v }

var matchCases = []bruteCase{
	{
		name: "rise then drop, greedy", pattern: "A B+ C", skip: "PAST LAST ROW",
		define: "B AS B.v > PREV(B.v), C AS C.v < LAST(B.v)",
		conds: map[string]func([]overEvent, int, []string) bool{
			"B": func(r []overEvent, s int, a []string) bool {
				p := prevOf(r, s, a, "B")
				return cur(r, s, a) >= 0 && p >= 0 && cur(r, s, a) > p
			},
			"C": func(r []overEvent, s int, a []string) bool {
				l := lastOf(r, s, a, "B", 0)
				return cur(r, s, a) >= 0 && l >= 0 && cur(r, s, a) < l
			},
		},
	},
	{
		name: "reluctant star, to next row", pattern: "A B*? C", skip: "TO NEXT ROW",
		define: "A AS A.v < 40, C AS C.v > A.v + 30",
		conds: map[string]func([]overEvent, int, []string) bool{
			"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 40 },
			"C": func(r []overEvent, s int, a []string) bool {
				av := lastOf(r, s, a, "A", 0)
				return cur(r, s, a) >= 0 && av >= 0 && cur(r, s, a) > av+30
			},
		},
	},
	{
		name: "bounded quantifiers, to last", pattern: "A{2} B{1,3} C?", skip: "TO LAST", skipVar: "B",
		define: "A AS A.v < 50, B AS B.v >= 50, C AS C.v < 10",
		conds: map[string]func([]overEvent, int, []string) bool{
			"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 50 },
			"B": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 50 },
			"C": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 10 },
		},
	},
	{
		name: "alternation in a group, to first", pattern: "(A | B){2,} C", skip: "TO FIRST", skipVar: "C",
		define: "A AS A.v < 30, B AS B.v > 70, C AS C.v BETWEEN 30 AND 70",
		conds: map[string]func([]overEvent, int, []string) bool{
			"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 30 },
			"B": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) > 70 },
			"C": func(r []overEvent, s int, a []string) bool { v := cur(r, s, a); return v >= 30 && v <= 70 },
		},
	},
	{
		name: "reluctant group plus, optional", pattern: "A (B C)+? D??", skip: "PAST LAST ROW",
		define: "A AS A.v > 60, B AS B.v < A.v, C AS C.v > B.v, D AS D.v IS NULL",
		conds: map[string]func([]overEvent, int, []string) bool{
			"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) > 60 },
			"B": func(r []overEvent, s int, a []string) bool {
				av := lastOf(r, s, a, "A", 0)
				return cur(r, s, a) >= 0 && cur(r, s, a) < av
			},
			"C": func(r []overEvent, s int, a []string) bool {
				bv := lastOf(r, s, a, "B", 0)
				return cur(r, s, a) >= 0 && cur(r, s, a) > bv
			},
			"D": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) < 0 },
		},
	},
	{
		name: "within expiry, greedy", pattern: "A B+ C", skip: "PAST LAST ROW", within: "INTERVAL '3' SECOND", withinM: 3000,
		define: "A AS A.v < 20, B AS B.v >= 20, C AS C.v < 20",
		conds: map[string]func([]overEvent, int, []string) bool{
			"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 20 },
			"B": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 20 },
			"C": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 20 },
		},
	},
	{
		name: "star in the middle, greedy, sums", pattern: "A B* C", skip: "TO NEXT ROW",
		define: "A AS A.v > 80, B AS SUM(B.v) < 150, C AS C.v < 20",
		conds: map[string]func([]overEvent, int, []string) bool{
			"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) > 80 },
			"B": func(r []overEvent, s int, a []string) bool {
				var sum int64
				n := 0
				for i, v := range a {
					if v == "B" && r[s+i].v >= 0 {
						sum += r[s+i].v
						n++
					}
				}
				return n > 0 && sum < 150
			},
			"C": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 20 },
		},
	},
}

// TestMatchRecognizeBrute: each quantifier, each skip strategy and WITHIN, over
// out-of-order input in five partitions, match exactly what bruteMatch finds in the
// sorted partitions.
func TestMatchRecognizeBrute(t *testing.T) {
	dir, evs := writeOverFixture(t, 1500, 3)
	for _, c := range matchCases {
		t.Run(c.name, func(t *testing.T) {
			within := ""
			if c.within != "" {
				within = "WITHIN " + c.within
			}
			skip := c.skip
			if c.skipVar != "" {
				skip += " " + c.skipVar
			}
			q := fmt.Sprintf(`SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n
  AFTER MATCH SKIP %s PATTERN (%s) %s DEFINE %s) AS m;`, skip, c.pattern, within, c.define)
			st, err := parser.ParseStatement("q.sql", q)
			if err != nil {
				t.Fatal(err)
			}
			var mr *parser.MatchRecognize
			if qs, ok := st.(*parser.QueryStatement); ok {
				mr, _ = qs.Query.Body.(*parser.Select).From.(*parser.MatchRecognize)
			}
			if mr == nil {
				t.Fatalf("%s parses to %T", q, st)
			}
			want := bruteMatch(evs, c, mr.Pattern)
			if len(want) < 3 {
				t.Fatalf("the fixture gives %d matches; the case needs several", len(want))
			}
			var mu sync.Mutex
			var got []string
			j, err := NewJob(planSQL(t, overDDL(dir)+q), Options{BatchSize: 16, Collect: func(kind connectors.RowKind, r types.Row) {
				mu.Lock()
				defer mu.Unlock()
				if kind != connectors.Insert {
					t.Errorf("MATCH_RECOGNIZE emitted %s", kind)
				}
				got = append(got, fmt.Sprintf("%s|%s|%s|%s", r[0], r[1], r[2], r[3]))
			}})
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
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
			}
		})
	}
}

func head(xs []string) string {
	if len(xs) > 12 {
		xs = xs[:12]
	}
	return strings.Join(xs, " ")
}

// TestMatchRecognizeStopWithSavepointAndResume: a job stopped with a savepoint halfway,
// partial matches pending, resumes and emits every match once, as the brute force finds
// them over the whole input.
func TestMatchRecognizeStopWithSavepointAndResume(t *testing.T) {
	const n = 20000
	dir, evs := writeOverFixture(t, n, 4)
	c := matchCases[0]
	q := fmt.Sprintf(`SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n
  AFTER MATCH SKIP %s PATTERN (%s) DEFINE %s) AS m;`, c.skip, c.pattern, c.define)
	st, err := parser.ParseStatement("q.sql", q)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteMatch(evs, c, st.(*parser.QueryStatement).Query.Body.(*parser.Select).From.(*parser.MatchRecognize).Pattern)
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	var mu sync.Mutex
	var got []string
	opts := Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "match", BatchSize: 16, Collect: func(kind connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", r[0], r[1], r[2], r[3]))
	}}
	j, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'")+q), opts)
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "match recognize", 1, t.TempDir())
	read := j.Metrics().Sources[0].RecordsRead
	if read >= n || read == 0 {
		t.Fatalf("the first run read %d of %d rows; the test needs it stopped halfway", read, n)
	}
	mu.Lock()
	first := len(got)
	mu.Unlock()
	j2, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+path+"'")+q), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped after %d of %d rows read, %d of %d matches emitted", read, n, first, len(want))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
	}
}

// TestMatchRecognizeMeasures: the values of navigation and aggregates in MEASURES.
func TestMatchRecognizeMeasures(t *testing.T) {
	dir, evs := writeOverFixture(t, 1500, 3)
	c := matchCases[0]
	c.extra = func(r []overEvent, s int, a []string) string {
		var sum, n, lo, hi int64 = 0, 0, 1 << 62, -1
		for i, v := range a {
			if v == "B" {
				x := r[s+i].v
				sum += x
				n++
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		lb1 := "NULL"
		if n > 1 {
			lb1 = fmt.Sprint(lastOf(r, s, a, "B", 1))
		}
		prevA := "NULL"
		if s > 0 && r[s-1].v >= 0 {
			prevA = fmt.Sprint(r[s-1].v)
		}
		av := "NULL"
		if r[s].v >= 0 {
			av = fmt.Sprint(r[s].v)
		}
		return fmt.Sprintf("%s|%d|%d|%d|%d|%s|%s|TRUE", av, sum, sum/n, lo, hi, lb1, prevA)
	}
	q := fmt.Sprintf(`SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n, A.v AS av, SUM(B.v) AS sb, AVG(B.v) AS ab,
    MIN(B.v) AS mn, MAX(B.v) AS mx, LAST(B.v, 1) AS lb1, PREV(A.v) AS pa, MATCH_ROWTIME() = LAST(C.rt) AS mt
  AFTER MATCH SKIP %s PATTERN (%s) DEFINE %s) AS m;`, c.skip, c.pattern, c.define)
	st, err := parser.ParseStatement("q.sql", q)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteMatch(evs, c, st.(*parser.QueryStatement).Query.Body.(*parser.Select).From.(*parser.MatchRecognize).Pattern)
	var mu sync.Mutex
	var got []string
	j, err := NewJob(planSQL(t, overDDL(dir)+q), Options{BatchSize: 16, Collect: func(kind connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = v.String()
		}
		got = append(got, strings.Join(parts, "|"))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
	}
}

// TestMatchRecognizeProcTime: ordered by a processing-time attribute, rows match in
// arrival order (the files' order, out of event-time order) at once.
func TestMatchRecognizeProcTime(t *testing.T) {
	dir, evs := writeOverFixture(t, 1500, 1)
	for _, c := range []bruteCase{matchCases[0], matchCases[2]} {
		t.Run(c.name, func(t *testing.T) {
			skip := c.skip
			if c.skipVar != "" {
				skip += " " + c.skipVar
			}
			q := fmt.Sprintf(`CREATE TABLE p (k STRING, v INT, ts BIGINT, id BIGINT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
SELECT * FROM p MATCH_RECOGNIZE (PARTITION BY k ORDER BY pt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n
  AFTER MATCH SKIP %s PATTERN (%s) DEFINE %s) AS m;`, dir, skip, c.pattern, c.define)
			stmts, err := parser.ParseScript("q.sql", q)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteMatchIn(evs, c, stmts[1].(*parser.QueryStatement).Query.Body.(*parser.Select).From.(*parser.MatchRecognize).Pattern, true)
			var mu sync.Mutex
			var got []string
			j, err := NewJob(planSQL(t, q), Options{BatchSize: 16, Collect: func(kind connectors.RowKind, r types.Row) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, fmt.Sprintf("%s|%s|%s|%s", r[0], r[1], r[2], r[3]))
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if len(want) < 3 || !slices.Equal(got, want) {
				t.Fatalf("%d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
			}
		})
	}
}

// TestMatchRecognizeFlinkExample: the example of Flink's MATCH_RECOGNIZE page (a period
// of a falling price of one ticker) gives the row the page shows.
func TestMatchRecognizeFlinkExample(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i, p := range []int{12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19} {
		fmt.Fprintf(&b, `{"symbol":"ACME","rowtime":"2011-04-01 10:00:%02d.000","price":%d,"tax":1}`+"\n", i, p)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT,
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
SELECT *
FROM Ticker
    MATCH_RECOGNIZE (
        PARTITION BY symbol
        ORDER BY rowtime
        MEASURES
            START_ROW.rowtime AS start_tstamp,
            LAST(PRICE_DOWN.rowtime) AS bottom_tstamp,
            LAST(PRICE_UP.rowtime) AS end_tstamp
        ONE ROW PER MATCH
        AFTER MATCH SKIP TO LAST PRICE_UP
        PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
        DEFINE
            PRICE_DOWN AS
                (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR
                    PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
            PRICE_UP AS
                PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
    ) MR;`, dir)
	var got []string
	j, err := NewJob(planSQL(t, q), Options{Collect: func(_ connectors.RowKind, r types.Row) {
		got = append(got, fmt.Sprint(r))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"[ACME 2011-04-01 10:00:04.000 2011-04-01 10:00:07.000 2011-04-01 10:00:08.000]"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestMatchRecognizeNestedQuantifiers: nested quantifiers, which a backtracking search
// tries in exponentially many ways over a run of rows (2^59 for (A+)+ over 60 rows that
// end in a failure), cost the NFA a few threads per row: a run that fails gives no
// match, a run that ends in B gives the one preferred match from each start.
func TestMatchRecognizeNestedQuantifiers(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const n = 60
	for _, k := range []string{"fail", "ok"} {
		for i := range n {
			v := 1
			if i == n-1 {
				v = map[string]int{"fail": 9, "ok": 2}[k]
			}
			fmt.Fprintf(&b, `{"k":"%s","v":%d,"ts":%d,"id":%d}`+"\n", k, v, 1_700_000_000_000+int64(i)*1000, i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "e.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pattern, want string }{
		{"(A+)+ B", "[ok 0 59 60]"},
		{"((A | A A)+)* B", "[ok 0 59 60]"},
		{"(A+?)+ B", "[ok 0 59 60]"},
		{"(A* A*)+ B", "[ok 0 59 60]"},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			q := overDDL(dir) + `SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n
  PATTERN (` + c.pattern + `) DEFINE A AS A.v = 1, B AS B.v = 2) AS m;`
			var got []string
			j, err := NewJob(planSQL(t, q), Options{Collect: func(_ connectors.RowKind, r types.Row) {
				got = append(got, fmt.Sprint(r))
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if want := []string{c.want}; !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

// TestMatchRecognizeEmptyIterations: an iteration of a group that may match no row must
// take one, as in the brute force: (A? B?){2} needs two non-empty iterations.
func TestMatchRecognizeEmptyIterations(t *testing.T) {
	dir, evs := writeOverFixture(t, 1500, 3)
	for _, pattern := range []string{"(A? B?){2} C D?", "(A* | B)+ C D?", "A (B? C?)+? D?"} {
		t.Run(pattern, func(t *testing.T) {
			c := bruteCase{pattern: pattern, skip: "PAST LAST ROW",
				define: "A AS A.v < 30, B AS B.v > 70, C AS C.v BETWEEN 30 AND 70, D AS D.v > 50",
				conds: map[string]func([]overEvent, int, []string) bool{
					"A": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) >= 0 && cur(r, s, a) < 30 },
					"B": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) > 70 },
					"C": func(r []overEvent, s int, a []string) bool { v := cur(r, s, a); return v >= 30 && v <= 70 },
					"D": func(r []overEvent, s int, a []string) bool { return cur(r, s, a) > 50 },
				}}
			q := fmt.Sprintf(`SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n
  AFTER MATCH SKIP PAST LAST ROW PATTERN (%s) DEFINE %s) AS m;`, c.pattern, c.define)
			st, err := parser.ParseStatement("q.sql", q)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteMatch(evs, c, st.(*parser.QueryStatement).Query.Body.(*parser.Select).From.(*parser.MatchRecognize).Pattern)
			var mu sync.Mutex
			var got []string
			j, err := NewJob(planSQL(t, overDDL(dir)+q), Options{BatchSize: 16, Collect: func(_ connectors.RowKind, r types.Row) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, fmt.Sprintf("%s|%s|%s|%s", r[0], r[1], r[2], r[3]))
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if len(want) < 3 || !slices.Equal(got, want) {
				t.Fatalf("%d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
			}
		})
	}
}

// TestMatchRecognizeDecimalSubquery: Flink's aggregation example (the longest periods
// whose average price stays below 15) over a subquery that makes the price a DECIMAL:
// the page's two rows, with SUM and AVG of DECIMAL computed exactly.
func TestMatchRecognizeDecimalSubquery(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i, p := range []int{12, 17, 13, 16, 25, 2, 4, 10, 15, 25, 25, 30} {
		fmt.Fprintf(&b, `{"symbol":"ACME","rowtime":"2011-04-01 10:00:%02d.000","price":%d,"tax":1}`+"\n", i, p)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT,
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
SELECT *
FROM (SELECT symbol, rowtime, CAST(price AS DECIMAL(10, 2)) AS price FROM Ticker)
    MATCH_RECOGNIZE (
        PARTITION BY symbol
        ORDER BY rowtime
        MEASURES
            FIRST(A.rowtime) AS start_tstamp,
            LAST(A.rowtime) AS end_tstamp,
            FINAL AVG(A.price) AS avgPrice,
            SUM(A.price) AS total
        ONE ROW PER MATCH
        AFTER MATCH SKIP PAST LAST ROW
        PATTERN (A+ B)
        DEFINE
            A AS AVG(A.price) < 15
    ) MR;`, dir)
	plan := planSQL(t, q)
	var got []string
	j, err := NewJob(plan, Options{Collect: func(_ connectors.RowKind, r types.Row) {
		got = append(got, fmt.Sprint(r))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[ACME 2011-04-01 10:00:00.000 2011-04-01 10:00:03.000 14.5 58]",
		"[ACME 2011-04-01 10:00:05.000 2011-04-01 10:00:10.000 13.5 81]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// matchOpFor compiles the Match of query q (over overDDL) into an operator.
func matchOpFor(t *testing.T, dir, q string) (*opSpec, types.Schema) {
	t.Helper()
	prog := planSQL(t, overDDL(dir)+q)
	var m *planner.Match
	for n := prog.Pipelines[0].Root; n != nil && m == nil; {
		if x, ok := n.(*planner.Match); ok {
			m = x
			break
		}
		if len(n.Children()) == 0 {
			break
		}
		n = n.Children()[0]
	}
	if m == nil {
		t.Fatal("no Match in the plan")
	}
	spec, err := compileMatch(m, eval.Env{}, false)
	if err != nil {
		t.Fatal(err)
	}
	return spec, m.Input.Schema()
}

// TestMatchRecognizeRestoreEveryRow: for each case of matchCases, an operator that is
// checkpointed and replaced by one restored from the checkpoint after every row (so with
// partial matches of every shape in flight) emits what one uninterrupted operator emits;
// and a checkpoint of the backtracking matcher before the NFA (rows only, under "p")
// restores to the same output.
func TestMatchRecognizeRestoreEveryRow(t *testing.T) {
	dir, evs := writeOverFixture(t, 600, 1)
	evs = slices.Clone(evs)
	slices.SortStableFunc(evs, func(a, b overEvent) int { return cmp.Compare(a.ts, b.ts) })
	for _, c := range matchCases {
		t.Run(c.name, func(t *testing.T) {
			within := ""
			if c.within != "" {
				within = "WITHIN " + c.within
			}
			skip := c.skip
			if c.skipVar != "" {
				skip += " " + c.skipVar
			}
			q := fmt.Sprintf(`SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt
  MEASURES FIRST(id) AS s, LAST(id) AS l, COUNT(*) AS n
  AFTER MATCH SKIP %s PATTERN (%s) %s DEFINE %s) AS m;`, skip, c.pattern, within, c.define)
			spec, in := matchOpFor(t, dir, q)
			rowOf := func(e overEvent) types.Row {
				r := make(types.Row, len(in))
				for i, col := range in {
					switch col.Name {
					case "k":
						r[i] = types.StringValue(e.k)
					case "v":
						if e.v >= 0 {
							r[i] = types.IntValue(types.Int, e.v)
						}
					case "id":
						r[i] = types.BigIntValue(int64(e.seq))
					case "rt":
						r[i] = types.TimestampLTZValue(e.ts * 1000)
					default:
						t.Fatalf("the Match reads %s", col.Name)
					}
				}
				return r
			}
			run := func(restore func(op operator) operator) []string {
				op, err := spec.build(nil, newOpMetrics(0, "match"))
				if err != nil {
					t.Fatal(err)
				}
				ch := make(chan event, 1<<16)
				out := newOutbox(ch, 1, &counter{})
				ctx := context.Background()
				for _, e := range evs {
					if err := op.processBatch(ctx, batch{rows: []types.Row{rowOf(e)}}, out); err != nil {
						t.Fatal(err)
					}
					if err := op.processWatermark(ctx, e.ts*1000-1, out); err != nil {
						t.Fatal(err)
					}
					op = restore(op)
				}
				if err := op.finish(ctx, true, out); err != nil {
					t.Fatal(err)
				}
				if err := out.flush(ctx); err != nil {
					t.Fatal(err)
				}
				close(ch)
				var got []string
				for ev := range ch {
					for _, r := range ev.batch.rows {
						got = append(got, fmt.Sprint(r))
					}
				}
				// Partitions released by one watermark run in the order they got rows, which
				// a restore does not keep: compare as sets.
				slices.Sort(got)
				return got
			}
			want := run(func(op operator) operator { return op })
			if len(want) < 3 {
				t.Fatalf("%d matches; the case needs several", len(want))
			}
			cps := newMemCheckpoints(t)
			searching := 0
			got := run(func(op operator) operator {
				for _, p := range op.(*matchOp).parts {
					if p.searching && len(p.threads) > 0 {
						searching++
					}
				}
				id := cps.snapshot(op.(stateful))
				fresh, err := spec.build(nil, newOpMetrics(0, "match"))
				if err != nil {
					t.Fatal(err)
				}
				if err := fresh.(stateful).restoreState(cps.reader(id)); err != nil {
					t.Fatal(err)
				}
				return fresh
			})
			if searching == 0 {
				t.Fatal("no checkpoint had a search in flight")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("restored after every row: %d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
			}
			// The old format: rows and start only, under "p<kg>".
			got = run(func(op operator) operator {
				mo := op.(*matchOp)
				old := map[string][]byte{}
				w := &memWriter{m: cps, id: 1, values: old}
				if err := mo.snapshotState(context.Background(), w); err != nil {
					t.Fatal(err)
				}
				for key := range old {
					if key == matchWMKey {
						continue
					}
					_, kg, err := parseKGKey(key)
					if err != nil {
						t.Fatal(err)
					}
					keys := slices.Sorted(maps.Keys(mo.byKG[kg]))
					dst := binary.AppendUvarint([]byte{stateVersion}, uint64(len(keys)))
					for _, k := range keys {
						p := mo.byKG[kg][k]
						dst = appendStateRow(dst, p.keyRow)
						for _, rows := range [][]types.Row{p.waiting, p.seq} {
							dst = binary.AppendUvarint(dst, uint64(len(rows)))
							for _, r := range rows {
								dst = appendStateRow(dst, r)
							}
						}
						dst = binary.AppendUvarint(dst, uint64(p.start-p.base))
					}
					delete(old, key)
					old[kgKey(matchPrefixOld, kg)] = dst
				}
				fresh, err := spec.build(nil, newOpMetrics(0, "match"))
				if err != nil {
					t.Fatal(err)
				}
				if err := fresh.(stateful).restoreState(memReader{id: 1, values: old}); err != nil {
					t.Fatal(err)
				}
				return fresh
			})
			if !slices.Equal(got, want) {
				t.Fatalf("restored from the old format after every row: %d matches, want %d\ngot  %s\nwant %s", len(got), len(want), head(got), head(want))
			}
		})
	}
}

// TestMatchRecognizeTimeMeasures: MATCH_ROWTIME(rowtime) is the time of the match's last
// row, typed as the attribute; MATCH_PROCTIME() the time the match is emitted at;
// FIRST/LAST of an expression evaluate it on the row they navigate to.
func TestMatchRecognizeTimeMeasures(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i, p := range []int{12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19} {
		fmt.Fprintf(&b, `{"symbol":"ACME","rowtime":"2011-04-01 10:00:%02d.000","price":%d}`+"\n", i, p)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT,
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime
  MEASURES MATCH_ROWTIME(rowtime) AS mt, MATCH_PROCTIME() AS mp, FIRST(DOWN.price + 1) AS f1, LAST(DOWN.price * 2, 1) AS l2
  AFTER MATCH SKIP TO LAST UP PATTERN (S DOWN+ UP)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)) AS m;`, dir)
	clock := newStepClock(time.Millisecond)
	var got []string
	j, err := NewJob(planSQL(t, q), Options{Clock: clock, Collect: func(_ connectors.RowKind, r types.Row) {
		got = append(got, fmt.Sprintf("%s %s %v %s %s", r[0], r[1], r[2].IsNull(), r[3], r[4]))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"ACME 2011-04-01 10:00:08.000 false 19 30"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
