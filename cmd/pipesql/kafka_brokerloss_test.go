package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// seedJob is the DAU job of the incident (its timeouts, a 5 s discovery interval so that
// discovery runs while brokers go away) plus a pass-through of every event's sequence
// number, whose output shows the job's progress record by record.
const seedJob = `
SET 'table.local-time-zone' = 'Asia/Shanghai';
%[2]s
CREATE TABLE events (
  seq        BIGINT,
  app        STRING,
  user_id    STRING,
  event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '%[1]s',
  'properties.group.id' = 'dau',
  'properties.default.api.timeout.ms' = '60000',
  'properties.request.timeout.ms' = '30000',
  'scan.startup.mode' = 'earliest-offset',
  'scan.topic-partition-discovery.interval' = '5 s',
  'format' = 'json'
);
CREATE TABLE dau ({day} STRING, app STRING, dau BIGINT, events BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'dau', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json');
CREATE TABLE progress (seq BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'progress', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json');
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
INSERT INTO progress SELECT seq FROM events;
`

// seqEvent is a DAU event with the sequence number the progress job passes through.
type seqEvent struct {
	Seq int64 `json:"seq"`
	dauEvent
}

// feeder produces DAU events continuously in the background, as a live topic gets them,
// and remembers when each sequence number was produced.
type feeder struct {
	t     *testing.T
	c     *kafkatest.Cluster
	topic string
	g     *dauGen

	mu       sync.Mutex
	produced map[int64]time.Time // seq -> when its batch was acknowledged
	lastErr  error
	stalls   time.Duration // the longest a batch took to be acknowledged
	stop     chan struct{}
	done     chan struct{}
}

// startFeeder produces batch events every interval until stopFeeding.
func startFeeder(t *testing.T, c *kafkatest.Cluster, topic string, g *dauGen, batch int, interval time.Duration) *feeder {
	f := &feeder{t: t, c: c, topic: topic, g: g, produced: map[int64]time.Time{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-tick.C:
			}
			f.mu.Lock()
			rs := g.events(batch)
			first := int64(g.n - batch)
			f.mu.Unlock()
			for i := range rs {
				var e dauEvent
				json.Unmarshal(rs[i].Value, &e)
				rs[i].Value, _ = json.Marshal(seqEvent{first + int64(i), e})
			}
			start := time.Now()
			err := c.TryProduce(topic, rs...)
			now := time.Now()
			f.mu.Lock()
			if err != nil {
				f.lastErr = err
			}
			f.stalls = max(f.stalls, now.Sub(start))
			for i := range rs {
				f.produced[first+int64(i)] = now
			}
			f.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { f.stopFeeding() })
	return f
}

// stopFeeding stops the producer and returns its error, if any.
func (f *feeder) stopFeeding() error {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastErr
}

func (f *feeder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.produced)
}

// flushWatermark writes one event per partition on the day after the last event's, so
// that the watermark passes the end of every day with data and each of those windows
// fires. It returns that day: its window stays open and is not part of the truth.
func flushWatermark(t *testing.T, c *kafkatest.Cluster, topic string, parts int, g *dauGen, seq int64) string {
	t.Helper()
	last := time.UnixMilli(g.next + 1000).In(shanghai)
	next := time.Date(last.Year(), last.Month(), last.Day()+1, 0, 0, 30, 0, shanghai)
	var rs []kafkatest.Record
	for p := range parts {
		v, _ := json.Marshal(seqEvent{seq + int64(p), dauEvent{App: "flush", UserID: "flush", EventTime: next.UnixMilli()}})
		rs = append(rs, kafkatest.Record{Partition: int32(p), Value: v})
	}
	c.Produce(t, topic, rs...)
	return next.Format("2006-01-02")
}

// progressFigures describes how the job progressed: per output record, when the job
// wrote it (its CreateTime, set by the job's producer) and how long after its input was
// acknowledged.
type progressFigures struct {
	longestGap   time.Duration // longest time between two consecutive outputs
	gapAt        time.Time     // when that gap began
	worstLatency time.Duration // longest time from an input's acknowledgement to its output
	records      int
	duplicates   int
}

// progressBetween measures the progress output written in [from, to).
func progressBetween(t *testing.T, f *feeder, rs []outRecord, from, to time.Time) progressFigures {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var pf progressFigures
	var times []time.Time
	seen := map[int64]bool{}
	for _, r := range rs {
		var v struct {
			Seq int64 `json:"seq"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("progress output %q: %v", r.Value, err)
		}
		if seen[v.Seq] {
			pf.duplicates++
		}
		seen[v.Seq] = true
		if r.Timestamp.Before(from) || !r.Timestamp.Before(to) {
			continue
		}
		times = append(times, r.Timestamp)
		pf.records++
		if in, ok := f.produced[v.Seq]; ok {
			pf.worstLatency = max(pf.worstLatency, r.Timestamp.Sub(in))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap > pf.longestGap {
			pf.longestGap, pf.gapAt = gap, times[i-1]
		}
	}
	return pf
}

// TestKafkaSeedScenario is the incident pipesql exists for, through the binary: 12
// brokers, a bootstrap list naming 6 of them, a topic of 24 partitions, and 4 brokers
// removed hard (2 of them bootstrap brokers) while the DAU job consumes a live topic.
// The job never restarts, its DAU equals the truth, and the time it made no progress is
// measured from its output.
func TestKafkaSeedScenario(t *testing.T) {
	const parts = 24
	c := kafkatest.NewCluster(t, 12)
	c.CreateTopic(t, "events", parts)
	c.CreateTopic(t, "dau", 1)
	c.CreateTopic(t, "progress", 4)
	// About 1000 events a second, each 15 s of event time on average: a day of events
	// every 6 seconds, so that windows close while brokers go away.
	g := newDAUGen(parts, time.Date(2026, 3, 1, 9, 0, 0, 0, shanghai), 15*time.Second)
	f := startFeeder(t, c, "events", g, 48, 50*time.Millisecond)

	job := writeJob(t, strings.ReplaceAll(fmt.Sprintf(seedJob, c.Bootstrap(0, 1, 2, 3, 4, 5), checkpointing(t, "2 s")), "{day}", "`day`"))
	p := startPipesql(t, "run", job)
	progress := watchTopic(t, c, "progress")
	dau := watchTopic(t, c, "dau")

	progress.until("the job consuming", p, func(rs []outRecord) bool { return len(rs) >= 2000 })
	firstRemoval := time.Now()
	// 0 and 1 are bootstrap brokers, 6 and 7 are not. After each removal the job must make
	// progress before the next one.
	for _, node := range []int32{0, 6, 1, 7} {
		if err := c.RemoveBrokerHard(node); err != nil {
			t.Fatal(err)
		}
		t.Logf("removed broker %d", node)
		want := progress.len() + 1000
		progress.until(fmt.Sprintf("progress after removing broker %d", node), p, func(rs []outRecord) bool {
			return len(rs) >= want
		})
	}
	lastRemoval := time.Now()
	// Two more discovery intervals with the remaining brokers.
	want := progress.len() + 10000
	progress.until("progress after the removals", p, func(rs []outRecord) bool { return len(rs) >= want })
	if err := f.stopFeeding(); err != nil {
		t.Fatalf("producing: %v", err)
	}
	fed := f.count()
	flushDay := flushWatermark(t, c, "events", parts, g, int64(fed))
	truth := g.want(flushDay)
	progress.until("every event passed through", p, func(rs []outRecord) bool { return len(rs) >= fed+parts })
	dau.until("every day's DAU", p, func(rs []outRecord) bool { return len(rs) >= len(truth) })

	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	checkNoRestart(t, r.stderr)
	var values [][]byte
	for _, rec := range dau.snapshot() {
		values = append(values, rec.Value)
	}
	compareDAU(t, "DAU after the scale-down", decodeDAU(t, values), truth)
	days := map[string]bool{}
	for k := range truth {
		days[k.day] = true
	}

	all := progress.snapshot()
	before := progressBetween(t, f, all, time.Time{}, firstRemoval)
	during := progressBetween(t, f, all, firstRemoval, lastRemoval.Add(10*time.Second))
	if during.duplicates > 0 {
		t.Errorf("%d events passed through twice", during.duplicates)
	}
	t.Logf("%d events over %d days (%d DAU rows); %d written while brokers were removed and 10 s after",
		fed, len(days), len(truth), during.records)
	t.Logf("before the removals: longest pause between outputs %s, worst input-to-output latency %s",
		before.longestGap.Round(time.Millisecond), before.worstLatency.Round(time.Millisecond))
	t.Logf("NO-PROGRESS TIME while 4 of 12 brokers were removed: longest pause between outputs %s (at +%s), worst input-to-output latency %s; the test's producer waited at most %s for an acknowledgement",
		during.longestGap.Round(time.Millisecond), during.gapAt.Sub(firstRemoval).Round(time.Millisecond),
		during.worstLatency.Round(time.Millisecond), f.stalls.Round(time.Millisecond))
	t.Logf("job warnings: %d lines on stderr", strings.Count(r.stderr, "level=WARN"))
	if testing.Verbose() {
		t.Logf("job stderr:\n%s", r.stderr)
	}
}
