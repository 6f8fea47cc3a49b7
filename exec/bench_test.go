package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkWindowAggregateDAU measures rows per second through the window aggregate of
// the DAU query: a 1-day TUMBLE over TIMESTAMP_LTZ in Asia/Shanghai with
// COUNT(DISTINCT user_id) per app, in batches of 1024. users=1M is the production shape
// (1M distinct string users, a cold working set); users=1k, all hot in cache, is the
// baseline it is compared with in the same run.
func BenchmarkWindowAggregateDAU(b *testing.B) {
	for _, users := range []int{1_000_000, 1_000} {
		b.Run(fmt.Sprintf("users=%s", map[int]string{1_000_000: "1M", 1_000: "1k"}[users]), func(b *testing.B) {
			benchmarkDAU(b, users)
		})
	}
}

func benchmarkDAU(b *testing.B, users int) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		b.Fatal(err)
	}
	in := types.Schema{{Name: "app", Type: types.TypeString}, {Name: "user_id", Type: types.TypeString}, {Name: "ts", Type: rowtimeLTZ3}}
	dau := planner.AggCall{Func: planner.AggCount, Arg: 1, Distinct: true, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "dau"}
	n := &planner.WindowAggregate{
		Input:  &planner.Values{Out: in},
		Window: planner.Window{Kind: planner.Tumble, TimeCol: 2, Size: 24 * time.Hour, Slide: 24 * time.Hour, Location: shanghai},
		Keys:   []int{0},
		Aggs:   []planner.AggCall{dau},
		Out:    windowOut(in[:1], []planner.AggCall{dau}, rowtimeLTZ3),
	}
	cfg, err := compileWindowAgg(n)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]types.Value, users)
	for i := range ids {
		ids[i] = types.StringValue(fmt.Sprintf("user-%07d", i))
	}
	apps := []types.Value{types.StringValue("shop"), types.StringValue("news"), types.StringValue("maps")}
	// 2M events over one day, users drawn at random so the dictionary and bitmaps see
	// all of them.
	const events = 2 << 20
	rng := rand.New(rand.NewPCG(7, 8))
	day := time.Date(2024, 1, 1, 16, 0, 0, 0, time.UTC).UnixMicro()
	rows := make([]types.Row, events)
	for i := range rows {
		rows[i] = types.Row{apps[rng.IntN(len(apps))], ids[rng.IntN(users)], types.TimestampLTZValue(day + int64(i)*40_000)}
	}
	var batches [][]types.Row
	for i := 0; i < len(rows); i += 1024 {
		batches = append(batches, rows[i:min(i+1024, len(rows))])
	}
	ch := make(chan event, 1024)
	go func() {
		for range ch {
		}
	}()
	defer close(ch)
	ctx := context.Background()
	newOp := func() (*windowAggOp, *outbox) {
		m := newOpMetrics(0, "window aggregate")
		op, err := newWindowAggOp(cfg, m, connectors.WallClock{})
		if err != nil {
			b.Fatal(err)
		}
		return op, newOutbox(ch, 1024, &m.out)
	}
	op, out := newOp()
	b.ReportAllocs()
	b.ResetTimer()
	next := 0
	for done := 0; done < b.N; {
		if next == len(batches) {
			b.StopTimer()
			op, out = newOp() // a fresh day's state, so every pass sees cold users
			next = 0
			b.StartTimer()
		}
		bt := batches[next]
		next++
		if rest := b.N - done; rest < len(bt) {
			bt = bt[:rest]
		}
		if err := op.processBatch(ctx, batch{rows: bt}, out); err != nil {
			b.Fatal(err)
		}
		done += len(bt)
	}
	b.StopTimer()
	if err := op.processWatermark(ctx, MaxWatermark, out); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
