package jdbc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/pgtest"
	"github.com/pipesql/pipesql/types"
)

// BenchmarkUpsert writes the same 100k rows (id, name, n) into PostgreSQL through the
// jdbc sink (upserts by id, 10,000 rows per flush; and appended by COPY, without a
// key) and, as the baseline in the same
// run, with plain pgx: a COPY into an empty table, and a pipelined batch of plain
// INSERTs into an empty table. Each reports rows/s; the sink's first round inserts, its
// later rounds update every row (ON CONFLICT DO UPDATE).
//
//	go test -run - -bench Upsert -benchtime 3x ./connectors/jdbc
func BenchmarkUpsert(b *testing.B) {
	const rows = 100_000
	pg := pgtest.Start(b)
	ctx := context.Background()
	schema := types.Schema{col("id", types.TypeBigInt.WithNotNull(true)), col("name", types.TypeString), col("n", types.TypeBigInt)}
	data := make([]types.Row, rows)
	plain := make([][]any, rows)
	for i := range data {
		data[i] = types.Row{types.BigIntValue(int64(i)), types.StringValue(fmt.Sprintf("user-%07d", i)), types.BigIntValue(int64(i * 3))}
		plain[i] = []any{int64(i), fmt.Sprintf("user-%07d", i), int64(i * 3)}
	}
	fresh := func(b *testing.B) {
		pg.Exec(b, "DROP TABLE IF EXISTS bench; CREATE TABLE bench (id bigint PRIMARY KEY, name text, n bigint)")
	}
	report := func(b *testing.B, start time.Time, n int) {
		b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
	}

	b.Run("sink-upsert", func(b *testing.B) {
		fresh(b)
		s, err := OpenSink(ctx, sinkConfig(pg, "bench", schema, []string{"id"},
			map[string]string{"sink.buffer-flush.max-rows": "10000", "sink.buffer-flush.interval": "0"}))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			for i := 0; i < rows; i += 1000 {
				if err := s.Write(ctx, connectors.ChangeBatch{Rows: data[i : i+1000]}); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start, rows)
	})
	b.Run("sink-append", func(b *testing.B) {
		s, err := OpenSink(ctx, sinkConfig(pg, "bench", schema, nil,
			map[string]string{"sink.buffer-flush.max-rows": "10000", "sink.buffer-flush.interval": "0"}))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			b.StopTimer()
			pg.Exec(b, "TRUNCATE bench")
			b.StartTimer()
			for i := 0; i < rows; i += 1000 {
				if err := s.Write(ctx, connectors.ChangeBatch{Rows: data[i : i+1000]}); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start, rows)
	})
	b.Run("pgx-copy", func(b *testing.B) {
		conn := pg.Connect(b, "postgres")
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			b.StopTimer()
			fresh(b)
			b.StartTimer()
			if _, err := conn.CopyFrom(ctx, pgx.Identifier{"bench"}, []string{"id", "name", "n"}, pgx.CopyFromRows(plain)); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start, rows)
	})
	b.Run("pgx-batch-insert", func(b *testing.B) {
		conn := pg.Connect(b, "postgres")
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			b.StopTimer()
			fresh(b)
			b.StartTimer()
			for i := 0; i < rows; i += 10000 {
				batch := &pgx.Batch{}
				for _, r := range plain[i : i+10000] {
					batch.Queue("INSERT INTO bench (id, name, n) VALUES ($1, $2, $3)", r...)
				}
				if err := conn.SendBatch(ctx, batch).Close(); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, start, rows)
	})
}
