package exec

import (
	"context"
	"encoding/json"
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
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// A random history of versions (inserts, updates and deletes of four keys) and of left
// rows out of order (some late, some with a key no version has, some NULL), joined by
// the operator and by a brute force over the same inputs: each non-late left row with
// the right row of its key of the greatest (time, arrival) at or before its time, if
// that row is not a retraction.

type tjRight struct {
	kind connectors.RowKind
	key  string
	rate float64
	ts   int64 // microseconds
}

type tjLeft struct {
	id   int64
	key  *string
	ts   int64
	late bool
}

type tjStep struct {
	right []tjRight
	left  *tjLeft
	wm    int64 // a watermark after the step; NoWatermark for none
}

func tjHistory(rng *rand.Rand, n int) []tjStep {
	live := map[string]float64{}
	var steps []tjStep
	wm := NoWatermark
	id := int64(0)
	for i := range n {
		T := int64(i) * 1_000_000
		var st tjStep
		st.wm = NoWatermark
		if rng.IntN(10) < 3 {
			k := fmt.Sprintf("k%d", rng.IntN(4))
			rate := float64(rng.IntN(40)) / 10
			old, ok := live[k]
			switch {
			case !ok:
				st.right = []tjRight{{connectors.Insert, k, rate, T}}
				live[k] = rate
			case rng.IntN(10) < 7:
				st.right = []tjRight{{connectors.UpdateBefore, k, old, T}, {connectors.UpdateAfter, k, rate, T}}
				live[k] = rate
			default:
				st.right = []tjRight{{connectors.Delete, k, old, T}}
				delete(live, k)
			}
		}
		if rng.IntN(10) < 7 {
			l := &tjLeft{id: id, ts: T + int64(rng.IntN(8000)-6000)*1000}
			id++
			if rng.IntN(12) > 0 {
				k := fmt.Sprintf("k%d", rng.IntN(5)) // k4 has no version
				l.key = &k
			}
			l.late = wm != NoWatermark && l.ts <= wm
			st.left = l
		}
		if i%5 == 4 {
			wm = T - 2_000_000
			st.wm = wm
		}
		steps = append(steps, st)
	}
	return steps
}

// tjBrute joins the history by brute force: "id|rate" per output row, rate "NULL" when
// padded; minRate > 0 is the extra condition r.rate > minRate.
func tjBrute(steps []tjStep, outer bool, minRate float64) (out []string, late int) {
	var rights []tjRight
	for _, st := range steps {
		rights = append(rights, st.right...)
	}
	for _, st := range steps {
		l := st.left
		if l == nil {
			continue
		}
		if l.late {
			late++
			continue
		}
		best := -1
		if l.key != nil {
			for i, r := range rights {
				if r.key == *l.key && r.ts <= l.ts && (best < 0 || r.ts >= rights[best].ts) {
					best = i
				}
			}
		}
		if best >= 0 && rights[best].kind != connectors.UpdateBefore && rights[best].kind != connectors.Delete && (minRate <= 0 || rights[best].rate > minRate) {
			out = append(out, fmt.Sprintf("%d|%s", l.id, types.DoubleValue(rights[best].rate).String()))
		} else if outer {
			out = append(out, fmt.Sprintf("%d|NULL", l.id))
		}
	}
	slices.Sort(out)
	return out, late
}

var (
	tjLeftSchema  = types.Schema{{Name: "order_id", Type: types.TypeBigInt}, {Name: "currency", Type: types.TypeString}, {Name: "order_time", Type: rowtime3}}
	tjRightSchema = types.Schema{{Name: "currency", Type: types.TypeString}, {Name: "rate", Type: types.TypeDouble}, {Name: "update_time", Type: rowtime3}}
)

func tjNode(outer bool, minRate float64) *planner.TemporalJoin {
	n := &planner.TemporalJoin{Left: &planner.Values{Out: tjLeftSchema}, Right: &planner.Values{Out: tjRightSchema},
		Type: planner.InnerJoin, LeftKeys: []int{1}, RightKeys: []int{0}, KeyTypes: []types.Type{types.TypeString},
		LeftTime: 2, RightTime: 2, PrimaryKey: []int{0}}
	if outer {
		n.Type = planner.LeftOuterJoin
	}
	if minRate > 0 {
		n.Where = &planner.Call{Func: ">", Args: []planner.Expr{&planner.ColumnRef{Index: 4, Name: "rate", T: types.TypeDouble},
			&planner.Literal{Value: types.DoubleValue(minRate), T: types.TypeDouble}}, T: types.TypeBoolean}
	}
	n.Out = append(append(types.Schema(nil), tjLeftSchema...), tjRightSchema...)
	return n
}

func TestTemporalJoinAgainstBruteForce(t *testing.T) {
	for _, c := range []struct {
		name    string
		outer   bool
		minRate float64
	}{{"inner", false, 0}, {"left", true, 0}, {"left-where", true, 2}, {"inner-where", false, 1}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(c.name)), 3))
			steps := tjHistory(rng, 3000)
			want, wantLate := tjBrute(steps, c.outer, c.minRate)
			if wantLate == 0 || len(want) == 0 {
				t.Fatalf("the history has %d late rows and %d results: it tests little", wantLate, len(want))
			}
			spec, err := compileTemporalJoin(tjNode(c.outer, c.minRate), eval.Env{}, []bool{false, true})
			if err != nil {
				t.Fatal(err)
			}
			m := newOpMetrics(0, "temporal join")
			build := func() *temporalJoinOp {
				op, err := spec.build(nil, m)
				if err != nil {
					t.Fatal(err)
				}
				return op.(*temporalJoinOp)
			}
			op := build()
			h := newHarness(t, op, m)
			ctx := context.Background()
			cps := newMemCheckpoints(t)
			var got []string
			collect := func() {
				for {
					select {
					case ev := <-h.ch:
						if ev.kind != eventBatch {
							continue
						}
						for i, r := range ev.batch.rows {
							if k := ev.batch.kind(i); k != connectors.Insert {
								t.Fatalf("emitted %s", k)
							}
							got = append(got, r[0].String()+"|"+r[4].String())
						}
					default:
						return
					}
				}
			}
			for i, st := range steps {
				if len(st.right) > 0 {
					b := batch{}
					for _, r := range st.right {
						b.rows = append(b.rows, types.Row{types.StringValue(r.key), types.DoubleValue(r.rate), types.TimestampValue(r.ts)})
						b.kinds = append(b.kinds, r.kind)
					}
					if err := op.processInput(ctx, 1, b, h.out); err != nil {
						t.Fatal(err)
					}
				}
				if l := st.left; l != nil {
					key := types.NullValue
					if l.key != nil {
						key = types.StringValue(*l.key)
					}
					row := types.Row{types.BigIntValue(l.id), key, types.TimestampValue(l.ts)}
					if err := op.processInput(ctx, 0, batch{rows: []types.Row{row}}, h.out); err != nil {
						t.Fatal(err)
					}
				}
				if st.wm != NoWatermark {
					h.watermark(st.wm)
				}
				if i%700 == 350 { // checkpoint, then go on from it in a new operator
					if err := h.out.flush(ctx); err != nil {
						t.Fatal(err)
					}
					collect()
					id := cps.snapshot(op)
					op = build()
					if err := op.restoreState(cps.reader(id)); err != nil {
						t.Fatal(err)
					}
					h.op = op
				}
			}
			if err := op.finish(ctx, true, h.out); err != nil {
				t.Fatal(err)
			}
			if err := h.out.flush(ctx); err != nil {
				t.Fatal(err)
			}
			collect()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows, want %d\n%s", len(got), len(want), firstDiff(got, want))
			}
			if l := m.late.load(); l != int64(wantLate) {
				t.Fatalf("%d late rows counted, want %d", l, wantLate)
			}
			if op.rows != 0 && len(op.pending) != 0 {
				t.Fatalf("rows still waiting after the end: %d keys", len(op.pending))
			}
		})
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at %d: got %s, want %s", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}

// TestTemporalJoinSQL runs the join from SQL over files: orders (JSON, out of order
// within their watermark's delay) against a debezium-json rates history (strictly
// increasing update times; an update's before image and a delete carry the change's
// time), against the brute force.
func TestTemporalJoinSQL(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	dir := t.TempDir()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	stamp := func(us int64) string {
		return base.Add(time.Duration(us) * time.Microsecond).Format("2006-01-02 15:04:05.000")
	}
	var steps []tjStep
	live := map[string]float64{}
	var rates, orders []string
	rec := func(k string, rate float64, us int64) map[string]any {
		return map[string]any{"currency": k, "rate": rate, "update_time": stamp(us)}
	}
	id := int64(0)
	for i := range 2000 {
		T := int64(i) * 1_000_000
		var st tjStep
		if rng.IntN(10) < 3 {
			k := fmt.Sprintf("k%d", rng.IntN(4))
			rate := float64(rng.IntN(40)) / 10
			old, ok := live[k]
			var m map[string]any
			switch {
			case !ok:
				st.right = []tjRight{{connectors.Insert, k, rate, T}}
				m = map[string]any{"before": nil, "after": rec(k, rate, T), "op": "c"}
				live[k] = rate
			case rng.IntN(10) < 7:
				st.right = []tjRight{{connectors.UpdateBefore, k, old, T}, {connectors.UpdateAfter, k, rate, T}}
				m = map[string]any{"before": rec(k, old, T), "after": rec(k, rate, T), "op": "u"}
				live[k] = rate
			default:
				st.right = []tjRight{{connectors.Delete, k, old, T}}
				m = map[string]any{"before": rec(k, old, T), "after": nil, "op": "d"}
				delete(live, k)
			}
			b, _ := json.Marshal(m)
			rates = append(rates, string(b))
		}
		if rng.IntN(10) < 7 {
			l := &tjLeft{id: id, ts: T + int64(rng.IntN(4000))*1000} // at most 4 s out of order: never late
			id++
			key := "null"
			if rng.IntN(12) > 0 {
				k := fmt.Sprintf("k%d", rng.IntN(5))
				l.key = &k
				key = `"` + k + `"`
			}
			orders = append(orders, fmt.Sprintf(`{"order_id":%d,"currency":%s,"order_time":"%s"}`, l.id, key, stamp(l.ts)))
			st.left = l
		}
		steps = append(steps, st)
	}
	for name, lines := range map[string][]string{"rates": rates, "orders": orders} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "part.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ddl := fmt.Sprintf(`CREATE TABLE orders (order_id BIGINT, currency STRING, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE rates (currency STRING, rate DOUBLE, update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time, PRIMARY KEY (currency) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
`, filepath.Join(dir, "orders"), filepath.Join(dir, "rates"))
	for _, c := range []struct {
		name, join string
		outer      bool
		minRate    float64
	}{{"inner", "JOIN", false, 0}, {"left-where", "LEFT JOIN", true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			want, _ := tjBrute(steps, c.outer, c.minRate)
			q := "SELECT o.order_id, r.rate FROM orders AS o " + c.join + " rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency"
			if c.minRate > 0 {
				q += fmt.Sprintf(" AND r.rate > %g", c.minRate)
			}
			var mu sync.Mutex
			var got []string
			j, err := NewJob(planSQL(t, ddl+q+";"), Options{BatchSize: 16, Collect: func(k connectors.RowKind, r types.Row) {
				mu.Lock()
				defer mu.Unlock()
				if k != connectors.Insert {
					t.Errorf("a temporal join emitted %s", k)
				}
				got = append(got, r[0].String()+"|"+r[1].String())
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: got %d rows, want %d\n%s", q, len(got), len(want), firstDiff(got, want))
			}
			for _, m := range j.Metrics().Operators {
				if m.LateDropped != 0 {
					t.Fatalf("%s dropped %d rows as late", m.Name, m.LateDropped)
				}
			}
		})
	}
}

// TestTemporalJoinUpdatingLeft: over an updating left input each change is joined with
// the version valid at its time and keeps its kind; a change at or behind the watermark
// is joined at the next one (not dropped), so that it retracts what its +I made; a right
// -U is skipped (its +U starts the next version), also through a checkpoint.
func TestTemporalJoinUpdatingLeft(t *testing.T) {
	spec, err := compileTemporalJoin(tjNode(true, 0), eval.Env{}, []bool{true, true})
	if err != nil {
		t.Fatal(err)
	}
	m := newOpMetrics(0, "temporal join")
	build := func() *temporalJoinOp {
		op, err := spec.build(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return op.(*temporalJoinOp)
	}
	op := build()
	h := newHarness(t, op, m)
	ctx := context.Background()
	right := func(kind connectors.RowKind, rate float64, at string) {
		t.Helper()
		b := batch{rows: []types.Row{{types.StringValue("EUR"), types.DoubleValue(rate), types.TimestampValue(ts(at))}}, kinds: []connectors.RowKind{kind}}
		if err := op.processInput(ctx, 1, b, h.out); err != nil {
			t.Fatal(err)
		}
	}
	left := func(kind connectors.RowKind, id int64, at string) {
		t.Helper()
		b := batch{rows: []types.Row{{types.BigIntValue(id), types.StringValue("EUR"), types.TimestampValue(ts(at))}}, kinds: []connectors.RowKind{kind}}
		if err := op.processInput(ctx, 0, b, h.out); err != nil {
			t.Fatal(err)
		}
	}
	right(connectors.Insert, 1.1, "2024-01-01 10:00:00")
	// A deduplicating view's update: the before image carries the old version's time.
	right(connectors.UpdateBefore, 1.1, "2024-01-01 10:00:00")
	right(connectors.UpdateAfter, 1.2, "2024-01-01 10:05:00")
	left(connectors.Insert, 1, "2024-01-01 10:01:00")
	left(connectors.Insert, 2, "2024-01-01 10:06:00")
	h.watermark(ts("2024-01-01 10:02:00"))
	if got := h.emitted(); !slices.Equal(got, []string{"+I(1, EUR, 2024-01-01 10:01:00.000, EUR, 1.1, 2024-01-01 10:00:00.000)"}) {
		t.Fatalf("at 10:02: %v", got)
	}
	// The order changes after the watermark passed its time: the change is joined at the
	// next watermark with the version its +I had.
	left(connectors.UpdateBefore, 1, "2024-01-01 10:01:00")
	left(connectors.UpdateAfter, 1, "2024-01-01 10:01:00")
	cps := newMemCheckpoints(t)
	id := cps.snapshot(op)
	op = build()
	if err := op.restoreState(cps.reader(id)); err != nil {
		t.Fatal(err)
	}
	h.op = op
	left(connectors.Delete, 2, "2024-01-01 10:06:00")
	h.watermark(ts("2024-01-01 10:10:00"))
	want := []string{
		"-U(1, EUR, 2024-01-01 10:01:00.000, EUR, 1.1, 2024-01-01 10:00:00.000)",
		"+U(1, EUR, 2024-01-01 10:01:00.000, EUR, 1.1, 2024-01-01 10:00:00.000)",
		"+I(2, EUR, 2024-01-01 10:06:00.000, EUR, 1.2, 2024-01-01 10:05:00.000)",
		"-D(2, EUR, 2024-01-01 10:06:00.000, EUR, 1.2, 2024-01-01 10:05:00.000)",
	}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("at 10:10:\n got %v\nwant %v", got, want)
	}
	if l := m.late.load(); l != 0 {
		t.Fatalf("%d rows counted late over an updating input", l)
	}
}
