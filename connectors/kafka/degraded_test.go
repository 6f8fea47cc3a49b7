package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestCommitCoordinatorGone removes the broker that coordinates the source's group
// after a commit went to it. The group gets a new coordinator; commits fail against the
// old one until the source finds the new one, and then work again, without the broker
// coming back (librdkafka alone would send every commit to the broker that is gone).
func TestCommitCoordinatorGone(t *testing.T) {
	c := kafkatest.NewCluster(t, 4)
	c.CreateTopic(t, "events", 4)
	produceEvents(t, c, "events", 4, 0, 40)
	src := openSource(t, sourceConfig(c, newTestLog(t), "events", map[string]string{"properties.group.id": "dau"}))
	r := newReader(t, src)
	r.count(40)
	id := uint64(0)
	checkpoint := func() {
		id++
		if _, err := src.Snapshot(); err != nil {
			t.Fatal(err)
		}
		if err := src.CheckpointComplete(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint()
	r.until("the first commit", func() bool { return src.Stats().CommitsSucceeded == 1 })

	gone := c.Kfake().CoordinatorFor("dau")
	if err := c.RemoveBrokerHard(gone); err != nil {
		t.Fatal(err)
	}
	produceEvents(t, c, "events", 4, 40, 80)
	r.count(80)
	succeeded := src.Stats().CommitsSucceeded
	r.until("a commit to the new coordinator", func() bool {
		if src.Stats().CommitsSucceeded > succeeded {
			return true
		}
		checkpoint()
		return false
	})
	// Asked of a client that never talked to the group before, which finds the new
	// coordinator.
	keys := []partitionKey{{"events", 0}, {"events", 1}, {"events", 2}, {"events", 3}}
	eventually(t, "the offsets of 80 records committed", func() bool {
		got, err := src.meta.committed(context.Background(), 5*time.Second, keys)
		return err == nil && got[keys[0]]+got[keys[1]]+got[keys[2]]+got[keys[3]] == 80
	})
	r.until("healthy", func() bool { return src.Degraded() == "" })
	t.Logf("coordinator %d removed: %d commits failed before one went to coordinator %d", gone,
		src.Stats().CommitsFailed, c.Kfake().CoordinatorFor("dau"))
}
