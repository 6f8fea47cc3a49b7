package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// TestKafkaResumeOnlyOnTheSameCluster runs a job, stops it, and runs it again from
// the same checkpoint directory: against the same cluster it resumes, says so, and
// reads each record once; against a new cluster (same pipeline.name, same topic name)
// it refuses to resume, naming both clusters and --fresh, and exits 2; with --fresh it
// reads the new cluster from the start, exactly, keeping the old checkpoints aside.
func TestKafkaResumeOnlyOnTheSameCluster(t *testing.T) {
	const parts = 2
	ckdir := t.TempDir()
	sets := fmt.Sprintf("SET 'pipeline.name' = 'dau';\nSET 'execution.checkpointing.interval' = '200 ms';\n"+
		"SET 'execution.checkpointing.dir' = '%s';\n", ckdir)
	job := func(c *kafkatest.Cluster) string {
		return writeJob(t, passThrough(sets, c.Bootstrap(), "in", "out", "'scan.startup.mode' = 'earliest-offset'"))
	}

	a := kafkatest.NewCluster(t, 1, kfake.ClusterID("cluster-a"))
	a.CreateTopic(t, "in", parts)
	a.CreateTopic(t, "out", 1)
	produceIDs(t, a, "in", parts, 0, 20)
	outA := watchTopic(t, a, "out")
	jobA := job(a)
	p := startPipesql(t, "run", jobA)
	outA.until("the first 20 records", p, func(rs []outRecord) bool { return len(rs) >= 20 })
	r := p.stop()
	if r.code != 0 {
		t.Fatalf("first run: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "checkpoints of job 'dau' in "+filepath.Join(ckdir, "dau")) {
		t.Errorf("the first run does not say where its checkpoints are:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "resumed job") {
		t.Errorf("the first run says it resumed:\n%s", r.stderr)
	}

	// The same cluster again: it resumes, says from where, and reads only what is new.
	produceIDs(t, a, "in", parts, 20, 40)
	p = startPipesql(t, "run", jobA)
	outA.until("all 40 records", p, func(rs []outRecord) bool { return len(rs) >= 40 })
	r = p.stop()
	if r.code != 0 {
		t.Fatalf("second run: exit %d\nstderr: %s", r.code, r.stderr)
	}
	line, ok := p.stderr.first("resumed job 'dau' from checkpoint", "taken", "in "+filepath.Join(ckdir, "dau"),
		"offsets of 2 partitions")
	if !ok {
		t.Errorf("the second run does not say it resumed, from which checkpoint, where:\n%s", r.stderr)
	}
	t.Logf("%s", line.text)
	checkIDs(t, decodeIDs(t, outA.snapshot()), idRange(0, 40))

	// A new cluster, reached the same way: the checkpoint's offsets are not its offsets.
	b := kafkatest.NewCluster(t, 1, kfake.ClusterID("cluster-b"))
	b.CreateTopic(t, "in", parts)
	b.CreateTopic(t, "out", 1)
	produceIDs(t, b, "in", parts, 100, 110)
	jobB := job(b)
	start := time.Now()
	r = pipesql(t, "run", jobB)
	if r.code != 2 {
		t.Fatalf("run against another cluster: exit %d, want 2 (refused)\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{"cannot resume from checkpoint", "another Kafka cluster", "Kafka cluster 'cluster-a'",
		"Kafka cluster 'cluster-b'", "--fresh", "pipesql.restore.allow-changed-input"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "resumed job") || strings.Contains(r.stderr, "restarting") {
		t.Errorf("a refused restore was announced or retried:\n%s", r.stderr)
	}
	// Nothing was fetched at the checkpoint's offsets before the refusal.
	if strings.Contains(r.stderr, "offset reset") {
		t.Errorf("the reader fetched before the cluster was checked:\n%s", r.stderr)
	}
	t.Logf("refused in %s", time.Since(start).Round(time.Millisecond))

	// --fresh: the new cluster from its start, exactly; the old checkpoints kept.
	outB := watchTopic(t, b, "out")
	p = startPipesql(t, "run", "--fresh", jobB)
	outB.until("the new cluster's 10 records", p, func(rs []outRecord) bool { return len(rs) >= 10 })
	r = p.stop()
	if r.code != 0 {
		t.Fatalf("--fresh: exit %d\nstderr: %s", r.code, r.stderr)
	}
	checkIDs(t, decodeIDs(t, outB.snapshot()), idRange(100, 110))
	aside, _ := filepath.Glob(filepath.Join(ckdir, "dau.*"))
	if len(aside) != 1 || !strings.Contains(r.stderr, "its old checkpoints are kept in "+aside[0]) {
		t.Errorf("old checkpoints aside: %v\nstderr: %s", aside, r.stderr)
	}
}

// TestKafkaLateRecordsDegrade feeds a job one record far ahead in event time, then only
// records days behind its watermark: the job turns DEGRADED at the next progress
// record, saying how many were late, where the watermark is and where the records are.
func TestKafkaLateRecordsDegrade(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "clicks", 1)
	job := writeJob(t, fmt.Sprintf(`
SET 'table.local-time-zone' = 'UTC';
CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
  'connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'
);
CREATE TABLE dau (d STRING, users BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), COUNT(DISTINCT user_id)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end;
`, c.Bootstrap()))
	click := func(user int, ts time.Time) kafkatest.Record {
		return kafkatest.Record{Value: []byte(fmt.Sprintf(`{"user_id":"u%d","ts":"%s"}`, user, ts.Format("2006-01-02 15:04:05.000")))}
	}
	c.Produce(t, "clicks", click(0, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
	const interval = time.Second
	p := startPipesql(t, "run", "--progress", "log", "--progress-interval", interval.String(), job)
	eventuallyTrue(t, "the first record read", func() bool {
		_, ok := p.stderr.first("msg=progress", "records=1 ")
		return ok
	})
	var late []kafkatest.Record
	for i := range 500 {
		late = append(late, click(i, time.Date(2025, 11, 29, 12, 0, i, 0, time.UTC)))
	}
	c.Produce(t, "clicks", late...)
	produced := time.Now()
	var line timedLine
	eventuallyTrue(t, "a DEGRADED progress record", func() bool {
		p.failIfExited()
		var ok bool
		line, ok = p.stderr.first("msg=progress", "state=DEGRADED")
		return ok
	})
	for _, want := range []string{"% of records in the last", "were late", "watermark 2029-12-31 23:59:55", "records around 2025-11-29"} {
		if !strings.Contains(line.text, want) {
			t.Errorf("the DEGRADED record does not say %q: %s", want, line.text)
		}
	}
	// The records take a moment to be read; then the next progress record tells.
	if d := line.at.Sub(produced); d > 2*interval+3*time.Second {
		t.Errorf("DEGRADED %s after the late records were written, progress every %s", d.Round(time.Millisecond), interval)
	}
	t.Logf("%s after the late records: %s", line.at.Sub(produced).Round(time.Millisecond), line.text)
	if r := p.stop(); r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
}
