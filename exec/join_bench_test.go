package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkJoin joins 1M orders with 100k customers (every customer first, as a
// dimension table is read, then the orders) in the regular join operator, and in the
// baseline: a hand-written Go symmetric hash join over the same rows (both sides kept in
// maps by key, as a streaming join must) that builds the same output rows. It reports rows per second of each, the peak heap above
// the start (sampled every 64 batches) and the join's state per customer kept.
//
//	go test -run '^$' -bench Join -benchtime 1x ./exec/
func BenchmarkJoin(b *testing.B) {
	const nOrders, nCustomers = 1_000_000, 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	customers := make([]types.Row, nCustomers)
	for i := range customers {
		customers[i] = types.Row{types.BigIntValue(int64(i)), types.StringValue(fmt.Sprintf("customer-%d", i))}
	}
	orders := make([]types.Row, nOrders)
	for i := range orders {
		orders[i] = types.Row{types.BigIntValue(int64(i)), types.BigIntValue(int64(rng.IntN(nCustomers))), types.BigIntValue(int64(rng.IntN(1000)))}
	}
	os := types.Schema{{Name: "order_id", Type: types.TypeBigInt}, {Name: "customer_id", Type: types.TypeBigInt}, {Name: "amount", Type: types.TypeBigInt}}
	cs := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "name", Type: types.TypeString}}
	node := &planner.Join{
		Left: &planner.Values{Out: os}, Right: &planner.Values{Out: cs}, Type: planner.InnerJoin,
		LeftKeys: []int{1}, RightKeys: []int{0}, KeyTypes: []types.Type{types.TypeBigInt},
		Out: append(append(types.Schema(nil), os...), cs...),
	}
	cfg, err := compileJoin(node, eval.Env{}, 0)
	if err != nil {
		b.Fatal(err)
	}
	var top uint64 // the peak heap seen by batches
	batches := func(rows []types.Row, fn func(batch) error) error {
		for i := 0; i < len(rows); i += 1024 {
			if err := fn(batch{rows: rows[i:min(i+1024, len(rows))]}); err != nil {
				return err
			}
			if i%(64*1024) == 0 {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapAlloc)
			}
		}
		return nil
	}
	b.Run("pipesql", func(b *testing.B) {
		for range b.N {
			ch := make(chan event, 64)
			done := make(chan int)
			go func() {
				n := 0
				for ev := range ch {
					n += len(ev.batch.rows)
				}
				done <- n
			}()
			out := newOutbox(ch, 1024, &counter{})
			o := newJoinOp(cfg, nil)
			ctx := context.Background()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			top = 0
			start := time.Now()
			if err := batches(customers, func(bt batch) error { return o.processInput(ctx, 1, bt, out) }); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if err := batches(orders, func(bt batch) error { return o.processInput(ctx, 0, bt, out) }); err != nil {
				b.Fatal(err)
			}
			if err := out.flush(ctx); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			close(ch)
			if n := <-done; n != nOrders {
				b.Fatalf("%d joined rows, want %d", n, nOrders)
			}
			b.ReportMetric(float64(nOrders+nCustomers)/took.Seconds(), "rows/s")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/nCustomers, "state-B/customer")
			b.ReportMetric(float64(top-before.HeapAlloc)/(1<<20), "peak-MB")
		}
	})
	b.Run("baseline", func(b *testing.B) {
		for range b.N {
			ch := make(chan []types.Row, 64)
			done := make(chan int)
			go func() {
				n := 0
				for rows := range ch {
					n += len(rows)
				}
				done <- n
			}()
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			top = 0
			start := time.Now()
			byID := make(map[int64][]types.Row)
			for _, c := range customers {
				byID[c[0].Int()] = append(byID[c[0].Int()], c)
			}
			// A streaming join keeps the orders too, for customers that come later.
			kept := make(map[int64][]types.Row)
			buf := make([]types.Row, 0, 1024)
			for i, o := range orders {
				if i%(64*1024) == 0 {
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					top = max(top, m.HeapAlloc)
				}
				kept[o[1].Int()] = append(kept[o[1].Int()], o)
				for _, c := range byID[o[1].Int()] {
					row := make(types.Row, 5)
					copy(row, o)
					copy(row[3:], c)
					buf = append(buf, row)
					if len(buf) == cap(buf) {
						ch <- buf
						buf = make([]types.Row, 0, 1024)
					}
				}
			}
			ch <- buf
			took := time.Since(start)
			close(ch)
			if n := <-done; n != nOrders {
				b.Fatalf("%d joined rows, want %d", n, nOrders)
			}
			b.ReportMetric(float64(nOrders+nCustomers)/took.Seconds(), "rows/s")
			b.ReportMetric(float64(top-before.HeapAlloc)/(1<<20), "peak-MB")
		}
	})
}
