package builtin

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/conntest"
	"github.com/pipesql/pipesql/types"
)

var benchSchema = types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "user_id", Type: types.TypeString},
	{Name: "amount", Type: types.TypeDouble}, {Name: "ts", Type: types.TimestampType(3)}}

func benchBatch(n int) connectors.ChangeBatch {
	var b connectors.ChangeBatch
	for i := range n {
		b.Rows = append(b.Rows, types.Row{types.BigIntValue(int64(i)), types.StringValue(fmt.Sprintf("user-%06d", i%50000)),
			types.DoubleValue(float64(i) / 3), types.TimestampValue(1714557600_000000 + int64(i)*1000)})
	}
	b.Kinds = make([]connectors.RowKind, n)
	return b
}

// BenchmarkFilesystemFormats writes and reads 100k rows through the filesystem sink and
// source in json (the baseline) and parquet, in the same run.
func BenchmarkFilesystemFormats(b *testing.B) {
	const rows = 100_000
	batch := benchBatch(rows)
	for _, format := range []string{"json", "parquet"} {
		b.Run("write/"+format, func(b *testing.B) {
			for range b.N {
				dir := filepath.Join(b.TempDir(), "out")
				s, err := newFileSink(connectors.SinkConfig{TableInfo: connectors.TableInfo{Name: "out", Schema: benchSchema,
					Options: map[string]string{"connector": "filesystem", "path": dir, "format": format}}, Input: benchSchema, Log: &conntest.Logger{}}, newFakeClock())
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Write(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
				if err := s.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		dir := filepath.Join(b.TempDir(), "in")
		s, _ := newFileSink(connectors.SinkConfig{TableInfo: connectors.TableInfo{Name: "out", Schema: benchSchema,
			Options: map[string]string{"connector": "filesystem", "path": dir, "format": format}}, Input: benchSchema, Log: &conntest.Logger{}}, newFakeClock())
		s.Write(context.Background(), batch)
		s.Flush(context.Background())
		s.Close()
		b.Run("read/"+format, func(b *testing.B) {
			var produce []connectors.ProducedColumn
			for _, c := range benchSchema {
				produce = append(produce, connectors.ProducedColumn{Name: c.Name, Type: c.Type})
			}
			for range b.N {
				src, err := newFileSource(connectors.SourceConfig{TableInfo: connectors.TableInfo{Name: "in", Schema: benchSchema,
					Options: map[string]string{"connector": "filesystem", "path": dir, "format": format}}, Produce: produce, Log: &conntest.Logger{}}, newFakeClock())
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					batches, err := src.Poll(context.Background(), time.Millisecond)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					for _, bt := range batches {
						n += len(bt.Rows)
					}
				}
				src.Close()
				if n != rows {
					b.Fatalf("read %d rows", n)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
