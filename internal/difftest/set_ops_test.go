package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// INTERSECT, EXCEPT, subqueries under OR and lists of tables in FROM against DuckDB
//
// The orders and customers of the join tests (NULL keys and amounts, keys that repeat,
// keys only one side has): each set operation, with and without ALL, over columns with
// NULLs (a set operation compares them as equal), over an updating input, and chained
// (INTERSECT binds tighter than UNION and EXCEPT); IN and [NOT] EXISTS under OR; joins
// written as lists of tables with their condition in WHERE. pipesql's changelog's final state must be DuckDB's result, as
// a multiset: ALL keeps duplicates as many times as the bags say.

var setOpQueries = []string{
	`SELECT customer_id AS k, tag FROM orders INTERSECT SELECT id, tag FROM customers`,
	`SELECT customer_id AS k, tag FROM orders INTERSECT ALL SELECT id, tag FROM customers`,
	`SELECT customer_id AS k, tag FROM orders EXCEPT SELECT id, tag FROM customers`,
	`SELECT customer_id AS k, tag FROM orders EXCEPT ALL SELECT id, tag FROM customers`,
	`SELECT id, tag FROM customers EXCEPT ALL SELECT customer_id, tag FROM orders`,
	`SELECT amount, tag FROM orders INTERSECT ALL SELECT tier * 10, tag FROM customers`,
	`SELECT amount FROM orders WHERE tag = 't0' EXCEPT ALL SELECT amount FROM orders WHERE tag = 't1'`,
	`SELECT amount FROM orders WHERE tag = 't0' INTERSECT ALL SELECT amount FROM orders WHERE tag = 't1' INTERSECT ALL SELECT amount FROM orders WHERE tag = 't2'`,
	`SELECT tag FROM orders UNION ALL SELECT tag FROM customers EXCEPT ALL SELECT tag FROM orders WHERE amount > 50`,
	`SELECT customer_id FROM orders EXCEPT SELECT id FROM customers INTERSECT SELECT id FROM customers WHERE tier > 1`,
	// An updating input: the keys with more than one order, as they come and go.
	`SELECT k FROM (SELECT customer_id AS k, COUNT(*) AS n FROM orders GROUP BY customer_id) WHERE n > 1 INTERSECT ALL SELECT id FROM customers`,
	`SELECT id FROM customers EXCEPT SELECT k FROM (SELECT customer_id AS k, COUNT(*) AS n FROM orders GROUP BY customer_id) WHERE n > 12`,
	`SELECT t, COUNT(*) AS n FROM (SELECT tag AS t, amount FROM orders INTERSECT ALL SELECT tag, tier * 20 FROM customers) GROUP BY t`,
	// Subqueries under OR: a LEFT JOIN with the subquery's distinct keys and a marker.
	`SELECT o.order_id, o.amount FROM orders o WHERE o.customer_id IN (SELECT id FROM customers WHERE tier > 2) OR o.amount > 90`,
	`SELECT o.order_id FROM orders o WHERE o.amount < 30 AND (EXISTS (SELECT * FROM customers c WHERE c.id = o.customer_id AND c.tier = 1) OR NOT EXISTS (SELECT * FROM customers c WHERE c.tag = o.tag AND c.tier = 4))`,
	`SELECT o.order_id, o.tag FROM orders o WHERE (o.tag = 't0' AND o.customer_id IN (SELECT id FROM customers WHERE tag = 't1')) OR (o.tag <> 't0' AND EXISTS (SELECT * FROM customers c WHERE c.id = o.customer_id AND c.tag = o.tag))`,
	`SELECT o.order_id, c.name FROM orders o, customers c WHERE o.customer_id = c.id AND o.amount > 10`,
	`SELECT o.order_id, c.name FROM orders o CROSS JOIN customers c WHERE c.id = o.customer_id AND o.amount > c.tier * 20`,
	`SELECT o.tag, c.name, c2.tier FROM orders o, customers c, customers c2 WHERE c.id = o.customer_id AND c2.id = c.id AND c2.tag = o.tag`,
}

// TestSetOpsAgainstDuckDB runs every query over a few random inputs and batch sizes.
func TestSetOpsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 31)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeJoinData(t, rng, 300+rng.IntN(400), 40+rng.IntN(80), 1+rng.IntN(4))
		batch := []int{1, 7, 0}[round]
		for i, q := range setOpQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				duck := strings.ReplaceAll(d.duck(q), ", customers", ", "+d.duckCustomers())
				want, err := runDuck(ctx, db, duck)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, duck)
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
