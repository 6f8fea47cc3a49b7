package obs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// State is the state of a job, as the progress line, SHOW JOBS and /status show it.
type State string

const (
	// Created: the job is compiled and not started.
	Created State = "CREATED"
	// Initializing: the job runs, but a source has nothing to read yet: it is still
	// connecting (a Kafka source waits for the cluster to list its partitions).
	Initializing State = "INITIALIZING"
	// Running: the job runs and nothing is wrong.
	Running State = "RUNNING"
	// Degraded: the job runs, but a connector works in a reduced way (partition
	// discovery or offset commits failing, no broker reachable), or most of its records
	// are dropped as late (see lateWindow); Reason says how.
	Degraded State = "DEGRADED"
	// Restarting: the job failed and waits to restart from its latest checkpoint;
	// Restarts is the restart it waits for, NextAttempt when it runs again and Reason
	// the failure.
	Restarting State = "RESTARTING"
	// Failed: the job failed for good; Reason is the error.
	Failed State = "FAILED"
	// Finished: the job's bounded inputs ended and everything was written.
	Finished State = "FINISHED"
	// Canceled: the job was stopped (Ctrl-C, SIGTERM, STOP JOB) and stopped cleanly.
	Canceled State = "CANCELED"
)

// States lists every State, for the metric that has one series per state.
var States = []State{Created, Initializing, Running, Degraded, Restarting, Failed, Finished, Canceled}

// JobStatus is a job's status at one moment: one model for the progress line, the
// shell's SHOW JOBS and the /status endpoint.
type JobStatus struct {
	ID, Name string
	State    State
	// Reason says why the job is DEGRADED, RESTARTING, FAILED or INITIALIZING; ""
	// otherwise.
	Reason string
	// Restarts counts the restarts since the job started.
	Restarts int
	// NextAttempt is when a RESTARTING job runs again (zero otherwise).
	NextAttempt time.Time
	// Started and Ended are when the job started and ended (zero before).
	Started, Ended time.Time
	// At is when the status was taken.
	At time.Time

	// Records counts the rows the job's sources produced (since the last restart, as
	// the runtime's counters do).
	Records int64
	// RecordsPerSecond is the recent rate of Records; 0 from Status, which has no
	// history (a Tracker measures it).
	RecordsPerSecond float64
	// Lag is how many records the sources have yet to read to be at the end of their
	// inputs (the sum over Kafka partitions of high watermark minus position); LagKnown
	// is false when no source reports it.
	Lag      int64
	LagKnown bool
	// CatchUp is how long, at the recent rate the lag shrinks, the job takes to read it
	// all; 0 when it is not catching up (no lag, or a lag that does not shrink).
	CatchUp time.Duration
	// LagGrowing is true when the lag grew over the recent window: the job reads more
	// slowly than its input grows.
	LagGrowing bool

	// Watermark is the least watermark of the job's sinks, as an instant, Zero before
	// the first; WatermarkEnd is true once every input ended (the watermark is +inf).
	// WatermarkDelay is how far the watermark is behind the wall clock.
	Watermark      time.Time
	WatermarkEnd   bool
	WatermarkDelay time.Duration
	// WatermarkText shows the watermark as the job's event time does: a TIMESTAMP_LTZ
	// watermark in table.local-time-zone, a TIMESTAMP watermark as its wall-clock value.
	WatermarkText string

	Checkpoints CheckpointStatus
	// LateRecords and BadRecords are the rows dropped as late (behind every window they
	// belong to) and as bad (a NULL event time, a record the format skipped).
	LateRecords, BadRecords int64
	// LastLate is the event time of the latest record dropped as late, zero before the
	// first (as an instant, like Watermark).
	LastLate time.Time
	// Late describes the records dropped as late over the recent window (a Tracker
	// measures it; zero from Status).
	Late    LateStatus
	Sources []SourceStatus
	// Savepoint is where the job's state was saved when it was stopped with a savepoint
	// (STOP JOB ... WITH SAVEPOINT); such a job is FINISHED, as in Flink, not CANCELED.
	Savepoint string
}

// LateStatus is how many records a Tracker saw dropped as late in its recent window.
type LateStatus struct {
	// Window is how far back it looked; Records the records read and Dropped those
	// dropped as late within it.
	Window           time.Duration
	Records, Dropped int64
	// Misconfigured is true when most of those records were late: the watermark is far
	// from the data (restored from another input, a wrong time column or zone).
	Misconfigured bool
}

// CheckpointStatus summarizes a job's checkpoints.
type CheckpointStatus struct {
	Completed, Failed int64
	// LastID is the latest completed checkpoint, 0 before the first.
	LastID uint64
	// LastAt is when it was first seen completed (a Tracker notes it; zero from Status).
	LastAt time.Time
	// LastDuration is from its trigger to its commit, LastBytes the size it wrote.
	LastDuration time.Duration
	LastBytes    int64
	// Resumed is the checkpoint the job started from, nil when it started from nothing.
	Resumed *ResumeStatus
}

// ResumeStatus is the saved state a job resumed from.
type ResumeStatus struct {
	// ID is the checkpoint's id; Savepoint the savepoint's path when it was one.
	ID        uint64
	Savepoint string
	// Taken is when the checkpoint was written (zero when it does not say); Dir where
	// it was read from.
	Taken time.Time
	Dir   string
	// Watermark is the watermark it restored, as the job's event time reads ("" for
	// none); Splits how many splits' positions it restored.
	Watermark string
	Splits    int
	// Text says it in words: "checkpoint 789 taken 2026-12-01 21:24:08 in DIR
	// (watermark ..., offsets of 3 partitions)".
	Text string
}

// SourceStatus is the status of one source table of a job.
type SourceStatus struct {
	Table    string
	Records  int64
	Lag      int64
	LagKnown bool
	// Degraded is why the connector works in a reduced way, "" when it is healthy.
	Degraded string
	Splits   int
}

// String is the state with its reason, as the progress line and SHOW JOBS show it:
// RUNNING, DEGRADED(reason), RESTARTING(n, next attempt at 15:04:05), FAILED(error),
// FINISHED, CANCELED, INITIALIZING(reason), CREATED.
func (s JobStatus) String() string {
	switch s.State {
	case Degraded, Failed, Initializing:
		return fmt.Sprintf("%s(%s)", s.State, s.Reason)
	case Restarting:
		return fmt.Sprintf("%s(%d, next attempt at %s)", s.State, s.Restarts, s.NextAttempt.Format("15:04:05"))
	}
	return string(s.State)
}

// EventTime says how a job's watermarks are to be read: as instants (a TIMESTAMP_LTZ
// rowtime) or as wall-clock times in Zone (a TIMESTAMP rowtime).
type EventTime struct {
	LTZ  bool
	Zone *time.Location // nil: UTC
}

// EventTimeOf finds how the watermarks of prog are to be read: the type of its
// watermarked column and table.local-time-zone.
func EventTimeOf(prog *planner.Program) EventTime {
	et := EventTime{Zone: time.UTC}
	if prog == nil {
		return et
	}
	if zone, err := planner.LoadTimeZone(prog.Settings[planner.SettingLocalTimeZone]); err == nil {
		et.Zone = zone
	}
	for _, p := range prog.Pipelines {
		if p == nil {
			continue
		}
		for n := p.Root; n != nil; {
			if wa, ok := n.(*planner.WatermarkAssigner); ok {
				et.LTZ = wa.Expr.Type().Kind == types.TimestampLTZ
				return et
			}
			kids := n.Children()
			if len(kids) == 0 {
				break
			}
			n = kids[0]
		}
	}
	return et
}

// instant converts a watermark (microseconds) to the instant it stands for.
func (et EventTime) instant(wm int64) time.Time {
	t := time.UnixMicro(wm).UTC()
	if et.LTZ {
		return t
	}
	zone := et.Zone
	if zone == nil {
		zone = time.UTC
	}
	// A TIMESTAMP is a wall-clock time: the instant is that time in the job's zone.
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), zone)
}

// Text shows a watermark (microseconds, as exec keeps it) as the job's event time
// reads: "2026-12-01 21:00:00.000".
func (et EventTime) Text(wm int64) string { return et.text(wm) }

// text shows a watermark as the job's event time reads.
func (et EventTime) text(wm int64) string {
	if et.LTZ {
		zone := et.Zone
		if zone == nil {
			zone = time.UTC
		}
		return time.UnixMicro(wm).In(zone).Format("2006-01-02 15:04:05.000")
	}
	return types.FormatTimestamp(wm, 3)
}

// Status returns the status of job at now, from its lifecycle and metrics. It has no
// history, so its RecordsPerSecond and CatchUp are 0 and its checkpoint's LastAt is
// zero: a Tracker fills them in.
func Status(job *exec.Job, et EventTime, now time.Time) JobStatus {
	return status(job.Lifecycle(), job.Metrics(), et, now)
}

func status(lc exec.Lifecycle, m exec.Metrics, et EventTime, now time.Time) JobStatus {
	s := JobStatus{At: now, Started: lc.Started, Ended: lc.Ended, Restarts: max(lc.Restarts, m.Checkpoints.Restarts)}
	var degraded, connecting []string
	for _, src := range m.Sources {
		ss := SourceStatus{Table: src.Table, Records: src.RecordsRead, Degraded: src.Degraded, Splits: len(src.Splits)}
		lagged := map[string]bool{}
		for _, ms := range src.Connector {
			if ms.Name == connectors.MeasureLag && ms.Split != "" {
				ss.Lag += int64(ms.Value)
				lagged[ms.Split] = true
			}
		}
		// The lag is known when it is known for every split: a partition not fetched yet
		// has none, and the sum of the others would claim too little.
		ss.LagKnown = len(lagged) > 0
		for _, sp := range src.Splits {
			ss.LagKnown = ss.LagKnown && lagged[sp.Split]
		}
		if !ss.LagKnown {
			ss.Lag = 0
		}
		if ss.LagKnown {
			s.Lag += ss.Lag
			s.LagKnown = true
		}
		if src.Degraded != "" {
			degraded = append(degraded, src.Table+": "+src.Degraded)
		}
		if src.RecordsRead == 0 && len(src.Splits) == 0 {
			connecting = append(connecting, src.Table+": connecting, nothing to read yet")
		}
		s.BadRecords += src.Skipped
		s.Sources = append(s.Sources, ss)
	}
	sinkWM := map[int]int64{} // pipeline -> the input watermark of its last operator
	first := map[int]bool{}
	lastLate := exec.NoWatermark
	for _, op := range m.Operators {
		if op.LastLate != exec.NoWatermark {
			lastLate = op.LastLate
		}
		if !first[op.Pipeline] {
			first[op.Pipeline] = true
			s.Records += op.RecordsIn // the source task: rows the connector produced
		}
		s.LateRecords += op.LateDropped
		s.BadRecords += op.BadRecords
		if op.Degraded != "" {
			degraded = append(degraded, op.Name+": "+op.Degraded)
		}
		sinkWM[op.Pipeline] = op.Watermark
	}
	if lastLate != exec.NoWatermark {
		s.LastLate = et.instant(lastLate)
	}
	if len(sinkWM) > 0 {
		wm := exec.MaxWatermark
		for _, w := range sinkWM {
			wm = min(wm, w)
		}
		switch wm {
		case exec.NoWatermark:
		case exec.MaxWatermark:
			s.WatermarkEnd, s.WatermarkText = true, "end of input"
		default:
			s.Watermark = et.instant(wm)
			s.WatermarkDelay = now.Sub(s.Watermark)
			s.WatermarkText = et.text(wm)
		}
	}
	c := m.Checkpoints
	s.Checkpoints = CheckpointStatus{
		Completed: c.Completed, Failed: c.Failed, LastID: c.LastID,
		LastDuration: c.LastDuration, LastBytes: c.LastBytes,
	}
	if r := c.Resumed; r != nil {
		rs := &ResumeStatus{ID: r.ID, Taken: r.Taken, Dir: r.Dir, Splits: r.Splits, Text: r.Text}
		if r.From != "checkpoint" {
			rs.Savepoint = r.From
		}
		switch r.Watermark {
		case exec.NoWatermark:
		case exec.MaxWatermark:
			rs.Watermark = "end of input"
		default:
			rs.Watermark = et.text(r.Watermark)
		}
		s.Checkpoints.Resumed = rs
	}

	switch lc.Phase {
	case exec.PhaseCreated:
		s.State = Created
	case exec.PhaseRestarting:
		s.State, s.NextAttempt = Restarting, lc.NextAttempt
		if lc.Err != nil {
			s.Reason = lc.Err.Error()
		}
	case exec.PhaseEnded:
		switch {
		case lc.Err != nil:
			s.State, s.Reason = Failed, lc.Err.Error()
		case lc.Stopped:
			s.State = Canceled
		default:
			s.State = Finished
		}
	default:
		switch {
		case len(degraded) > 0:
			s.State, s.Reason = Degraded, strings.Join(degraded, "; ")
		case len(connecting) > 0:
			s.State, s.Reason = Initializing, strings.Join(connecting, "; ")
		default:
			s.State = Running
		}
	}
	return s
}

// sampleWindow is how far back a Tracker looks to measure rates: long enough to smooth
// the batches sources read in, short enough to follow a change of pace.
const sampleWindow = 10 * time.Second

// catchingUp is how far behind, in time of reading at the current rate, a job must be
// for its lag to count as a backlog: a catch-up time is shown, or that it grows.
const catchingUp = 2 * time.Second

// lateWindow is how far back a Tracker looks at late records; when more than
// lateShare of the records of the window were dropped as late, and at least lateLeast,
// the job is DEGRADED: a watermark that far from the data is a misconfiguration (state
// restored from another input, a wrong time column or zone), not the odd straggler.
const (
	lateWindow = 30 * time.Second
	lateShare  = 0.5
	lateLeast  = 100
)

// sample is what a Tracker remembers of one moment.
type sample struct {
	at       time.Time
	records  int64
	late     int64
	lag      int64
	lagKnown bool
}

// Tracker follows one job: it adds to its Status what needs history, the rate of
// records, how fast the lag shrinks (and so when the job will have caught up), and when
// its latest checkpoint completed. It samples the job's counters whenever its status is
// asked for, at most every second, so whatever asks (the progress line each second, a
// Prometheus scrape every 15 s) sets the pace. It is safe for concurrent use.
type Tracker struct {
	id, name string
	job      *exec.Job
	et       EventTime
	clock    connectors.Clock

	mu      sync.Mutex
	samples []sample // oldest first, none older than sampleWindow but the first kept
	lates   []sample // the same, over lateWindow, for the share of late records
	ckptID  uint64
	ckptAt  time.Time
	restart int // the Restarts of the samples; a restart resets the runtime's counters
	// savepoint is where a stop with a savepoint saved the job's state, "" if not.
	savepoint string
}

// TrackerOptions configures a Tracker.
type TrackerOptions struct {
	// ID identifies the job among those of the process (SHOW JOBS' id, "1" for the
	// first job of pipesql run).
	ID string
	// Name is the job's name (pipeline.name, or insert-into_<sinks>).
	Name string
	// EventTime says how to read the job's watermarks (see EventTimeOf).
	EventTime EventTime
	// Clock is where the time comes from. Default: the wall clock.
	Clock connectors.Clock
}

// NewTracker returns a Tracker of job.
func NewTracker(job *exec.Job, opts TrackerOptions) *Tracker {
	if opts.Clock == nil {
		opts.Clock = connectors.WallClock{}
	}
	return &Tracker{id: opts.ID, name: opts.Name, job: job, et: opts.EventTime, clock: opts.Clock}
}

// ID returns the job's id.
func (t *Tracker) ID() string { return t.id }

// Name returns the job's name.
func (t *Tracker) Name() string { return t.name }

// Job returns the job tracked.
func (t *Tracker) Job() *exec.Job { return t.job }

// Snapshot returns the job's status with its metrics, taken together, for the exporter.
func (t *Tracker) Snapshot() (JobStatus, exec.Metrics) {
	now := t.clock.Now()
	m := t.job.Metrics()
	return t.complete(status(t.job.Lifecycle(), m, t.et, now)), m
}

// Status returns the job's status now.
func (t *Tracker) Status() JobStatus {
	s, _ := t.Snapshot()
	return s
}

// EventTime says how the job's watermarks are read.
func (t *Tracker) EventTime() EventTime { return t.et }

// StoppedWithSavepoint records that the job was stopped after a savepoint at path: once
// it has stopped, it is FINISHED rather than CANCELED.
func (t *Tracker) StoppedWithSavepoint(path string) {
	t.mu.Lock()
	t.savepoint = path
	t.mu.Unlock()
}

// complete adds to s what needs the Tracker's history, and samples.
func (t *Tracker) complete(s JobStatus) JobStatus {
	s.ID, s.Name = t.id, t.name
	now := s.At
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.savepoint != "" {
		s.Savepoint = t.savepoint
		if s.State == Canceled {
			s.State = Finished
		}
	}
	if id := s.Checkpoints.LastID; id != 0 && id != t.ckptID {
		t.ckptID, t.ckptAt = id, now
	}
	if s.Checkpoints.LastID == t.ckptID {
		s.Checkpoints.LastAt = t.ckptAt
	}
	if s.Restarts != t.restart {
		t.restart, t.samples, t.lates = s.Restarts, nil, nil // the counters started again from zero
	}
	cur := sample{at: now, records: s.Records, late: s.LateRecords, lag: s.Lag, lagKnown: s.LagKnown}
	if n := len(t.samples); n == 0 || now.Sub(t.samples[n-1].at) >= time.Second {
		t.samples = append(t.samples, cur)
		for len(t.samples) > 2 && now.Sub(t.samples[1].at) >= sampleWindow {
			t.samples = t.samples[1:]
		}
	}
	t.lateness(&s, cur)
	if s.State == Running || s.State == Degraded || s.State == Initializing {
		old := t.samples[0]
		if dt := now.Sub(old.at).Seconds(); dt >= 0.5 {
			s.RecordsPerSecond = float64(s.Records-old.records) / dt
			// Catching up: more than catchingUp of reading behind. Below that the job
			// reads live, and the lag is what is in flight.
			behind := float64(s.Lag) > catchingUp.Seconds()*max(s.RecordsPerSecond, 1)
			if s.LagKnown && old.lagKnown && behind {
				shrink := float64(old.lag-s.Lag) / dt
				switch {
				case s.Lag > 0 && shrink > 0:
					s.CatchUp = time.Duration(float64(s.Lag) / shrink * float64(time.Second))
				case s.Lag > old.lag:
					s.LagGrowing = true
				}
			}
		} else if up := now.Sub(s.Started).Seconds(); up > 0 && !s.Started.IsZero() {
			s.RecordsPerSecond = float64(s.Records) / up
		}
	}
	return s
}

// lateness measures the records dropped as late over the last lateWindow, and makes a
// running job DEGRADED when most were; t.mu is held.
func (t *Tracker) lateness(s *JobStatus, cur sample) {
	if n := len(t.lates); n == 0 || cur.at.Sub(t.lates[n-1].at) >= time.Second {
		t.lates = append(t.lates, cur)
	}
	for len(t.lates) > 1 && cur.at.Sub(t.lates[0].at) > lateWindow {
		t.lates = t.lates[1:]
	}
	base := t.lates[0]
	// Before a second sample, the counters' start is the base: they were zero when the
	// job started (a restart starts them again, but also drops the samples).
	if base.at.Equal(cur.at) || base.at.After(cur.at) {
		if s.Restarts != 0 || s.Started.IsZero() || cur.at.Sub(s.Started) > 2*lateWindow {
			return
		}
		base = sample{at: s.Started}
	}
	l := LateStatus{
		Window:  cur.at.Sub(base.at),
		Records: cur.records - base.records,
		Dropped: cur.late - base.late,
	}
	l.Misconfigured = l.Dropped >= lateLeast && float64(l.Dropped) > lateShare*float64(max(l.Records, 1))
	s.Late = l
	if !l.Misconfigured || (s.State != Running && s.State != Degraded) {
		return
	}
	reason := fmt.Sprintf("%.0f%% of records in the last %s were late", 100*min(float64(l.Dropped)/float64(max(l.Records, 1)), 1),
		roundWindow(l.Window))
	var where []string
	if s.WatermarkText != "" {
		where = append(where, "watermark "+strings.TrimSuffix(s.WatermarkText, ".000"))
	}
	if !s.LastLate.IsZero() {
		where = append(where, "records around "+s.LastLate.In(t.zone()).Format("2006-01-02"))
	}
	if len(where) > 0 {
		reason += ": " + strings.Join(where, ", ")
	}
	if s.State == Degraded && s.Reason != "" {
		s.Reason += "; " + reason
	} else {
		s.State, s.Reason = Degraded, reason
	}
}

// zone is where the job's event time is shown.
func (t *Tracker) zone() *time.Location {
	if t.et.Zone != nil {
		return t.et.Zone
	}
	return time.UTC
}

// roundWindow shows a window as "30 s", "4 s".
func roundWindow(d time.Duration) string {
	return fmt.Sprintf("%d s", max(int64(d.Round(time.Second)/time.Second), 1))
}

// Registry holds the jobs of a process, for the progress line, /status and /metrics. It
// is safe for concurrent use.
type Registry struct {
	mu   sync.Mutex
	jobs []*Tracker
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{} }

// Add adds a job; a job with the same ID replaces the one before.
func (r *Registry) Add(t *Tracker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, old := range r.jobs {
		if old.id == t.id {
			r.jobs[i] = t
			return
		}
	}
	r.jobs = append(r.jobs, t)
}

// Remove removes the job with id.
func (r *Registry) Remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range r.jobs {
		if t.id == id {
			r.jobs = append(r.jobs[:i:i], r.jobs[i+1:]...)
			return
		}
	}
}

// Trackers returns the jobs, in the order they were added.
func (r *Registry) Trackers() []*Tracker {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Tracker(nil), r.jobs...)
}

// Statuses returns the status of every job, in the order they were added.
func (r *Registry) Statuses() []JobStatus {
	ts := r.Trackers()
	out := make([]JobStatus, len(ts))
	for i, t := range ts {
		out[i] = t.Status()
	}
	return out
}

// MarshalJSON writes the status as the /status endpoint shows it: durations in
// seconds, times in RFC 3339, unknown values left out.
func (s JobStatus) MarshalJSON() ([]byte, error) {
	type resume struct {
		Checkpoint uint64 `json:"checkpoint"`
		Savepoint  string `json:"savepoint,omitempty"`
		Taken      string `json:"taken_at,omitempty"`
		Dir        string `json:"dir,omitempty"`
		Watermark  string `json:"watermark,omitempty"`
		Splits     int    `json:"splits"`
		Text       string `json:"text"`
	}
	type late struct {
		WindowSec     float64 `json:"window_seconds"`
		Records       int64   `json:"records"`
		Dropped       int64   `json:"late"`
		Misconfigured bool    `json:"mostly_late,omitempty"`
	}
	type checkpoint struct {
		Completed       int64   `json:"completed"`
		Failed          int64   `json:"failed"`
		LastID          uint64  `json:"last_id,omitempty"`
		LastAt          string  `json:"last_completed_at,omitempty"`
		LastDurationSec float64 `json:"last_duration_seconds,omitempty"`
		LastBytes       int64   `json:"last_size_bytes,omitempty"`
		Resumed         *resume `json:"resumed_from,omitempty"`
	}
	type source struct {
		Table    string `json:"table"`
		Records  int64  `json:"records"`
		Lag      *int64 `json:"lag,omitempty"`
		Degraded string `json:"degraded,omitempty"`
		Splits   int    `json:"splits"`
	}
	type view struct {
		ID               string     `json:"id"`
		Name             string     `json:"name"`
		State            State      `json:"state"`
		Status           string     `json:"status"`
		Reason           string     `json:"reason,omitempty"`
		Restarts         int        `json:"restarts"`
		NextAttempt      string     `json:"next_attempt,omitempty"`
		Started          string     `json:"started,omitempty"`
		Ended            string     `json:"ended,omitempty"`
		Records          int64      `json:"records"`
		RecordsPerSecond float64    `json:"records_per_second"`
		Lag              *int64     `json:"lag,omitempty"`
		CatchUpSec       *float64   `json:"catch_up_seconds,omitempty"`
		LagGrowing       bool       `json:"lag_growing,omitempty"`
		Watermark        string     `json:"watermark,omitempty"`
		WatermarkDelay   *float64   `json:"watermark_delay_seconds,omitempty"`
		Checkpoints      checkpoint `json:"checkpoints"`
		LateRecords      int64      `json:"late_records"`
		LateRecent       *late      `json:"late_recent,omitempty"`
		BadRecords       int64      `json:"bad_records"`
		Sources          []source   `json:"sources"`
		Savepoint        string     `json:"savepoint,omitempty"`
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format(time.RFC3339Nano)
	}
	v := view{
		ID: s.ID, Name: s.Name, State: s.State, Status: s.String(), Reason: s.Reason, Restarts: s.Restarts,
		NextAttempt: stamp(s.NextAttempt), Started: stamp(s.Started), Ended: stamp(s.Ended),
		Records: s.Records, RecordsPerSecond: s.RecordsPerSecond, LagGrowing: s.LagGrowing,
		Watermark: s.WatermarkText, LateRecords: s.LateRecords, BadRecords: s.BadRecords,
		Checkpoints: checkpoint{
			Completed: s.Checkpoints.Completed, Failed: s.Checkpoints.Failed, LastID: s.Checkpoints.LastID,
			LastAt: stamp(s.Checkpoints.LastAt), LastDurationSec: s.Checkpoints.LastDuration.Seconds(),
			LastBytes: s.Checkpoints.LastBytes,
		},
		Sources:   []source{},
		Savepoint: s.Savepoint,
	}
	if r := s.Checkpoints.Resumed; r != nil {
		v.Checkpoints.Resumed = &resume{Checkpoint: r.ID, Savepoint: r.Savepoint, Taken: stamp(r.Taken), Dir: r.Dir,
			Watermark: r.Watermark, Splits: r.Splits, Text: r.Text}
	}
	if l := s.Late; l.Window > 0 {
		v.LateRecent = &late{WindowSec: l.Window.Seconds(), Records: l.Records, Dropped: l.Dropped, Misconfigured: l.Misconfigured}
	}
	if s.LagKnown {
		lag := s.Lag
		v.Lag = &lag
	}
	if s.CatchUp > 0 {
		sec := s.CatchUp.Seconds()
		v.CatchUpSec = &sec
	}
	if !s.Watermark.IsZero() {
		d := s.WatermarkDelay.Seconds()
		v.WatermarkDelay = &d
	}
	for _, src := range s.Sources {
		o := source{Table: src.Table, Records: src.Records, Degraded: src.Degraded, Splits: src.Splits}
		if src.LagKnown {
			lag := src.Lag
			o.Lag = &lag
		}
		v.Sources = append(v.Sources, o)
	}
	sort.SliceStable(v.Sources, func(i, j int) bool { return v.Sources[i].Table < v.Sources[j].Table })
	return json.Marshal(v)
}
