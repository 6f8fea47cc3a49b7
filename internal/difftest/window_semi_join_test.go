package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// Semi and anti window joins against DuckDB: IN, NOT IN, EXISTS and NOT EXISTS over the
// TUMBLE windows of the window join tests, as Flink's documentation writes them (the
// subquery correlated by window_start and window_end). DuckDB runs the same correlated
// subqueries over equal time buckets; its NOT IN is SQL's, NULL when a NULL key is in the
// way, so the null-aware anti join must agree with it.

const wjCorr = `L.window_start = R.window_start AND L.window_end = R.window_end`
const wjBucketCorr = `time_bucket(INTERVAL '10 minutes', o.order_time) = time_bucket(INTERVAL '10 minutes', s.ship_time)`

var windowSemiJoinQueries = []wjQuery{
	{`SELECT L.order_id, L.window_start FROM (SELECT * FROM ` + wjL + `) L WHERE L.k IN (SELECT order_key FROM (SELECT * FROM ` + wjR + `) R WHERE ` + wjCorr + `)`,
		`SELECT o.order_id, time_bucket(INTERVAL '10 minutes', o.order_time) FROM orders o WHERE o.k IN (SELECT s.order_key FROM shipments s WHERE ` + wjBucketCorr + `)`},
	// Most windows have a shipment with a NULL key (and so no row of NOT IN): keep a few.
	{`SELECT L.order_id, L.k FROM (SELECT * FROM ` + wjL + `) L WHERE L.k NOT IN (SELECT order_key FROM (SELECT * FROM ` + wjR + ` WHERE order_key IS NOT NULL OR ship_id % 40 = 0) R WHERE ` + wjCorr + `)`,
		`SELECT o.order_id, o.k FROM orders o WHERE o.k NOT IN (SELECT s.order_key FROM (SELECT * FROM shipments s WHERE s.order_key IS NOT NULL OR s.ship_id % 40 = 0) s WHERE ` + wjBucketCorr + `)`},
	{`SELECT L.order_id FROM ` + wjL + ` L WHERE EXISTS (SELECT * FROM ` + wjR + ` R WHERE L.k = R.order_key AND ` + wjCorr + ` AND R.carrier <> 'c1')`,
		`SELECT o.order_id FROM orders o WHERE EXISTS (SELECT * FROM shipments s WHERE o.k = s.order_key AND ` + wjBucketCorr + ` AND s.carrier <> 'c1')`},
	{`SELECT L.order_id, L.amount FROM ` + wjL + ` L WHERE NOT EXISTS (SELECT * FROM ` + wjR + ` R WHERE R.order_key = L.k AND ` + wjCorr + `)`,
		`SELECT o.order_id, o.amount FROM orders o WHERE NOT EXISTS (SELECT * FROM shipments s WHERE s.order_key = o.k AND ` + wjBucketCorr + `)`},
	// Without a key: the windows that have (have not) a shipment of carrier c3.
	{`SELECT L.order_id FROM ` + wjL + ` L WHERE NOT EXISTS (SELECT * FROM ` + wjR + ` R WHERE ` + wjCorr + ` AND R.carrier = 'c3') AND L.amount > 50`,
		`SELECT o.order_id FROM orders o WHERE NOT EXISTS (SELECT * FROM shipments s WHERE ` + wjBucketCorr + ` AND s.carrier = 'c3') AND o.amount > 50`},
	{`SELECT window_start, COUNT(*) AS n FROM (SELECT * FROM ` + wjL + ` L WHERE L.k IN (SELECT order_key FROM ` + wjR + ` R WHERE ` + wjCorr + `)) GROUP BY window_start`,
		`SELECT time_bucket(INTERVAL '10 minutes', o.order_time) AS ws, COUNT(*) FROM orders o WHERE o.k IN (SELECT s.order_key FROM shipments s WHERE ` + wjBucketCorr + `) GROUP BY ws`},
}

func TestWindowSemiJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 16)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeIntervalData(t, rng, 3000+rng.IntN(2000), 4000+rng.IntN(2000))
		batch := []int{1, 7, 0}[round]
		for i, q := range windowSemiJoinQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				want, err := runDuck(ctx, db, d.duck(q.duck))
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, d.duck(q.duck))
				}
				got, err := RunPipesql(ctx, d.ddl()+q.pipesql+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q.pipesql)
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", q.pipesql, batch, diff)
				}
				if len(want) < 5 {
					t.Fatalf("%s: %d rows prove little", q.pipesql, len(want))
				}
			})
		}
	}
}
