package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// GROUPING SETS, ROLLUP and CUBE against DuckDB over the OVER test's events (NULL keys
// beside the NULLs of the rolled-up keys, so GROUPING() tells them apart).

var groupingQueries = [][2]string{
	{`SELECT k, MOD(v, 3) AS m, COUNT(*), SUM(v), GROUPING(k), GROUPING_ID(k, MOD(v, 3)) FROM events GROUP BY ROLLUP(k, MOD(v, 3))`,
		`SELECT k, v % 3 AS m, COUNT(*), SUM(v), GROUPING(k), GROUPING(k, v % 3) FROM events GROUP BY ROLLUP(k, v % 3)`},
	{`SELECT k, v > 20 AS big, MAX(x), MIN(v), GROUPING_ID(k, v > 20) FROM events GROUP BY CUBE(k, v > 20)`,
		`SELECT k, v > 20 AS big, MAX(x), MIN(v), GROUPING(k, v > 20) FROM events GROUP BY CUBE(k, v > 20)`},
	{`SELECT k, COUNT(x), AVG(x) FROM events WHERE id % 2 = 0 GROUP BY GROUPING SETS ((k), ())`,
		`SELECT k, COUNT(x), AVG(x) FROM events WHERE id % 2 = 0 GROUP BY GROUPING SETS ((k), ())`},
	{`SELECT k, MOD(v, 2) AS p, COUNT(*) AS n FROM events GROUP BY k, ROLLUP(MOD(v, 2)) HAVING COUNT(*) > 3`,
		`SELECT k, v % 2 AS p, COUNT(*) AS n FROM events GROUP BY k, ROLLUP(v % 2) HAVING COUNT(*) > 3`},
}

func TestGroupingSetsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 16)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 200+rng.IntN(300))
		for i, q := range groupingQueries {
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
