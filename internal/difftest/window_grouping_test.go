package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// GROUPING SETS, ROLLUP and CUBE on window aggregates against DuckDB, over the session
// test's clicks with rows inserted late in the file that are late for every window
// they belong to: the window aggregate drops them, and DuckDB leaves them out. Each window
// gets one row per group of each set, the ROLLUP and () sets a total row per window.

var windowGroupingQueries = [][2]string{
	{`SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, GROUPING SETS ((k), ())`,
		`SELECT ws, ws + INTERVAL 1 MINUTE, k, COUNT(*), SUM(v) FROM (SELECT *, time_bucket(INTERVAL 1 MINUTE, ts) AS ws FROM %s) GROUP BY GROUPING SETS ((ws, k), (ws))`},
	{`SELECT window_start, k, MOD(v, 2) AS p, COUNT(v) AS n, MAX(v) AS mx, GROUPING(k) AS gk, GROUPING_ID(k, MOD(v, 2)) AS gid FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, ROLLUP(k, MOD(v, 2))`,
		`SELECT we - INTERVAL 1 MINUTE, k, v % 2 AS p, COUNT(v), MAX(v), GROUPING(k), GROUPING(k, v % 2) FROM (SELECT *, time_bucket(INTERVAL 30 SECOND, ts) + INTERVAL 30 SECOND + INTERVAL (i * 30) SECOND AS we FROM %s, range(2) AS t(i)) GROUP BY we, ROLLUP(k, v % 2)`},
	{`SELECT window_end, k, v > 50 AS big, COUNT(*) AS n, MIN(v) AS mn FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '1' MINUTE)) WHERE id % 3 <> 0 GROUP BY window_start, window_end, CUBE(k, v > 50) HAVING COUNT(*) > 1`,
		`SELECT we, k, v > 50 AS big, COUNT(*), MIN(v) FROM (SELECT *, time_bucket(INTERVAL 1 MINUTE, ts) + INTERVAL (j * 20) SECOND AS we FROM %s, range(1, 4) AS t(j)) WHERE ts < we AND id % 3 <> 0 GROUP BY we, CUBE(k, v > 50) HAVING COUNT(*) > 1`},
	{`SELECT window_start, COUNT(DISTINCT k) AS users, COUNT(*) AS n, k FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) GROUP BY window_start, window_end, ROLLUP(k)`,
		`SELECT ws, COUNT(DISTINCT k), COUNT(*), k FROM (SELECT *, time_bucket(INTERVAL 2 MINUTE, ts) AS ws FROM %s) GROUP BY ws, ROLLUP(k)`},
}

// insertLateClicks inserts into dir's clicks.json, after its first 1100 rows, rows (ids
// from 1000000) in the first five minutes of the clicks. The filesystem source reads at
// most 1024 rows per poll and emits a watermark after each, so by then the watermark is
// far past their windows, whatever the batch size.
func insertLateClicks(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	path := filepath.Join(dir, "clicks.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	base := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range 20 {
		at := base.Add(time.Duration(rng.IntN(300_000)) * time.Millisecond).Format("2006-01-02 15:04:05.000")
		late := fmt.Sprintf(`{"id":%d,"k":"u%d","v":%d,"ts":"%s"}`+"\n", 1_000_000+i, rng.IntN(3), rng.IntN(100), at)
		pos := 1100 + rng.IntN(len(lines)-1100)
		lines = append(lines[:pos], append([]string{late}, lines[pos:]...)...)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWindowGroupingSetsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 17)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		dir := writeSessionData(t, rng, 1200+rng.IntN(400))
		insertLateClicks(t, rng, dir)
		src := fmt.Sprintf("(SELECT * FROM read_json('%s/clicks.json', format = 'newline_delimited', columns = {id: 'BIGINT', k: 'VARCHAR', v: 'INTEGER', ts: 'TIMESTAMP'}) WHERE id < 1000000)", dir)
		for i, q := range windowGroupingQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				duck := strings.ReplaceAll(q[1], "%s", src)
				want, err := runDuck(ctx, db, duck)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, duck)
				}
				got, err := RunPipesql(ctx, sessionDDL(dir)+q[0]+";\n", []int{1, 16}[round])
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q[0])
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ: %s", q[0], diff)
				}
				if len(want) < 20 {
					t.Fatalf("%d rows prove little", len(want))
				}
			})
		}
	}
}
