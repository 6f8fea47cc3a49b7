package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// Window joins against DuckDB: TUMBLE windows of the interval join tests' orders and
// shipments (in time order but for swaps within the watermark delay, so no row is late)
// joined per window and key. A row is in one tumbling window, so DuckDB's answer is the
// plain join on equal time buckets, outer joins included.

type wjQuery struct{ pipesql, duck string }

const wjL = `TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' MINUTE))`
const wjR = `TABLE(TUMBLE(TABLE shipments, DESCRIPTOR(ship_time), INTERVAL '10' MINUTE))`
const wjOn = `L.window_start = R.window_start AND L.window_end = R.window_end`
const wjBuckets = `time_bucket(INTERVAL '10 minutes', o.order_time) = time_bucket(INTERVAL '10 minutes', s.ship_time)`

var windowJoinQueries = []wjQuery{
	{`SELECT L.order_id, R.ship_id, L.window_start FROM ` + wjL + ` L JOIN ` + wjR + ` R ON ` + wjOn + ` AND L.k = R.order_key`,
		`SELECT o.order_id, s.ship_id, time_bucket(INTERVAL '10 minutes', o.order_time) FROM orders o JOIN shipments s ON ` + wjBuckets + ` AND o.k = s.order_key`},
	{`SELECT L.order_id, R.ship_id FROM ` + wjL + ` L LEFT JOIN ` + wjR + ` R ON ` + wjOn + ` AND L.k = R.order_key AND R.carrier <> 'c1'`,
		`SELECT o.order_id, s.ship_id FROM orders o LEFT JOIN shipments s ON ` + wjBuckets + ` AND o.k = s.order_key AND s.carrier <> 'c1'`},
	{`SELECT L.order_id, R.ship_id FROM ` + wjL + ` L RIGHT JOIN ` + wjR + ` R ON ` + wjOn + ` AND L.k = R.order_key`,
		`SELECT o.order_id, s.ship_id FROM orders o RIGHT JOIN shipments s ON ` + wjBuckets + ` AND o.k = s.order_key`},
	{`SELECT L.order_id, R.ship_id FROM ` + wjL + ` L FULL JOIN ` + wjR + ` R ON ` + wjOn + ` AND L.k = R.order_key AND L.amount > 30`,
		`SELECT o.order_id, s.ship_id FROM orders o FULL JOIN shipments s ON ` + wjBuckets + ` AND o.k = s.order_key AND o.amount > 30`},
	{`SELECT L.window_start, COUNT(*) AS n FROM (SELECT * FROM ` + wjL + ` WHERE amount > 97) L JOIN (SELECT * FROM ` + wjR + ` WHERE carrier = 'c2') R ON ` + wjOn + ` GROUP BY L.window_start`,
		`SELECT time_bucket(INTERVAL '10 minutes', o.order_time) AS ws, COUNT(*) AS n FROM (SELECT * FROM orders o WHERE amount > 97) o JOIN (SELECT * FROM shipments s WHERE carrier = 'c2') s ON ` + wjBuckets + ` GROUP BY ws`},
}

func TestWindowJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 15)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeIntervalData(t, rng, 3000+rng.IntN(2000), 4000+rng.IntN(2000))
		batch := []int{1, 7, 0}[round]
		for i, q := range windowJoinQueries {
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
