package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// BenchmarkSinkExactlyOnceVsAtLeastOnce writes the same rows through the at-least-once
// sink (librdkafka; Flush at every "checkpoint") and the exactly-once one (franz-go
// transactions; PrepareCommit and CheckpointComplete at every checkpoint), alternately
// in each iteration, against one in-process three-broker cluster, and reports both
// rates and their ratio. A checkpoint every 10,000 rows, as a job writing ~100k rows a
// second with 100 ms checkpoints would.
func BenchmarkSinkExactlyOnceVsAtLeastOnce(b *testing.B) {
	const rows, perCheckpoint = 100_000, 10_000
	c := kafkatest.NewCluster(b, 3)
	c.CreateTopic(b, "alo", 4)
	c.CreateTopic(b, "eo", 4)
	ctx := context.Background()
	batches := make([]connectors.ChangeBatch, 0, rows/1000)
	for from := 0; from < rows; from += 1000 {
		batches = append(batches, inserts(from, from+1000))
	}
	alo, err := OpenSink(ctx, sinkConfig(c, &testLog{t: b}, "alo", eventSchema, nil, map[string]string{"key.format": "json", "key.fields": "id"}), false)
	if err != nil {
		b.Fatal(err)
	}
	defer alo.Close()
	eoCfg := sinkConfig(c, &testLog{t: b}, "eo", eventSchema, nil, map[string]string{"key.format": "json", "key.fields": "id",
		"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "bench"})
	eoSink, err := NewSink(ctx, eoCfg)
	if err != nil {
		b.Fatal(err)
	}
	eo := eoSink.(exactlyOnceSink)
	defer eo.Close()
	var checkpoint uint64
	run := func(write func(connectors.ChangeBatch) error, cut func() error) time.Duration {
		start := time.Now()
		for i, batch := range batches {
			if err := write(batch); err != nil {
				b.Fatal(err)
			}
			if (i+1)*1000%perCheckpoint == 0 {
				if err := cut(); err != nil {
					b.Fatal(err)
				}
			}
		}
		return time.Since(start)
	}
	var aloTime, eoTime time.Duration
	for range b.N {
		aloTime += run(func(bt connectors.ChangeBatch) error { return alo.Write(ctx, bt) }, func() error { return alo.Flush(ctx) })
		eoTime += run(func(bt connectors.ChangeBatch) error { return eo.Write(ctx, bt) }, func() error {
			checkpoint++
			if _, err := eo.PrepareCommit(ctx, checkpoint); err != nil {
				return err
			}
			return eo.CheckpointComplete(ctx, checkpoint)
		})
	}
	aloRate := float64(rows*b.N) / aloTime.Seconds()
	eoRate := float64(rows*b.N) / eoTime.Seconds()
	b.ReportMetric(aloRate, "at-least-once-rows/s")
	b.ReportMetric(eoRate, "exactly-once-rows/s")
	b.ReportMetric(eoRate/aloRate, "exactly-once/at-least-once")
	b.Log(fmt.Sprintf("at-least-once %.0f rows/s, exactly-once %.0f rows/s (%.2fx)", aloRate, eoRate, eoRate/aloRate))
}
