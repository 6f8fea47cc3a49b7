package exec

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

// Checkpoint benchmarks
//
//	go test -run XXX -bench Checkpoint24Days ./exec/
//	go test -run XXX -bench DAUThroughput -benchtime 20000000x ./exec/
//
// BenchmarkCheckpoint24Days1MUsers holds 24 open daily windows of COUNT(DISTINCT user_id),
// each with 1M users drawn from a population of 3M, and measures, per id kind:
//
//	full-pause      the in-line part of a checkpoint that writes everything (the first
//	                one, or after a failed one): serializing 24 bitmaps, and a view of
//	                the dictionary
//	full-serialize  what the writer goroutine then serializes (the dictionary), off the
//	                processing goroutine
//	full-MB         its size; full-write the time to write it to Badger (synced)
//	incr-pause      the in-line part of a checkpoint after 100k more events of today
//	                (10% users never seen): today's bitmap and a dictionary chunk
//	incr-KB         its size; incr-write the time to write it (unchanged values reused)
//	restore         reading and verifying the incremental checkpoint from Badger and
//	                rebuilding the operator (dictionary first, then the 24 bitmaps)
//
// ids=dense are BIGINT user ids 0..3M-1 (bitmaps directly), ids=sparse random 63-bit
// BIGINT ids (a 64-bit dictionary into dense ids), ids=string "user-0000123" strings
// (the string dictionary).

const (
	benchDays       = 24
	benchUsers      = 1_000_000 // per day
	benchPopulation = 3_000_000
)

type ckptFixture struct {
	cfg   *windowAggConfig
	op    *windowAggOp
	ids   []types.Value
	day   func(d int) int64 // the first microsecond of day d
	rng   *rand.Rand
	extra int // users added after the fill, for new ids
}

var (
	ckptFixturesMu sync.Mutex
	ckptFixtures   = map[string]*ckptFixture{}
)

// dauCheckpointFixture builds (once per id kind) a window aggregate holding 24 open days
// of 1M users each.
func dauCheckpointFixture(b *testing.B, kind string) *ckptFixture {
	ckptFixturesMu.Lock()
	defer ckptFixturesMu.Unlock()
	if f := ckptFixtures[kind]; f != nil {
		return f
	}
	idType := types.TypeBigInt
	if kind == "string" {
		idType = types.TypeString
	}
	in := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "user_id", Type: idType}}
	dau := planner.AggCall{Func: planner.AggCount, Arg: 1, Distinct: true, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "dau"}
	n := &planner.WindowAggregate{
		Input:  &planner.Values{Out: in},
		Window: planner.Window{Kind: planner.Tumble, TimeCol: 0, Size: 24 * time.Hour, Slide: 24 * time.Hour},
		Aggs:   []planner.AggCall{dau},
		Out:    windowOut(nil, []planner.AggCall{dau}, rowtime3),
	}
	cfg, err := compileWindowAgg(n)
	if err != nil {
		b.Fatal(err)
	}
	f := &ckptFixture{cfg: cfg, rng: rand.New(rand.NewPCG(1, 2))}
	f.ids = make([]types.Value, benchPopulation)
	for i := range f.ids {
		f.ids[i] = f.id(kind, i)
	}
	start := ts("2024-01-01 00:00:00.000")
	f.day = func(d int) int64 { return start + int64(d)*int64(24*time.Hour/time.Microsecond) }
	f.op = f.newOp(b)
	ch := discardEvents()
	m := newOpMetrics(0, "window aggregate")
	out := newOutbox(ch, 1024, &m.out)
	rows := make([]types.Row, 1024)
	for i := range rows {
		rows[i] = make(types.Row, 2)
	}
	for d := range benchDays {
		perm := f.rng.Perm(benchPopulation)
		for i := 0; i < benchUsers; i += len(rows) {
			bt := rows[:min(len(rows), benchUsers-i)]
			for k, r := range bt {
				r[0] = types.TimestampValue(f.day(d) + int64(i+k))
				r[1] = f.ids[perm[i+k]]
			}
			if err := f.op.processBatch(context.Background(), batch{rows: bt}, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	ckptFixtures[kind] = f
	return f
}

func (f *ckptFixture) id(kind string, i int) types.Value {
	switch kind {
	case "dense":
		return types.BigIntValue(int64(i))
	case "sparse":
		return types.BigIntValue(int64(f.rng.Uint64() >> 1))
	}
	return types.StringValue(fmt.Sprintf("user-%07d", i))
}

func (f *ckptFixture) newOp(b *testing.B) *windowAggOp {
	op, err := newWindowAggOp(f.cfg, newOpMetrics(0, "window aggregate"), connectors.WallClock{})
	if err != nil {
		b.Fatal(err)
	}
	return op
}

func discardEvents() chan event {
	ch := make(chan event, 1024)
	go func() {
		for range ch {
		}
	}()
	return ch
}

// writeBadger writes checkpoint id (its values and the keys it reuses from base) to
// the store.
func writeBadger(b *testing.B, st state.Store, id, base uint64, values map[string][]byte, reused map[string]bool) {
	w, err := st.Begin("dau", id)
	if err != nil {
		b.Fatal(err)
	}
	for k, v := range values {
		if reused[k] {
			err = w.Reuse("0/window aggregate", k, base)
		} else {
			err = w.Put("0/window aggregate", k, v)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Commit(state.Meta{Plan: "bench"}); err != nil {
		b.Fatal(err)
	}
}

// deferringWriter is a memWriter that, like the coordinator's, leaves the values put
// with PutDeferred to be serialized after the in-line part (by run).
type deferringWriter struct {
	*memWriter
	later []func() error
}

func (w *deferringWriter) PutDeferred(key string, produce func() ([]byte, error)) error {
	w.later = append(w.later, func() error {
		v, err := produce()
		if err != nil {
			return err
		}
		return w.memWriter.Put(key, v)
	})
	return nil
}

func (w *deferringWriter) run() error {
	for _, fn := range w.later {
		if err := fn(); err != nil {
			return err
		}
	}
	w.later = nil
	return nil
}

// snapshotInto takes checkpoint id of op, incremental on base whose values are prev,
// and returns its values, which of them were reused, the bytes written anew, the
// in-line pause and the time the writer then spent serializing what was deferred.
func snapshotInto(b *testing.B, op *windowAggOp, id, base uint64, prev map[string][]byte) (values map[string][]byte, reused map[string]bool, bytes int, pause, serialize time.Duration) {
	cps := newMemCheckpoints(b)
	cps.cps[base] = prev
	w := &deferringWriter{memWriter: &memWriter{m: cps, id: id, base: base, values: map[string][]byte{}}}
	t0 := time.Now()
	if err := op.snapshotState(context.Background(), w); err != nil {
		b.Fatal(err)
	}
	pause = time.Since(t0)
	t0 = time.Now()
	if err := w.run(); err != nil {
		b.Fatal(err)
	}
	serialize = time.Since(t0)
	reused = map[string]bool{}
	put := map[string]bool{}
	for _, k := range cps.putKeys {
		put[k] = true
		bytes += len(w.values[k])
	}
	for k := range w.values {
		if !put[k] {
			reused[k] = true
		}
	}
	return w.values, reused, bytes, pause, serialize
}

func BenchmarkCheckpoint24Days1MUsers(b *testing.B) {
	for _, kind := range []string{"dense", "sparse", "string"} {
		b.Run("ids="+kind, func(b *testing.B) {
			f := dauCheckpointFixture(b, kind)
			ch := discardEvents()
			m := newOpMetrics(0, "window aggregate")
			out := newOutbox(ch, 1024, &m.out)
			var fullPause, fullSer, fullWrite, incrPause, incrSer, incrWrite, restore time.Duration
			var fullBytes, incrBytes int
			b.ResetTimer()
			for range b.N {
				st, err := state.OpenBadger(b.TempDir(), state.Options{NumRetained: 2})
				if err != nil {
					b.Fatal(err)
				}
				// A full checkpoint: what the first one after a start from nothing writes.
				values, reused, n, pause, ser := snapshotInto(b, f.op, 1, 0, nil)
				fullPause += pause
				fullSer += ser
				fullBytes += n
				t0 := time.Now()
				writeBadger(b, st, 1, 0, values, reused)
				fullWrite += time.Since(t0)

				// 100k more events today, 10% of them new users, then an incremental one.
				rows := make([]types.Row, 1024)
				for i := range rows {
					rows[i] = make(types.Row, 2)
				}
				for i := 0; i < 100_000; i += len(rows) {
					for k, r := range rows {
						r[0] = types.TimestampValue(f.day(benchDays-1) + int64(benchUsers+i+k))
						if f.rng.IntN(10) == 0 {
							r[1] = f.id(kind, benchPopulation+f.extra)
							f.extra++
						} else {
							r[1] = f.ids[f.rng.IntN(benchPopulation)]
						}
					}
					if err := f.op.processBatch(context.Background(), batch{rows: rows}, out); err != nil {
						b.Fatal(err)
					}
				}
				values2, reused2, n2, pause2, ser2 := snapshotInto(b, f.op, 2, 1, values)
				incrPause += pause2
				incrSer += ser2
				incrBytes += n2
				t0 = time.Now()
				writeBadger(b, st, 2, 1, values2, reused2)
				incrWrite += time.Since(t0)

				t0 = time.Now()
				cp, err := st.Latest("dau")
				if err != nil {
					b.Fatal(err)
				}
				restored := f.newOp(b)
				if err := restored.restoreState(stateReaderOf{cp: cp, op: "0/window aggregate"}); err != nil {
					b.Fatal(err)
				}
				restore += time.Since(t0)
				if len(restored.slices) != benchDays {
					b.Fatalf("restored %d days, want %d", len(restored.slices), benchDays)
				}
				st.Close()
			}
			n := float64(b.N)
			b.ReportMetric(float64(fullPause.Microseconds())/n/1000, "full-pause-ms")
			b.ReportMetric(float64(fullSer.Microseconds())/n/1000, "full-serialize-ms")
			b.ReportMetric(float64(fullBytes)/n/(1<<20), "full-MB")
			b.ReportMetric(float64(fullWrite.Milliseconds())/n, "full-write-ms")
			b.ReportMetric(float64(incrPause.Microseconds())/n/1000, "incr-pause-ms")
			b.ReportMetric(float64(incrSer.Microseconds())/n/1000, "incr-serialize-ms")
			b.ReportMetric(float64(incrBytes)/n/1024, "incr-KB")
			b.ReportMetric(float64(incrWrite.Microseconds())/n/1000, "incr-write-ms")
			b.ReportMetric(float64(restore.Milliseconds())/n, "restore-ms")
		})
	}
}

// genSource generates DAU events: app, user_id (1M string users), ts advancing 1 s of
// event time per 16 events, so that a day closes every ~1.4M events. Its position is
// the number of events returned.
type genSource struct {
	n, total int64
	rng      *rand.Rand
	apps     []types.Value
	users    []types.Value
}

func (s *genSource) Poll(ctx context.Context, _ time.Duration) ([]connectors.SourceBatch, error) {
	if s.n >= s.total {
		return nil, io.EOF
	}
	k := min(1024, s.total-s.n)
	rows := make([]types.Row, k)
	vals := make([]types.Value, 3*k)
	base := ts("2024-01-01 00:00:00.000")
	for i := range rows {
		r := vals[3*i : 3*i+3 : 3*i+3]
		r[0] = s.apps[s.rng.IntN(len(s.apps))]
		r[1] = s.users[s.rng.IntN(len(s.users))]
		r[2] = types.TimestampLTZValue(base + (s.n+int64(i))*62_500)
		rows[i] = r
	}
	s.n += k
	return []connectors.SourceBatch{{Split: "gen", Rows: rows}}, nil
}

func (s *genSource) Splits() []string                                 { return []string{"gen"} }
func (s *genSource) Snapshot() ([]byte, error)                        { return strconv.AppendInt(nil, s.n, 10), nil }
func (s *genSource) CheckpointComplete(context.Context, uint64) error { return nil }
func (s *genSource) Close() error                                     { return nil }

type discardSink struct{}

func (discardSink) Write(context.Context, connectors.ChangeBatch) error { return nil }
func (discardSink) Flush(context.Context) error                         { return nil }
func (discardSink) Close() error                                        { return nil }

var benchUserValues = sync.OnceValue(func() []types.Value {
	u := make([]types.Value, benchUsers)
	for i := range u {
		u[i] = types.StringValue(fmt.Sprintf("user-%07d", i))
	}
	return u
})

// BenchmarkDAUThroughputCheckpoints runs the DAU job (TUMBLE 1 day, COUNT(DISTINCT) of
// 1M string users per app, watermarks, Badger checkpoints) over b.N generated events,
// without checkpoints and with checkpoints every 10 s and every 1 s, in the same run.
// Run it with -benchtime 20000000x so that 10 s checkpoints happen.
func BenchmarkDAUThroughputCheckpoints(b *testing.B) {
	schema := types.Schema{{Name: "app", Type: types.TypeString}, {Name: "user_id", Type: types.TypeString}, {Name: "ts", Type: rowtimeLTZ3}}
	dau := planner.AggCall{Func: planner.AggCount, Arg: 1, Distinct: true, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "dau"}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		b.Fatal(err)
	}
	users := benchUserValues()
	for _, interval := range []string{"off", "10 s", "1 s"} {
		b.Run("checkpoints="+interval, func(b *testing.B) {
			src := &genSource{total: int64(b.N), rng: rand.New(rand.NewPCG(3, 4)), users: users,
				apps: []types.Value{types.StringValue("shop"), types.StringValue("news"), types.StringValue("maps")}}
			produce := make([]connectors.ProducedColumn, len(schema))
			for i, c := range schema {
				produce[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
			}
			scan := &planner.TableSourceScan{Table: "events", Info: connectors.TableInfo{Name: "events", Schema: schema},
				Produce: produce, Out: schema, Connector: &connectors.Factory{Name: "gen",
					NewSource: func(context.Context, connectors.SourceConfig) (connectors.Source, error) { return src, nil }}}
			wm := &planner.WatermarkAssigner{Input: scan, RowtimeCol: 2, Expr: &planner.ColumnRef{Index: 2, Name: "ts", T: rowtimeLTZ3}}
			win := &planner.WindowAggregate{
				Input:  wm,
				Window: planner.Window{Kind: planner.Tumble, TimeCol: 2, Size: 24 * time.Hour, Slide: 24 * time.Hour, Location: shanghai},
				Keys:   []int{0}, Aggs: []planner.AggCall{dau},
				Out: windowOut(schema[:1], []planner.AggCall{dau}, rowtimeLTZ3),
			}
			sink := &planner.Sink{Input: win, Table: "dau", Info: connectors.TableInfo{Name: "dau"}, Out: win.Out,
				Connector: &connectors.Factory{Name: "discard",
					NewSink: func(context.Context, connectors.SinkConfig) (connectors.Sink, error) { return discardSink{}, nil }}}
			settings := map[string]string{}
			opts := Options{JobKey: "dau"}
			if interval != "off" {
				settings[KeyCheckpointInterval] = interval
				st, err := state.OpenBadger(b.TempDir(), state.Options{NumRetained: 2})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				opts.Store = st
			}
			j, err := NewJob(&planner.Program{Pipelines: []*planner.Pipeline{{Root: sink}}, Settings: settings, Fingerprint: "bench"}, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if err := j.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			m := j.Metrics().Checkpoints
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(m.Completed), "checkpoints")
			b.ReportMetric(float64(m.MaxPause.Microseconds())/1000, "max-pause-ms")
		})
	}
}
