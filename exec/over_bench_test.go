package exec

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkOverRows measures events per second of SUM(v) OVER (PARTITION BY k ORDER BY
// ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) over 4M rows of 10k keys in time order, in
// batches of 1024 with a watermark after each, through the over operator (rows wait for
// the watermark, are processed in time order and emitted with the sum); "hand-written" is
// the same sum in plain Go (a map of the last three values per key), measured in the same
// run over the same rows.
func BenchmarkOverRows(b *testing.B) {
	const (
		total = 4_000_000
		keys  = 10_000
		batch = 1024
		pool  = 256
	)
	rng := rand.New(rand.NewPCG(3, 4))
	type ev struct{ key, value int64 }
	events := make([]ev, pool*batch)
	batches := make([][]types.Row, pool)
	for i := range batches {
		rows := make([]types.Row, batch)
		vals := make([]types.Value, 3*batch)
		for j := range rows {
			e := ev{key: int64(rng.IntN(keys)), value: rng.Int64N(1000)}
			events[i*batch+j] = e
			r := vals[3*j : 3*j+3 : 3*j+3]
			r[0], r[1] = types.IntValue(types.BigInt, e.key), types.IntValue(types.BigInt, e.value)
			rows[j] = r
		}
		batches[i] = rows
	}
	sum := planner.AggCall{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, State: planner.StateSum}
	cfg := &overConfig{part: []int{0}, orderCol: 2, rowTime: true, rows: true, preceding: 2, width: 3,
		calls:    []planner.OverCall{{Func: "SUM", Arg: 1, Default: -1, Agg: sum, T: types.TypeBigInt, Name: "w0$o0"}},
		argTypes: []types.Type{types.TypeBigInt}}

	var last int64
	b.Run("over operator", func(b *testing.B) {
		for b.Loop() {
			op, err := newOverOp(cfg, newOpMetrics(0, "over"), nil)
			if err != nil {
				b.Fatal(err)
			}
			ch := make(chan event_, 64)
			done := make(chan int64)
			go func() {
				var s int64
				for e := range ch {
					for _, r := range e.batch.rows {
						if v := r[3]; !v.IsNull() {
							s += v.Int()
						}
					}
				}
				done <- s
			}()
			out := newOutbox(ch, batch, &counter{})
			ctx := context.Background()
			start := time.Now()
			for i := 0; i < total/batch; i++ {
				// Each batch one millisecond after the last: the time column is set here, on
				// the pooled rows, as a source would.
				ts := types.IntValue(types.BigInt, int64(i)*1000)
				rows := batches[i%pool]
				for _, r := range rows {
					r[2] = ts
				}
				if err := op.processBatch(ctx, batch_{rows: rows}, out); err != nil {
					b.Fatal(err)
				}
				if err := op.processWatermark(ctx, int64(i)*1000, out); err != nil {
					b.Fatal(err)
				}
			}
			if err := out.flush(ctx); err != nil {
				b.Fatal(err)
			}
			close(ch)
			last = <-done
			b.ReportMetric(float64(total/batch*batch)/time.Since(start).Seconds(), "events/s")
		}
		b.ReportMetric(float64(last%1_000_000), "checksum")
	})

	b.Run("hand-written", func(b *testing.B) {
		var s int64
		for b.Loop() {
			type hist struct {
				n    int
				vals [2]int64
			}
			hs := make(map[int64]*hist, keys)
			start := time.Now()
			s = 0
			for i := 0; i < total/batch*batch; i++ {
				e := events[i%len(events)]
				h := hs[e.key]
				if h == nil {
					h = &hist{}
					hs[e.key] = h
				}
				r := e.value
				for j := range h.n {
					r += h.vals[j]
				}
				s += r
				h.vals[1] = h.vals[0]
				h.vals[0] = e.value
				h.n = min(h.n+1, 2)
			}
			b.ReportMetric(float64(total/batch*batch)/time.Since(start).Seconds(), "events/s")
		}
		b.ReportMetric(float64(s%1_000_000), "checksum")
	})
}
