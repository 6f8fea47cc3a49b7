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

// SESSION windows against DuckDB
//
// Random clicks whose times step by 0 to 7 seconds, with a 5 second gap: sessions end
// and start all the time. Neighbouring rows less than the watermark delay apart are
// often swapped, so that a late-enough row arrives after the two sessions it bridges
// have opened and merges them. DuckDB finds the sessions by gaps and islands over the
// same file: a row starts a session when it is more than a gap after the previous row of
// its key (rows exactly a gap apart are one session: Flink's session windows merge when
// they touch).

func writeSessionData(t *testing.T, rng *rand.Rand, n int) string {
	t.Helper()
	dir := t.TempDir()
	type ev struct {
		ms   int64
		line string
	}
	base := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	var evs []ev
	ms := base
	for i := range n {
		ms += int64(rng.IntN(8)) * 1000
		if rng.IntN(4) == 0 {
			ms += int64(rng.IntN(1000))
		}
		k, v := "null", "null"
		if rng.IntN(10) > 0 {
			k = fmt.Sprintf(`"u%d"`, rng.IntN(3))
		}
		if rng.IntN(8) > 0 {
			v = fmt.Sprint(rng.IntN(100))
		}
		at := time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000")
		evs = append(evs, ev{ms, fmt.Sprintf(`{"id":%d,"k":%s,"v":%s,"ts":"%s"}`, i, k, v, at)})
	}
	for i := 1; i < len(evs); i++ {
		if rng.IntN(4) == 0 && evs[i].ms-evs[i-1].ms < 4000 {
			evs[i], evs[i-1] = evs[i-1], evs[i]
			i++
		}
	}
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.line + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "clicks.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func sessionDDL(dir string) string {
	return fmt.Sprintf(`CREATE TABLE clicks (id BIGINT, k STRING, v INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
}

// duckSessions is DuckDB's sessions of gap seconds by the key columns keys ("" for
// one session over every row), with select computed per session.
func duckSessions(dir, keys, sel string, gap int) string {
	src := fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {id: 'BIGINT', k: 'VARCHAR', v: 'INTEGER', ts: 'TIMESTAMP'})", dir)
	part, group := "", "sid"
	if keys != "" {
		part, group = "PARTITION BY "+keys, keys+", sid"
	}
	return fmt.Sprintf(`WITH o AS (SELECT *, CASE WHEN ts - LAG(ts) OVER (%[1]s ORDER BY ts, id) <= INTERVAL %[2]d SECOND THEN 0 ELSE 1 END AS brk FROM %[3]s),
s AS (SELECT *, SUM(brk) OVER (%[1]s ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS sid FROM o)
SELECT %[4]s FROM s GROUP BY %[5]s`, part, gap, src, sel, group)
}

var sessionQueries = []struct{ flink, keys, duck string }{
	{`SELECT k, window_start, window_end, COUNT(*), SUM(v), MAX(v) FROM TABLE(SESSION(TABLE clicks PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end`,
		"k", `k, MIN(ts), MAX(ts) + INTERVAL 5 SECOND, COUNT(*), SUM(v), MAX(v)`},
	{`SELECT window_start, window_end, window_time, COUNT(v), MIN(v), AVG(CAST(v AS DOUBLE)) FROM TABLE(SESSION(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, window_time`,
		"", `MIN(ts), MAX(ts) + INTERVAL 5 SECOND, MAX(ts) + INTERVAL 5 SECOND - INTERVAL 1 MILLISECOND, COUNT(v), MIN(v), AVG(CAST(v AS DOUBLE))`},
	{`SELECT k, SESSION_START(ts, INTERVAL '5' SECOND), SESSION_END(ts, INTERVAL '5' SECOND), SESSION_ROWTIME(ts, INTERVAL '5' SECOND), COUNT(*), COUNT(DISTINCT v) FROM clicks GROUP BY SESSION(ts, INTERVAL '5' SECOND), k`,
		"k", `k, MIN(ts), MAX(ts) + INTERVAL 5 SECOND, MAX(ts) + INTERVAL 5 SECOND - INTERVAL 1 MILLISECOND, COUNT(*), COUNT(DISTINCT v)`},
	// COUNT(DISTINCT) of strings: value sets, merged when sessions merge.
	{`SELECT window_start, window_end, COUNT(DISTINCT k), COUNT(*) FROM TABLE(SESSION(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end`,
		"", `MIN(ts), MAX(ts) + INTERVAL 5 SECOND, COUNT(DISTINCT k), COUNT(*)`},
	{`SELECT k, window_start, COUNT(DISTINCT CAST(v AS STRING)) FROM TABLE(SESSION(TABLE clicks PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end`,
		"k", `k, MIN(ts), COUNT(DISTINCT CAST(v AS VARCHAR))`},
	{`SELECT k, COUNT(*) AS n FROM clicks WHERE v IS NOT NULL GROUP BY k, SESSION(ts, INTERVAL '5' SECOND) HAVING COUNT(*) > 1`,
		"", ``}, // the DuckDB side is built below: the filter applies before the sessions
}

// TestSessionAgainstDuckDB runs every SESSION query over a few random inputs and batch sizes.
func TestSessionAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 14)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		dir := writeSessionData(t, rng, 300+rng.IntN(400))
		batch := []int{1, 5, 0}[round]
		for i, q := range sessionQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				duck := duckSessions(dir, q.keys, q.duck, 5)
				if q.duck == "" {
					src := fmt.Sprintf("(SELECT * FROM read_json('%s/*.json', format = 'newline_delimited', columns = {id: 'BIGINT', k: 'VARCHAR', v: 'INTEGER', ts: 'TIMESTAMP'}) WHERE v IS NOT NULL)", dir)
					duck = fmt.Sprintf(`WITH o AS (SELECT *, CASE WHEN ts - LAG(ts) OVER (PARTITION BY k ORDER BY ts, id) <= INTERVAL 5 SECOND THEN 0 ELSE 1 END AS brk FROM %s),
s AS (SELECT *, SUM(brk) OVER (PARTITION BY k ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS sid FROM o)
SELECT k, COUNT(*) AS n FROM s GROUP BY k, sid HAVING COUNT(*) > 1`, src)
				}
				want, err := runDuck(ctx, db, duck)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, duck)
				}
				got, err := RunPipesql(ctx, sessionDDL(dir)+q.flink+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q.flink)
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", q.flink, batch, diff)
				}
				if len(want) < 5 {
					t.Fatalf("%s: %d sessions prove little", q.flink, len(want))
				}
			})
		}
	}
}
