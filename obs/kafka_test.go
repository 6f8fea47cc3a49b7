package obs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	_ "github.com/pipesql/pipesql/connectors/builtin"
	_ "github.com/pipesql/pipesql/connectors/formats"
	_ "github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
)

// These tests run real jobs (planner, runtime, the librdkafka source) against an
// in-process Kafka cluster, scrape /metrics and /status as Prometheus and a user would,
// and check every value against what the test did to the cluster.

// day is the event-time day the test events fall on.
var day = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

// event is the JSON of one click; ts is milliseconds into day (a negative ts leaves the
// field out, which makes the row's event time NULL).
func event(user int, at time.Time) []byte {
	return []byte(fmt.Sprintf(`{"user_id":"u-%d","ts_ms":%d}`, user, at.UnixMilli()))
}

// dauJob is the DAU query over the test topic: distinct users per day.
func dauJob(bootstrap string, settings string, options string) string {
	return fmt.Sprintf(`
SET 'table.local-time-zone' = 'UTC';
%s
CREATE TABLE events (
  user_id STRING,
  ts_ms   BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json', 'json.ignore-parse-errors' = 'true'
  %s
);
CREATE TABLE dau (d STRING, users BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), COUNT(DISTINCT user_id)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end;
`, settings, bootstrap, options)
}

func planScript(t *testing.T, script string) *planner.Program {
	t.Helper()
	stmts, err := parser.ParseScript("job.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// errInjected is the failure flakyStore injects.
var errInjected = errors.New("injected checkpoint storage failure")

// flakyStore is a real in-memory checkpoint store whose commits the test can make fail.
type flakyStore struct {
	state.Store
	mu   sync.Mutex
	fail int // commits still to fail
}

func newFlakyStore() *flakyStore {
	return &flakyStore{Store: state.NewMemory(state.Options{NumRetained: 2, Warn: func(error) {}})}
}

func (s *flakyStore) failNext(n int) {
	s.mu.Lock()
	s.fail += n
	s.mu.Unlock()
}

func (s *flakyStore) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return true
	}
	return false
}

func (s *flakyStore) Begin(job string, id uint64) (state.Writer, error) {
	w, err := s.Store.Begin(job, id)
	if err != nil {
		return nil, err
	}
	return &flakyWriter{Writer: w, s: s}, nil
}

type flakyWriter struct {
	state.Writer
	s *flakyStore
}

func (w *flakyWriter) Commit(meta state.Meta) error {
	if w.s.take() {
		w.Writer.Abort()
		return errInjected
	}
	return w.Writer.Commit(meta)
}

// syncBuffer is a log destination safe for the job's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runningJob is a job running in the background, with its metrics served.
type runningJob struct {
	t      *testing.T
	job    *exec.Job
	reg    *Registry
	url    string
	cancel context.CancelFunc
	done   chan error
	log    *syncBuffer
}

// startJob runs prog with opts and serves its metrics; the test's cleanup stops it.
func startJob(t *testing.T, prog *planner.Program, opts exec.Options, clock connectors.Clock) *runningJob {
	t.Helper()
	logs := &syncBuffer{}
	logger, dedup, err := NewLogger(logs, LogOptions{Level: "info"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Log = logger
	opts.Clock = clock
	job, err := exec.NewJob(prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	reg.Add(NewTracker(job, TrackerOptions{ID: "1", Name: "dau", EventTime: EventTimeOf(prog), Clock: clock}))
	srv := httptest.NewServer(Handler(reg))
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningJob{t: t, job: job, reg: reg, url: srv.URL, cancel: cancel, done: make(chan error, 1), log: logs}
	go func() { r.done <- job.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(deadline):
			t.Errorf("the job did not stop")
		}
		srv.Close()
		dedup.Flush(context.Background())
		if t.Failed() {
			t.Logf("job log:\n%s", logs.String())
		}
	})
	return r
}

func (r *runningJob) metrics() scraped { return scrape(r.t, r.url+"/metrics") }

func (r *runningJob) status() statusDoc { return getStatus(r.t, r.url+"/status") }

// waitMetric waits until the series name{labels} satisfies cond.
func (r *runningJob) waitMetric(what, name string, cond func(v float64) bool, labels ...string) scraped {
	r.t.Helper()
	var m scraped
	eventually(r.t, what, func() bool {
		m = r.metrics()
		v, ok := m.value(name, labels...)
		return ok && cond(v)
	}, func() string { return m.series(name) })
	return m
}

// waitState waits until /status shows the job in state and returns it.
func (r *runningJob) waitState(state State, also func(statusDoc) bool) statusDoc {
	r.t.Helper()
	var doc statusDoc
	eventually(r.t, "state "+string(state), func() bool {
		doc = r.status()
		return len(doc.Jobs) == 1 && doc.Jobs[0].State == string(state) && (also == nil || also(doc))
	}, func() string { return fmt.Sprintf("%+v", doc) })
	return doc
}

func eq(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// TestKafkaJobMetrics runs the DAU job against a 3-broker cluster and checks the metrics
// against what the test produced and broke: records per partition, offsets and lag,
// skipped and NULL-time records, late records, distinct users, a failed checkpoint,
// failing offset commits (DEGRADED), a broker removed.
func TestKafkaJobMetrics(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 4)
	var rs []kafkatest.Record
	perPartition := map[int32]int{}
	for i := range 400 {
		p := int32(i % 4)
		rs = append(rs, kafkatest.Record{Partition: p, Value: event(i%200, day.Add(time.Duration(i)*time.Second))})
		perPartition[p]++
	}
	for range 3 { // not JSON: skipped (json.ignore-parse-errors)
		rs = append(rs, kafkatest.Record{Partition: 0, Value: []byte(`{"user_id": "u-1", "ts_ms": `)})
		perPartition[0]++
	}
	for range 2 { // no event time: dropped and counted
		rs = append(rs, kafkatest.Record{Partition: 1, Value: []byte(`{"user_id": "u-1"}`)})
		perPartition[1]++
	}
	c.Produce(t, "events", rs...)

	store := newFlakyStore()
	prog := planScript(t, dauJob(c.Bootstrap(), `
SET 'execution.checkpointing.interval' = '200 ms';
SET 'execution.checkpointing.tolerable-failed-checkpoints' = '1';`,
		`, 'properties.group.id' = 'obs-test', 'scan.topic-partition-discovery.interval' = '500 ms'`))
	job := startJob(t, prog, exec.Options{Store: store}, connectors.WallClock{})

	job.waitMetric("every record", "pipesql_source_records_total", eq(402))
	var m scraped
	eventually(t, "the offsets of every record and no lag", func() bool {
		m = job.metrics()
		lag, ok := m.value("pipesql_job_lag_records")
		return m.sum("pipesql_source_offset") == 405 && ok && lag == 0
	}, func() string {
		return m.series("pipesql_source_offset") + "\n" + m.series("pipesql_source_lag_records")
	})
	for p, n := range perPartition {
		split := fmt.Sprintf("split=events-%d", p)
		for _, name := range []string{"pipesql_source_offset", "pipesql_source_end_offset"} {
			if v, ok := m.value(name, split); !ok || v != float64(n) {
				t.Errorf("%s{%s} = %v (%v), want %d\n%s", name, split, v, ok, n, m.series(name))
			}
		}
		if v, _ := m.value("pipesql_source_lag_records", split); v != 0 {
			t.Errorf("lag of %s = %v, want 0", split, v)
		}
		if v, _ := m.value("pipesql_source_split_records_total", split); v != float64(min(n, 100)+map[int32]int{1: 2}[p]) {
			t.Errorf("rows of %s = %v", split, v)
		}
	}
	for name, want := range map[string]float64{
		"pipesql_source_skipped_records_total":      3,
		"pipesql_source_null_rowtime_records_total": 2,
		"pipesql_source_partitions":                 4,
		"pipesql_source_brokers":                    3,
		"pipesql_source_degraded":                   0,
	} {
		if v, ok := m.value(name, "table=events"); !ok || v != want {
			t.Errorf("%s = %v (%v), want %v", name, v, ok, want)
		}
	}
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pipesql_operator_records_in_total", []string{"operator=source events"}, 402},
		{"pipesql_operator_records_out_total", []string{"operator=source events"}, 400},
		{"pipesql_operator_bad_records_total", []string{"operator=source events"}, 2},
		{"pipesql_operator_records_in_total", []string{"operator=window aggregate"}, 400},
		{"pipesql_job_state", []string{"state=RUNNING"}, 1},
		{"pipesql_job_state", []string{"state=DEGRADED"}, 0},
		{"pipesql_job_restarts_total", nil, 0},
	}
	for _, ck := range checks {
		if v, ok := m.value(ck.name, ck.labels...); !ok || v != ck.want {
			t.Errorf("%s%v = %v (%v), want %v\n%s", ck.name, ck.labels, v, ok, ck.want, m.series(ck.name))
		}
	}
	// One day window, 200 distinct users in the dictionary of COUNT(DISTINCT user_id).
	m = job.waitMetric("the aggregate's state", "pipesql_aggregate_dictionary_entries", eq(200), "operator=window aggregate")
	if v, _ := m.value("pipesql_aggregate_groups", "operator=window aggregate"); v != 1 {
		t.Errorf("groups = %v, want 1 (one day, no key)", v)
	}
	if v, _ := m.value("pipesql_aggregate_shared_state_bytes", "operator=window aggregate"); v <= 0 {
		t.Errorf("shared state bytes = %v, want the dictionary's size", v)
	}
	// The watermark is the least over the partitions of their latest event time (day +
	// 396 s on partition 0) minus 1 s.
	wm := day.Add(395 * time.Second)
	if v, _ := m.value("pipesql_operator_watermark_seconds", "operator=window aggregate"); v != float64(wm.Unix()) {
		t.Errorf("watermark = %v, want %v", v, wm.Unix())
	}
	if v, _ := m.value("pipesql_job_watermark_delay_seconds"); math.Abs(v-time.Since(wm).Seconds()) > 60 {
		t.Errorf("watermark delay = %vs, want about %s", v, time.Since(wm))
	}

	// A checkpoint whose commit fails is counted; one is tolerated.
	m = job.waitMetric("a completed checkpoint", "pipesql_checkpoints_completed_total", func(v float64) bool { return v >= 1 })
	store.failNext(1)
	job.waitMetric("the failed checkpoint", "pipesql_checkpoints_failed_total", eq(1))
	completed, _ := job.metrics().value("pipesql_checkpoints_completed_total")
	job.waitMetric("a checkpoint after the failure", "pipesql_checkpoints_completed_total", func(v float64) bool { return v > completed })
	if m := job.metrics(); func() bool { v, _ := m.value("pipesql_checkpoint_last_size_bytes"); return v <= 0 }() {
		t.Errorf("checkpoint size:\n%s", m.series("pipesql_checkpoint_last_size_bytes"))
	}

	// Offsets are committed to the group after checkpoints; when the coordinator fails,
	// commits fail, are counted, and the job is DEGRADED until they work again.
	job.waitMetric("a commit", "pipesql_source_commits_succeeded_total", func(v float64) bool { return v >= 1 })
	restore := c.FailCoordinator("obs-test")
	doc := job.waitState(Degraded, nil)
	if !strings.Contains(doc.Jobs[0].Reason, "committing offsets") {
		t.Errorf("DEGRADED for %q, want the failing commits", doc.Jobs[0].Reason)
	}
	m = job.waitMetric("failed commits", "pipesql_source_commits_failed_total", func(v float64) bool { return v >= 1 })
	if v, _ := m.value("pipesql_job_state", "state=DEGRADED"); v != 1 {
		t.Errorf("pipesql_job_state{DEGRADED} = %v while commits fail", v)
	}
	restore()
	job.waitState(Running, nil)
	job.waitMetric("the degraded flag cleared", "pipesql_source_degraded", eq(0))

	// A broker decommissioned: the next discoveries list two, and reading goes on.
	discoveries, _ := job.metrics().value("pipesql_source_discovery_successes_total")
	if err := c.RemoveBrokerHard(2); err != nil {
		t.Fatal(err)
	}
	job.waitMetric("two brokers", "pipesql_source_brokers", eq(2))
	job.waitMetric("more discoveries", "pipesql_source_discovery_successes_total", func(v float64) bool { return v > discoveries })
	rs = rs[:0]
	for i := range 100 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 4), Value: event(200+i, day.Add(time.Duration(400+i)*time.Second))})
	}
	c.Produce(t, "events", rs...)
	job.waitMetric("the records after the removal", "pipesql_source_records_total", eq(502))
	eventually(t, "the offsets after the removal", func() bool {
		m = job.metrics()
		return m.sum("pipesql_source_offset") == 505
	}, func() string { return m.series("pipesql_source_offset") })
	for p, n := range perPartition {
		split := fmt.Sprintf("split=events-%d", p)
		if v, _ := m.value("pipesql_source_offset", split); v != float64(n+25) {
			t.Errorf("offset of %s = %v, want %d", split, v, n+25)
		}
	}
	job.waitMetric("300 distinct users", "pipesql_aggregate_dictionary_entries", eq(300), "operator=window aggregate")

	// The next day on every partition closes the first one; then 5 more clicks of the
	// first day are late.
	rs = rs[:0]
	for p := range 4 {
		rs = append(rs, kafkatest.Record{Partition: int32(p), Value: event(1, day.Add(25*time.Hour))})
	}
	c.Produce(t, "events", rs...)
	job.waitMetric("the first day fired", "pipesql_operator_records_out_total", eq(1), "operator=window aggregate")
	rs = rs[:0]
	for i := range 5 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 4), Value: event(i, day.Add(time.Hour))})
	}
	c.Produce(t, "events", rs...)
	job.waitMetric("late records", "pipesql_operator_late_records_total", eq(5), "operator=window aggregate")

	job.cancel()
	if err := <-job.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	job.done <- nil // for the cleanup
	doc = job.status()
	if doc.Jobs[0].State != string(Canceled) || doc.Jobs[0].Records != 511 {
		t.Errorf("after the stop: %+v", doc.Jobs[0])
	}
}

// TestDegradedWithinOneDiscovery hangs every metadata request: the job shows DEGRADED
// while the first hung discovery attempt is still waiting (within one discovery
// interval: no later attempt was needed to notice), keeps reading, and shows RUNNING
// again once metadata answers.
func TestDegradedWithinOneDiscovery(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 2)
	var rs []kafkatest.Record
	for i := range 100 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 2), Value: event(i, day.Add(time.Duration(i)*time.Second))})
	}
	c.Produce(t, "events", rs...)
	// Each hung attempt waits 30 s (the API timeout) before failing; the discovery
	// interval is 1 s.
	prog := planScript(t, dauJob(c.Bootstrap(), "",
		`, 'scan.topic-partition-discovery.interval' = '1 s', 'properties.default.api.timeout.ms' = '30000'`))
	job := startJob(t, prog, exec.Options{}, connectors.WallClock{})
	job.waitMetric("every record", "pipesql_source_records_total", eq(100))
	m := job.waitMetric("a discovery after the first", "pipesql_source_discovery_successes_total", func(v float64) bool { return v >= 2 })
	before, _ := m.value("pipesql_source_discovery_attempts_total")

	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	c.HangMetadata(release)
	doc := job.waitState(Degraded, nil)
	m = job.metrics()
	attempts, _ := m.value("pipesql_source_discovery_attempts_total")
	if attempts > before+1 {
		t.Errorf("DEGRADED after %v discovery attempts since the hang, want it during the first", attempts-before)
	}
	if r := doc.Jobs[0].Reason; !strings.Contains(r, "partition discovery") {
		t.Errorf("DEGRADED for %q, want the hung discovery", r)
	}
	if v, _ := m.value("pipesql_source_degraded", "table=events"); v != 1 {
		t.Errorf("pipesql_source_degraded = %v while DEGRADED", v)
	}
	since, _ := m.value("pipesql_source_discovery_since_success_seconds")
	if since < 1 {
		t.Errorf("discovery_since_success_seconds = %v while discovery hangs, want at least the interval", since)
	}

	// Reading goes on meanwhile.
	rs = rs[:0]
	for i := range 40 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 2), Value: event(i, day.Add(time.Duration(100+i)*time.Second))})
	}
	c.Produce(t, "events", rs...)
	job.waitMetric("the records produced during the hang", "pipesql_source_records_total", eq(140))
	if st := job.status(); st.Jobs[0].State != string(Degraded) {
		t.Errorf("state %s during the hang", st.Jobs[0].State)
	}

	close(release)
	released = true
	job.waitState(Running, nil)
	m = job.waitMetric("discovery working again", "pipesql_source_degraded", eq(0), "table=events")
	if v, _ := m.value("pipesql_source_discovery_since_success_seconds"); v >= since+30 {
		t.Errorf("discovery_since_success_seconds = %v after the recovery", v)
	}
}

// manualClock is a connectors.Clock the test moves: the job's checkpoints and restart delays
// happen when the test says.
type manualClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*manualTicker
	timers  []*manualTicker // one-shot: fired once, then dropped
}

func (c *manualClock) NewTimer(d time.Duration) connectors.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTicker{c: make(chan time.Time, 1), next: c.now.Add(d)}
	c.timers = append(c.timers, t)
	return manualTimer{t}
}

type manualTimer struct{ t *manualTicker }

func (t manualTimer) C() <-chan time.Time { return t.t.c }
func (t manualTimer) Stop() bool          { return !t.t.stopped.Swap(true) }

type manualTicker struct {
	c       chan time.Time
	d       time.Duration
	next    time.Time
	stopped atomic.Bool
}

func (t *manualTicker) C() <-chan time.Time { return t.c }
func (t *manualTicker) Stop()               { t.stopped.Store(true) }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) NewTicker(d time.Duration) connectors.Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTicker{c: make(chan time.Time, 1), d: d, next: c.now.Add(d)}
	c.tickers = append(c.tickers, t)
	return t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	live := c.tickers[:0]
	for _, t := range c.tickers {
		if t.stopped.Load() {
			continue
		}
		live = append(live, t)
		for !t.next.After(c.now) {
			select {
			case t.c <- t.next:
			default:
			}
			t.next = t.next.Add(t.d)
		}
	}
	c.tickers = live
	pending := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped.Load():
		case !t.next.After(c.now):
			t.c <- c.now
		default:
			pending = append(pending, t)
		}
	}
	c.timers = pending
}

// TestRestartingAndFailed fails checkpoints with none tolerated: the job shows
// RESTARTING with the restart's number and when it runs again, for as long as it waits,
// then RUNNING; when the restart strategy gives up, FAILED with the error.
func TestRestartingAndFailed(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 2)
	var rs []kafkatest.Record
	for i := range 50 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 2), Value: event(i, day.Add(time.Duration(i)*time.Second))})
	}
	c.Produce(t, "events", rs...)
	store := newFlakyStore()
	store.failNext(1)
	prog := planScript(t, dauJob(c.Bootstrap(), `
SET 'execution.checkpointing.interval' = '1 s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1';
SET 'restart-strategy.fixed-delay.delay' = '10 s';`, ""))
	clock := &manualClock{now: time.Date(2024, 5, 2, 8, 0, 0, 0, time.UTC)}
	job := startJob(t, prog, exec.Options{Store: store}, clock)
	job.waitMetric("every record", "pipesql_source_records_total", eq(50))

	// The first checkpoint fails: the job restarts in 10 s of its clock, and stays
	// RESTARTING until the clock gets there.
	var doc statusDoc
	eventually(t, "RESTARTING", func() bool {
		doc = job.status()
		if doc.Jobs[0].State == string(Restarting) {
			return true
		}
		clock.Advance(time.Second) // the checkpoint interval
		return false
	}, func() string { return fmt.Sprintf("%+v", doc) })
	j := doc.Jobs[0]
	next, err := time.Parse(time.RFC3339Nano, j.NextAttempt)
	if err != nil {
		t.Fatalf("next_attempt %q: %v", j.NextAttempt, err)
	}
	if j.Restarts != 1 || !next.Equal(clock.Now().Add(10*time.Second)) || !strings.Contains(j.Reason, errInjected.Error()) {
		t.Errorf("RESTARTING: restarts %d, next attempt %s (clock %s), reason %q", j.Restarts, next, clock.Now(), j.Reason)
	}
	if want := fmt.Sprintf("RESTARTING(1, next attempt at %s)", next.Format("15:04:05")); j.Status != want {
		t.Errorf("status %q, want %q", j.Status, want)
	}
	m := job.metrics()
	for name, want := range map[string]float64{
		"pipesql_job_restarts_total": 1, "pipesql_checkpoints_failed_total": 1, "pipesql_checkpoints_completed_total": 0,
	} {
		if v, _ := m.value(name); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	if v, _ := m.value("pipesql_job_state", "state=RESTARTING"); v != 1 {
		t.Errorf("pipesql_job_state{RESTARTING} = %v", v)
	}

	// 10 s later it runs again from the start (no checkpoint completed) and checkpoints.
	eventually(t, "RUNNING again", func() bool {
		doc = job.status()
		if doc.Jobs[0].State == string(Running) {
			return true
		}
		clock.Advance(10 * time.Second)
		return false
	}, func() string { return fmt.Sprintf("%+v", doc) })
	job.waitMetric("every record again", "pipesql_source_records_total", eq(50))
	eventually(t, "a checkpoint", func() bool {
		v, _ := job.metrics().value("pipesql_checkpoints_completed_total")
		if v >= 1 {
			return true
		}
		clock.Advance(time.Second)
		return false
	}, nil)

	// The next failure exhausts the strategy's single attempt: FAILED.
	store.failNext(1)
	eventually(t, "FAILED", func() bool {
		doc = job.status()
		if doc.Jobs[0].State == string(Failed) {
			return true
		}
		clock.Advance(time.Second)
		return false
	}, func() string { return fmt.Sprintf("%+v", doc) })
	if r := doc.Jobs[0].Reason; !strings.Contains(r, errInjected.Error()) || !strings.Contains(r, "no more restarts") {
		t.Errorf("FAILED for %q", r)
	}
	if v, _ := job.metrics().value("pipesql_job_state", "state=FAILED"); v != 1 {
		t.Errorf("pipesql_job_state{FAILED} = %v", v)
	}
	if err := <-job.done; !errors.Is(err, errInjected) {
		t.Errorf("Run: %v, want the injected failure", err)
	}
	job.done <- nil
}
