package obs

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var t0 = time.Date(2024, 5, 1, 5, 46, 7, 0, time.UTC)

// runningMetrics is a job reading one Kafka table of two partitions, watermark 41m12s
// behind t0 (13:04:55 in Asia/Shanghai).
func runningMetrics() exec.Metrics {
	wm := t0.Add(-(41*time.Minute + 12*time.Second)).UnixMicro()
	return exec.Metrics{
		Sources: []exec.SourceMetrics{{
			Table: "events", RecordsRead: 1_204_331, Skipped: 3, Watermark: wm,
			Splits: []exec.SplitMetrics{{Split: "events-0"}, {Split: "events-1"}},
			Connector: exec.ConnectorReport{
				{Name: connectors.MeasureLag, Kind: connectors.Gauge, Split: "events-0", Value: 2_000_000},
				{Name: connectors.MeasureLag, Kind: connectors.Gauge, Split: "events-1", Value: 311_009},
				{Name: "discovery_failures_total", Kind: connectors.Counter, Value: 0},
			},
		}},
		Operators: []exec.OperatorMetrics{
			{Pipeline: 0, Name: "source events", RecordsIn: 1_204_331, RecordsOut: 1_204_331, Watermark: wm},
			{Pipeline: 0, Name: "window aggregate", RecordsIn: 1_204_331, RecordsOut: 40, LateDropped: 7, Watermark: wm},
			{Pipeline: 0, Name: "sink dau", RecordsIn: 40, RecordsOut: 0, Watermark: wm},
		},
		Checkpoints: exec.CheckpointMetrics{Completed: 12, LastID: 12, LastDuration: 80 * time.Millisecond, LastBytes: 3 << 20},
	}
}

func TestStatusStates(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	et := EventTime{LTZ: true, Zone: shanghai}
	started := t0.Add(-time.Hour)
	fail := errors.New("sink dau: broker down")
	degraded := runningMetrics()
	degraded.Sources[0].Degraded = "partition discovery failing for 45s (9 attempts)"
	for _, tc := range []struct {
		name string
		lc   exec.Lifecycle
		m    exec.Metrics
		want string
	}{
		{"created", exec.Lifecycle{}, exec.Metrics{}, "CREATED"},
		{"initializing", exec.Lifecycle{Phase: exec.PhaseRunning, Started: started},
			exec.Metrics{Sources: []exec.SourceMetrics{{Table: "events"}}}, "INITIALIZING(events: connecting, nothing to read yet)"},
		{"running", exec.Lifecycle{Phase: exec.PhaseRunning, Started: started}, runningMetrics(), "RUNNING"},
		{"degraded", exec.Lifecycle{Phase: exec.PhaseRunning, Started: started}, degraded,
			"DEGRADED(events: partition discovery failing for 45s (9 attempts))"},
		{"restarting", exec.Lifecycle{Phase: exec.PhaseRestarting, Started: started, Restarts: 2, Err: fail, NextAttempt: t0.Add(4 * time.Second)},
			runningMetrics(), "RESTARTING(2, next attempt at 05:46:11)"},
		{"failed", exec.Lifecycle{Phase: exec.PhaseEnded, Started: started, Ended: t0, Err: fail}, runningMetrics(), "FAILED(sink dau: broker down)"},
		{"finished", exec.Lifecycle{Phase: exec.PhaseEnded, Started: started, Ended: t0}, runningMetrics(), "FINISHED"},
		{"canceled", exec.Lifecycle{Phase: exec.PhaseEnded, Started: started, Ended: t0, Stopped: true}, runningMetrics(), "CANCELED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := status(tc.lc, tc.m, et, t0)
			if got := s.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}

	s := status(exec.Lifecycle{Phase: exec.PhaseRunning, Started: started}, runningMetrics(), et, t0)
	if s.Records != 1_204_331 || !s.LagKnown || s.Lag != 2_311_009 || s.LateRecords != 7 || s.BadRecords != 3 {
		t.Errorf("records %d, lag %d (known %v), late %d, bad %d", s.Records, s.Lag, s.LagKnown, s.LateRecords, s.BadRecords)
	}
	if s.WatermarkDelay != 41*time.Minute+12*time.Second || s.WatermarkText != "2024-05-01 13:04:55.000" {
		t.Errorf("watermark %q, %s behind", s.WatermarkText, s.WatermarkDelay)
	}
	if len(s.Sources) != 1 || s.Sources[0].Lag != 2_311_009 || s.Sources[0].Splits != 2 {
		t.Errorf("sources %+v", s.Sources)
	}
	// A partition whose end is not known yet (not fetched) makes the lag unknown.
	m := runningMetrics()
	m.Sources[0].Connector = m.Sources[0].Connector[1:]
	if s := status(exec.Lifecycle{Phase: exec.PhaseRunning, Started: started}, m, et, t0); s.LagKnown || s.Sources[0].LagKnown {
		t.Errorf("lag known (%d) with a partition's lag missing", s.Lag)
	}
}

// A TIMESTAMP watermark is a wall-clock time in table.local-time-zone: its delay is
// measured against the instant it stands for there.
func TestStatusTimestampWatermark(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	// 13:04:55 on the wall clock of Shanghai is 05:04:55 UTC, 41m12s before t0.
	wall := time.Date(2024, 5, 1, 13, 4, 55, 0, time.UTC).UnixMicro()
	m := exec.Metrics{Operators: []exec.OperatorMetrics{{Name: "source t", Watermark: wall}}}
	s := status(exec.Lifecycle{Phase: exec.PhaseRunning}, m, EventTime{Zone: shanghai}, t0)
	if s.WatermarkDelay != 41*time.Minute+12*time.Second || s.WatermarkText != "2024-05-01 13:04:55.000" {
		t.Errorf("watermark %q, %s behind; want 13:04:55, 41m12s", s.WatermarkText, s.WatermarkDelay)
	}
	m.Operators[0].Watermark = exec.MaxWatermark
	if s := status(exec.Lifecycle{Phase: exec.PhaseEnded}, m, EventTime{}, t0); !s.WatermarkEnd || s.WatermarkText != "end of input" {
		t.Errorf("max watermark: %+v", s)
	}
}

// The Tracker measures rates over the samples of the last seconds: records per second,
// how fast the lag shrinks and so when the job has caught up.
func TestTrackerRates(t *testing.T) {
	tr := &Tracker{id: "1", name: "dau"}
	at := func(sec int, records, lag int64) JobStatus {
		return tr.complete(JobStatus{State: Running, At: t0.Add(time.Duration(sec) * time.Second), Started: t0,
			Records: records, Lag: lag, LagKnown: true})
	}
	at(0, 0, 50_000)
	var s JobStatus
	for sec := 1; sec <= 10; sec++ {
		s = at(sec, int64(sec)*10_000, 50_000-int64(sec)*1_000)
	}
	if s.RecordsPerSecond != 10_000 {
		t.Errorf("rate %v, want 10000", s.RecordsPerSecond)
	}
	// 40,000 left, shrinking by 1,000 a second.
	if s.CatchUp != 40*time.Second || s.LagGrowing {
		t.Errorf("catch-up %s (growing %v), want 40s", s.CatchUp, s.LagGrowing)
	}
	// The window slides: 10 s later, at a steady 20,000 records/s and a growing lag.
	for sec := 11; sec <= 21; sec++ {
		s = at(sec, 100_000+int64(sec-10)*20_000, 40_000+int64(sec-10)*500)
	}
	if s.RecordsPerSecond != 20_000 || s.CatchUp != 0 || !s.LagGrowing {
		t.Errorf("rate %v, catch-up %s, growing %v; want 20000, 0, true", s.RecordsPerSecond, s.CatchUp, s.LagGrowing)
	}
	// A restart sets the runtime's counters back to zero: the rate starts over.
	s = tr.complete(JobStatus{State: Running, At: t0.Add(22 * time.Second), Started: t0, Restarts: 1, Records: 500})
	if s.RecordsPerSecond < 0 {
		t.Errorf("rate after a restart %v", s.RecordsPerSecond)
	}
	// The checkpoint's completion time is when it was first seen.
	s = tr.complete(JobStatus{State: Running, At: t0.Add(30 * time.Second), Restarts: 1, Checkpoints: CheckpointStatus{LastID: 4}})
	s = tr.complete(JobStatus{State: Running, At: t0.Add(38 * time.Second), Restarts: 1, Checkpoints: CheckpointStatus{LastID: 4}})
	if !s.Checkpoints.LastAt.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("checkpoint seen at %s, want t0+30s", s.Checkpoints.LastAt)
	}
}

// progressCases are the statuses whose progress lines testdata/progress.txt shows.
func progressCases(t *testing.T) []struct {
	name string
	s    JobStatus
} {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	et := EventTime{LTZ: true, Zone: shanghai}
	started := t0.Add(-10 * time.Minute)
	tr := &Tracker{id: "1", name: "dau"}
	catchingUp := func(sec int, m exec.Metrics, lc exec.Lifecycle) JobStatus {
		at := t0.Add(time.Duration(sec-10) * time.Second)
		s := status(lc, m, et, at)
		return tr.complete(s)
	}
	// Ten seconds of catching up at 18,402 records/s, the lag shrinking by 18,489 a second.
	lc := exec.Lifecycle{Phase: exec.PhaseRunning, Started: started}
	var running JobStatus
	for sec := 0; sec <= 10; sec++ {
		m := runningMetrics()
		m.Sources[0].RecordsRead -= int64(10-sec) * 18_402
		m.Operators[0].RecordsIn -= int64(10-sec) * 18_402
		m.Sources[0].Connector[0].Value += float64(10-sec) * 18_489
		running = catchingUp(sec, m, lc)
	}
	tr.ckptID, tr.ckptAt = 12, t0.Add(-8*time.Second)
	running = tr.complete(status(lc, runningMetrics(), et, t0))

	degradedM := runningMetrics()
	degradedM.Sources[0].Degraded = "partition discovery failing for 45s (9 attempts): the cluster did not answer within 30s (brokers kafka-1:9092, kafka-2:9092, kafka-3:9092)"
	degraded := status(lc, degradedM, et, t0)
	degraded.RecordsPerSecond, degraded.CatchUp, degraded.Checkpoints.LastAt = running.RecordsPerSecond, running.CatchUp, running.Checkpoints.LastAt

	restarting := status(exec.Lifecycle{Phase: exec.PhaseRestarting, Started: started, Restarts: 2, NextAttempt: t0.Add(4 * time.Second),
		Err: errors.New("sink dau: kafka sink dau: delivery failed: Local: Message timed out")}, runningMetrics(), et, t0)
	restarting.Checkpoints.LastAt = running.Checkpoints.LastAt

	endM := runningMetrics()
	for i := range endM.Operators {
		endM.Operators[i].Watermark = exec.MaxWatermark
	}
	finished := status(exec.Lifecycle{Phase: exec.PhaseEnded, Started: started, Ended: t0}, endM, et, t0)
	finished.Checkpoints.LastAt = t0
	return []struct {
		name string
		s    JobStatus
	}{
		{"catching up", running},
		{"degraded", degraded},
		{"restarting", restarting},
		{"finished", finished},
	}
}

// TestProgressGolden renders the progress line of typical moments; testdata/progress.txt
// holds them (go test -update rewrites it) and is what the README shows.
func TestProgressGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range progressCases(t) {
		b.WriteString("# " + c.name + "\n" + FormatProgress(c.s) + "\n")
	}
	path := filepath.Join("testdata", "progress.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("progress lines differ from %s (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", path, b.String(), want)
	}
}

func TestStatusJSON(t *testing.T) {
	s := progressCases(t)[0].s
	s.ID, s.Name = "1", "dau"
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"id": "1", "name": "dau", "state": "RUNNING", "status": "RUNNING", "records": 1204331.0, "lag": 2311009.0,
		"watermark": "2024-05-01 13:04:55.000", "watermark_delay_seconds": 2472.0, "late_records": 7.0,
	} {
		if doc[key] != want {
			t.Errorf("%s = %v, want %v\n%s", key, doc[key], want, data)
		}
	}
	if _, ok := doc["catch_up_seconds"]; !ok {
		t.Errorf("no catch_up_seconds while catching up: %s", data)
	}
}

func TestCombine(t *testing.T) {
	cs := progressCases(t)
	c := Combine([]JobStatus{cs[0].s, cs[1].s, cs[3].s})
	if c.State != Degraded || c.Reason != cs[1].s.Reason {
		t.Errorf("combined state %s (%s), want the worst, DEGRADED", c.State, c.Reason)
	}
	if c.Records != 3*cs[0].s.Records || c.Lag != 3*cs[0].s.Lag {
		t.Errorf("combined records %d lag %d", c.Records, c.Lag)
	}
	if !c.Watermark.Equal(cs[0].s.Watermark) {
		t.Errorf("combined watermark %s, want the least, %s", c.Watermark, cs[0].s.Watermark)
	}
}

func TestTruncateAndCount(t *testing.T) {
	if got := Truncate("RUNNING | 1 rec/s", 9); got != "RUNNING …" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("short", 80); got != "short" {
		t.Errorf("Truncate = %q", got)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 18402: "18,402"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		250 * time.Millisecond: "250ms", 8 * time.Second: "8s", 125 * time.Second: "2m05s",
		2472 * time.Second: "41m12s", 3*time.Hour + 2*time.Minute: "3h02m", 72 * time.Hour: "3d00h",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// Event time ahead of the wall clock (generated data, a clock off) reads as ahead, not
// as a negative delay.
func TestProgressWatermarkAhead(t *testing.T) {
	s := progressCases(t)[0].s
	s.Watermark = s.At.Add(7*time.Hour + 11*time.Minute)
	s.WatermarkDelay = -(7*time.Hour + 11*time.Minute)
	if line := FormatProgress(s); !strings.Contains(line, "(7h11m ahead)") {
		t.Errorf("progress %q, want the watermark 7h11m ahead", line)
	}
}
