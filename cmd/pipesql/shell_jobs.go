package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// The shell runs INSERT jobs in the background, as Flink's SQL client submits them to a
// cluster: the prompt comes back while they run, SHOW JOBS lists them, STOP JOB stops one.

// Job states, as Flink names them.
const (
	jobInitializing = "INITIALIZING" // running, but a source is still connecting
	jobRunning      = "RUNNING"
	jobFinished     = "FINISHED"
	jobFailed       = "FAILED"
	jobCanceled     = "CANCELED"
)

// showJobsHeader are the columns of SHOW JOBS.
var showJobsHeader = []string{
	"job id", "job name", "status", "uptime", "records/s", "lag", "watermark", "last checkpoint", "restarts",
}

// rateWindow is how often a job's throughput is sampled for SHOW JOBS' records/s.
const rateWindow = time.Second

// errNoSuchJob is returned by STOP JOB for an id no job has.
var errNoSuchJob = errors.New("no such job")

// bgJob is a job running (or run) in the background of the shell.
type bgJob struct {
	id, name string
	job      *exec.Job
	start    *startup
	begun    time.Time
	cancel   context.CancelFunc
	done     chan struct{} // closed when Run returned
	// wmLTZ and zone say how to show the watermark: an instant shown in the session's
	// time zone (TIMESTAMP_LTZ rowtime) or a wall-clock time (TIMESTAMP rowtime).
	wmLTZ    bool
	zone     *time.Location
	settings map[string]string // the SET options the job was planned with

	mu      sync.Mutex
	over    bool // Run returned
	ended   time.Time
	err     error
	stopped bool // STOP JOB asked it to stop
	// savepoint is where STOP JOB ... WITH SAVEPOINT saved the job's state, "" if not.
	savepoint string
	// two latest samples of records read, for the rate
	prevAt, lastAt   time.Time
	prevRec, lastRec int64
	// lastCkpt is the id of the latest completed checkpoint seen, ckptSeen when it was
	// first seen: the runtime gives the id, not when it completed.
	lastCkpt uint64
	ckptSeen time.Time
}

// jobTable holds the shell's jobs.
type jobTable struct {
	clock exec.Clock
	log   *slog.Logger
	// notify receives a line to print when a job ends by itself (finishes or fails).
	notify func(line string)

	mu   sync.Mutex
	jobs []*bgJob
}

// submit compiles prog and starts it. Its errors are plan-time errors.
func (t *jobTable) submit(prog *planner.Program) (*bgJob, error) {
	id, err := newJobID()
	if err != nil {
		return nil, err
	}
	job, err := exec.NewJob(prog, exec.Options{Clock: t.clock, Log: t.log.With("job", id)})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	j := &bgJob{
		id: id, name: insertJobName(prog), job: job, start: newStartup(prog),
		begun: t.clock.Now(), cancel: cancel, done: make(chan struct{}), settings: prog.Settings,
	}
	j.wmLTZ, j.zone = watermarkDisplay(prog)
	j.prevAt, j.lastAt = j.begun, j.begun
	t.mu.Lock()
	t.jobs = append(t.jobs, j)
	t.mu.Unlock()

	go func() {
		err := job.Run(ctx)
		j.mu.Lock()
		j.over, j.ended, j.err = true, t.clock.Now(), err
		stopped := j.stopped
		j.mu.Unlock()
		close(j.done)
		cancel()
		switch {
		case err != nil:
			t.notify(fmt.Sprintf("[ERROR] Job %s (%s) failed: %v", j.id, j.name, err))
		case !stopped:
			t.notify(fmt.Sprintf("[INFO] Job %s (%s) finished.", j.id, j.name))
		}
	}()
	go j.sample(t.clock)
	return j, nil
}

// newJobID returns 32 random hex digits, the shape of Flink's job ids.
func newJobID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("making a job id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// insertJobName is pipeline.name when set, else Flink's default: insert-into_ and the
// sink tables.
func insertJobName(prog *planner.Program) string {
	if name := prog.Settings["pipeline.name"]; name != "" {
		return name
	}
	var sinks []string
	for _, p := range prog.Pipelines {
		if s, ok := p.Root.(*planner.Sink); ok {
			sinks = append(sinks, s.Table)
		}
	}
	return "insert-into_" + strings.Join(sinks, ",")
}

// watermarkDisplay finds the type of the program's event time: TIMESTAMP_LTZ watermarks
// are instants, shown in the session's time zone.
func watermarkDisplay(prog *planner.Program) (ltz bool, zone *time.Location) {
	zone, err := planner.LoadTimeZone(prog.Settings[planner.SettingLocalTimeZone])
	if err != nil {
		zone = time.Local
	}
	for _, p := range prog.Pipelines {
		for n := p.Root; n != nil; {
			if wa, ok := n.(*planner.WatermarkAssigner); ok {
				return wa.Expr.Type().Kind == types.TimestampLTZ, zone
			}
			kids := n.Children()
			if len(kids) == 0 {
				break
			}
			n = kids[0]
		}
	}
	return false, zone
}

// sample records the records read every rateWindow while the job runs.
func (j *bgJob) sample(clock exec.Clock) {
	tick := clock.NewTicker(rateWindow)
	defer tick.Stop()
	for {
		select {
		case <-j.done:
			return
		case now := <-tick.C():
			m := j.job.Metrics()
			j.mu.Lock()
			j.prevAt, j.prevRec = j.lastAt, j.lastRec
			j.lastAt, j.lastRec = now, recordsRead(m)
			j.noteCheckpoint(m, now)
			j.mu.Unlock()
		}
	}
}

// recordsRead is the rows the job's sources produced: what each pipeline's first task,
// the source, took in.
func recordsRead(m exec.Metrics) int64 {
	var n int64
	seen := map[int]bool{}
	for _, op := range m.Operators {
		if !seen[op.Pipeline] {
			seen[op.Pipeline] = true
			n += op.RecordsIn
		}
	}
	return n
}

// endStatus is the status of a job that ended. j.mu is held.
func (j *bgJob) endStatus() string {
	switch {
	case j.err != nil:
		return jobFailed
	case j.savepoint != "":
		return jobFinished // as Flink's stop with savepoint
	case j.stopped:
		return jobCanceled
	}
	return jobFinished
}

// noteCheckpoint records when a new completed checkpoint was first seen. j.mu is held.
func (j *bgJob) noteCheckpoint(m exec.Metrics, now time.Time) {
	if id := m.Checkpoints.LastID; id != 0 && id != j.lastCkpt {
		j.lastCkpt, j.ckptSeen = id, now
	}
}

// running reports whether the job has not ended.
func (j *bgJob) running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// stop asks the job to stop: sources stop, rows in flight reach the sinks, sinks flush.
func (j *bgJob) stop() {
	j.mu.Lock()
	j.stopped = true
	j.mu.Unlock()
	j.cancel()
}

// row is the job's line in SHOW JOBS.
func (j *bgJob) row(now time.Time) []string {
	m := j.job.Metrics()
	j.mu.Lock()
	defer j.mu.Unlock()
	status, end := "", j.ended
	rate := "-"
	if j.over {
		status = j.endStatus()
	} else {
		end = now
		status = jobRunning
		if _, started := j.start.phase(m); !started {
			status = jobInitializing
		}
		// The rate over the latest sampling window; before the first, since the start.
		if d := j.lastAt.Sub(j.prevAt); d > 0 {
			rate = thousands(int64(float64(j.lastRec-j.prevRec) / d.Seconds()))
		} else if d := now.Sub(j.begun); d > 0 {
			rate = thousands(int64(float64(recordsRead(m)) / d.Seconds()))
		}
	}
	uptime := end.Sub(j.begun).Truncate(time.Second)
	j.noteCheckpoint(m, now)
	checkpoint := "-"
	if j.lastCkpt != 0 {
		checkpoint = fmt.Sprintf("#%d, %s ago", j.lastCkpt, now.Sub(j.ckptSeen).Truncate(time.Second))
	}
	// Lag (how far behind the head of its input the job reads) is not reported by the
	// runtime yet.
	return []string{j.id, j.name, status, uptime.String(), rate, "-", j.watermark(m), checkpoint,
		fmt.Sprint(m.Checkpoints.Restarts)}
}

// watermark is the least watermark the job's sinks have seen, "-" before the first.
func (j *bgJob) watermark(m exec.Metrics) string {
	last := map[int]int64{} // pipeline -> watermark of its last operator, the sink
	for _, op := range m.Operators {
		last[op.Pipeline] = op.Watermark
	}
	wm := exec.MaxWatermark
	for _, w := range last {
		wm = min(wm, w)
	}
	switch {
	case len(last) == 0 || wm == exec.NoWatermark:
		return "-"
	case wm == exec.MaxWatermark:
		return "end of input"
	case j.wmLTZ:
		return time.UnixMicro(wm).In(j.zone).Format("2006-01-02 15:04:05.000")
	}
	return types.FormatTimestamp(wm, 3)
}

// rows returns SHOW JOBS' rows, the latest job first.
func (t *jobTable) rows(now time.Time) [][]string {
	t.mu.Lock()
	jobs := append([]*bgJob(nil), t.jobs...)
	t.mu.Unlock()
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].begun.After(jobs[b].begun) })
	rows := make([][]string, len(jobs))
	for i, j := range jobs {
		rows[i] = j.row(now)
	}
	return rows
}

// find returns the job with id, or the only job whose id starts with it.
func (t *jobTable) find(id string) (*bgJob, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id = strings.TrimSpace(id)
	var match []*bgJob
	for _, j := range t.jobs {
		if j.id == id {
			return j, nil
		}
		if id != "" && strings.HasPrefix(j.id, id) {
			match = append(match, j)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return nil, fmt.Errorf("%w: '%s' (SHOW JOBS lists the jobs)", errNoSuchJob, id)
	}
	return nil, fmt.Errorf("%w: '%s' is the start of %d job ids; give more of it", errNoSuchJob, id, len(match))
}

// running returns the jobs that have not ended.
func (t *jobTable) running() []*bgJob {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*bgJob
	for _, j := range t.jobs {
		if j.running() {
			out = append(out, j)
		}
	}
	return out
}
