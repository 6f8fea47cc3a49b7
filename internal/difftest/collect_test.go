package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// COLLECT against DuckDB through what DuckDB can compare: the CARDINALITY of a group's
// multiset is COUNT of its non-NULL values, of COLLECT(DISTINCT) COUNT(DISTINCT), also
// over an updating input (an aggregate of an aggregate), where the multiset retracts.

var collectQueries = [][2]string{
	{`SELECT k, CARDINALITY(COLLECT(v)), CARDINALITY(COLLECT(DISTINCT v)), CARDINALITY(COLLECT(k)) FROM events GROUP BY k`,
		`SELECT k, COUNT(v), COUNT(DISTINCT v), COUNT(k) FROM events GROUP BY k`},
	{`SELECT k, CARDINALITY(COLLECT(n)) AS c, CARDINALITY(COLLECT(DISTINCT n)) AS d FROM (SELECT k, MOD(id, 7) AS g, COUNT(*) AS n FROM events GROUP BY k, MOD(id, 7)) GROUP BY k`,
		`SELECT k, COUNT(n), COUNT(DISTINCT n) FROM (SELECT k, id % 7 AS g, COUNT(*) AS n FROM events GROUP BY k, id % 7) GROUP BY k`},
	{`SELECT window_start, CARDINALITY(COLLECT(DISTINCT k)) AS users, CARDINALITY(COLLECT(x)) AS xs FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '30' SECOND)) GROUP BY window_start, window_end`,
		`SELECT time_bucket(INTERVAL 30 SECOND, ts) AS ws, COUNT(DISTINCT k), COUNT(x) FROM events GROUP BY ws`},
}

func TestCollectAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 19)
	for round := range 2 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 200+rng.IntN(300))
		for i, q := range collectQueries {
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
