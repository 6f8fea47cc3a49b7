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

	_ "github.com/pipesql/pipesql/connectors/builtin"
	_ "github.com/pipesql/pipesql/connectors/formats"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// planSQL plans the last statement of script after applying the others.
func planSQL(t *testing.T, script string) *planner.Program {
	t.Helper()
	stmts, err := parser.ParseScript("test.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// TestDailyActiveUsersEndToEnd runs the DAU query from SQL over JSON files through the
// planner, the real filesystem connector and the runtime, with watermarks every
// millisecond on the wall clock, and compares the result with a map-of-sets count.
func TestDailyActiveUsersEndToEnd(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	apps := []string{"shop", "news", "maps"}
	truth := map[string]map[string]bool{} // "day,app" -> users
	start := time.Date(2024, 3, 9, 12, 0, 0, 0, time.UTC)
	const files, perFile = 4, 5000
	for f := range files {
		// Like rolled log files: each covers the next 18 hours, in order, with events up
		// to 4 s out of order (less than the 5 s watermark delay, so none is late).
		var b strings.Builder
		base := start.Add(time.Duration(f) * 18 * time.Hour)
		for i := range perFile {
			at := base.Add(time.Duration(i) * 18 * time.Hour / perFile).Add(-time.Duration(rng.IntN(4000)) * time.Millisecond)
			if at.Before(start) {
				at = start
			}
			app := apps[rng.IntN(len(apps))]
			user := fmt.Sprintf("u-%05d", rng.IntN(3000))
			fmt.Fprintf(&b, `{"app":%q,"user_id":%q,"event_time":%d}`+"\n", app, user, at.UnixMilli())
			key := at.In(shanghai).Format("2006-01-02") + "," + app
			if truth[key] == nil {
				truth[key] = map[string]bool{}
			}
			truth[key][user] = true
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.json", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for key, users := range truth {
		want = append(want, fmt.Sprintf("%s,%d", key, len(users)))
	}
	slices.Sort(want)

	prog := planSQL(t, fmt.Sprintf(`
SET 'table.local-time-zone' = 'Asia/Shanghai';
SET 'pipeline.auto-watermark-interval' = '1 ms';
CREATE TABLE events (
  app STRING,
  user_id STRING,
  event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd') AS `+"`day`"+`, app, COUNT(DISTINCT user_id) AS dau
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
`, dir))
	var mu sync.Mutex
	var got []string
	j, err := NewJob(prog, Options{BatchSize: 100, Collect: func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		if k != connectors.Insert {
			t.Errorf("window aggregate emitted %s", k)
		}
		got = append(got, fmt.Sprintf("%s,%s,%s", r[0], r[1], r[2]))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range j.Metrics().Operators {
		if m.LateDropped != 0 || m.BadRecords != 0 {
			t.Fatalf("operator %s dropped %d late and %d bad rows, want none", m.Name, m.LateDropped, m.BadRecords)
		}
	}
}
