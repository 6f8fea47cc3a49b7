package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Joins and UNION ALL against DuckDB
//
// Random orders (JSON, with NULL keys and amounts) and customers (CSV, keys that repeat
// and keys no order has) in several files each, read by both engines; every kind of
// regular join, with and without extra ON conditions, and UNION ALL then aggregate. What
// is compared is the final state of pipesql's changelog (an outer join's null-padded
// rows retracted when their match arrives) with DuckDB's result, as a multiset.

type joinData struct {
	orders, customers string // directories
}

func writeJoinData(t *testing.T, rng *rand.Rand, nOrders, nCustomers, files int) joinData {
	t.Helper()
	d := joinData{orders: t.TempDir(), customers: t.TempDir()}
	keys := nCustomers/2 + 1
	for f := range files {
		var o, c strings.Builder
		for i := f * nOrders / files; i < (f+1)*nOrders/files; i++ {
			key, amount := "null", "null"
			if rng.IntN(10) > 0 {
				key = fmt.Sprint(rng.IntN(keys + keys/3)) // some match no customer
			}
			if rng.IntN(8) > 0 {
				amount = fmt.Sprint(rng.IntN(100))
			}
			fmt.Fprintf(&o, `{"order_id":%d,"customer_id":%s,"amount":%s,"tag":"t%d"}`+"\n", i, key, amount, rng.IntN(3))
		}
		for i := f * nCustomers / files; i < (f+1)*nCustomers/files; i++ {
			fmt.Fprintf(&c, "%d,c%d,t%d,%d\n", rng.IntN(keys), i, rng.IntN(3), rng.IntN(5))
		}
		if err := os.WriteFile(filepath.Join(d.orders, fmt.Sprintf("o%02d.json", f)), []byte(o.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.customers, fmt.Sprintf("c%02d.csv", f)), []byte(c.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d joinData) ddl() string {
	return fmt.Sprintf(`CREATE TABLE orders (order_id BIGINT, customer_id INT, amount INT, tag STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE customers (id BIGINT, name STRING, tag STRING, tier INT)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
`, d.orders, d.customers)
}

// duck turns a query over orders and customers into DuckDB's, reading the same files.
func (d joinData) duck(q string) string {
	q = strings.ReplaceAll(q, "FROM orders", "FROM "+d.duckOrders())
	q = strings.ReplaceAll(q, "JOIN orders", "JOIN "+d.duckOrders())
	q = strings.ReplaceAll(q, "FROM customers", "FROM "+d.duckCustomers())
	q = strings.ReplaceAll(q, "JOIN customers", "JOIN "+d.duckCustomers())
	return q
}

func (d joinData) duckOrders() string {
	return fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {order_id: 'BIGINT', customer_id: 'INTEGER', amount: 'INTEGER', tag: 'VARCHAR'})", d.orders)
}

func (d joinData) duckCustomers() string {
	return fmt.Sprintf("read_csv('%s/*.csv', auto_detect = false, header = false, delim = ',', columns = {id: 'BIGINT', name: 'VARCHAR', tag: 'VARCHAR', tier: 'INTEGER'})", d.customers)
}

var joinQueries = []string{
	`SELECT o.order_id, o.amount, c.name FROM orders o JOIN customers c ON o.customer_id = c.id`,
	`SELECT o.order_id, c.name, c.tier FROM orders o JOIN customers c ON o.customer_id = c.id AND o.tag = c.tag`,
	`SELECT o.order_id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id AND o.amount > c.tier * 20`,
	`SELECT o.order_id, o.amount, c.name FROM orders o LEFT JOIN customers c ON o.customer_id = c.id`,
	`SELECT o.order_id, c.name FROM orders o LEFT JOIN customers c ON o.customer_id = c.id AND c.tier > 2`,
	`SELECT o.order_id, c.name FROM orders o LEFT OUTER JOIN customers c ON o.customer_id = c.id AND o.tag <> c.tag AND o.amount < 50`,
	`SELECT o.order_id, c.id, c.name FROM orders o RIGHT JOIN customers c ON o.customer_id = c.id`,
	`SELECT o.order_id, c.name FROM orders o RIGHT JOIN customers c ON o.customer_id = c.id AND o.amount > 30`,
	`SELECT o.order_id, o.customer_id, c.id, c.name FROM orders o FULL JOIN customers c ON o.customer_id = c.id`,
	`SELECT o.order_id, c.name FROM orders o FULL OUTER JOIN customers c ON o.customer_id = c.id AND o.tag = c.tag AND c.tier <> 1`,
	`SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON c.id = o.customer_id AND o.amount IS NOT NULL`,
	`SELECT k, COUNT(*) AS n FROM (SELECT customer_id AS k FROM orders UNION ALL SELECT id AS k FROM customers) GROUP BY k`,
	`SELECT t, COUNT(*) AS n, SUM(v) AS s FROM (SELECT tag AS t, amount AS v FROM orders UNION ALL SELECT tag AS t, tier AS v FROM customers UNION ALL SELECT tag AS t, CAST(order_id AS INT) AS v FROM orders WHERE amount > 90) GROUP BY t`,
	`SELECT o.tag, c.name FROM orders o JOIN customers c ON o.customer_id = c.id JOIN customers c2 ON c2.id = c.id AND c2.tier = 0`,
}

// TestJoinsAgainstDuckDB runs every join query over a few random inputs and batch sizes.
func TestJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 12)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeJoinData(t, rng, 300+rng.IntN(400), 40+rng.IntN(80), 1+rng.IntN(4))
		batch := []int{1, 7, 0}[round]
		for i, q := range joinQueries {
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
