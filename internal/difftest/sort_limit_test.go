package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// ORDER BY ... LIMIT n on a key that is not an ascending time attribute: Flink's SortLimit,
// a Top-N over the whole input whose final state must be DuckDB's first n rows. Over an
// insert-only input, over a GROUP BY (updating: a group's count moves it in and out of the
// top), ordered by an aggregate that is not selected and by an expression. Each ORDER BY
// ends with a unique key, so that the top rows are one set.

var sortLimitQueries = [][2]string{
	{`SELECT id, k, x FROM events ORDER BY x DESC, id LIMIT 7`,
		`SELECT id, k, x FROM events ORDER BY x DESC NULLS LAST, id LIMIT 7`},
	{`SELECT k, COUNT(*) AS n, SUM(v) AS s FROM events GROUP BY k ORDER BY n DESC, k LIMIT 3`,
		`SELECT k, COUNT(*) AS n, SUM(v) AS s FROM events GROUP BY k ORDER BY n DESC, k NULLS FIRST LIMIT 3`},
	{`SELECT MOD(id, 17) AS g, MAX(x) AS mx FROM events GROUP BY MOD(id, 17) ORDER BY COUNT(v) DESC, g LIMIT 5`,
		`SELECT id % 17 AS g, MAX(x) AS mx FROM events GROUP BY id % 17 ORDER BY COUNT(v) DESC, g LIMIT 5`},
	{`SELECT id, v FROM events WHERE v IS NOT NULL ORDER BY v * 3 - id, id LIMIT 4`,
		`SELECT id, v FROM events WHERE v IS NOT NULL ORDER BY v * 3 - id, id LIMIT 4`},
}

func TestSortLimitAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 18)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 300+rng.IntN(300))
		for i, q := range sortLimitQueries {
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
