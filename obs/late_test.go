package obs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/exec"
)

// A job whose records are mostly dropped as late is DEGRADED with the reason, from
// the first status on (the counters' start is the base), and stops being so once the
// late records are a minority of the window again.
func TestTrackerLateness(t *testing.T) {
	tr := &Tracker{id: "1", name: "dau"}
	at := func(sec int, records, late int64) JobStatus {
		return tr.complete(JobStatus{State: Running, At: t0.Add(time.Duration(sec) * time.Second), Started: t0,
			Records: records, LateRecords: late, WatermarkText: "2030-01-01 00:00:00.000",
			LastLate: time.Date(2025, 11, 29, 13, 0, 0, 0, time.UTC)})
	}
	// A few late records among many are the odd straggler.
	if s := at(1, 10_000, 40); s.State != Running || s.Late.Dropped != 40 || s.Late.Misconfigured {
		t.Fatalf("40 late of 10000: %s, %+v", s, s.Late)
	}
	tr = &Tracker{id: "1", name: "dau"}
	s := at(2, 5_000, 4_850)
	want := "DEGRADED(97% of records in the last 2 s were late: watermark 2030-01-01 00:00:00, records around 2025-11-29)"
	if s.String() != want {
		t.Fatalf("status %s, want %s", s, want)
	}
	for sec := 3; sec <= 30; sec++ {
		s = at(sec, int64(sec)*2_500, int64(sec)*2_425)
	}
	if !strings.Contains(s.Reason, "97% of records in the last 28 s were late") {
		t.Errorf("reason %q", s.Reason)
	}
	// Below the least count, a job that read almost nothing is not degraded by it.
	tr = &Tracker{id: "1", name: "dau"}
	if s := at(1, 50, 50); s.State != Running {
		t.Errorf("50 of 50 late: %s", s)
	}
	// Records on time again: the window moves past the late ones.
	tr = &Tracker{id: "1", name: "dau"}
	at(1, 1_000, 1_000)
	for sec := 2; sec <= 40; sec++ {
		s = at(sec, 1_000+int64(sec)*1_000, 1_000)
	}
	if s.State != Running || s.Late.Dropped != 0 {
		t.Errorf("after the late records: %s, %+v", s, s.Late)
	}
	// A connector's degradation and lateness are both told.
	tr = &Tracker{id: "1", name: "dau"}
	s = tr.complete(JobStatus{State: Degraded, Reason: "events: partition discovery failing", At: t0.Add(time.Second), Started: t0,
		Records: 1_000, LateRecords: 1_000})
	if !strings.HasPrefix(s.Reason, "events: partition discovery failing; 100% of records in the last 1 s were late") {
		t.Errorf("reason %q", s.Reason)
	}
}

// What a job resumed from is in its status, its progress line's first frames and /status.
func TestStatusResumed(t *testing.T) {
	m := runningMetrics()
	taken := t0.Add(-time.Hour)
	m.Checkpoints.Resumed = &exec.ResumeInfo{From: "checkpoint", ID: 789, Taken: taken, Dir: "/state/dau",
		Watermark: m.Operators[0].Watermark, Splits: 3,
		Text: "checkpoint 789 taken 2024-05-01 04:46:07 in /state/dau (watermark 2024-05-01 05:04:55.000, offsets of 3 partitions)"}
	s := status(exec.Lifecycle{Phase: exec.PhaseRunning, Started: t0.Add(-2 * time.Second)}, m, EventTime{LTZ: true}, t0)
	r := s.Checkpoints.Resumed
	if r == nil || r.ID != 789 || r.Dir != "/state/dau" || r.Splits != 3 || r.Watermark != "2024-05-01 05:04:55.000" {
		t.Fatalf("resumed %+v", r)
	}
	if line := FormatProgress(s); !strings.Contains(line, "resumed from checkpoint 789 taken 2024-05-01 04:46:07 in /state/dau (watermark") {
		t.Errorf("first frame does not say what the job resumed from: %s", line)
	}
	later := s
	later.At = t0.Add(time.Minute)
	if line := FormatProgress(later); strings.Contains(line, "resumed") {
		t.Errorf("a minute in, the line still says where the job resumed from: %s", line)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Checkpoints struct {
			Resumed struct {
				Checkpoint uint64 `json:"checkpoint"`
				Taken      string `json:"taken_at"`
				Dir        string `json:"dir"`
				Splits     int    `json:"splits"`
			} `json:"resumed_from"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if r := doc.Checkpoints.Resumed; r.Checkpoint != 789 || r.Dir != "/state/dau" || r.Splits != 3 || r.Taken == "" {
		t.Errorf("/status: %s", b)
	}
}
