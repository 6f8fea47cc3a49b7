package main

import (
	"testing"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// TestKafkaPartitionsAdded grows the topic while the job runs. The job starts at the
// latest offsets, yet the new partitions are read from their first record, including
// records written to them before discovery saw them, and no record is output twice.
func TestKafkaPartitionsAdded(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "in", 2)
	c.CreateTopic(t, "out", 2)
	produceIDs(t, c, "in", 2, 0, 100) // before the job: not read (latest-offset)
	job := writeJob(t, passThrough("", c.Bootstrap(), "in", "out", `
  'scan.startup.mode' = 'latest-offset',
  'scan.topic-partition-discovery.interval' = '1 s',
  'properties.group.id' = 'grow',
  'properties.auto.commit.interval.ms' = '100'`))
	p := startPipesql(t, "run", job)
	// The first periodic commit names both partitions: the job is positioned at their ends.
	eventuallyTrue(t, "the job's first commit", func() bool {
		p.failIfExited()
		return len(c.Committed(t, "grow", "in")) == 2
	})
	w := watchTopic(t, c, "out")
	produceIDs(t, c, "in", 2, 100, 200)
	w.until("the records written after the start", p, func(rs []outRecord) bool { return len(rs) >= 100 })

	c.AddPartitions(t, "in", 3)
	// At once, before the next discovery: these records are in the new partitions first.
	produceIDs(t, c, "in", 5, 200, 500)
	w.until("the records of the new partitions", p, func(rs []outRecord) bool { return len(rs) >= 400 })
	produceIDs(t, c, "in", 5, 500, 600)
	w.until("every record", p, func(rs []outRecord) bool { return len(rs) >= 500 })
	// The periodic commits reach the end of every partition: partitions 0 and 1 hold 180
	// records, the new ones 60 written before discovery and 20 after.
	wantCommitted := map[int32]int64{0: 180, 1: 180, 2: 80, 3: 80, 4: 80}
	eventuallyTrue(t, "commits at the end of all 5 partitions", func() bool {
		got := c.Committed(t, "grow", "in")
		for part, want := range wantCommitted {
			if got[part] != want {
				return false
			}
		}
		return true
	})

	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	checkNoRestart(t, r.stderr)
	checkIDs(t, decodeIDs(t, w.snapshot()), idRange(100, 600))
}
