package exec

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkTopN measures events per second of a Top-3 per key (ROW_NUMBER, rank number
// in the output, ORDER BY value DESC) over 10M rows of 10k keys, in batches of 1024, through
// the rank operator and its changelog; "hand-written" is the same Top-3 in plain Go (a
// map of fixed arrays of int64, counting the changes it would emit), measured in the same
// run over the same rows. The rows come from a pool of 256 batches of distinct rows,
// built once, so that generating them is not measured.
func BenchmarkTopN(b *testing.B) {
	const (
		total = 10_000_000
		keys  = 10_000
		batch = 1024
		pool  = 256
	)
	rng := rand.New(rand.NewPCG(3, 4))
	type event struct{ key, value int64 }
	events := make([]event, pool*batch)
	batches := make([][]types.Row, pool)
	for i := range batches {
		rows := make([]types.Row, batch)
		vals := make([]types.Value, 3*batch)
		for j := range rows {
			e := event{key: int64(rng.IntN(keys)), value: rng.Int64N(1 << 40)}
			events[i*batch+j] = e
			r := vals[3*j : 3*j+3 : 3*j+3]
			r[0], r[1], r[2] = types.IntValue(types.BigInt, e.key), types.IntValue(types.BigInt, e.value), types.IntValue(types.BigInt, int64(j))
			rows[j] = r
		}
		batches[i] = rows
	}

	b.Run("rank operator", func(b *testing.B) {
		cfg := &rankConfig{part: []int{0}, order: []planner.SortKey{{Col: 1, Desc: true}}, typ: planner.RowNumber,
			start: 1, end: 3, rankNumber: true, width: 3}
		var emitted int
		for b.Loop() {
			op := newRankOp(cfg)
			ch := make(chan event_, 64)
			done := make(chan int)
			go func() {
				n := 0
				for ev := range ch {
					n += len(ev.batch.rows)
				}
				done <- n
			}()
			out := newOutbox(ch, batch, &counter{})
			ctx := context.Background()
			start := time.Now()
			for i := 0; i < total/batch; i++ {
				if err := op.processBatch(ctx, batch_{rows: batches[i%pool]}, out); err != nil {
					b.Fatal(err)
				}
			}
			if err := out.flush(ctx); err != nil {
				b.Fatal(err)
			}
			close(ch)
			emitted = <-done
			b.ReportMetric(float64(total/batch*batch)/time.Since(start).Seconds(), "events/s")
		}
		b.ReportMetric(float64(emitted), "changes")
	})

	b.Run("hand-written", func(b *testing.B) {
		var emitted int
		for b.Loop() {
			type top struct {
				n    int
				vals [3]int64
			}
			tops := make(map[int64]*top, keys)
			start := time.Now()
			emitted = 0
			for i := 0; i < total/batch*batch; i++ {
				e := events[i%len(events)]
				t := tops[e.key]
				if t == nil {
					t = &top{}
					tops[e.key] = t
				}
				if t.n == 3 && e.value <= t.vals[2] {
					continue
				}
				at := t.n
				for at > 0 && t.vals[at-1] < e.value {
					at--
				}
				grew := t.n < 3
				if grew {
					t.n++
				}
				copy(t.vals[at+1:t.n], t.vals[at:t.n-1])
				t.vals[at] = e.value
				// Rank positions at..n-1 changed: -U/+U each, but +I for a new last one.
				emitted += 2 * (t.n - at)
				if t.n > 0 && t.n-1 >= at && grew {
					emitted--
				}
			}
			b.ReportMetric(float64(total/batch*batch)/time.Since(start).Seconds(), "events/s")
		}
		b.ReportMetric(float64(emitted), "changes")
	})
}

// event_ and batch_ are the runtime's event and batch, named apart from the benchmark's
// own event type.
type (
	event_ = event
	batch_ = batch
)
