package builtin

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/conntest"
	"github.com/pipesql/pipesql/types"
)

// fakeClock only moves when a source waits on it, so throttling runs without sleeping.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer moves the clock by d and returns a timer that has fired: a source's wait
// passes at once.
func (c *fakeClock) NewTimer(d time.Duration) connectors.Timer {
	c.Advance(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return firedTimer(ch)
}

// NewTicker is never used by the connectors of this package.
func (c *fakeClock) NewTicker(time.Duration) connectors.Ticker {
	panic("builtin: fakeClock has no tickers")
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type firedTimer chan time.Time

func (t firedTimer) C() <-chan time.Time { return t }
func (t firedTimer) Stop() bool          { return false }

func produceAll(s types.Schema) []connectors.ProducedColumn {
	out := make([]connectors.ProducedColumn, len(s))
	for i, c := range s {
		out[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	return out
}

func datagenConfig_(name string, schema types.Schema, opts map[string]string, restored []byte) connectors.SourceConfig {
	all := map[string]string{"connector": "datagen"}
	for k, v := range opts {
		all[k] = v
	}
	return connectors.SourceConfig{
		TableInfo: connectors.TableInfo{Name: name, Options: all, Schema: schema},
		Produce:   produceAll(schema),
		Restored:  restored,
		Settings:  map[string]string{},
		Log:       &conntest.Logger{},
	}
}

// drain polls until io.EOF and returns every row.
func drain(t *testing.T, src connectors.Source) []types.Row {
	t.Helper()
	var rows []types.Row
	for range 100000 {
		batches, err := src.Poll(context.Background(), time.Second)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			rows = append(rows, b.Rows...)
		}
	}
	t.Fatal("source did not end")
	return nil
}

var dgSchema = types.Schema{
	{Name: "id", Type: types.TypeBigInt},
	{Name: "n", Type: types.TypeInt},
	{Name: "s", Type: types.Type{Kind: types.Varchar, Length: 20}},
	{Name: "x", Type: types.TypeDouble},
	{Name: "ts", Type: types.TimestampType(3)},
	{Name: "maybe", Type: types.TypeInt},
	{Name: "price", Type: types.Type{Kind: types.Decimal, Prec: 6, Scale: 2}},
	{Name: "tags", Type: types.Type{Kind: types.Array, Elem: &types.TypeString}},
}

var dgOptions = map[string]string{
	"number-of-rows":         "500",
	"fields.id.kind":         "sequence",
	"fields.id.start":        "1000",
	"fields.id.end":          "1999",
	"fields.n.min":           "5",
	"fields.n.max":           "10",
	"fields.s.length":        "8",
	"fields.x.min":           "-1.5",
	"fields.x.max":           "2.5",
	"fields.ts.max-past":     "1 h",
	"fields.maybe.null-rate": "0.5",
	"fields.price.min":       "1.5",
	"fields.price.max":       "3",
	"fields.tags.length":     "2",
}

func TestDatagenBoundsAndDeterminism(t *testing.T) {
	clk := newFakeClock()
	start := clk.Now()
	src, err := newDatagenSource(datagenConfig_("events", dgSchema, dgOptions, nil), clk)
	if err != nil {
		t.Fatal(err)
	}
	rows := drain(t, src)
	if len(rows) != 500 {
		t.Fatalf("got %d rows, want number-of-rows 500", len(rows))
	}
	nulls := 0
	for i, r := range rows {
		if r[0].Kind() != types.BigInt || r[0].Int() != int64(1000+i) {
			t.Fatalf("row %d: sequence id %v", i, r[0])
		}
		if n := r[1].Int(); n < 5 || n > 10 || r[1].Kind() != types.Int {
			t.Fatalf("row %d: n = %v outside [5, 10]", i, r[1])
		}
		if s := r[2].Str(); len(s) != 8 || strings.Trim(s, "0123456789abcdef") != "" {
			t.Fatalf("row %d: s = %q, want 8 hex characters", i, s)
		}
		if x := r[3].Float(); x < -1.5 || x > 2.5 {
			t.Fatalf("row %d: x = %v outside [-1.5, 2.5]", i, x)
		}
		// the fake clock moved while the source throttled, so bound by the clock now
		ts := time.UnixMicro(r[4].Int()).UTC()
		if ts.Before(start.Add(-time.Hour)) || ts.After(clk.Now()) || r[4].Int()%1000 != 0 {
			t.Fatalf("row %d: ts %v outside [start - 1h, now] or finer than ms", i, ts)
		}
		if r[5].IsNull() {
			nulls++
		}
		if p := r[6].Float(); p < 1.5 || p > 3 {
			t.Fatalf("row %d: price %v outside [1.5, 3]", i, r[6])
		}
		if len(r[7].Elems()) != 2 {
			t.Fatalf("row %d: tags %v, want 2 elements", i, r[7])
		}
	}
	// the seeds are fixed, so this count is too; it shows null-rate acts at all
	if nulls == 0 || nulls == len(rows) {
		t.Errorf("null-rate 0.5 gave %d NULLs of %d", nulls, len(rows))
	}
	// a second source of the same table produces the same rows
	again, _ := newDatagenSource(datagenConfig_("events", dgSchema, dgOptions, nil), newFakeClock())
	rows2 := drain(t, again)
	for i := range rows {
		if conntest.RowKey(rows[i]) != conntest.RowKey(rows2[i]) {
			t.Fatalf("row %d differs between runs: %s vs %s", i, conntest.RowKey(rows[i]), conntest.RowKey(rows2[i]))
		}
	}
	// another table name seeds other values
	other, _ := newDatagenSource(datagenConfig_("other", dgSchema, dgOptions, nil), newFakeClock())
	if r := drain(t, other); conntest.RowKey(r[0]) == conntest.RowKey(rows[0]) {
		t.Errorf("tables events and other generated the same first row %s", conntest.RowKey(r[0]))
	}
}

func TestDatagenSequenceEnds(t *testing.T) {
	schema := types.Schema{{Name: "id", Type: types.TypeInt}, {Name: "name", Type: types.TypeString}}
	src, err := newDatagenSource(datagenConfig_("t", schema, map[string]string{
		"fields.id.kind": "sequence", "fields.id.start": "-2", "fields.id.end": "7",
		"fields.name.kind": "sequence", "fields.name.start": "1", "fields.name.end": "1000",
	}, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	rows := drain(t, src)
	if len(rows) != 10 || rows[0][0].Int() != -2 || rows[9][0].Int() != 7 || rows[9][1].Str() != "10" {
		t.Fatalf("got %d rows, first %v last %v; want -2..7 with names 1..10", len(rows), rows[0], rows[len(rows)-1])
	}
	if len(src.Splits()) != 0 {
		t.Errorf("finished source still has splits %v", src.Splits())
	}
	// number-of-rows below the sequence length ends first
	src, _ = newDatagenSource(datagenConfig_("t", schema[:1], map[string]string{
		"number-of-rows": "3", "fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "10",
	}, nil), newFakeClock())
	if rows := drain(t, src); len(rows) != 3 {
		t.Errorf("number-of-rows 3 with a sequence of 10: %d rows", len(rows))
	}
}

func TestDatagenThrottle(t *testing.T) {
	clk := newFakeClock()
	start := clk.Now()
	schema := types.Schema{{Name: "v", Type: types.TypeInt}}
	src, err := newDatagenSource(datagenConfig_("t", schema, map[string]string{"rows-per-second": "100"}, nil), clk)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for total < 1000 {
		batches, err := src.Poll(context.Background(), 250*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			if b.Split != "datagen-0" {
				t.Fatalf("split %q", b.Split)
			}
			total += len(b.Rows)
		}
		// the rate is never exceeded: the first row is due at once, then one per 10ms
		if allowed := 1 + int(clk.Now().Sub(start)/(10*time.Millisecond)); total > allowed {
			t.Fatalf("%d rows after %v at 100 rows/s", total, clk.Now().Sub(start))
		}
	}
	// and it keeps up: 1000 rows need 9.99s of clock time, plus at most one wait
	if elapsed := clk.Now().Sub(start); elapsed > 10*time.Second+250*time.Millisecond {
		t.Errorf("1000 rows at 100 rows/s took %v of clock time", elapsed)
	}
	if !strings.Contains(strings.Join(src.Splits(), ","), "datagen-0") {
		t.Errorf("unbounded source splits %v", src.Splits())
	}
}

func TestDatagenConformance(t *testing.T) {
	// Timestamps follow the clock, which moves as the source throttles, so they are
	// left out: every other column is a function of the row number alone.
	var schema types.Schema
	for _, c := range dgSchema {
		if c.Name != "ts" {
			schema = append(schema, c)
		}
	}
	opts := map[string]string{}
	for k, v := range dgOptions {
		if !strings.HasPrefix(k, "fields.ts.") {
			opts[k] = v
		}
	}
	opts["number-of-rows"] = "2600" // several polls of maxBatch rows
	opts["rows-per-second"] = "1000000"
	conntest.TestBoundedSource(t, func(restored []byte) (connectors.Source, error) {
		return newDatagenSource(datagenConfig_("events", schema, opts, restored), newFakeClock())
	})
}

func TestDatagenRestoreContinuesSequence(t *testing.T) {
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}}
	opts := map[string]string{"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "5000"}
	src, _ := newDatagenSource(datagenConfig_("t", schema, opts, nil), newFakeClock())
	batches, err := src.Poll(context.Background(), time.Second)
	if err != nil || len(batches) != 1 {
		t.Fatal(batches, err)
	}
	last := batches[0].Rows[len(batches[0].Rows)-1][0].Int()
	state, _ := src.Snapshot()
	restored, err := newDatagenSource(datagenConfig_("t", schema, opts, state), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	rest := drain(t, restored)
	if rest[0][0].Int() != last+1 || rest[len(rest)-1][0].Int() != 5000 || int64(len(rest)) != 5000-last {
		t.Errorf("after %d the restored source emitted %v..%v (%d rows)", last, rest[0][0], rest[len(rest)-1][0], len(rest))
	}
}

func TestDatagenOptionErrors(t *testing.T) {
	schema := types.Schema{
		{Name: "id", Type: types.TypeInt},
		{Name: "s", Type: types.Type{Kind: types.Varchar, Length: 5}},
		{Name: "nn", Type: types.TypeInt.WithNotNull(true)},
		{Name: "m", Type: types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &types.TypeInt}},
	}
	cases := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"fields.nope.kind": "random"}, "'fields.nope.kind' names no physical column"},
		{map[string]string{"fields.id.color": "red"}, "unsupported option 'fields.id.color'"},
		{map[string]string{"fields.id.kind": "sequence", "fields.id.start": "1"}, "a sequence needs fields.id.start and fields.id.end"},
		{map[string]string{"fields.id.kind": "sequence", "fields.id.start": "5", "fields.id.end": "1"}, "end is before start"},
		{map[string]string{"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "3000000000"}, "does not fit INT"},
		{map[string]string{"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "2", "fields.id.min": "0"}, "not an option of a sequence"},
		{map[string]string{"fields.id.kind": "shuffle"}, "expected random or sequence"},
		{map[string]string{"fields.id.min": "10", "fields.id.max": "1"}, "max is below min"},
		{map[string]string{"fields.id.min": "x"}, "option 'fields.id.min' = 'x'"},
		{map[string]string{"fields.s.length": "6"}, "longer than VARCHAR(5) allows"},
		{map[string]string{"fields.nn.null-rate": "0.1"}, "column nn is NOT NULL"},
		{map[string]string{"fields.id.null-rate": "2"}, "must be a number from 0 to 1"},
		{map[string]string{"fields.id.start": "1"}, "not an option of a random field"},
		{map[string]string{"rows-per-second": "0"}, "must be positive"},
		{map[string]string{"number-of-rows": "many"}, "not an integer"},
	}
	for _, c := range cases {
		err := datagenFactory.Validate(datagenConfig_("t", schema, c.opts, nil).TableInfo)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %v: %v, want error containing %q", c.opts, err, c.want)
		}
	}
	cfg := datagenConfig_("t", schema, nil, nil)
	cfg.Produce = append(cfg.Produce, connectors.ProducedColumn{Name: "p", Type: types.TypeString, MetadataKey: "partition"})
	if _, err := newDatagenSource(cfg, newFakeClock()); err == nil || !strings.Contains(err.Error(), `datagen source t:`) {
		t.Errorf("metadata column: %v", err)
	}
	for _, bad := range [][]byte{{2, 1}, {1}, {1, 0x80}} {
		if _, err := newDatagenSource(datagenConfig_("t", schema, nil, bad), newFakeClock()); !errors.Is(err, ErrBadState) {
			t.Errorf("restore from %x: %v", bad, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"datagen", "filesystem", "print", "blackhole"} {
		if _, ok := connectors.Lookup(name); !ok {
			t.Errorf("connector %s is not registered", name)
		}
	}
	for _, name := range []string{"json", "csv"} {
		if _, ok := connectors.LookupFormat(name); !ok {
			t.Errorf("format %s is not registered", name)
		}
	}
}
