package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// FIRST_VALUE, LAST_VALUE, LISTAGG and ARRAY_AGG against DuckDB over the OVER test's
// events, which are one file read in order: arrival order is the order of id, which
// DuckDB's ordered aggregates are given. NULLs are skipped (but by ARRAY_AGG) as Flink
// skips them. In a group aggregate, in HOP windows (whose slices merge), and over an
// updating input (the latest x per id, changed as later rows of an id arrive: the
// aggregates above take values back).

var orderedAggQueries = [][2]string{
	{`SELECT k, FIRST_VALUE(x), LAST_VALUE(x), LISTAGG(CAST(v AS STRING)), LISTAGG(CAST(id AS STRING), '; ') FILTER (WHERE v > 20), CARDINALITY(ARRAY_AGG(v)), ARRAY_AGG(v)[2] FROM events GROUP BY k`,
		`SELECT k, first(x ORDER BY id) FILTER (WHERE x IS NOT NULL), last(x ORDER BY id) FILTER (WHERE x IS NOT NULL), string_agg(CAST(v AS VARCHAR), ',' ORDER BY id), string_agg(CAST(id AS VARCHAR), '; ' ORDER BY id) FILTER (WHERE v > 20), len(list(v ORDER BY id)), list(v ORDER BY id)[2] FROM events GROUP BY k`},
	{`SELECT window_start, window_end, FIRST_VALUE(v) AS f, LAST_VALUE(v) AS l, LISTAGG(k, '') AS ks FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '30' SECOND)) GROUP BY window_start, window_end`,
		`SELECT we - INTERVAL 30 SECOND, we, first(v ORDER BY id) FILTER (WHERE v IS NOT NULL), last(v ORDER BY id) FILTER (WHERE v IS NOT NULL), string_agg(k, '' ORDER BY id) FROM (SELECT *, time_bucket(INTERVAL 10 SECOND, ts) + INTERVAL 10 SECOND + INTERVAL (i * 10) SECOND AS we FROM events, range(3) AS t(i)) GROUP BY we`},
	{`SELECT g, FIRST_VALUE(lx), LAST_VALUE(lx), LISTAGG(CAST(lx AS STRING), '/') FROM (SELECT MOD(id, 5) AS g, k, LAST_VALUE(x) AS lx FROM events GROUP BY MOD(id, 5), k) GROUP BY g`,
		`SELECT g, first(lx ORDER BY o) FILTER (WHERE lx IS NOT NULL), last(lx ORDER BY o) FILTER (WHERE lx IS NOT NULL), string_agg(CAST(lx AS VARCHAR), '/' ORDER BY o) FROM (SELECT id % 5 AS g, k, last(x ORDER BY id) FILTER (WHERE x IS NOT NULL) AS lx, max(id) FILTER (WHERE x IS NOT NULL) AS o FROM events GROUP BY id % 5, k) GROUP BY g`},
}

func TestOrderedAggregatesAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 19)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 300+rng.IntN(300))
		for i, q := range orderedAggQueries {
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
