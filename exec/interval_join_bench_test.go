package exec

import (
	"cmp"
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkIntervalJoin joins 1M orders with 1M shipments (one per order, 0-10 s after
// it: s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '10' SECOND), both
// streams arriving in time order, interleaved in batches of 1024 by time, with a
// watermark after every batch, in the interval join operator; and in the baseline, a
// hand-written Go interval join over the same rows (both sides in maps by key, a FIFO
// per side to drop rows as the watermark passes their bound) that builds the same
// output rows. It reports rows per second of each, the peak heap, and the operator's
// state per kept row (about 10k orders are live at a time).
//
//	go test -run '^$' -bench IntervalJoin -benchtime 1x ./exec/
func BenchmarkIntervalJoin(b *testing.B) {
	const n = 1_000_000
	const bound = int64(10e6) // 10 s
	rng := rand.New(rand.NewPCG(3, 4))
	base := int64(1_704_067_200) * 1e6
	orders := make([]types.Row, n)
	ships := make([]types.Row, n)
	for i := range n {
		at := base + int64(i)*1000 // one order per ms
		orders[i] = types.Row{types.BigIntValue(int64(i)), types.BigIntValue(int64(rng.IntN(1000))), types.TimestampValue(at)}
		ships[i] = types.Row{types.BigIntValue(int64(i)), types.TimestampValue(at + rng.Int64N(bound+1))}
	}
	// Shipments in time order.
	sortRowsByTime(ships, 1)
	os := types.Schema{{Name: "order_id", Type: types.TypeBigInt}, {Name: "amount", Type: types.TypeBigInt}, {Name: "order_time", Type: types.Type{Kind: types.Timestamp, Prec: 3, TimeAttr: types.RowTime}}}
	ss := types.Schema{{Name: "order_id", Type: types.TypeBigInt}, {Name: "ship_time", Type: types.Type{Kind: types.Timestamp, Prec: 3, TimeAttr: types.RowTime}}}
	node := &planner.IntervalJoin{
		Left: &planner.Values{Out: os}, Right: &planner.Values{Out: ss}, Type: planner.InnerJoin,
		LeftKeys: []int{0}, RightKeys: []int{0}, KeyTypes: []types.Type{types.TypeBigInt},
		RowTime: true, LeftTime: 2, RightTime: 1, LowerBound: -bound, UpperBound: 0,
		Out: append(append(types.Schema(nil), os...), ss...),
	}
	cfg, err := compileIntervalJoin(node, eval.Env{})
	if err != nil {
		b.Fatal(err)
	}
	// The arrival order: batches of 1024 of whichever side is behind in time.
	type step struct {
		side   int
		lo, hi int
		wm     int64
	}
	var steps []step
	var at [2]int
	last := [2]int64{base - 1, base - 1}
	for at[0] < n || at[1] < n {
		s := 0
		if at[0] == n || at[1] < n && ships[at[1]][1].Int() < orders[at[0]][2].Int() {
			s = 1
		}
		rows, col := orders, 2
		if s == 1 {
			rows, col = ships, 1
		}
		hi := min(at[s]+1024, n)
		last[s] = rows[hi-1][col].Int()
		if hi == n {
			last[s] = MaxWatermark
		}
		steps = append(steps, step{side: s, lo: at[s], hi: hi, wm: min(last[0], last[1]) - 1})
		at[s] = hi
	}
	peak := func(p *uint64) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		*p = max(*p, m.HeapAlloc)
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
			o := newIntervalJoinOp(cfg, nil)
			ctx := context.Background()
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			var top uint64
			var stateB float64
			start := time.Now()
			for i, st := range steps {
				rows := orders
				if st.side == 1 {
					rows = ships
				}
				if err := o.processInput(ctx, st.side, batch{rows: rows[st.lo:st.hi]}, out); err != nil {
					b.Fatal(err)
				}
				if err := o.processWatermark(ctx, st.wm, out); err != nil {
					b.Fatal(err)
				}
				if i%64 == 0 {
					peak(&top)
				}
				if i == len(steps)/2 {
					// The state per kept row, measured once halfway (its GC is timed too).
					runtime.GC()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					stateB = float64(m.HeapAlloc-before.HeapAlloc) / float64(o.measureState().Groups)
				}
			}
			if err := out.flush(ctx); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			close(ch)
			if got := <-done; got != n {
				b.Fatalf("%d joined rows, want %d", got, n)
			}
			b.ReportMetric(float64(2*n)/took.Seconds(), "rows/s")
			b.ReportMetric(float64(top-before.HeapAlloc)/(1<<20), "peak-MB")
			b.ReportMetric(stateB, "state-B/row")
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
			var top uint64
			start := time.Now()
			type kept struct {
				row types.Row
				ts  int64
			}
			type queued struct {
				key int64
				ts  int64
			}
			sides := [2]map[int64][]kept{{}, {}}
			var fifo [2][]queued
			buf := make([]types.Row, 0, 1024)
			emit := func(l, r types.Row) {
				row := make(types.Row, 5)
				copy(row, l)
				copy(row[3:], r)
				buf = append(buf, row)
				if len(buf) == cap(buf) {
					ch <- buf
					buf = make([]types.Row, 0, 1024)
				}
			}
			for i, st := range steps {
				if st.side == 0 {
					for _, o := range orders[st.lo:st.hi] {
						k, t := o[0].Int(), o[2].Int()
						for _, s := range sides[1][k] {
							if d := t - s.ts; d >= -bound && d <= 0 {
								emit(o, s.row)
							}
						}
						sides[0][k] = append(sides[0][k], kept{o, t})
						fifo[0] = append(fifo[0], queued{k, t})
					}
				} else {
					for _, s := range ships[st.lo:st.hi] {
						k, t := s[0].Int(), s[1].Int()
						for _, o := range sides[0][k] {
							if d := o.ts - t; d >= -bound && d <= 0 {
								emit(o.row, s)
							}
						}
						sides[1][k] = append(sides[1][k], kept{s, t})
						fifo[1] = append(fifo[1], queued{k, t})
					}
				}
				// Rows leave as in the operator: an order when ts + bound <= wm, a
				// shipment when ts <= wm (in time order, so from the front).
				for s, exp := range [2]int64{bound, 0} {
					q := fifo[s]
					j := 0
					for ; j < len(q) && q[j].ts+exp <= st.wm; j++ {
						rs := sides[s][q[j].key]
						if len(rs) <= 1 {
							delete(sides[s], q[j].key)
						} else {
							sides[s][q[j].key] = rs[1:]
						}
					}
					fifo[s] = q[j:]
				}
				if i%64 == 0 {
					peak(&top)
				}
			}
			ch <- buf
			took := time.Since(start)
			close(ch)
			if got := <-done; got != n {
				b.Fatalf("%d joined rows, want %d", got, n)
			}
			b.ReportMetric(float64(2*n)/took.Seconds(), "rows/s")
			b.ReportMetric(float64(top-before.HeapAlloc)/(1<<20), "peak-MB")
		}
	})
}

// sortRowsByTime sorts rows by the timestamp in column col.
func sortRowsByTime(rows []types.Row, col int) {
	slices.SortStableFunc(rows, func(a, b types.Row) int { return cmp.Compare(a[col].Int(), b[col].Int()) })
}
