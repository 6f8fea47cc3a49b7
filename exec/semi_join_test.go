package exec

import (
	"slices"
	"testing"
)

// TestSemiJoinsFromSQL runs IN (SELECT ...), EXISTS and NOT EXISTS through the planner and
// the runtime: a row with two matches is emitted once, an anti join's row is deleted when
// its match arrives, and a NULL key never matches.
func TestSemiJoinsFromSQL(t *testing.T) {
	ddl := joinTables(t)
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"in", `SELECT order_id FROM orders WHERE customer_id IN (SELECT id FROM customers)`, []string{"(1)", "(2)", "(3)"}},
		{"exists with a condition", `SELECT o.order_id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.name <> 'bob') AND o.amount < 100`,
			[]string{"(1)", "(2)"}},
		{"not exists", `SELECT order_id, amount FROM orders o WHERE NOT EXISTS (SELECT * FROM customers c WHERE o.customer_id = c.id)`,
			[]string{"(4, 7)", "(5, 8)", "(6, 9)"}},
		{"not exists with a condition", `SELECT order_id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.name = 'bob')`,
			[]string{"(1)", "(3)", "(4)", "(5)", "(6)"}},
		{"not in", `SELECT order_id FROM orders WHERE customer_id NOT IN (SELECT id FROM customers)`, []string{"(4)", "(6)"}},
		{"not in with a NULL in the subquery", `SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)`, nil},
		{"not in without NULLs in the subquery", `SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders WHERE amount < 8)`,
			[]string{"(bea)", "(bob)", "(cid)"}},
		{"not in an empty subquery", `SELECT order_id FROM orders WHERE customer_id NOT IN (SELECT id FROM customers WHERE name = 'zed')`,
			[]string{"(1)", "(2)", "(3)", "(4)", "(5)", "(6)"}},
		{"customers without orders", `SELECT name FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)`,
			[]string{"(cid)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := finalState(t, runSelect(t, ddl+tc.query+";"))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}
