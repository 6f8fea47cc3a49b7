package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// NULLS FIRST and NULLS LAST against DuckDB: Top-N, SortLimit and the temporal sort with
// LIMIT, ordered by columns that are NULL in about one row in seven (v) or nine (x), each
// null order written against the direction's default, so that the rows kept at the edge of
// the top differ from the default's. Each ORDER BY ends with a unique key (id), so that the
// rows kept are one set.

var nullsOrderQueries = [][2]string{
	{`SELECT id, k, v FROM events QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST, id) <= 3`,
		`SELECT id, k, v FROM events QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST, id) <= 3`},
	{`SELECT id, k, x, r FROM (SELECT id, k, x, RANK() OVER (PARTITION BY k ORDER BY x NULLS LAST, id DESC) AS r FROM events) WHERE r <= 4`,
		`SELECT id, k, x, r FROM (SELECT id, k, x, RANK() OVER (PARTITION BY k ORDER BY x NULLS LAST, id DESC) AS r FROM events) WHERE r <= 4`},
	{`SELECT id, k, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v ASC NULLS FIRST, id) AS rn FROM events) WHERE rn <= 2`,
		`SELECT id, k, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v ASC NULLS FIRST, id) AS rn FROM events) WHERE rn <= 2`},
	// Over an updating input: a group's SUM is NULL while its rows' v all are.
	{`SELECT k, m, s FROM (SELECT k, m, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s DESC NULLS FIRST, m) AS rn FROM (SELECT k, MOD(id, 40) AS m, SUM(v) AS s FROM events GROUP BY k, MOD(id, 40))) WHERE rn <= 2`,
		`SELECT k, m, s FROM (SELECT k, m, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s DESC NULLS FIRST, m) AS rn FROM (SELECT k, id % 40 AS m, SUM(v) AS s FROM events GROUP BY k, id % 40)) WHERE rn <= 2`},
	{`SELECT id, x FROM events ORDER BY x NULLS LAST, id LIMIT 9`,
		`SELECT id, x FROM events ORDER BY x NULLS LAST, id LIMIT 9`},
	{`SELECT id, v FROM events ORDER BY v DESC NULLS FIRST, id DESC LIMIT 12`,
		`SELECT id, v FROM events ORDER BY v DESC NULLS FIRST, id DESC LIMIT 12`},
	// The temporal sort: rows of one second ordered by v, NULLs last, then LIMIT.
	{`SELECT id, ts, v FROM events ORDER BY ts, v NULLS LAST, id LIMIT 40`,
		`SELECT id, ts, v FROM events ORDER BY ts, v NULLS LAST, id LIMIT 40`},
}

func TestNullsOrderAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 21)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 300+rng.IntN(300))
		for i, q := range nullsOrderQueries {
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
