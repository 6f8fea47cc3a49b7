package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// MULTISET: COLLECT per window and key, CARDINALITY, and MULTISET<STRING> columns read
// from JSON objects of counts (Flink's json format), checked against counts made in Go
// from the same rows.

type msEvent struct {
	k, tag string // tag "" is NULL
	tags   map[string]int64
	ms     int64
}

func writeMultisetEvents(t *testing.T, rng *rand.Rand, n int) (string, []msEvent) {
	t.Helper()
	dir := t.TempDir()
	base := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	var b strings.Builder
	var evs []msEvent
	for i := range n {
		e := msEvent{k: fmt.Sprintf("k%d", rng.IntN(3)), ms: base + int64(i)*700}
		tag, tags := "null", "null"
		if rng.IntN(6) > 0 {
			e.tag = fmt.Sprintf("t%d", rng.IntN(4))
			tag = `"` + e.tag + `"`
		}
		if rng.IntN(5) > 0 {
			e.tags = map[string]int64{}
			var parts []string
			for j := range rng.IntN(3) {
				c := int64(1 + rng.IntN(3))
				e.tags[fmt.Sprintf("x%d", j)] = c
				parts = append(parts, fmt.Sprintf(`"x%d":%d`, j, c))
			}
			tags = "{" + strings.Join(parts, ",") + "}"
		}
		at := time.UnixMilli(e.ms).UTC().Format("2006-01-02 15:04:05.000")
		fmt.Fprintf(&b, `{"id":%d,"k":"%s","tag":%s,"tags":%s,"ts":"%s"}`+"\n", i, e.k, tag, tags, at)
		evs = append(evs, e)
	}
	if err := os.WriteFile(filepath.Join(dir, "ev.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, evs
}

func multisetDDL(dir string) string {
	return fmt.Sprintf(`CREATE TABLE ev (id BIGINT, k STRING, tag STRING, tags MULTISET<STRING>, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
}

func runRows(t *testing.T, script string) []types.Row {
	t.Helper()
	var mu sync.Mutex
	var got []types.Row
	j, err := NewJob(planSQL(t, script), Options{BatchSize: 7, Collect: func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		if k != connectors.Insert {
			t.Errorf("got %s, want an insert-only result", k)
		}
		got = append(got, r)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return got
}

func counts(v types.Value) map[string]int64 {
	m := map[string]int64{}
	for _, e := range v.Entries() {
		m[e.Key.String()] += e.Value.Int()
	}
	return m
}

func TestCollectPerWindowAgainstGo(t *testing.T) {
	dir, evs := writeMultisetEvents(t, rand.New(rand.NewPCG(7, 1)), 600)
	got := runRows(t, multisetDDL(dir)+`SELECT window_start, k, COLLECT(tag) AS c, COLLECT(DISTINCT tag) AS d, CARDINALITY(COLLECT(tag)) AS n
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k;`)
	type key struct {
		win int64
		k   string
	}
	want := map[key]map[string]int64{}
	for _, e := range evs {
		kk := key{e.ms / 60000 * 60000, e.k}
		if want[kk] == nil {
			want[kk] = map[string]int64{}
		}
		if e.tag != "" {
			want[kk][e.tag]++
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for _, r := range got {
		kk := key{r[0].Time().UnixMilli(), r[1].Str()}
		w, ok := want[kk]
		if !ok {
			t.Fatalf("unexpected group %v", kk)
		}
		if c := counts(r[2]); !maps.Equal(c, w) {
			t.Errorf("%v: COLLECT = %v, want %v", kk, c, w)
		}
		d := counts(r[3])
		for v, n := range d {
			if n != 1 || w[v] == 0 {
				t.Errorf("%v: COLLECT(DISTINCT) has %s %d times", kk, v, n)
			}
		}
		if len(d) != len(w) {
			t.Errorf("%v: COLLECT(DISTINCT) has %d values, want %d", kk, len(d), len(w))
		}
		n := int64(0)
		for _, c := range w {
			n += c
		}
		if r[4].Int() != n {
			t.Errorf("%v: CARDINALITY = %d, want %d", kk, r[4].Int(), n)
		}
	}
}

func TestMultisetColumnFromJSON(t *testing.T) {
	dir, evs := writeMultisetEvents(t, rand.New(rand.NewPCG(7, 2)), 200)
	got := runRows(t, multisetDDL(dir)+`SELECT id, tags, CARDINALITY(tags) FROM ev;`)
	if len(got) != len(evs) {
		t.Fatalf("%d rows, want %d", len(got), len(evs))
	}
	for _, r := range got {
		e := evs[r[0].Int()]
		if e.tags == nil {
			if !r[1].IsNull() || !r[2].IsNull() {
				t.Errorf("row %d: %v, %v from a NULL multiset", r[0].Int(), r[1], r[2])
			}
			continue
		}
		n := int64(0)
		for _, c := range e.tags {
			n += c
		}
		if c := counts(r[1]); !maps.Equal(c, e.tags) || r[2].Int() != n {
			t.Errorf("row %d: %v (cardinality %v), want %v (%d)", r[0].Int(), c, r[2], e.tags, n)
		}
	}
	// Printed as Flink prints a multiset, a map of each element to its count.
	ms := types.MultisetType(types.TypeString)
	v := types.MapValue([]types.MapEntry{{Key: types.StringValue("a"), Value: types.IntValue(types.Int, 2)}, {Key: types.StringValue("b"), Value: types.IntValue(types.Int, 1)}})
	if s := string(formats.AppendPrintValue(nil, v, ms)); s != "{a=2, b=1}" {
		t.Errorf("printed %s, want {a=2, b=1}", s)
	}
}

// TestMultisetToJSON writes a MULTISET column to a JSON
// filesystem sink: each is an object of counts, as Flink's json format writes it.
func TestMultisetToJSON(t *testing.T) {
	dir, evs := writeMultisetEvents(t, rand.New(rand.NewPCG(7, 3)), 100)
	out := t.TempDir()
	script := multisetDDL(dir) + fmt.Sprintf(`CREATE TABLE out_ms (id BIGINT, tags MULTISET<STRING>)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out_ms SELECT id, tags FROM ev;
`, out)
	j, err := NewJob(planSQL(t, script), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" || strings.HasPrefix(filepath.Base(f), ".") {
				continue
			}
			var rec struct {
				ID   int64            `json:"id"`
				Tags map[string]int64 `json:"tags"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if want := evs[rec.ID].tags; !maps.Equal(rec.Tags, want) || (want == nil) != strings.Contains(line, `"tags":null`) {
				t.Errorf("%s: tags %v, want %v", line, rec.Tags, want)
			}
			n++
		}
	}
	if n != len(evs) {
		t.Fatalf("%d rows written, want %d", n, len(evs))
	}
}

// TestUnnestMultiset: UNNEST of a multiset gives each element as often as its count, as
// Flink's does; an empty or NULL multiset gives no row.
func TestUnnestMultiset(t *testing.T) {
	dir, evs := writeMultisetEvents(t, rand.New(rand.NewPCG(7, 4)), 200)
	got := runRows(t, multisetDDL(dir)+`SELECT id, x FROM ev CROSS JOIN UNNEST(tags) AS u(x);`)
	gotCounts := map[int64]map[string]int64{}
	for _, r := range got {
		id := r[0].Int()
		if gotCounts[id] == nil {
			gotCounts[id] = map[string]int64{}
		}
		gotCounts[id][r[1].Str()]++
	}
	rows := 0
	for id, e := range evs {
		var want map[string]int64
		for x, n := range e.tags {
			if want == nil {
				want = map[string]int64{}
			}
			want[x] = n
			rows += int(n)
		}
		if !maps.Equal(gotCounts[int64(id)], want) {
			t.Errorf("row %d: unnested %v, want %v", id, gotCounts[int64(id)], want)
		}
	}
	if len(got) != rows || rows == 0 {
		t.Fatalf("%d rows, want %d", len(got), rows)
	}
}
