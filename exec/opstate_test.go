package exec

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// memCheckpoints keeps operator checkpoints the way state.Store does for one operator:
// each checkpoint a map, Unchanged copying the value of the base checkpoint.
type memCheckpoints struct {
	t    testing.TB
	cps  map[uint64]map[string][]byte
	last uint64
	// what the last checkpoint did
	puts, reused int
	putKeys      []string
}

func newMemCheckpoints(t testing.TB) *memCheckpoints {
	return &memCheckpoints{t: t, cps: map[uint64]map[string][]byte{}}
}

type memWriter struct {
	m        *memCheckpoints
	id, base uint64
	values   map[string][]byte
}

func (w *memWriter) ID() uint64   { return w.id }
func (w *memWriter) Base() uint64 { return w.base }
func (w *memWriter) Put(key string, value []byte) error {
	if _, dup := w.values[key]; dup {
		w.m.t.Fatalf("checkpoint %d: key %q written twice", w.id, key)
	}
	w.values[key] = value
	w.m.puts++
	w.m.putKeys = append(w.m.putKeys, key)
	return nil
}
func (w *memWriter) Unchanged(key string) error {
	v, ok := w.m.cps[w.base][key]
	if !ok {
		return fmt.Errorf("key %q is not in base checkpoint %d", key, w.base)
	}
	w.values[key] = v
	w.m.reused++
	return nil
}

// snapshot takes checkpoint last+1 of op, incremental on the previous one.
func (m *memCheckpoints) snapshot(op stateful) uint64 {
	m.t.Helper()
	id := m.last + 1
	w := &memWriter{m: m, id: id, base: m.last, values: map[string][]byte{}}
	m.puts, m.reused, m.putKeys = 0, 0, nil
	if err := op.snapshotState(context.Background(), w); err != nil {
		m.t.Fatal(err)
	}
	m.cps[id] = w.values
	m.last = id
	return id
}

type memReader struct {
	id     uint64
	values map[string][]byte
}

func (r memReader) ID() uint64 { return r.id }
func (r memReader) Scan(fn func(string, []byte) error) error {
	keys := make([]string, 0, len(r.values))
	for k := range r.values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn(k, slices.Clone(r.values[k])); err != nil {
			return err
		}
	}
	return nil
}

func (m *memCheckpoints) reader(id uint64) stateReader { return memReader{id: id, values: m.cps[id]} }

var userSchema = types.Schema{
	{Name: "ts", Type: rowtime3}, {Name: "app", Type: types.TypeString},
	{Name: "user_id", Type: types.TypeString}, {Name: "n", Type: types.TypeBigInt},
}

func userAggs() []planner.AggCall {
	return []planner.AggCall{
		{Func: planner.AggCount, Arg: 2, Distinct: true, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "dau"},
		{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "events"},
		{Func: planner.AggSum, Arg: 3, Filter: -1, T: types.TypeBigInt, Name: "total"},
		{Func: planner.AggMax, Arg: 2, Filter: -1, T: types.TypeString, Name: "last_user"},
	}
}

// userEvents returns batches of rows over several hours, a few minutes out of order,
// each followed by a watermark 10 minutes behind the largest time so far.
type step struct {
	rows []types.Row
	wm   int64
}

func userEvents(seed uint64, n int) []step {
	rng := rand.New(rand.NewPCG(seed, 99))
	apps := []string{"shop", "news", "maps", "mail", "game"}
	base := ts("2024-05-01 00:00:00.000")
	var steps []step
	maxTS := int64(0)
	for i := 0; i < n; {
		var rows []types.Row
		for range 1 + rng.IntN(40) {
			at := base + int64(i)*int64(20*time.Second/time.Microsecond) - rng.Int64N(int64(3*time.Minute/time.Microsecond))
			maxTS = max(maxTS, at)
			rows = append(rows, types.Row{
				types.TimestampValue(at), types.StringValue(apps[rng.IntN(len(apps))]),
				types.StringValue(fmt.Sprintf("u%d", rng.IntN(300))), types.BigIntValue(rng.Int64N(100)),
			})
			i++
		}
		steps = append(steps, step{rows: rows, wm: maxTS - int64(10*time.Minute/time.Microsecond)})
	}
	return steps
}

func feed(t *testing.T, h *harness, steps []step) []string {
	t.Helper()
	for _, s := range steps {
		h.batch(s.rows...)
		h.watermark(s.wm)
	}
	return h.emitted()
}

// TestWindowAggRestoreContinuesExactly checks, for each window kind, that an operator
// restored from any of a series of incremental checkpoints emits exactly what the
// operator that took them emits from there on, and that checkpoints after the restore
// are incremental again.
func TestWindowAggRestoreContinuesExactly(t *testing.T) {
	for _, w := range []planner.Window{
		{Kind: planner.Tumble, TimeCol: 0, Size: time.Hour, Slide: time.Hour},
		{Kind: planner.Hop, TimeCol: 0, Size: time.Hour, Slide: 20 * time.Minute},
		{Kind: planner.Cumulate, TimeCol: 0, Size: 2 * time.Hour, Slide: 30 * time.Minute},
	} {
		t.Run(w.Kind.String(), func(t *testing.T) {
			steps := userEvents(uint64(w.Kind)+1, 4000)
			op, m := newWindowAgg(t, userSchema, w, []int{1}, userAggs())
			h := newHarness(t, op, m)
			cps := newMemCheckpoints(t)
			var cuts []int // the step each checkpoint follows
			for i := 0; i < len(steps); {
				n := 1 + i%17
				feed(t, h, steps[i:min(i+n, len(steps))])
				i += n
				cps.snapshot(op)
				cuts = append(cuts, i)
			}
			// Replay from each checkpoint on a fresh operator and compare with the original.
			full := func(from int) []string {
				ref, rm := newWindowAgg(t, userSchema, w, []int{1}, userAggs())
				rh := newHarness(t, ref, rm)
				feed(t, rh, steps[:from])
				return feed(t, rh, steps[from:])
			}
			for k := 0; k < len(cuts); k += 1 + len(cuts)/7 {
				restored, rm := newWindowAgg(t, userSchema, w, []int{1}, userAggs())
				if err := restored.restoreState(cps.reader(uint64(k + 1))); err != nil {
					t.Fatalf("restore checkpoint %d: %v", k+1, err)
				}
				rh := newHarness(t, restored, rm)
				got := feed(t, rh, steps[cuts[k]:])
				want := full(cuts[k])
				if !slices.Equal(got, want) {
					t.Fatalf("restored from checkpoint %d of %d: emitted %d rows, want %d\ngot:  %v\nwant: %v",
						k+1, len(cuts), len(got), len(want), first(got, 5), first(want, 5))
				}
				// The restored operator continues incrementally from the checkpoint it read.
				more := newMemCheckpoints(t)
				more.cps[uint64(k+1)] = cps.cps[uint64(k+1)]
				more.last = uint64(k + 1)
				restored2, _ := newWindowAgg(t, userSchema, w, []int{1}, userAggs())
				if err := restored2.restoreState(cps.reader(uint64(k + 1))); err != nil {
					t.Fatal(err)
				}
				more.snapshot(restored2)
				if more.puts != 1 { // only the meta key: nothing changed
					t.Fatalf("a checkpoint right after a restore wrote %v, want only %q", more.putKeys, windowMetaKey)
				}
			}
		})
	}
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// TestWindowAggIncrementalCheckpoint checks what each checkpoint writes: only the key
// groups that changed, nothing for windows that fired, and the dictionary as a bounded
// chain of deltas.
func TestWindowAggIncrementalCheckpoint(t *testing.T) {
	w := planner.Window{Kind: planner.Tumble, TimeCol: 0, Size: 24 * time.Hour, Slide: 24 * time.Hour}
	op, m := newWindowAgg(t, userSchema, w, []int{1}, userAggs()[:1])
	h := newHarness(t, op, m)
	cps := newMemCheckpoints(t)
	day := ts("2024-05-01 00:00:00.000")
	row := func(at int64, app, user string) types.Row {
		return types.Row{types.TimestampValue(at), types.StringValue(app), types.StringValue(user), types.BigIntValue(1)}
	}
	var rows []types.Row
	for i := range 200 {
		rows = append(rows, row(day+int64(i)*1000, fmt.Sprintf("app%d", i%50), fmt.Sprintf("user%d", i)))
	}
	h.batch(rows...)
	cps.snapshot(op)
	if cps.reused != 0 {
		t.Fatalf("the first checkpoint reused %d values", cps.reused)
	}
	groupKeys := 0
	for k := range cps.cps[1] {
		if strings.HasPrefix(k, "s") {
			groupKeys++
		}
	}
	if groupKeys < 20 {
		t.Fatalf("50 groups went into %d key groups; want them spread", groupKeys)
	}

	// A user app7 already has changes nothing: only the meta is rewritten.
	h.batch(row(day+5000_000, "app7", "user7"))
	cps.snapshot(op)
	if cps.puts != 1 || cps.reused == 0 {
		t.Fatalf("after a duplicate user: wrote %v, reused %d; want only the meta", cps.putKeys, cps.reused)
	}
	// A new user of app7: its key group and a dictionary delta.
	h.batch(row(day+6000_000, "app7", "someone-new"))
	cps.snapshot(op)
	var kinds []string
	for _, k := range cps.putKeys {
		kinds = append(kinds, k[:1])
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{"d", "m", "s"}) {
		t.Fatalf("after a new user: wrote %v, want a dictionary delta, the meta and one key group", cps.putKeys)
	}

	// The dictionary's chain stays short however many checkpoints add to it.
	for i := range 3 * maxSharedChunks {
		h.batch(row(day+7000_000, "app1", fmt.Sprintf("late-joiner-%d", i)))
		cps.snapshot(op)
		chain := 0
		for k := range cps.cps[cps.last] {
			if strings.HasPrefix(k, "d0/") {
				chain++
			}
		}
		if chain > maxSharedChunks {
			t.Fatalf("checkpoint %d holds a dictionary chain of %d values", cps.last, chain)
		}
	}
	restored, rm := newWindowAgg(t, userSchema, w, []int{1}, userAggs()[:1])
	if err := restored.restoreState(cps.reader(cps.last)); err != nil {
		t.Fatal(err)
	}

	// Firing the day deletes its state from the next checkpoint.
	h.watermark(day + int64(25*time.Hour/time.Microsecond))
	want := h.emitted()
	cps.snapshot(op)
	for k := range cps.cps[cps.last] {
		if strings.HasPrefix(k, "s") {
			t.Fatalf("the fired window's key %q is still in the checkpoint", k)
		}
	}
	rh := newHarness(t, restored, rm)
	rh.watermark(day + int64(25*time.Hour/time.Microsecond))
	if got := rh.emitted(); !slices.Equal(got, want) || len(got) != 50 {
		t.Fatalf("restored operator fired %v, want %v (50 apps)", got, want)
	}
}

// TestGroupAggRestoreContinuesChangelog checks that a restored GROUP BY continues its
// changelog: the -U it emits carries the result emitted before the checkpoint.
func TestGroupAggRestoreContinuesChangelog(t *testing.T) {
	build := func() (*groupAggOp, *harness) {
		in := kvSchema
		n := &planner.GroupAggregate{
			Input: &planner.Values{Out: in}, Keys: []int{0},
			Aggs: []planner.AggCall{
				{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, Name: "s"},
				{Func: planner.AggCount, Arg: 0, Distinct: true, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "d"},
			},
			Out: types.Schema{in[0], {Name: "s", Type: types.TypeBigInt}, {Name: "d", Type: types.TypeBigInt}},
		}
		cfg, err := compileGroupAgg(n, false)
		if err != nil {
			t.Fatal(err)
		}
		op, err := newGroupAggOp(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := newOpMetrics(0, "group aggregate")
		return op, newHarness(t, op, m)
	}
	op, h := build()
	h.batch(kv("a", 1), kv("b", 2), kv("a", 3))
	h.emitted()
	cps := newMemCheckpoints(t)
	cps.snapshot(op)
	h.batch(kv("a", 10), kv("c", 1))
	want := h.emitted()

	restored, rh := build()
	if err := restored.restoreState(cps.reader(1)); err != nil {
		t.Fatal(err)
	}
	rh.batch(kv("a", 10), kv("c", 1))
	got := rh.emitted()
	if !slices.Equal(got, want) || want[0] != "-U(a, 4, 1)" {
		t.Fatalf("restored changelog %v, want %v starting with -U(a, 4, 1)", got, want)
	}
	cps.snapshot(restored)
	kgOf := func(k string) string {
		return kgKey(groupAggPrefix, keyGroupOf(appendRowKey(nil, types.Row{types.StringValue(k)}, []int{0})))
	}
	var groups []string
	for _, k := range cps.putKeys {
		if strings.HasPrefix(k, groupAggPrefix) {
			groups = append(groups, k)
		}
	}
	slices.Sort(groups)
	want2 := []string{kgOf("a"), kgOf("c")}
	slices.Sort(want2)
	if !slices.Equal(slices.Compact(want2), groups) || !slices.Contains(slices.Collect(maps.Keys(cps.cps[cps.last])), kgOf("b")) {
		t.Fatalf("second checkpoint wrote %v; want the key groups of a and c %v, with b's reused", cps.putKeys, want2)
	}
}

// TestStateCodecRoundTrip checks the value codec over every kind, and that damaged
// data is an error, not a panic.
func TestStateCodecRoundTrip(t *testing.T) {
	row := types.Row{
		types.NullValue, types.BoolValue(true), types.IntValue(types.TinyInt, -3), types.IntValue(types.Int, 7),
		types.BigIntValue(-1 << 60), types.FloatValue(1.5), types.DoubleValue(-0.25),
		types.StringValue("héllo"), types.BytesValue([]byte{0, 1, 2}), types.DateValue(19000),
		types.TimeValue(3600e6), types.TimestampValue(1e15), types.TimestampLTZValue(-5),
		types.IntervalValue(42), types.IntervalMonthsValue(13),
		types.ArrayValue([]types.Value{types.BigIntValue(1), types.NullValue}),
		types.RowValue([]types.Value{types.StringValue("x")}),
		types.MapValue([]types.MapEntry{{Key: types.StringValue("k"), Value: types.BigIntValue(2)}}),
	}
	data := appendStateRow(nil, row)
	d := &stateDecoder{data: data}
	got := d.row()
	if err := d.finish(); err != nil {
		t.Fatal(err)
	}
	if !rowsEqual(got, row) || string(appendRowKey(nil, got, identityCols(len(got)))) != string(appendRowKey(nil, row, identityCols(len(row)))) {
		t.Fatalf("round trip gave %v, want %v", got, row)
	}
	for cut := range data {
		d := &stateDecoder{data: data[:cut]}
		d.row()
		if d.finish() == nil {
			t.Fatalf("a value cut at byte %d of %d decoded without error", cut, len(data))
		}
	}
}
