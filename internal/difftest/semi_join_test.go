package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// Semi and anti joins against DuckDB: IN (SELECT ...), NOT IN, EXISTS and NOT EXISTS over the
// random orders and customers of the join tests (NULL keys, keys that repeat, keys with
// no partner), compared as the final state of pipesql's changelog (an anti join deletes a
// row when its first match arrives).
var semiJoinQueries = []string{
	`SELECT o.order_id, o.amount FROM orders o WHERE o.customer_id IN (SELECT id FROM customers)`,
	`SELECT o.order_id FROM orders o WHERE o.customer_id IN (SELECT id FROM customers WHERE tier > 2) AND o.amount > 20`,
	`SELECT o.order_id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.tag = o.tag)`,
	`SELECT o.order_id, o.tag FROM orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id)`,
	`SELECT o.order_id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.tier * 20 < o.amount)`,
	`SELECT c.name FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.amount > 90 AND o.tag = c.tag)`,
	`SELECT o.order_id, o.customer_id FROM orders o WHERE o.customer_id NOT IN (SELECT id FROM customers WHERE tier < 3)`,
	`SELECT c.name FROM customers c WHERE c.id NOT IN (SELECT customer_id FROM orders WHERE amount > 95 AND customer_id IS NOT NULL)`,
	`SELECT c.tag, COUNT(*) AS n FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id) GROUP BY c.tag`,
}

func TestSemiJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 14)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeJoinData(t, rng, 300+rng.IntN(400), 40+rng.IntN(80), 1+rng.IntN(4))
		batch := []int{1, 7, 0}[round]
		for i, q := range semiJoinQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				want, err := runDuck(ctx, db, d.duck(q))
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, d.duck(q))
				}
				got, err := RunPipesql(ctx, d.ddl()+q+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q)
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", q, batch, diff)
				}
				if len(want) == 0 {
					t.Fatalf("%s: an empty result proves little", q)
				}
			})
		}
	}
}
