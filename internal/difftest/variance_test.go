package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// VAR_POP, VAR_SAMP, VARIANCE, STDDEV_POP and STDDEV_SAMP against DuckDB over the OVER
// test's events (NULL keys and values, groups of one row where VAR_SAMP is NULL): in a
// group aggregate, with FILTER, in a window aggregate, and over an updating input (an
// aggregate of per-id maxima, whose changes retract).

var varianceQueries = [][2]string{
	{`SELECT k, VAR_POP(x), VAR_SAMP(x), VARIANCE(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(*) FROM events GROUP BY k`,
		`SELECT k, VAR_POP(x), VAR_SAMP(x), VARIANCE(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(*) FROM events GROUP BY k`},
	{`SELECT k, MOD(id, 7) AS m, STDDEV_SAMP(x) FILTER (WHERE v > 0), VAR_POP(x) FILTER (WHERE v <= 0) FROM events GROUP BY k, MOD(id, 7)`,
		`SELECT k, id % 7 AS m, STDDEV_SAMP(x) FILTER (WHERE v > 0), VAR_POP(x) FILTER (WHERE v <= 0) FROM events GROUP BY k, id % 7`},
	{`SELECT window_start, window_end, k, STDDEV_POP(x), VAR_SAMP(x) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '20' SECOND)) GROUP BY window_start, window_end, k`,
		`SELECT ws, ws + INTERVAL 20 SECOND, k, STDDEV_POP(x), VAR_SAMP(x) FROM (SELECT *, time_bucket(INTERVAL 20 SECOND, ts) AS ws FROM events) GROUP BY ws, k`},
	{`SELECT m, VAR_POP(mx), STDDEV_SAMP(mx), COUNT(*) FROM (SELECT MOD(id, 13) AS g, MOD(id, 3) AS m, MAX(x) AS mx FROM events GROUP BY MOD(id, 13), MOD(id, 3)) GROUP BY m`,
		`SELECT m, VAR_POP(mx), STDDEV_SAMP(mx), COUNT(*) FROM (SELECT id % 13 AS g, id % 3 AS m, MAX(x) AS mx FROM events GROUP BY id % 13, id % 3) GROUP BY m`},
}

func TestVarianceAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 17)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 300+rng.IntN(300))
		for i, q := range varianceQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				want, err := runDuck(ctx, db, d.duck(q[1]))
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, d.duck(q[1]))
				}
				got, err := RunPipesql(ctx, d.ddl()+q[0]+";\n", []int{1, 0}[round])
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q[0])
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ: %s", q[0], diff)
				}
				if len(want) < 3 {
					t.Fatalf("%d rows prove little", len(want))
				}
			})
		}
	}
}
