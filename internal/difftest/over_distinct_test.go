package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// DISTINCT in OVER aggregates against DuckDB, over the OVER test's events: each frame's
// distinct values, for ROWS and RANGE frames, bounded and UNBOUNDED, on event and
// processing time, of integers, doubles and strings (k, NULL included, which COUNT
// does not count).

var overDistinctQueries = [][2]string{
	{`SELECT id, COUNT(DISTINCT v) OVER w, SUM(DISTINCT v) OVER w, AVG(DISTINCT x) OVER w, MIN(DISTINCT v) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)`,
		`SELECT id, COUNT(DISTINCT v) OVER w, SUM(DISTINCT v) OVER w, AVG(DISTINCT x) OVER w, MIN(v) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts, id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)`},
	{`SELECT id, COUNT(DISTINCT v) OVER w AS dv, COUNT(DISTINCT k) OVER w AS dk, COUNT(*) OVER w AS n FROM events WINDOW w AS (ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW)`,
		`SELECT id, COUNT(DISTINCT v) OVER w, COUNT(DISTINCT k) OVER w, COUNT(*) OVER w FROM events WINDOW w AS (ORDER BY ts RANGE BETWEEN INTERVAL 5 SECOND PRECEDING AND CURRENT ROW)`},
	{`SELECT id, k, COUNT(DISTINCT v) OVER w, SUM(DISTINCT v) OVER w, MAX(DISTINCT x) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts)`,
		`SELECT id, k, COUNT(DISTINCT v) OVER w, SUM(DISTINCT v) OVER w, MAX(x) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`},
	{`SELECT id, COUNT(DISTINCT k) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS users, SUM(DISTINCT MOD(v, 7)) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM events`,
		`SELECT id, COUNT(DISTINCT k) OVER (ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), SUM(DISTINCT v % 7) OVER (ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM events`},
	// Processing time: frames in arrival order (one file, one reader).
	{`SELECT id, COUNT(DISTINCT v) OVER w, COUNT(DISTINCT k) OVER w FROM events WINDOW w AS (ORDER BY pt ROWS 4 PRECEDING)`,
		`SELECT id, COUNT(DISTINCT v) OVER w, COUNT(DISTINCT k) OVER w FROM events WINDOW w AS (ORDER BY id ROWS 4 PRECEDING)`},
}

func TestOverDistinctAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 18)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 200+rng.IntN(300))
		batch := []int{1, 0}[round]
		for i, q := range overDistinctQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				want, err := runDuck(ctx, db, d.duck(q[1]))
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, d.duck(q[1]))
				}
				got, err := RunPipesql(ctx, d.ddl()+q[0]+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q[0])
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", q[0], batch, diff)
				}
				if len(want) < 100 {
					t.Fatalf("%d rows prove little", len(want))
				}
			})
		}
	}
}
