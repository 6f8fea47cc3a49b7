package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
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

// finalState applies a changelog (+I/+U add a row, -U/-D remove one) and returns the
// rows left, sorted; a retraction of a row that is not there is an error.
func finalState(t *testing.T, changes []string) []string {
	t.Helper()
	bag := map[string]int{}
	for _, c := range changes {
		kind, row := c[:2], c[2:]
		switch kind {
		case "+I", "+U":
			bag[row]++
		case "-U", "-D":
			if bag[row] == 0 {
				t.Fatalf("%s retracts a row that is not there; changelog:\n%s", c, strings.Join(changes, "\n"))
			}
			bag[row]--
		default:
			t.Fatalf("change %q", c)
		}
	}
	var out []string
	for _, row := range slices.Sorted(maps.Keys(bag)) {
		for range bag[row] {
			out = append(out, row)
		}
	}
	return out
}

// joinTables writes orders (JSON) and customers (CSV) with keys that match once, twice,
// never, and a NULL key, and returns their DDL.
func joinTables(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	orders := `{"order_id": 1, "customer_id": 10, "amount": 5}
{"order_id": 2, "customer_id": 20, "amount": 50}
{"order_id": 3, "customer_id": 10, "amount": 500}
{"order_id": 4, "customer_id": 99, "amount": 7}
{"order_id": 5, "customer_id": null, "amount": 8}
{"order_id": 6, "customer_id": 30, "amount": 9}
`
	customers := "10,ann\n20,bob\n20,bea\n40,cid\n"
	for name, data := range map[string]string{"orders/o.json": orders, "customers/c.csv": customers} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf(`
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount INT)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE customers (id BIGINT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
`, filepath.Join(dir, "orders"), filepath.Join(dir, "customers"))
}

// TestJoinsFromSQL runs each kind of regular join and UNION ALL through the planner and
// the runtime, and compares the changelog's final state with the answer.
func TestJoinsFromSQL(t *testing.T) {
	ddl := joinTables(t)
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"inner", `SELECT o.order_id, c.name FROM orders o JOIN customers c ON o.customer_id = c.id`,
			[]string{"(1, ann)", "(2, bea)", "(2, bob)", "(3, ann)"}},
		{"inner with a condition", `SELECT o.order_id, c.name FROM orders o JOIN customers c ON o.customer_id = c.id AND o.amount > 10 AND c.name <> 'bea'`,
			[]string{"(2, bob)", "(3, ann)"}},
		{"left", `SELECT o.order_id, c.name FROM orders o LEFT JOIN customers c ON o.customer_id = c.id`,
			[]string{"(1, ann)", "(2, bea)", "(2, bob)", "(3, ann)", "(4, NULL)", "(5, NULL)", "(6, NULL)"}},
		{"left with a condition", `SELECT o.order_id, c.name FROM orders o LEFT JOIN customers c ON o.customer_id = c.id AND o.amount > 10`,
			[]string{"(1, NULL)", "(2, bea)", "(2, bob)", "(3, ann)", "(4, NULL)", "(5, NULL)", "(6, NULL)"}},
		{"right", `SELECT o.order_id, c.name FROM orders o RIGHT JOIN customers c ON o.customer_id = c.id`,
			[]string{"(1, ann)", "(2, bea)", "(2, bob)", "(3, ann)", "(NULL, cid)"}},
		{"full", `SELECT o.order_id, c.name FROM orders o FULL JOIN customers c ON o.customer_id = c.id`,
			[]string{"(1, ann)", "(2, bea)", "(2, bob)", "(3, ann)", "(4, NULL)", "(5, NULL)", "(6, NULL)", "(NULL, cid)"}},
		{"self join", `SELECT a.order_id, b.order_id FROM orders a JOIN orders b ON a.customer_id = b.customer_id AND a.order_id < b.order_id`,
			[]string{"(1, 3)"}},
		{"join of a VALUES view", `SELECT o.order_id, t.label FROM orders o LEFT JOIN (VALUES (10, 'gold'), (20, 'silver'), (20, 'steel')) AS t (k, label) ON o.customer_id = t.k`,
			// The labels are CHAR(6), padded, as Flink types a VALUES column of strings.
			[]string{"(1, gold  )", "(2, silver)", "(2, steel )", "(3, gold  )", "(4, NULL)", "(5, NULL)", "(6, NULL)"}},
		{"union all with VALUES", `SELECT id, name FROM customers UNION ALL SELECT * FROM (VALUES (CAST(7 AS BIGINT), 'val'))`,
			[]string{"(10, ann)", "(20, bea)", "(20, bob)", "(40, cid)", "(7, val)"}},
		{"union all then aggregate", `SELECT k, COUNT(*) AS n FROM (SELECT customer_id AS k FROM orders UNION ALL SELECT id FROM customers) GROUP BY k`,
			[]string{"(10, 3)", "(20, 3)", "(30, 1)", "(40, 1)", "(99, 1)", "(NULL, 1)"}},
		{"union", `SELECT customer_id AS k FROM orders UNION SELECT id FROM customers`,
			[]string{"(10)", "(20)", "(30)", "(40)", "(99)", "(NULL)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := finalState(t, runSelect(t, ddl+tc.query+";"))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestOuterJoinRetractsPaddedRows checks the changelog itself: a left row without a match
// is emitted null-padded, and retracted when its match arrives.
func TestOuterJoinRetractsPaddedRows(t *testing.T) {
	schema := types.Schema{{Name: "k", Type: types.TypeBigInt}, {Name: "v", Type: types.TypeString}}
	left := &memSource{bounded: true, steps: []pollStep{
		{batches: []connectors.SourceBatch{{Split: "l", Rows: []types.Row{{types.BigIntValue(1), types.StringValue("a")}}}}},
	}}
	var rightSteps []pollStep
	started := make(chan struct{})
	rightSteps = append(rightSteps,
		pollStep{hook: func() { <-started }, batches: []connectors.SourceBatch{{Split: "r", Rows: []types.Row{{types.BigIntValue(1), types.StringValue("x")}}}}},
		pollStep{batches: []connectors.SourceBatch{{Split: "r", Rows: []types.Row{{types.BigIntValue(1), types.StringValue("y")}}}}})
	right := &memSource{bounded: true, steps: rightSteps}
	join := &planner.Join{
		Left: scanOf("l", schema, left), Right: scanOf("r", schema, right), Type: planner.FullOuterJoin,
		LeftKeys: []int{0}, RightKeys: []int{0}, KeyTypes: []types.Type{types.TypeBigInt},
		Out: append(append(types.Schema(nil), schema...), schema...),
	}
	sink := &memSink{}
	j, err := NewJob(program(nil, sinkOf("out", join, sink, planner.Updating)), Options{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The right side waits until the left row went through the join alone.
	sink.wrote = make(chan struct{}, 16)
	go func() { <-sink.wrote; close(started) }()
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I(1, a, NULL, NULL)", "-D(1, a, NULL, NULL)", "+I(1, a, 1, x)", "+I(1, a, 1, y)"}
	if got := sink.changes(); !slices.Equal(got, want) {
		t.Fatalf("changelog %v, want %v", got, want)
	}
}

// TestBarrierAlignment feeds a two-input task by hand: after the barrier of one input,
// that input's rows wait until the other input's barrier arrived; the watermark is the
// minimum of the inputs'; the stream ends when both inputs ended.
func TestBarrierAlignment(t *testing.T) {
	in0, in1 := make(chan event, 16), make(chan event, 16)
	out := make(chan event, 64)
	spec := &opSpec{name: "union", metrics: newOpMetrics(0, "union")}
	task := &opTask{spec: spec, op: unionOp{}, ins: []<-chan event{in0, in1},
		out: newOutbox(out, 16, &spec.metrics.out),
		rt:  &runEnv{clock: connectors.WallClock{}, log: slog.New(slog.DiscardHandler)}}
	row := func(s string) event {
		return event{kind: eventBatch, batch: batch{rows: []types.Row{{types.StringValue(s)}}}}
	}
	in0 <- row("a1")
	in0 <- event{kind: eventWatermark, watermark: 10}
	in0 <- event{kind: eventBarrier, barrier: 7}
	in0 <- row("a2") // after the barrier: must follow it
	in0 <- event{kind: eventWatermark, watermark: 30}
	in0 <- event{kind: eventWatermark, watermark: MaxWatermark}
	in0 <- event{kind: eventEnd}
	done := make(chan error, 1)
	go func() { done <- task.run(context.Background()) }()
	// Input 0 is held at its barrier: nothing of it after the barrier comes out while
	// input 1 is behind.
	time.Sleep(20 * time.Millisecond)
	in1 <- row("b1")
	in1 <- event{kind: eventWatermark, watermark: 20}
	in1 <- event{kind: eventBarrier, barrier: 7}
	in1 <- row("b2")
	in1 <- event{kind: eventEnd}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(out)
	var got []string
	for ev := range out {
		switch ev.kind {
		case eventBatch:
			for _, r := range ev.batch.rows {
				got = append(got, r[0].String())
			}
		case eventWatermark:
			got = append(got, fmt.Sprintf("wm %d", ev.watermark))
		case eventBarrier:
			got = append(got, fmt.Sprintf("barrier %d", ev.barrier))
		default:
			got = append(got, ev.kind.String())
		}
	}
	// a1, b1 before the barrier; a2 and b2 after it; the watermark never passes the
	// slower input's; end once, after both.
	idx := func(s string) int { return slices.Index(got, s) }
	if idx("a1") > idx("barrier 7") || idx("b1") > idx("barrier 7") || idx("a2") < idx("barrier 7") || idx("b2") < idx("barrier 7") {
		t.Fatalf("rows on the wrong side of the barrier: %v", got)
	}
	// The watermark rises, and never past input 1's 20 while input 1 had not ended.
	var wms []int64
	for i, g := range got {
		var wm int64
		if _, err := fmt.Sscanf(g, "wm %d", &wm); err != nil {
			continue
		}
		if len(wms) > 0 && wm <= wms[len(wms)-1] {
			t.Fatalf("watermark %d after %d: %v", wm, wms[len(wms)-1], got)
		}
		if wm > 20 && i < idx("b2") {
			t.Fatalf("watermark %d before input 1 (at 20) ended: %v", wm, got)
		}
		wms = append(wms, wm)
	}
	if len(wms) < 2 || wms[0] != 10 || wms[len(wms)-1] != MaxWatermark {
		t.Fatalf("watermarks %v, want 10 first and the end of input last (all: %v)", wms, got)
	}
	if got[len(got)-1] != "end" || idx("end") != len(got)-1 {
		t.Fatalf("the end is not last and once: %v", got)
	}
}

// joinFixture is a two-input job's input: orders and customers in JSON files, with
// the inner join's answer.
type joinFixture struct {
	orders, customers string
	truth             map[string]int // "order_id,name" -> count
}

func writeJoinFixture(t *testing.T, orders, customers, files int) joinFixture {
	t.Helper()
	f := joinFixture{orders: t.TempDir(), customers: t.TempDir(), truth: map[string]int{}}
	rng := rand.New(rand.NewPCG(3, 9))
	names := map[int][]string{}
	var b strings.Builder
	for file := range files {
		b.Reset()
		for i := file * customers / files; i < (file+1)*customers/files; i++ {
			id := rng.IntN(customers / 2) // some ids twice, some never
			name := fmt.Sprintf("c%d", i)
			names[id] = append(names[id], name)
			fmt.Fprintf(&b, `{"id":%d,"name":%q}`+"\n", id, name)
		}
		if err := os.WriteFile(filepath.Join(f.customers, fmt.Sprintf("c-%02d.json", file)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keys := make([]int, orders)
	for i := range keys {
		keys[i] = rng.IntN(customers/2 + 50)
	}
	for file := range files {
		b.Reset()
		for i := file * orders / files; i < (file+1)*orders/files; i++ {
			fmt.Fprintf(&b, `{"order_id":%d,"customer_id":%d}`+"\n", i, keys[i])
			for _, n := range names[keys[i]] {
				f.truth[fmt.Sprintf("%d,%s", i, n)]++
			}
		}
		if err := os.WriteFile(filepath.Join(f.orders, fmt.Sprintf("o-%02d.json", file)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f joinFixture) job(t *testing.T, out string, sets ...string) *planner.Program {
	t.Helper()
	var b strings.Builder
	for _, s := range sets {
		fmt.Fprintf(&b, "SET %s;\n", s)
	}
	fmt.Fprintf(&b, `
CREATE TABLE orders (order_id BIGINT, customer_id BIGINT)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE customers (id BIGINT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE joined (order_id BIGINT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO joined SELECT o.order_id, c.name FROM orders o JOIN customers c ON o.customer_id = c.id;
`, f.orders, f.customers, out)
	return planSQL(t, b.String())
}

func (f joinFixture) check(t *testing.T, out string) {
	t.Helper()
	got := map[string]int{}
	lines, files := publishedLines(t, out)
	for i, line := range lines {
		var r struct {
			OrderID int64  `json:"order_id"`
			Name    string `json:"name"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %q: %v", files[i], line, err)
		}
		got[fmt.Sprintf("%d,%s", r.OrderID, r.Name)]++
	}
	bad := 0
	for k, n := range f.truth {
		if got[k] != n && bad < 10 {
			bad++
			t.Errorf("%s: %d rows, want %d", k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := f.truth[k]; !ok && bad < 10 {
			bad++
			t.Errorf("%s: %d rows, want none", k, n)
		}
	}
	if bad == 0 && len(got) != len(f.truth) {
		t.Errorf("%d distinct rows, want %d", len(got), len(f.truth))
	}
}

// TestTwoInputJobRecoversExactly fails the join twice while a two-source job runs, each
// time after checkpoints completed, and checks that the restarts restore both sources'
// positions and the join's state from the same aligned cut: the committed output is
// exactly the join, no row lost or written twice. A third run of the finished job from
// its store writes nothing more.
func TestTwoInputJobRecoversExactly(t *testing.T) {
	fx := writeJoinFixture(t, 60000, 6000, 6)
	out := t.TempDir()
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	store, err := state.OpenBadger(t.TempDir(), state.Options{NumRetained: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	sets := []string{"'execution.checkpointing.interval' = '100 ms'", "'restart-strategy.type' = 'fixed-delay'",
		"'restart-strategy.fixed-delay.attempts' = '5'", "'restart-strategy.fixed-delay.delay' = '1 s'"}
	j, err := NewJob(fx.job(t, out, sets...), Options{Clock: clock, JobKey: "join", Store: store, BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	failures := 0
	var next int64 = 2
	j.failHook = func(_ int, op string) error {
		mu.Lock()
		defer mu.Unlock()
		if op != "join" || failures == 2 {
			return nil
		}
		if c := j.Metrics().Checkpoints.Completed; c >= next {
			failures++
			next = c + 1
			return errInjected
		}
		return nil
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := j.Metrics().Checkpoints
	if failures != 2 || m.Restarts != 2 || m.RestoredFrom != "checkpoint" {
		t.Fatalf("%d failures, %d restarts, restored from %q: the job must fail twice and restart from checkpoints", failures, m.Restarts, m.RestoredFrom)
	}
	fx.check(t, out)

	// The process starts again: the finished job resumes at the end of both inputs.
	j2, err := NewJob(fx.job(t, out, sets...), Options{Clock: clock, JobKey: "join", Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	fx.check(t, out)
}

// TestJoinStateTTL: with table.exec.state.ttl, a row joins rows of the other side that
// arrive within the TTL of its insertion, not later ones.
func TestJoinStateTTL(t *testing.T) {
	clock := newFakeClock()
	schema := types.Schema{{Name: "k", Type: types.TypeBigInt}, {Name: "v", Type: types.TypeString}}
	row := func(k int64, v string) types.Row { return types.Row{types.BigIntValue(k), types.StringValue(v)} }
	var j *Job
	// The right side reads (and moves the clock) once the join took n rows.
	joined := func(n int64) func() {
		return func() {
			for {
				for _, m := range j.Metrics().Operators {
					if m.Name == "join" && m.RecordsIn >= n {
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	left := &memSource{clock: clock, bounded: true, steps: []pollStep{
		{batches: []connectors.SourceBatch{{Split: "l", Rows: []types.Row{row(1, "a"), row(2, "b")}}}},
	}}
	right := &memSource{clock: clock, bounded: true, steps: []pollStep{
		{hook: joined(2), advance: 30 * time.Minute,
			batches: []connectors.SourceBatch{{Split: "r", Rows: []types.Row{row(1, "x")}}}},
		// 90 minutes after the left rows were written: they expired.
		{hook: joined(3), advance: time.Hour, batches: []connectors.SourceBatch{{Split: "r", Rows: []types.Row{row(1, "y"), row(2, "z")}}}},
	}}
	join := &planner.Join{
		Left: scanOf("l", schema, left), Right: scanOf("r", schema, right), Type: planner.InnerJoin,
		LeftKeys: []int{0}, RightKeys: []int{0}, KeyTypes: []types.Type{types.TypeBigInt},
		Out: append(append(types.Schema(nil), schema...), schema...),
	}
	sink := &memSink{}
	var err error
	j, err = NewJob(program(map[string]string{"table.exec.state.ttl": "1 h"}, sinkOf("out", join, sink, planner.InsertOnly)),
		Options{Clock: clock, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := sink.changes(), []string{"+I(1, a, 1, x)"}; !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
}

// TestJoinStateTTLSweep: the sweep drops expired rows, their keys and key groups, and a
// checkpoint after it no longer holds them.
func TestJoinStateTTLSweep(t *testing.T) {
	cfg := &joinConfig{ttl: [2]time.Duration{time.Hour, time.Hour}, widths: [2]int{1, 1}}
	clock := newFakeClock()
	o := newJoinOp(cfg, clock)
	now := clock.Now()
	for k := range 50 {
		key := appendKey(nil, types.BigIntValue(int64(k)))
		b := o.sides[k%2].bucket(key)
		written := now.UnixMicro()
		if k%5 == 0 {
			written = now.Add(-2 * time.Hour).UnixMicro()
		}
		b.recs = append(b.recs, joinRecord{row: types.Row{types.BigIntValue(int64(k))}, written: written})
		o.sides[k%2].rows++
	}
	if err := o.onTimer(context.Background(), now, nil); err != nil {
		t.Fatal(err)
	}
	if got := o.measureState().Groups; got != 40 {
		t.Fatalf("%d rows after the sweep, want 40", got)
	}
	for _, side := range o.sides {
		n := 0
		for _, bs := range side.byKG {
			n += len(bs)
		}
		if n != len(side.buckets) {
			t.Fatalf("%d buckets by key group, %d by key", n, len(side.buckets))
		}
	}
}
