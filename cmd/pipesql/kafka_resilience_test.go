//go:build soak

// The minute-long outage replays through the binary: run with go test -tags soak -run Soak.

package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// idFeeder produces id records continuously in the background, as a live topic gets
// them: perTick records every tick, ids counting up from where it starts.
type idFeeder struct {
	mu   sync.Mutex
	next int
	err  error
	stop chan struct{}
	done chan struct{}
}

func startIDFeeder(t *testing.T, c *kafkatest.Cluster, topic string, parts, from, perTick int, tick time.Duration) *idFeeder {
	f := &idFeeder{next: from, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-tk.C:
			}
			f.mu.Lock()
			from := f.next
			f.mu.Unlock()
			var rs []kafkatest.Record
			for id := from; id < from+perTick; id++ {
				rs = append(rs, kafkatest.Record{Partition: int32(id % parts), Value: idJSON(id)})
			}
			err := c.TryProduce(topic, rs...)
			f.mu.Lock()
			if err != nil {
				f.err = err
			} else {
				f.next = from + perTick
			}
			f.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { f.halt() })
	return f
}

// produced returns the end of the ids acknowledged so far.
func (f *idFeeder) produced() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next
}

// halt stops producing and returns the end of the ids produced and the error that
// stopped the feeder, if any.
func (f *idFeeder) halt() (int, error) {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next, f.err
}

// hasIDs reports whether the output holds every id in [0, n).
func hasIDs(t *testing.T, rs []outRecord, n int) bool {
	got := decodeIDs(t, rs)
	for id := range n {
		if got[int64(id)] == 0 {
			return false
		}
	}
	return true
}

// longestOutputGap is the longest time between two consecutive outputs written (by
// their CreateTime) in [from, to).
func longestOutputGap(rs []outRecord, from, to time.Time) time.Duration {
	var times []time.Time
	for _, r := range rs {
		if !r.Timestamp.Before(from) && r.Timestamp.Before(to) {
			times = append(times, r.Timestamp)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	var gap time.Duration
	for i := 1; i < len(times); i++ {
		gap = max(gap, times[i].Sub(times[i-1]))
	}
	return gap
}

// TestSoakKafkaMetadataHang holds every metadata request for 3 minutes, longer than every
// timeout of the job (default.api.timeout.ms 10 s, request.timeout.ms 5 s, discovery
// every 5 s). The readers keep reading throughout, the job warns that discovery is
// failing within one interval and timeout, warns again when it recovers, then picks up
// new partitions; it never restarts.
func TestSoakKafkaMetadataHang(t *testing.T) {
	if testing.Short() {
		t.Skip("hangs metadata for 3 minutes")
	}
	t.Parallel()
	const (
		hang      = 3 * time.Minute
		interval  = 5 * time.Second
		apiTimout = 10 * time.Second
	)
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "in", 4)
	c.CreateTopic(t, "out", 2)
	f := startIDFeeder(t, c, "in", 4, 0, 10, 100*time.Millisecond)
	job := writeJob(t, passThrough("", c.Bootstrap(), "in", "out", `
  'scan.startup.mode' = 'earliest-offset',
  'properties.default.api.timeout.ms' = '10000',
  'properties.request.timeout.ms' = '5000',
  'scan.topic-partition-discovery.interval' = '5 s'`))
	p := startPipesql(t, "run", job)
	w := watchTopic(t, c, "out")
	w.until("the job reading", p, func(rs []outRecord) bool { return len(rs) >= 200 })

	release := make(chan struct{})
	hangStart := time.Now()
	c.HangMetadata(release)
	t.Logf("metadata hangs from now for %s", hang)
	// Every 30 s of the hang, the output must catch up with what was produced: reading
	// never waits for metadata.
	for slice := 1; time.Since(hangStart) < hang; slice++ {
		for time.Since(hangStart) < time.Duration(slice)*30*time.Second && time.Since(hangStart) < hang {
			p.failIfExited()
			time.Sleep(200 * time.Millisecond)
		}
		n := f.produced()
		w.until(fmt.Sprintf("the %d records produced within %s of the hang", n, time.Since(hangStart).Round(time.Second)), p,
			func(rs []outRecord) bool { return hasIDs(t, rs, n) })
	}
	hangEnd := time.Now()
	close(release)
	t.Logf("metadata answers again")

	warn, ok := p.stderr.first("WARN", "partition discovery failed")
	if !ok {
		t.Fatalf("no warning that discovery fails:\n%s", p.stderr)
	}
	// The first attempt after the hang starts waits at most one interval and then fails
	// after the timeout; the grace covers process scheduling, not a retry.
	if after := warn.at.Sub(hangStart); after > interval+apiTimout+2*time.Second {
		t.Errorf("the discovery warning came %s after the hang began, want at most %s", after, interval+apiTimout)
	} else {
		t.Logf("discovery reported failing %s after the hang began: %s", after.Round(100*time.Millisecond), warn.text)
	}

	// The job's status says why it is degraded (pipesql run logs it every 30 s).
	if line, ok := p.stderr.first("DEGRADED", "partition discovery"); !ok {
		t.Errorf("no status line shows the job degraded by partition discovery:\n%s", p.stderr)
	} else {
		t.Logf("status during the hang: %s", line.text)
	}

	// Discovery recovers: it says so, and new partitions are read from their start.
	c.AddPartitions(t, "in", 2)
	_, err := f.halt()
	if err != nil {
		t.Fatalf("producing: %v", err)
	}
	n := f.produced()
	produceIDs(t, c, "in", 6, n, n+600) // 100 into each of the 2 new partitions
	w.until("the records of the new partitions", p, func(rs []outRecord) bool { return hasIDs(t, rs, n+600) })
	if _, ok := p.stderr.first("WARN", "partition discovery recovered"); !ok {
		t.Errorf("no log line says discovery recovered:\n%s", p.stderr)
	}

	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	checkNoRestart(t, r.stderr)
	all := w.snapshot()
	checkIDs(t, decodeIDs(t, all), idRange(0, n+600))
	t.Logf("%d discovery warnings; longest pause between outputs during the hang: %s",
		strings.Count(r.stderr, "partition discovery failed"), longestOutputGap(all, hangStart, hangEnd).Round(time.Millisecond))
	if testing.Verbose() {
		t.Logf("job stderr:\n%s", r.stderr)
	}
}

// TestSoakKafkaCoordinatorUnavailable fails the group coordinator for a minute: commits
// fail and are warned about with a count, reading goes on, commits work again after.
func TestSoakKafkaCoordinatorUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("fails the coordinator for a minute")
	}
	t.Parallel()
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "in", 4)
	c.CreateTopic(t, "out", 2)
	f := startIDFeeder(t, c, "in", 4, 0, 10, 100*time.Millisecond)
	job := writeJob(t, passThrough(checkpointing(t, "2 s"), c.Bootstrap(), "in", "out", `
  'scan.startup.mode' = 'earliest-offset',
  'properties.group.id' = 'cg',
  'properties.default.api.timeout.ms' = '10000'`))
	p := startPipesql(t, "run", job)
	w := watchTopic(t, c, "out")
	w.until("the job reading", p, func(rs []outRecord) bool { return len(rs) >= 200 })
	eventuallyTrue(t, "a first commit", func() bool {
		p.failIfExited()
		return len(c.Committed(t, "cg", "in")) == 4
	})

	restore := c.FailCoordinator("cg")
	start := time.Now()
	for time.Since(start) < time.Minute {
		p.failIfExited()
		time.Sleep(200 * time.Millisecond)
	}
	n := f.produced()
	w.until("what was produced while commits failed", p, func(rs []outRecord) bool { return hasIDs(t, rs, n) })
	failWarn, ok := p.stderr.first("WARN", "committing offsets failed")
	if !ok {
		t.Fatalf("no warning that commits fail:\n%s", p.stderr)
	}
	warnings := p.stderr.count("committing offsets failed")
	restore()

	end, err := f.halt()
	if err != nil {
		t.Fatalf("producing: %v", err)
	}
	w.until("every record", p, func(rs []outRecord) bool { return hasIDs(t, rs, end) })
	// Commits work again and reach the end of every partition: partition p holds the
	// ids i < end with i%4 == p.
	eventuallyTrue(t, "commits at the end of every partition", func() bool {
		p.failIfExited()
		got := c.Committed(t, "cg", "in")
		for part := range 4 {
			if got[int32(part)] != int64((end-part+3)/4) {
				return false
			}
		}
		return true
	})
	if _, ok := p.stderr.first("WARN", "committing offsets works again"); !ok {
		t.Errorf("no log line says commits work again:\n%s", p.stderr)
	}
	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	checkNoRestart(t, r.stderr)
	checkIDs(t, decodeIDs(t, w.snapshot()), idRange(0, end))
	t.Logf("first commit warning %s after the coordinator failed: %s", failWarn.at.Sub(start).Round(100*time.Millisecond), failWarn.text)
	t.Logf("%d commit warnings during the minute", warnings)
}

// TestSoakKafkaAllBrokersDown makes every broker unreachable for a minute with records in
// flight: the job waits, resumes when the brokers are back, loses nothing and does not
// restart.
func TestSoakKafkaAllBrokersDown(t *testing.T) {
	if testing.Short() {
		t.Skip("takes every broker down for a minute")
	}
	t.Parallel()
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "in", 4)
	c.CreateTopic(t, "out", 2)
	job := writeJob(t, passThrough(checkpointing(t, "2 s"), c.Bootstrap(), "in", "out", `
  'scan.startup.mode' = 'earliest-offset',
  'properties.group.id' = 'down'`))
	p := startPipesql(t, "run", job)
	w := watchTopic(t, c, "out")
	produceIDs(t, c, "in", 4, 0, 200)
	w.until("the job reading", p, func(rs []outRecord) bool { return len(rs) >= 200 })

	// Records the job has not read yet when the brokers go.
	produceIDs(t, c, "in", 4, 200, 4200)
	restore := c.Outage()
	start := time.Now()
	before := w.len()
	for time.Since(start) < time.Minute {
		p.failIfExited()
		time.Sleep(200 * time.Millisecond)
	}
	restore()
	back := time.Now()
	t.Logf("brokers back after %s; %d of 4200 records were output before the outage", back.Sub(start).Round(time.Second), before)

	produceIDs(t, c, "in", 4, 4200, 4400)
	rs := w.until("every record", p, func(rs []outRecord) bool { return hasIDs(t, rs, 4400) })
	var resumed time.Time
	for _, r := range rs {
		if r.Timestamp.After(back) && (resumed.IsZero() || r.Timestamp.Before(resumed)) {
			resumed = r.Timestamp
		}
	}
	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	checkNoRestart(t, r.stderr)
	checkIDs(t, decodeIDs(t, w.snapshot()), idRange(0, 4400))
	if !strings.Contains(r.stderr, "no broker reachable") {
		t.Errorf("the job did not warn that no broker was reachable:\n%s", r.stderr)
	}
	t.Logf("first output %s after the brokers came back", resumed.Sub(back).Round(time.Millisecond))
	if testing.Verbose() {
		t.Logf("job stderr:\n%s", r.stderr)
	}
}
