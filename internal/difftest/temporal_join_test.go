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

// Event-time temporal joins against DuckDB's ASOF JOIN
//
// A random debezium-json history of currency rates (inserts, updates, deletes; strictly
// increasing change times, which an update's before image and a delete carry too) is the
// versioned table; orders (JSON, out of order within their watermark's delay, some with
// a currency no rate has or NULL) join it FOR SYSTEM_TIME AS OF their time. DuckDB reads
// the same orders and the history as one row per change (the new rate, or deleted) and
// joins them with ASOF JOIN on currency and order_time >= change time: the version valid
// at the order's time, no match when it is a delete.

func TestTemporalJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	rng := rand.New(rand.NewPCG(seed(t, 21), 4))
	dir := t.TempDir()
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	stamp := func(ms int64) string {
		return base.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02 15:04:05.000")
	}
	live := map[string]float64{}
	var rates, versions, orders []string
	rec := func(k string, rate float64, ms int64) map[string]any {
		return map[string]any{"currency": k, "rate": rate, "update_time": stamp(ms)}
	}
	marshal := func(m any) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	id := 0
	for i := range 1500 {
		T := int64(i)*1000 + int64(rng.IntN(900))
		if rng.IntN(10) < 3 {
			k := fmt.Sprintf("c%d", rng.IntN(5))
			rate := float64(rng.IntN(50)) / 10
			old, ok := live[k]
			deleted := false
			switch {
			case !ok:
				rates = append(rates, marshal(map[string]any{"before": nil, "after": rec(k, rate, T), "op": "c"}))
				live[k] = rate
			case rng.IntN(10) < 7:
				rates = append(rates, marshal(map[string]any{"before": rec(k, old, T), "after": rec(k, rate, T), "op": "u"}))
				live[k] = rate
			default:
				rates = append(rates, marshal(map[string]any{"before": rec(k, old, T), "after": nil, "op": "d"}))
				delete(live, k)
				deleted = true
			}
			versions = append(versions, marshal(map[string]any{"currency": k, "rate": rate, "ts": stamp(T), "deleted": deleted}))
		}
		if rng.IntN(10) < 7 {
			cur := "null"
			if rng.IntN(12) > 0 {
				cur = fmt.Sprintf(`"c%d"`, rng.IntN(6)) // c5 has no rate
			}
			orders = append(orders, fmt.Sprintf(`{"order_id":%d,"currency":%s,"amount":%d,"order_time":"%s"}`,
				id, cur, rng.IntN(100), stamp(T+int64(rng.IntN(4000))))) // at most 4 s out of order: never late
			id++
		}
	}
	for name, lines := range map[string][]string{"rates": rates, "orders": orders, "versions": versions} {
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
CREATE TABLE rates (currency STRING, rate DOUBLE, update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time, PRIMARY KEY (currency) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE VIEW doubled_rates AS SELECT update_time, rate * 2 AS rate2, currency FROM rates;
`, filepath.Join(dir, "orders"), filepath.Join(dir, "rates"))
	duckOrders := fmt.Sprintf("read_json('%s', format = 'newline_delimited', columns = {order_id: 'BIGINT', currency: 'VARCHAR', amount: 'INTEGER', order_time: 'TIMESTAMP'})", filepath.Join(dir, "orders", "part.json"))
	duckVersions := fmt.Sprintf("read_json('%s', format = 'newline_delimited', columns = {currency: 'VARCHAR', rate: 'DOUBLE', ts: 'TIMESTAMP', deleted: 'BOOLEAN'})", filepath.Join(dir, "versions", "part.json"))
	for _, c := range [][2]string{
		{`SELECT o.order_id, o.amount * r.rate AS converted FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency`,
			`SELECT o.order_id, o.amount * v.rate AS converted FROM {o} o ASOF JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.ts WHERE NOT v.deleted`},
		{`SELECT o.order_id, r.rate FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency AND r.rate > 2`,
			`SELECT o.order_id, CASE WHEN v.deleted OR NOT (v.rate > 2) THEN NULL ELSE v.rate END AS rate FROM {o} o ASOF LEFT JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.ts`},
		// A view projecting the versioned table is versioned too.
		{`SELECT o.order_id, r.rate2 FROM orders AS o LEFT JOIN doubled_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency`,
			`SELECT o.order_id, CASE WHEN v.deleted THEN NULL ELSE v.rate * 2 END AS rate2 FROM {o} o ASOF LEFT JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.ts`},
		{`SELECT r.currency, COUNT(*) AS n, SUM(o.amount) AS total FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency WHERE r.rate < 3 GROUP BY r.currency`,
			`SELECT v.currency, COUNT(*) AS n, SUM(o.amount) AS total FROM {o} o ASOF JOIN {v} v ON o.currency = v.currency AND o.order_time >= v.ts WHERE NOT v.deleted AND v.rate < 3 GROUP BY v.currency`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		dq := strings.NewReplacer("{o}", duckOrders, "{v}", duckVersions).Replace(c[1])
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
