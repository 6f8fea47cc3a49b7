package exec

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkMatchRecognize measures events per second of the three-step pattern
// PATTERN (A B+ C) DEFINE A AS v < 20, B AS B.v > PREV(B.v), C AS C.v < LAST(B.v) (a low,
// a rise, a drop) over 10M rows of 1000 keys, in batches of 1024 with a watermark after
// each, through the MATCH_RECOGNIZE operator (rows wait for the watermark, are matched
// in time order, one row per match); "hand-written" is the same pattern as a Go loop over
// per-key buffers, measured in the same run over the same values. Both count the matches,
// which must agree.
func BenchmarkMatchRecognize(b *testing.B) {
	const (
		total  = 10_000_000
		keys   = 1000
		batchN = 1024
	)
	stmts, err := parser.ParseScript("bench.sql", `CREATE TABLE e (k BIGINT, v BIGINT, rt TIMESTAMP(3), WATERMARK FOR rt AS rt)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent', 'format' = 'json');
SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY rt MEASURES FIRST(v) AS a, LAST(B.v) AS top, COUNT(*) AS n
  AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C)
  DEFINE A AS v < 20, B AS B.v > PREV(B.v), C AS C.v < LAST(B.v)) AS m;`)
	if err != nil {
		b.Fatal(err)
	}
	s := planner.NewSession()
	if err := s.Apply(stmts[0]); err != nil {
		b.Fatal(err)
	}
	prog, err := s.Plan(stmts[1])
	if err != nil {
		b.Fatal(err)
	}
	var m *planner.Match
	for n := prog.Pipelines[0].Root; n != nil && m == nil; {
		if x, ok := n.(*planner.Match); ok {
			m = x
			break
		}
		if len(n.Children()) == 0 {
			break
		}
		n = n.Children()[0]
	}
	if m == nil {
		b.Fatal("no Match in the plan")
	}
	if in := m.Input.Schema(); len(in) != 3 || in[0].Name != "k" || in[1].Name != "v" || in[2].Name != "rt" {
		b.Fatalf("the Match reads %v", in)
	}
	spec, err := compileMatch(m, eval.Env{}, false)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	const pool = 1 << 20
	ks, vs := make([]int64, pool), make([]int64, pool)
	for i := range ks {
		ks[i], vs[i] = int64(rng.IntN(keys)), rng.Int64N(100)
	}
	var opMatches int64
	b.Run("match operator", func(b *testing.B) {
		for b.Loop() {
			op, err := spec.build(nil, newOpMetrics(0, "match"))
			if err != nil {
				b.Fatal(err)
			}
			ch := make(chan event, 64)
			done := make(chan int64)
			go func() {
				var n int64
				for e := range ch {
					n += int64(len(e.batch.rows))
				}
				done <- n
			}()
			out := newOutbox(ch, batchN, &counter{})
			ctx := context.Background()
			start := time.Now()
			for i := 0; i < total/batchN; i++ {
				ts := types.TimestampValue(int64(i) * 1000)
				rows := make([]types.Row, batchN)
				vals := make([]types.Value, 3*batchN)
				for j := range rows {
					e := (i*batchN + j) % pool
					r := vals[3*j : 3*j+3 : 3*j+3]
					r[0], r[1], r[2] = types.IntValue(types.BigInt, ks[e]), types.IntValue(types.BigInt, vs[e]), ts
					rows[j] = r
				}
				if err := op.processBatch(ctx, batch{rows: rows}, out); err != nil {
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
			opMatches = <-done
			b.ReportMetric(float64(total/batchN*batchN)/time.Since(start).Seconds(), "events/s")
		}
		b.ReportMetric(float64(opMatches), "matches")
	})
	b.Run("hand-written", func(b *testing.B) {
		var matches int64
		for b.Loop() {
			bufs := make([][]int64, keys)
			matches = 0
			start := time.Now()
			for i := 0; i < total/batchN*batchN; i++ {
				e := i % pool
				buf := append(bufs[ks[e]], vs[e])
				for len(buf) > 0 {
					if buf[0] >= 20 || len(buf) >= 2 && buf[1] <= buf[0] {
						buf = buf[1:] // no match starts here
						continue
					}
					if len(buf) < 2 {
						break
					}
					j := 2
					for j < len(buf) && buf[j] > buf[j-1] {
						j++
					}
					if j == len(buf) {
						break // the rise may go on
					}
					if buf[j] < buf[j-1] {
						matches++
						buf = buf[j+1:]
					} else {
						buf = buf[1:]
					}
				}
				bufs[ks[e]] = buf
			}
			b.ReportMetric(float64(total/batchN*batchN)/time.Since(start).Seconds(), "events/s")
		}
		b.ReportMetric(float64(matches), "matches")
		if opMatches != 0 && matches != opMatches {
			b.Fatalf("hand-written found %d matches, the operator %d", matches, opMatches)
		}
	})
}
