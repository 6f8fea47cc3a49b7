package kafka

import (
	"context"
	"errors"
	"io"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/types"
)

const (
	benchRecords    = 200_000
	benchPartitions = 4
)

var (
	benchOnce    sync.Once
	benchCluster *kafkatest.Cluster
)

// benchTopic is a topic of benchRecords JSON events, written once per test binary.
func benchTopic(b *testing.B) *kafkatest.Cluster {
	benchOnce.Do(func() {
		benchCluster = kafkatest.NewCluster(&onceTB{b}, 3)
		benchCluster.CreateTopic(b, "bench", benchPartitions)
		const chunk = 10_000
		for from := 0; from < benchRecords; from += chunk {
			produceEvents(b, benchCluster, "bench", benchPartitions, from, from+chunk)
		}
	})
	return benchCluster
}

// onceTB keeps the shared cluster alive for the whole run: its Cleanup is never called
// by the first benchmark that happens to create it.
type onceTB struct{ testing.TB }

func (onceTB) Cleanup(func()) {}

// BenchmarkSourceVsBareConsumer reads the same topic with a bare confluent-kafka-go
// consumer (records only, no decoding) and with the Source (records decoded from JSON
// into rows, grouped in batches), alternately in each iteration, and reports both rates
// and the source's cost relative to bare consumption. The source is measured twice: as
// it runs (a prefetching goroutine takes records out of librdkafka while Poll decodes)
// and taking records out of librdkafka in Poll itself ("direct", as it did before
// prefetching), so that both figures come from the same run. Time is measured from the
// first record to the last, so that all pay the same start-up (connection, offset
// lookup) outside the measurement.
func BenchmarkSourceVsBareConsumer(b *testing.B) {
	compareWithBare(b, physical())
}

// BenchmarkSourceMetadataOnly is the source producing only a metadata column, against
// the bare consumer: the cost of the source without decoding.
func BenchmarkSourceMetadataOnly(b *testing.B) {
	compareWithBare(b, []connectors.ProducedColumn{{Name: "off", Type: types.TypeBigInt, MetadataKey: "offset"}})
}

// compareWithBare alternates the readers and reports medians, so that load from other
// processes on the machine (which comes and goes) affects all alike.
func compareWithBare(b *testing.B, produce []connectors.ProducedColumn) {
	c := benchTopic(b)
	var bare, src, ratio, direct, directRatio, bareCPU, srcCPU, cpuRatio []float64
	for i := 0; i < b.N; i++ {
		tb, cb := readBare(b, c)
		td, _ := readSource(b, c, produce, false)
		ts, cs := readSource(b, c, produce, true)
		bare = append(bare, benchRecords/tb.Seconds())
		src = append(src, benchRecords/ts.Seconds())
		ratio = append(ratio, 100*(ts.Seconds()/tb.Seconds()-1))
		direct = append(direct, benchRecords/td.Seconds())
		directRatio = append(directRatio, 100*(td.Seconds()/tb.Seconds()-1))
		bareCPU = append(bareCPU, float64(cb.Microseconds())/benchRecords)
		srcCPU = append(srcCPU, float64(cs.Microseconds())/benchRecords)
		cpuRatio = append(cpuRatio, 100*(cs.Seconds()/cb.Seconds()-1))
	}
	b.ReportMetric(median(bare), "bare-events/s")
	b.ReportMetric(median(src), "source-events/s")
	b.ReportMetric(median(ratio), "source-overhead-%")
	b.ReportMetric(median(direct), "direct-events/s")
	b.ReportMetric(median(directRatio), "direct-overhead-%")
	b.ReportMetric(median(bareCPU), "bare-cpu-us/event")
	b.ReportMetric(median(srcCPU), "source-cpu-us/event")
	b.ReportMetric(median(cpuRatio), "source-cpu-overhead-%")
}

// cpuTime is the CPU time the process has used, on every thread: the reader, librdkafka's
// threads, the garbage collector and the in-process cluster, which both readers share.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// readBare reads the topic with a bare consumer and returns the wall and CPU time from
// the first record to the last.
func readBare(b *testing.B, c *kafkatest.Cluster) (wall, cpu time.Duration) {
	cons, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": c.Bootstrap(), "group.id": "bench-bare", "enable.auto.commit": false,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	topic := "bench"
	var tps []ckafka.TopicPartition
	for p := int32(0); p < benchPartitions; p++ {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: p, Offset: ckafka.OffsetBeginning})
	}
	if err := cons.Assign(tps); err != nil {
		b.Fatal(err)
	}
	var start time.Time
	var startCPU time.Duration
	n := 0
	deadline := time.Now().Add(testDeadline)
	for n < benchRecords {
		if time.Now().After(deadline) {
			b.Fatalf("bare consumer read %d records before the deadline", n)
		}
		if m, ok := cons.Poll(100).(*ckafka.Message); ok && m.TopicPartition.Error == nil {
			if n == 0 {
				start, startCPU = time.Now(), cpuTime()
			}
			n++
		}
	}
	return time.Since(start), cpuTime() - startCPU
}

// readSource reads the topic with a Source (prefetching or not) and returns the wall and CPU time from the
// first record to the last.
func readSource(b *testing.B, c *kafkatest.Cluster, produce []connectors.ProducedColumn, prefetch bool) (wall, cpu time.Duration) {
	log := &benchLog{}
	cfg := sourceConfig(c, nil, "bench", map[string]string{"scan.bounded.mode": "latest-offset"})
	cfg.Log = log
	cfg.Produce = produce
	src, err := open(context.Background(), cfg, prefetch)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var start, end time.Time
	var startCPU, endCPU time.Duration
	n := 0
	ctx := context.Background()
	for {
		batches, err := src.Poll(ctx, 100*time.Millisecond)
		for _, bt := range batches {
			if n == 0 && len(bt.Rows) > 0 {
				start, startCPU = time.Now(), cpuTime()
			}
			n += len(bt.Rows)
		}
		if n == benchRecords && end.IsZero() {
			end, endCPU = time.Now(), cpuTime()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if n != benchRecords {
		b.Fatalf("source read %d records, want %d", n, benchRecords)
	}
	return end.Sub(start), endCPU - startCPU
}

type benchLog struct{}

func (benchLog) Warn(string, ...any) {}
func (benchLog) Info(string, ...any) {}
