package kafka

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// TestBrokerScaleDown is the incident that motivated pipesql, at connector level: 12
// brokers, the job's bootstrap list naming 6, a topic of 24 partitions, and 4 brokers
// (2 of them bootstrap brokers) decommissioned while the job reads. Flink's source
// failed and restarted for over an hour; this one must read every record exactly once
// and never return an error.
func TestBrokerScaleDown(t *testing.T) {
	c := kafkatest.NewCluster(t, 12)
	c.CreateTopic(t, "events", 24)
	produceEvents(t, c, "events", 24, 0, 2400)

	log := newTestLog(t)
	cfg := sourceConfig(c, log, "events", map[string]string{
		"properties.bootstrap.servers": c.Bootstrap(0, 1, 2, 3, 4, 5),
	})
	src := openSource(t, cfg)
	r := newReader(t, src)
	r.until("some rows", func() bool { return len(r.rows) >= 500 })

	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, node := range []int32{0, 6, 1, 7} {
			if err := c.RemoveBrokerHard(node); err != nil {
				errc <- err
				return
			}
			from := 2400 + i*600
			var rs []kafkatest.Record
			for id := from; id < from+600; id++ {
				rs = append(rs, kafkatest.Record{Partition: int32(id % 24), Value: eventJSON(id)})
			}
			if err := c.TryProduce("events", rs...); err != nil {
				errc <- err
				return
			}
		}
	}()
	r.until("every record after the scale-down", func() bool {
		select {
		case err := <-errc:
			t.Fatalf("scale-down: %v", err)
		default:
		}
		return len(r.rows) >= 4800
	})
	wg.Wait()
	r.checkIDs(0, 4800)

	// Discovery keeps working with the remaining brokers (2 of the 6 bootstrap brokers gone).
	before := src.Stats().DiscoveryAttempts
	r.until("discovery after the scale-down", func() bool {
		return src.Stats().DiscoveryAttempts > before+1 && src.Degraded() == ""
	})
	if d := src.Degraded(); d != "" {
		t.Errorf("degraded after the scale-down: %q", d)
	}
	if got := len(src.Splits()); got != 24 {
		t.Errorf("%d splits after the scale-down, want 24", got)
	}
}

// TestMetadataHang hangs every metadata request for longer than every timeout: the
// readers keep reading, the source shows as degraded, and recovers once metadata answers.
func TestMetadataHang(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 4)
	produceEvents(t, c, "events", 4, 0, 100)
	src := openSource(t, sourceConfig(c, newTestLog(t), "events", map[string]string{
		"properties.default.api.timeout.ms": "2000",
	}))
	r := newReader(t, src)
	r.count(100)

	release := make(chan struct{})
	c.HangMetadata(release)
	produceEvents(t, c, "events", 4, 100, 300)
	failuresBefore := src.Stats().DiscoveryFailures
	r.until("all rows while metadata hangs, and the degraded status", func() bool {
		return len(r.rows) >= 300 && src.Degraded() != "" && src.Stats().DiscoveryFailures > failuresBefore
	})
	r.checkIDs(0, 300)
	t.Logf("degraded while metadata hangs: %s", src.Degraded())

	close(release)
	r.until("recovery", func() bool { return src.Degraded() == "" })
	produceEvents(t, c, "events", 4, 300, 400)
	r.count(400)
}

// TestNewPartitions adds partitions while the source runs: records written to them
// before and after discovery are read from the first one, none twice.
func TestNewPartitions(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 2)
	produceEvents(t, c, "events", 2, 0, 100)
	// latest-offset: the initial partitions start at their end, new ones at their start.
	src := openSource(t, sourceConfig(c, newTestLog(t), "events", map[string]string{"scan.startup.mode": "latest-offset"}))
	r := newReader(t, src)
	r.until("the partitions", func() bool { return len(src.Splits()) == 2 })
	produceEvents(t, c, "events", 2, 100, 200)
	r.count(100)

	c.AddPartitions(t, "events", 3)
	produceEvents(t, c, "events", 5, 200, 500) // before discovery has seen the new partitions
	r.count(400)
	produceEvents(t, c, "events", 5, 500, 600)
	r.count(500)
	r.checkIDs(100, 600)
	if got := strings.Join(src.Splits(), ","); got != "events-0,events-1,events-2,events-3,events-4" {
		t.Errorf("Splits() = %s", got)
	}
}

// TestCoordinatorUnavailable fails the group coordinator: commits fail and are counted,
// Poll keeps working, and commits resume when the coordinator is back.
func TestCoordinatorUnavailable(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 2)
	produceEvents(t, c, "events", 2, 0, 100)
	cfg := sourceConfig(c, newTestLog(t), "events", map[string]string{"properties.group.id": "dau"})
	src := openSource(t, cfg)
	r := newReader(t, src)
	ctx := context.Background()

	checkpoint := func(id uint64) {
		if _, err := src.Snapshot(); err != nil {
			t.Fatal(err)
		}
		if err := src.CheckpointComplete(ctx, id); err != nil {
			t.Fatalf("CheckpointComplete: %v", err)
		}
	}
	r.count(100)
	checkpoint(1)
	eventually(t, "the first commit", func() bool {
		got := c.Committed(t, "dau", "events")
		return got[0] == 50 && got[1] == 50
	})

	restore := c.FailCoordinator("dau")
	produceEvents(t, c, "events", 2, 100, 200)
	r.count(200)
	checkpoint(2)
	r.until("a failed commit", func() bool { return src.Stats().CommitsFailed > 0 })
	if d := src.Degraded(); !strings.Contains(d, "committing offsets") {
		t.Errorf("Degraded() = %q while commits fail", d)
	}
	produceEvents(t, c, "events", 2, 200, 300)
	r.count(300) // reading goes on

	restore()
	checkpoint(3)
	r.until("commits working again", func() bool { return src.Degraded() == "" })
	got := c.Committed(t, "dau", "events")
	if got[0] != 150 || got[1] != 150 {
		t.Errorf("committed %v after recovery, want 150 for both partitions", got)
	}
	if st := src.Stats(); st.CommitsSucceeded < 2 {
		t.Errorf("stats: %+v", st)
	}
}

// TestAllBrokersDown takes every broker away and brings them back. Decision: Poll
// returns no error while brokers are down (librdkafka reconnects by itself); the
// source shows "no broker reachable" in Degraded, and resumes with nothing lost.
func TestAllBrokersDown(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 3)
	produceEvents(t, c, "events", 3, 0, 90)
	src := openSource(t, sourceConfig(c, newTestLog(t), "events", nil))
	r := newReader(t, src)
	r.count(90)

	restore := c.Outage()
	r.until("the outage to show", func() bool { return src.Degraded() != "" })
	t.Logf("degraded during the outage: %s", src.Degraded())
	for i := 0; i < 10; i++ {
		if err := r.poll(); err != nil {
			t.Fatalf("poll during the outage: %v", err)
		}
	}
	restore()
	produceEvents(t, c, "events", 3, 90, 180)
	r.count(180)
	r.checkIDs(0, 180)
	r.until("recovery", func() bool { return src.Degraded() == "" })
}

// TestNoBrokerReachable starts a source whose bootstrap brokers do not exist: Open
// retries until its context ends and names every broker it tried.
func TestNoBrokerReachable(t *testing.T) {
	log := newTestLog(t)
	c := kafkatest.NewCluster(t, 1) // only for sourceConfig; the bootstrap list points elsewhere
	cfg := sourceConfig(c, log, "events", map[string]string{
		"properties.bootstrap.servers":      "127.0.0.1:1,127.0.0.1:2",
		"properties.default.api.timeout.ms": "500",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := Open(ctx, cfg)
	if !errors.Is(err, ErrNoBrokerReachable) {
		t.Fatalf("Open: %v, want ErrNoBrokerReachable", err)
	}
	if !strings.Contains(err.Error(), "tried 127.0.0.1:1, 127.0.0.1:2") {
		t.Errorf("error does not name the brokers tried: %v", err)
	}
	if !log.contains("no broker reachable (tried 127.0.0.1:1, 127.0.0.1:2)") {
		t.Errorf("the log does not name the brokers tried: %q", log.lines)
	}
}

// TestPeriodicCommit: without checkpointing, a source with a group commits the positions
// of what it read every auto.commit.interval.ms, from Poll.
func TestPeriodicCommit(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "events", 2)
	produceEvents(t, c, "events", 2, 0, 100)
	cfg := sourceConfig(c, newTestLog(t), "events", map[string]string{
		"properties.group.id": "periodic", "properties.auto.commit.interval.ms": "100"})
	delete(cfg.Settings, "execution.checkpointing.interval")
	src := openSource(t, cfg)
	r := newReader(t, src)
	r.count(100)
	r.until("a periodic commit", func() bool {
		got := c.Committed(t, "periodic", "events")
		return got[0] == 50 && got[1] == 50
	})
	if st := src.Stats(); st.CommitsSucceeded == 0 {
		t.Errorf("stats %+v", st)
	}
}
