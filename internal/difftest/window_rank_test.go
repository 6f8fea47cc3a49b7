package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Window Top-N against DuckDB: the top rows of each window of a window aggregate or
// directly of a window table function (WindowRank, insert-only), and window
// deduplication (WindowDeduplicate), over the session test's clicks. Deduplication
// selects the time it keeps by: of rows with equal times, which arrived first is not
// something DuckDB can tell.

var windowRankQueries = [][2]string{
	{`SELECT window_start, k, n, rn FROM (SELECT window_start, k, n, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY n DESC, k) AS rn FROM (SELECT window_start, window_end, k, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k)) WHERE rn <= 2`,
		`SELECT ws, k, n, rn FROM (SELECT ws, k, n, ROW_NUMBER() OVER (PARTITION BY ws ORDER BY n DESC, k NULLS FIRST) AS rn FROM (SELECT time_bucket(INTERVAL 1 MINUTE, ts) AS ws, k, COUNT(*) AS n FROM %s GROUP BY ws, k)) WHERE rn <= 2`},
	{`SELECT window_end, k, s FROM (SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY s) AS r FROM (SELECT window_start, window_end, k, SUM(v) AS s FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k)) WHERE r = 1`,
		`SELECT we, k, s FROM (SELECT *, RANK() OVER (PARTITION BY we ORDER BY s NULLS FIRST) AS r FROM (SELECT w.we, k, SUM(v) AS s FROM %s, (SELECT DISTINCT time_bucket(INTERVAL 30 SECOND, ts) + INTERVAL 30 SECOND + INTERVAL (i * 30) SECOND AS we FROM %s, range(2) AS t(i)) AS w WHERE ts >= w.we - INTERVAL 1 MINUTE AND ts < w.we GROUP BY w.we, k)) WHERE r = 1`},
	// Directly after the window table function.
	{`SELECT window_start, k, v, id, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY v DESC, id) AS rn FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 2`,
		`SELECT ws, k, v, id, rn FROM (SELECT time_bucket(INTERVAL 1 MINUTE, ts) AS ws, k, v, id, ROW_NUMBER() OVER (PARTITION BY time_bucket(INTERVAL 1 MINUTE, ts), k ORDER BY v DESC, id) AS rn FROM %s) WHERE rn <= 2`},
	{`SELECT window_end, id, v FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '30' SECOND)) QUALIFY DENSE_RANK() OVER (PARTITION BY window_start, window_end ORDER BY v) <= 2`,
		`SELECT we, id, v FROM (SELECT time_bucket(INTERVAL 30 SECOND, ts) + INTERVAL 30 SECOND AS we, id, v, DENSE_RANK() OVER (PARTITION BY time_bucket(INTERVAL 30 SECOND, ts) ORDER BY v NULLS FIRST) AS r FROM %s) WHERE r <= 2`},
	{`SELECT window_end, id, v, r FROM (SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS r FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))) WHERE r <= 2`,
		`SELECT we, id, v, r FROM (SELECT we, id, v, RANK() OVER (PARTITION BY we ORDER BY v DESC NULLS LAST) AS r FROM (SELECT time_bucket(INTERVAL 30 SECOND, ts) + INTERVAL 30 SECOND + INTERVAL (i * 30) SECOND AS we, id, v FROM %s, range(2) AS t(i))) WHERE r <= 2`},
	// Window deduplication, keep-first and (QUALIFY) keep-last.
	{`SELECT window_start, k, ts, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts) AS rn FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn = 1`,
		`SELECT time_bucket(INTERVAL 1 MINUTE, ts), k, MIN(ts), 1 FROM %s GROUP BY 1, 2`},
	{`SELECT k, window_end, ts FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '20' SECOND)) QUALIFY ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts DESC) = 1`,
		`SELECT k, time_bucket(INTERVAL 20 SECOND, ts) + INTERVAL 20 SECOND, MAX(ts) FROM %s GROUP BY 1, 2`},
}

func TestWindowTopNAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 15)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		dir := writeSessionData(t, rng, 400+rng.IntN(400))
		src := fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {id: 'BIGINT', k: 'VARCHAR', v: 'INTEGER', ts: 'TIMESTAMP'})", dir)
		for i, q := range windowRankQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				duck := strings.ReplaceAll(q[1], "%s", src)
				want, err := runDuck(ctx, db, duck)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, duck)
				}
				got, err := RunPipesql(ctx, sessionDDL(dir)+q[0]+";\n", []int{1, 0}[round])
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q[0])
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ: %s", q[0], diff)
				}
				if len(want) < 5 {
					t.Fatalf("%d rows prove little", len(want))
				}
			})
		}
	}
}
