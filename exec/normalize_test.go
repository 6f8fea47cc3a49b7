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

// TestChangelogNormalize feeds an upsert stream to the operator: +I for a new key,
// -U/+U for a changed one, nothing for an identical upsert or a delete of an unknown
// key, -D of the kept row for a delete (whose other columns are NULL, as a tombstone's).
func TestChangelogNormalize(t *testing.T) {
	in := types.Schema{{Name: "id", Type: types.TypeInt}, {Name: "v", Type: types.TypeString}}
	scan := scanOf("t", in, &memSource{})
	cfg, err := compileNormalize(&planner.ChangelogNormalize{Input: scan, Keys: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg.fresh(), newOpMetrics(0, "changelog normalize"))
	row := func(id int64, v string) types.Row {
		if v == "" {
			return types.Row{types.IntValue(types.Int, id), types.NullValue}
		}
		return types.Row{types.IntValue(types.Int, id), types.StringValue(v)}
	}
	send := func(k connectors.RowKind, r types.Row) {
		t.Helper()
		if err := h.op.processBatch(context.Background(), batch{rows: []types.Row{r}, kinds: []connectors.RowKind{k}}, h.out); err != nil {
			t.Fatal(err)
		}
		if err := h.out.flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	send(connectors.Insert, row(1, "a"))
	send(connectors.UpdateAfter, row(2, "b"))
	send(connectors.UpdateAfter, row(1, "a"))  // the same row again: nothing
	send(connectors.UpdateAfter, row(1, "a2")) // -U/+U
	send(connectors.Delete, row(3, ""))        // an unknown key: nothing
	send(connectors.Delete, row(2, ""))        // -D of the kept row
	send(connectors.Delete, row(2, ""))        // deleted already: nothing
	send(connectors.UpdateAfter, row(2, "c"))  // back again: +I
	got := strings.Join(h.emitted(), " ")
	want := "+I(1, a) +I(2, b) -U(1, a) +U(1, a2) -D(2, b) +I(2, c)"
	if got != want {
		t.Fatalf("emitted %s\nwant    %s", got, want)
	}
}

// TestChangelogNormalizeStopAndResume runs a debezium-json history with repeated
// changes (table.exec.source.cdc-events-duplicate: normalized by the primary key, then
// aggregated), stops it with a savepoint halfway and resumes it: the changelogs of both
// runs end at the aggregate of the final table.
func TestChangelogNormalizeStopAndResume(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 9))
	live := map[int]string{}
	var lines []string
	groups := []string{"a", "b", "c", "d"}
	for i := range 40000 {
		id := rng.IntN(300)
		g := groups[rng.IntN(len(groups))]
		old, had := live[id]
		var line string
		switch {
		case !had:
			line = fmt.Sprintf(`{"before":null,"after":{"id":%d,"g":"%s"},"op":"c"}`, id, g)
			live[id] = g
		case rng.IntN(4) == 0:
			line = fmt.Sprintf(`{"before":{"id":%d,"g":"%s"},"after":null,"op":"d"}`, id, old)
			delete(live, id)
		default:
			line = fmt.Sprintf(`{"before":{"id":%d,"g":"%s"},"after":{"id":%d,"g":"%s"},"op":"u"}`, id, old, id, g)
			live[id] = g
		}
		lines = append(lines, line)
		if rng.IntN(10) == 0 {
			lines = append(lines, line) // delivered twice
		}
		if i%5000 == 4999 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.json", i/5000)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			lines = nil
		}
	}
	counts := map[string]int{}
	for _, g := range live {
		counts[g]++
	}
	var want []string
	for g, n := range counts {
		want = append(want, fmt.Sprintf("(%s, %d)", g, n))
	}
	slices.Sort(want)

	script := func(sets ...string) string {
		var b strings.Builder
		for _, s := range append([]string{"'execution.checkpointing.interval' = '100 ms'", "'table.exec.source.cdc-events-duplicate' = 'true'"}, sets...) {
			fmt.Fprintf(&b, "SET %s;\n", s)
		}
		fmt.Fprintf(&b, "CREATE TABLE t (id INT, g STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');\n", dir)
		b.WriteString("SELECT g, COUNT(*) AS n FROM t GROUP BY g;")
		return b.String()
	}
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	var mu sync.Mutex
	var changes []string
	collect := func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, k.String()+rowString(r))
	}
	j, err := NewJob(planSQL(t, script()), Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "normalize", Collect: collect})
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "changelog normalize", 1, t.TempDir())
	read := j.Metrics().Sources[0].RecordsRead
	j2, err := NewJob(planSQL(t, script("'execution.savepoint.path' = '"+path+"'")),
		Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "normalize", Collect: collect})
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	read2 := j2.Metrics().Sources[0].RecordsRead
	if read == 0 || read2 == 0 {
		t.Fatalf("the first run read %d rows and the second %d: the test needs a stop halfway", read, read2)
	}
	view := changeView{}
	view.apply(t, changes)
	if got := view.String(); got != strings.Join(want, "\n") {
		t.Fatalf("after a stop at %d rows and a resume (%d more):\n%s\nwant\n%s", read, read2, got, strings.Join(want, "\n"))
	}
}
