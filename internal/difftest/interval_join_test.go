package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Interval joins against DuckDB
//
// Random orders and shipments (JSON), each in event-time order but for neighbours
// swapped within the 5 s watermark delay, so that no row is late. Many shipments lie
// exactly at a bound of the queries' intervals from an order of their key (and a second
// or a millisecond inside or outside it), some keys repeat, some are NULL, some have no
// partner. Every kind of interval join, with inclusive and strict bounds, an equality of
// times, and a window aggregate over the join's output time attribute (which only works
// when the join holds its output watermark back) is compared with DuckDB's answer.

type intervalData struct{ orders, shipments string }

const ijBase = int64(1704067200) // 2024-01-01 00:00:00 UTC, seconds

func ijTime(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.000")
}

// jitter writes lines ordered by time, swapping neighbours less than 4 s apart now and then.
func jitter(rng *rand.Rand, times []int64, lines []string) string {
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return times[idx[a]] < times[idx[b]] })
	for i := 0; i+1 < len(idx); i++ {
		if times[idx[i+1]]-times[idx[i]] < 4e6 && rng.IntN(3) == 0 {
			idx[i], idx[i+1] = idx[i+1], idx[i]
			i++
		}
	}
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(lines[i])
		b.WriteByte('\n')
	}
	return b.String()
}

func writeIntervalData(t *testing.T, rng *rand.Rand, nOrders, nShipments int) intervalData {
	t.Helper()
	d := intervalData{orders: t.TempDir(), shipments: t.TempDir()}
	keys := nOrders/3 + 1
	type order struct {
		key string
		ts  int64
	}
	var orders []order
	var oTimes []int64
	var oLines []string
	for i := range nOrders {
		key := "null"
		if rng.IntN(15) > 0 {
			key = fmt.Sprint(rng.IntN(keys))
		}
		ts := (ijBase + int64(rng.IntN(8*3600))) * 1e6
		if rng.IntN(4) == 0 {
			ts += int64(rng.IntN(1000)) * 1000
		}
		orders = append(orders, order{key, ts})
		oTimes = append(oTimes, ts)
		oLines = append(oLines, fmt.Sprintf(`{"order_id":%d,"k":%s,"amount":%d,"order_time":"%s"}`, i, key, rng.IntN(100), ijTime(ts)))
	}
	// Offsets of a shipment from an order of its key: the queries' bounds, just inside
	// and just outside them, and anything.
	edges := []int64{0, 1, -1, 1800, -1800, 3600, -3600, 3601, -3601, 3599, -3599, 1799, 1801, -1799, -1801}
	var sTimes []int64
	var sLines []string
	for i := range nShipments {
		o := orders[rng.IntN(len(orders))]
		key := o.key
		if rng.IntN(10) == 0 {
			key = fmt.Sprint(keys + rng.IntN(5)) // no order has it
		}
		var ts int64
		switch rng.IntN(4) {
		case 0, 1:
			ts = o.ts + edges[rng.IntN(len(edges))]*1e6
		case 2:
			ts = o.ts + edges[rng.IntN(len(edges))]*1e6 + int64(rng.IntN(3)-1)*1000 // a millisecond either way
		default:
			ts = o.ts + int64(rng.IntN(4*3600)-2*3600)*1e6
		}
		sTimes = append(sTimes, ts)
		sLines = append(sLines, fmt.Sprintf(`{"ship_id":%d,"order_key":%s,"carrier":"c%d","ship_time":"%s"}`, i, key, rng.IntN(3), ijTime(ts)))
	}
	if err := os.WriteFile(filepath.Join(d.orders, "orders.json"), []byte(jitter(rng, oTimes, oLines)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.shipments, "shipments.json"), []byte(jitter(rng, sTimes, sLines)), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d intervalData) ddl() string {
	return fmt.Sprintf(`CREATE TABLE orders (order_id BIGINT, k INT, amount INT, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE shipments (ship_id BIGINT, order_key INT, carrier STRING, ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, d.orders, d.shipments)
}

func (d intervalData) duck(q string) string {
	orders := fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {order_id: 'BIGINT', k: 'INTEGER', amount: 'INTEGER', order_time: 'TIMESTAMP'})", d.orders)
	ships := fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {ship_id: 'BIGINT', order_key: 'INTEGER', carrier: 'VARCHAR', ship_time: 'TIMESTAMP'})", d.shipments)
	q = strings.ReplaceAll(q, "orders o", orders+" o")
	q = strings.ReplaceAll(q, "shipments s", ships+" s")
	return q
}

type ijQuery struct {
	name string
	// view is the join, as a view named j for pipesql and a subquery for DuckDB; q
	// reads it (pipesql's form, duck DuckDB's).
	join, q, duck string
}

var intervalQueries = []ijQuery{
	{name: "inner between", join: `SELECT o.order_id, s.ship_id, o.order_time, s.ship_time FROM orders o JOIN shipments s ON o.k = s.order_key AND o.order_time BETWEEN s.ship_time - INTERVAL '1' HOUR AND s.ship_time`},
	{name: "inner strict", join: `SELECT o.order_id, s.ship_id FROM orders o JOIN shipments s ON o.k = s.order_key AND o.order_time > s.ship_time - INTERVAL '30' MINUTE AND o.order_time < s.ship_time + INTERVAL '1' SECOND`},
	{name: "inner equal times", join: `SELECT o.order_id, s.ship_id FROM orders o INNER JOIN shipments s ON o.k = s.order_key AND o.order_time = s.ship_time`},
	{name: "inner after", join: `SELECT o.order_id, s.ship_id FROM orders o JOIN shipments s ON s.order_key = o.k AND s.ship_time BETWEEN o.order_time + INTERVAL '1' SECOND AND o.order_time + INTERVAL '1' HOUR`},
	{name: "left", join: `SELECT o.order_id, s.ship_id, s.carrier FROM orders o LEFT JOIN shipments s ON o.k = s.order_key AND s.ship_time >= o.order_time AND s.ship_time <= o.order_time + INTERVAL '1' HOUR AND s.carrier <> 'c1'`},
	{name: "right", join: `SELECT o.order_id, o.amount, s.ship_id FROM orders o RIGHT JOIN shipments s ON o.k = s.order_key AND o.order_time BETWEEN s.ship_time - INTERVAL '1' HOUR AND s.ship_time + INTERVAL '30' MINUTE`},
	{name: "full", join: `SELECT o.order_id, s.ship_id FROM orders o FULL OUTER JOIN shipments s ON o.k = s.order_key AND o.order_time >= s.ship_time AND o.order_time < s.ship_time + INTERVAL '30' MINUTE AND o.amount < 80`},
	{name: "window over the output time",
		join: `SELECT o.order_id, s.ship_time FROM orders o JOIN shipments s ON o.k = s.order_key AND s.ship_time BETWEEN o.order_time - INTERVAL '1' HOUR AND o.order_time + INTERVAL '1' HOUR`,
		q:    `SELECT window_start, COUNT(*) AS n, COUNT(DISTINCT order_id) AS orders FROM TABLE(TUMBLE(TABLE j, DESCRIPTOR(ship_time), INTERVAL '10' MINUTE)) GROUP BY window_start, window_end`,
		duck: `SELECT time_bucket(INTERVAL '10 minutes', ship_time) AS window_start, COUNT(*) AS n, COUNT(DISTINCT order_id) AS orders FROM (%s) GROUP BY 1`},
	{name: "aggregate of a left join",
		join: `SELECT o.order_id, s.ship_id FROM orders o LEFT JOIN shipments s ON o.k = s.order_key AND o.order_time BETWEEN s.ship_time - INTERVAL '30' MINUTE AND s.ship_time`,
		q:    `SELECT order_id, COUNT(ship_id) AS n FROM j GROUP BY order_id`,
		duck: `SELECT order_id, COUNT(ship_id) AS n FROM (%s) GROUP BY order_id`},
}

// TestIntervalJoinsAgainstDuckDB runs every interval join over random inputs and batch sizes.
func TestIntervalJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 13)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeIntervalData(t, rng, 3000+rng.IntN(2000), 4000+rng.IntN(2000)) // several polls of 1024 rows: the watermark moves between them
		batch := []int{1, 7, 0}[round]
		for _, q := range intervalQueries {
			t.Run(fmt.Sprintf("round%d/%s", round, q.name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				pq, dq := q.join, d.duck(q.join)
				script := d.ddl()
				if q.q != "" {
					script += "CREATE VIEW j AS " + q.join + ";\n"
					pq, dq = q.q, fmt.Sprintf(q.duck, d.duck(q.join))
				}
				want, err := runDuck(ctx, db, dq)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, dq)
				}
				got, err := RunPipesql(ctx, script+pq+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, pq)
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", pq, batch, diff)
				}
				if len(want) < 5 {
					t.Fatalf("%s: %d rows prove little", pq, len(want))
				}
			})
		}
	}
}
