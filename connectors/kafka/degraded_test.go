package kafka

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// TestDecommissionLeaderless is the incident's broker removal on a topic of one
// replica: a third of the brokers go away and the partitions they led have no leader.
// The source reads on from the others and says which partitions it cannot read, by
// the next discovery; when the brokers come back it reads those partitions from where
// it stood, and is healthy again.
func TestDecommissionLeaderless(t *testing.T) {
	const parts = 12
	c := kafkatest.NewCluster(t, 6)
	c.CreateTopic(t, "events", parts)
	produceEvents(t, c, "events", parts, 0, 1200)
	log := newTestLog(t)
	src := openSource(t, sourceConfig(c, log, "events", nil))
	r := newReader(t, src)
	r.count(1200)

	leaderless, restore, err := c.Decommission("events", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(leaderless) == 0 || len(leaderless) == parts {
		t.Fatalf("brokers 0 and 1 led partitions %v of %d: the test needs some, not all", leaderless, parts)
	}
	var want []string
	for _, p := range leaderless {
		want = append(want, fmt.Sprintf("events-%d", p))
	}
	r.until("the leaderless partitions in Degraded", func() bool {
		return strings.Contains(src.Degraded(), fmt.Sprintf("%d partitions without a leader", len(leaderless)))
	})
	d := src.Degraded()
	for i, w := range want {
		if i < 4 && !strings.Contains(d, w) {
			t.Errorf("Degraded() = %q, does not name %s", d, w)
		}
	}
	t.Logf("degraded: %s", d)

	// The partitions with a leader are read meanwhile.
	led := map[int32]bool{}
	for p := range int32(parts) {
		led[p] = true
	}
	for _, p := range leaderless {
		delete(led, p)
	}
	var rs []kafkatest.Record
	n := 1200
	for id := 1200; id < 2400; id++ {
		if led[int32(id%parts)] {
			rs = append(rs, kafkatest.Record{Partition: int32(id % parts), Value: eventJSON(id)})
			n++
		}
	}
	c.Produce(t, "events", rs...)
	r.count(n)

	if err := restore(); err != nil {
		t.Fatal(err)
	}
	r.until("healthy again", func() bool { return src.Degraded() == "" })
	rs = rs[:0]
	for id := 2400; id < 2400+parts*10; id++ {
		rs = append(rs, kafkatest.Record{Partition: int32(id % parts), Value: eventJSON(id)})
	}
	c.Produce(t, "events", rs...)
	r.count(n + parts*10)
	if !log.contains("partitions without a leader") || !log.contains("every partition has a leader again") {
		t.Errorf("the log does not tell the leaders lost and found: %q", log.lines)
	}
}

// TestIdleSourceRecovers takes every broker away from a source of a topic nobody writes
// to, and brings them back: with no record to read, the source still stops saying
// "no broker reachable" once a broker answers its reader again.
func TestIdleSourceRecovers(t *testing.T) {
	c := kafkatest.NewCluster(t, 2)
	c.CreateTopic(t, "events", 2)
	produceEvents(t, c, "events", 2, 0, 20)
	src := openSource(t, sourceConfig(c, newTestLog(t), "events", nil))
	r := newReader(t, src)
	r.count(20)

	restore := c.Outage()
	r.until("no broker reachable", func() bool { return strings.Contains(src.Degraded(), "no broker reachable") })
	restore()
	r.until("healthy after the outage, without a record", func() bool { return src.Degraded() == "" })
	if len(r.rows) != 20 {
		t.Errorf("%d rows, want 20", len(r.rows))
	}
}
