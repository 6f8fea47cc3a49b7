package difftest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Temporal joins against a versioned view, and of an updating left input
//
// currency_rates is an append-only JSON history of rates, out of order per currency
// within its watermark's delay; versioned_rates is Flink's documented versioned view over
// it (ROW_NUMBER() ... ORDER BY update_time DESC = 1), whose keep-last deduplication
// ignores a row older than the one it keeps. DuckDB computes the same versions from the
// file's order (a row is a version when its time is after every earlier row's of its
// currency) and joins them with ASOF JOIN. orders_cdc is a debezium-json history of
// orders (inserts, updates of the amount or the currency, deletes, each change on time
// for the left watermark); its final rows joined ASOF are the truth for the join of the
// changelog, which must retract what each update and delete replaces.

func TestVersionedViewJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	rng := rand.New(rand.NewPCG(seed(t, 23), 5))
	dir := t.TempDir()
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	stamp := func(ms int64) string {
		return base.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02 15:04:05.000")
	}
	marshal := func(m any) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type order struct {
		id       int
		currency any
		amount   int
		ms       int64
	}
	var rates, orders, cdc []string
	used := map[string]bool{} // currency and time of each rate: no two alike
	live := map[int]order{}
	var ids []int // of the orders, in creation order
	maxOrder := int64(-1 << 62)
	id := 0
	for i := range 2000 {
		T := int64(i) * 1000
		if rng.IntN(10) < 3 {
			k := fmt.Sprintf("c%d", rng.IntN(5))
			ms := T - int64(rng.IntN(10_000)) // behind the newest by less than the 15 s delay
			for used[fmt.Sprint(k, ms)] {
				ms++
			}
			used[fmt.Sprint(k, ms)] = true
			rates = append(rates, marshal(map[string]any{"seq": len(rates), "currency": k, "rate": float64(rng.IntN(50)) / 10, "update_time": stamp(ms)}))
		}
		if rng.IntN(10) < 7 {
			var cur any
			if rng.IntN(12) > 0 {
				cur = fmt.Sprintf("c%d", rng.IntN(6)) // c5 has no rate
			}
			o := order{id: id, currency: cur, amount: rng.IntN(100), ms: T + int64(rng.IntN(4000))}
			id++
			orders = append(orders, fmt.Sprintf(`{"order_id":%d,"currency":%s,"amount":%d,"order_time":"%s"}`, o.id, marshal(o.currency), o.amount, stamp(o.ms)))
			cdc = append(cdc, marshal(map[string]any{"before": nil, "after": orderRow(o.id, o.currency, o.amount, stamp(o.ms)), "op": "c"}))
			live[o.id] = o
			ids = append(ids, o.id)
			maxOrder = max(maxOrder, o.ms)
		}
		// Change an order still ahead of the orders' watermark (the newest time - 5 s).
		for n := len(ids) - 1; n >= 0 && n >= len(ids)-8; n-- {
			o, ok := live[ids[n]]
			if !ok || o.ms <= maxOrder-4000 || rng.IntN(3) > 0 {
				continue
			}
			before := orderRow(o.id, o.currency, o.amount, stamp(o.ms))
			if rng.IntN(4) == 0 {
				cdc = append(cdc, marshal(map[string]any{"before": before, "after": nil, "op": "d"}))
				delete(live, o.id)
				break
			}
			if rng.IntN(2) == 0 {
				o.currency = fmt.Sprintf("c%d", rng.IntN(6))
			} else {
				o.amount = rng.IntN(100)
			}
			cdc = append(cdc, marshal(map[string]any{"before": before, "after": orderRow(o.id, o.currency, o.amount, stamp(o.ms)), "op": "u"}))
			live[o.id] = o
			break
		}
	}
	var final []string
	for _, i := range ids {
		o, ok := live[i]
		if !ok {
			continue
		}
		final = append(final, fmt.Sprintf(`{"order_id":%d,"currency":%s,"amount":%d,"order_time":"%s"}`, o.id, marshal(o.currency), o.amount, stamp(o.ms)))
	}
	for name, lines := range map[string][]string{"rates": rates, "orders": orders, "cdc": cdc, "final": final} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "part.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ddl := fmt.Sprintf(`CREATE TABLE orders (order_id BIGINT, currency STRING, amount INT, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE orders_cdc (order_id BIGINT, currency STRING, amount INT, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND, PRIMARY KEY (order_id) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE currency_rates (seq INT, currency STRING, rate DOUBLE, update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time - INTERVAL '15' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE VIEW versioned_rates AS
SELECT currency, rate, update_time
  FROM (
     SELECT *,
     ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) AS rownum
     FROM currency_rates)
WHERE rownum = 1;
`, filepath.Join(dir, "orders"), filepath.Join(dir, "cdc"), filepath.Join(dir, "rates"))
	ordersCols := "columns = {order_id: 'BIGINT', currency: 'VARCHAR', amount: 'INTEGER', order_time: 'TIMESTAMP'}"
	duckOrders := fmt.Sprintf("read_json('%s', format = 'newline_delimited', %s)", filepath.Join(dir, "orders", "part.json"), ordersCols)
	duckFinal := fmt.Sprintf("read_json('%s', format = 'newline_delimited', %s)", filepath.Join(dir, "final", "part.json"), ordersCols)
	duckVersions := fmt.Sprintf(`(SELECT currency, rate, update_time FROM (
  SELECT *, max(update_time) OVER (PARTITION BY currency ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS newest
  FROM read_json('%s', format = 'newline_delimited', columns = {seq: 'INTEGER', currency: 'VARCHAR', rate: 'DOUBLE', update_time: 'TIMESTAMP'}))
WHERE newest IS NULL OR update_time > newest)`, filepath.Join(dir, "rates", "part.json"))
	for _, c := range [][2]string{
		{`SELECT o.order_id, o.amount * r.rate AS converted FROM orders AS o JOIN versioned_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency`,
			`SELECT o.order_id, o.amount * v.rate AS converted FROM {o} o ASOF JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.update_time`},
		{`SELECT o.order_id, r.rate, r.update_time FROM orders AS o LEFT JOIN versioned_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency AND r.rate > 2`,
			`SELECT o.order_id, CASE WHEN v.rate > 2 THEN v.rate END AS rate, CASE WHEN v.rate > 2 THEN v.update_time END AS update_time FROM {o} o ASOF LEFT JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.update_time`},
		{`SELECT r.currency, COUNT(*) AS n, SUM(o.amount * r.rate) AS total FROM orders AS o JOIN versioned_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency GROUP BY r.currency`,
			`SELECT v.currency, COUNT(*) AS n, SUM(o.amount * v.rate) AS total FROM {o} o ASOF JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.update_time GROUP BY v.currency`},
		// The updating left input: the join of the changelog ends as the join of its final rows.
		{`SELECT o.order_id, o.currency, r.rate FROM orders_cdc AS o LEFT JOIN versioned_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency`,
			`SELECT o.order_id, o.currency, v.rate FROM {f} o ASOF LEFT JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.update_time`},
		{`SELECT r.currency, COUNT(*) AS n, SUM(o.amount) AS amount FROM orders_cdc AS o JOIN versioned_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency WHERE r.rate < 3 GROUP BY r.currency`,
			`SELECT v.currency, COUNT(*) AS n, SUM(o.amount) AS amount FROM {f} o ASOF JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.update_time WHERE v.rate < 3 GROUP BY v.currency`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		dq := strings.NewReplacer("{o}", duckOrders, "{f}", duckFinal, "{v}", duckVersions).Replace(c[1])
		want, err := runDuck(ctx, db, dq)
		if err != nil {
			cancel()
			t.Fatalf("DuckDB: %v\n%s", err, dq)
		}
		got, err := RunPipesql(ctx, ddl+c[0]+";\n", 16)
		cancel()
		if err != nil {
			t.Fatalf("pipesql: %v\n%s", err, c[0])
		}
		if diff := Diff(got, want); diff != "" {
			t.Fatalf("%s\nresults differ: %s", c[0], diff)
		}
		if len(want) == 0 {
			t.Fatalf("%s: an empty result proves little", c[0])
		}
	}
}

func orderRow(id int, currency any, amount int, ts string) map[string]any {
	return map[string]any{"order_id": id, "currency": currency, "amount": amount, "order_time": ts}
}

// TestFileLookupCDCAgainstDuckDB: a lookup join against a filesystem table in
// debezium-json looks keys up in the table as its changes leave it; DuckDB joins the
// final rows.
func TestFileLookupCDCAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	rng := rand.New(rand.NewPCG(seed(t, 31), 9))
	dir := t.TempDir()
	marshal := func(m any) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	live := map[int]string{}
	var changes, final, orders []string
	for range 600 {
		id := rng.IntN(80)
		name := fmt.Sprintf("n%d", rng.IntN(1000))
		old, ok := live[id]
		switch {
		case !ok:
			changes = append(changes, marshal(map[string]any{"before": nil, "after": map[string]any{"id": id, "name": name}, "op": "c"}))
			live[id] = name
		case rng.IntN(3) > 0:
			changes = append(changes, marshal(map[string]any{"before": map[string]any{"id": id, "name": old}, "after": map[string]any{"id": id, "name": name}, "op": "u"}))
			live[id] = name
		default:
			changes = append(changes, marshal(map[string]any{"before": map[string]any{"id": id, "name": old}, "after": nil, "op": "d"}))
			delete(live, id)
		}
	}
	for id := range 80 {
		if name, ok := live[id]; ok {
			final = append(final, marshal(map[string]any{"id": id, "name": name}))
		}
	}
	for i := range 1000 {
		orders = append(orders, marshal(map[string]any{"order_id": i, "customer_id": rng.IntN(90)}))
	}
	for name, lines := range map[string][]string{"customers": changes, "final": final, "orders": orders} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "part.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ddl := fmt.Sprintf(`CREATE TABLE orders (order_id BIGINT, customer_id INT, proc AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE customers (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
`, filepath.Join(dir, "orders"), filepath.Join(dir, "customers"))
	duckOrders := fmt.Sprintf("read_json('%s', format = 'newline_delimited', columns = {order_id: 'BIGINT', customer_id: 'INTEGER'})", filepath.Join(dir, "orders", "part.json"))
	duckFinal := fmt.Sprintf("read_json('%s', format = 'newline_delimited', columns = {id: 'INTEGER', name: 'VARCHAR'})", filepath.Join(dir, "final", "part.json"))
	for _, c := range [][2]string{
		{`SELECT o.order_id, c.name FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c ON o.customer_id = c.id`,
			`SELECT o.order_id, c.name FROM {o} o JOIN {c} c ON o.customer_id = c.id`},
		{`SELECT o.order_id, c.name FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c ON o.customer_id = c.id`,
			`SELECT o.order_id, c.name FROM {o} o LEFT JOIN {c} c ON o.customer_id = c.id`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		dq := strings.NewReplacer("{o}", duckOrders, "{c}", duckFinal).Replace(c[1])
		want, err := runDuck(ctx, db, dq)
		if err != nil {
			cancel()
			t.Fatalf("DuckDB: %v\n%s", err, dq)
		}
		got, err := RunPipesql(ctx, ddl+c[0]+";\n", 16)
		cancel()
		if err != nil {
			t.Fatalf("pipesql: %v\n%s", err, c[0])
		}
		if diff := Diff(got, want); diff != "" {
			t.Fatalf("%s\nresults differ: %s", c[0], diff)
		}
	}
}
