package kafka

import (
	"sort"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
)

var _ connectors.Reporter = (*Source)(nil)

// Report returns the source's counters and, for each partition being read, its next
// offset, its high watermark and the lag between them (connectors.Reporter). The high
// watermark is the one librdkafka cached from the partition's last fetch response: the
// reader's client answers it from memory, so Report never waits on a broker, and during
// an outage the lag is the one last known. Report is called from the source's goroutine.
func (s *Source) Report() []connectors.Measure {
	st := s.Stats()
	out := make([]connectors.Measure, 0, 16+3*len(s.splits))
	add := func(name, help string, kind connectors.MeasureKind, split string, v float64) {
		out = append(out, connectors.Measure{Name: name, Help: help, Kind: kind, Split: split, Value: v})
	}
	counter := func(name, help string, v uint64) { add(name, help, connectors.Counter, "", float64(v)) }
	gauge := func(name, help string, v float64) { add(name, help, connectors.Gauge, "", v) }

	counter("bytes_total", "Key and value bytes of the records read.", st.Bytes)
	counter("tombstones_total", "Records without a value, which hold no row.", st.Tombstones)
	counter("client_errors_total", "Errors librdkafka reported and recovered from (brokers down, timeouts).", st.ClientErrors)
	gauge("partitions", "Partitions being read.", float64(st.Partitions))

	e := s.enum
	e.mu.Lock()
	brokers := len(e.brokers)
	inFlight := !e.inFlight.IsZero()
	e.mu.Unlock()
	gauge("brokers", "Brokers in the cluster's last metadata answer.", float64(brokers))
	successes := st.DiscoveryAttempts - st.DiscoveryFailures
	if inFlight && successes > 0 {
		successes-- // the attempt in flight has neither succeeded nor failed yet
	}
	counter("discovery_attempts_total", "Partition discovery attempts (metadata listings).", st.DiscoveryAttempts)
	counter("discovery_successes_total", "Partition discovery attempts that succeeded.", successes)
	counter("discovery_failures_total", "Partition discovery attempts that failed or timed out.", st.DiscoveryFailures)
	last := 0.0
	if !st.LastDiscoverySuccess.IsZero() {
		last = float64(st.LastDiscoverySuccess.UnixNano()) / 1e9
	}
	gauge("discovery_last_success_timestamp_seconds", "When partition discovery last succeeded (Unix time), 0 before the first success.", last)
	gauge("discovery_since_success_seconds", "Seconds since partition discovery last succeeded (since the source opened, before the first success).",
		st.SinceDiscovery.Seconds())
	counter("commits_succeeded_total", "Offset commits to the consumer group that succeeded.", st.CommitsSucceeded)
	counter("commits_failed_total", "Offset commits to the consumer group that failed.", st.CommitsFailed)
	counter("commits_superseded_total", "Offset commits replaced by a newer one before being sent.", st.CommitsSuperseded)

	parts := make([]*partState, 0, len(s.parts))
	for _, ps := range s.parts {
		if !ps.finished {
			parts = append(parts, ps)
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].split < parts[j].split })
	for _, ps := range parts {
		low, high, err := s.consumer.GetWatermarkOffsets(ps.key.topic, ps.key.partition)
		next := ps.next
		if next < 0 && err == nil && low >= 0 {
			next = low // not read yet, starting at the earliest offset
		}
		if next >= 0 {
			add(connectors.MeasureOffset, "Next offset the source reads in the partition.", connectors.Gauge, ps.split, float64(next))
		}
		if err != nil || high < 0 || high == int64(ckafka.OffsetInvalid) {
			continue // no fetch answered yet: the end is not known
		}
		add(connectors.MeasureEndOffset, "High watermark of the partition, as of its last fetch.", connectors.Gauge, ps.split, float64(high))
		if next >= 0 {
			add(connectors.MeasureLag, "Records of the partition after the read position (high watermark minus next offset).",
				connectors.Gauge, ps.split, float64(max(high-next, 0)))
		}
	}
	return out
}
