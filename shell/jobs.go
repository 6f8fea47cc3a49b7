package shell

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/obs"
)

// The shell runs INSERT jobs in the background on its engine, as Flink's SQL client
// submits them to a cluster: the prompt comes back while they run, SHOW JOBS lists them
// with the status /status shows, STOP JOB stops one.

// showJobsHeader are the columns of SHOW JOBS.
var showJobsHeader = []string{
	"job id", "job name", "status", "uptime", "records/s", "lag", "watermark", "last checkpoint", "restarts", "resumed from",
}

// errNoSuchJob is returned by STOP JOB for an id no job has.
var errNoSuchJob = errors.New("no such job")

// jobRows returns SHOW JOBS' rows, the latest job first.
func jobRows(jobs []*engine.Job, now time.Time) [][]string {
	rows := make([][]string, 0, len(jobs))
	for i := len(jobs) - 1; i >= 0; i-- {
		rows = append(rows, jobRow(jobs[i].Status(), now))
	}
	return rows
}

// jobRow is a job's line in SHOW JOBS.
func jobRow(s obs.JobStatus, now time.Time) []string {
	end := now
	if !s.Ended.IsZero() {
		end = s.Ended
	}
	uptime := time.Duration(0)
	if !s.Started.IsZero() {
		uptime = end.Sub(s.Started).Truncate(time.Second)
	}
	rate := "-"
	switch s.State {
	case obs.Running, obs.Degraded, obs.Initializing:
		rate = thousands(int64(s.RecordsPerSecond))
	}
	lag := "-"
	if s.LagKnown {
		lag = thousands(s.Lag)
	}
	watermark := "-"
	if s.WatermarkText != "" {
		watermark = s.WatermarkText
	}
	checkpoint := "-"
	if c := s.Checkpoints; c.LastID != 0 {
		checkpoint = fmt.Sprintf("#%d", c.LastID)
		if !c.LastAt.IsZero() {
			checkpoint += fmt.Sprintf(", %s ago", now.Sub(c.LastAt).Truncate(time.Second))
		}
	}
	return []string{s.ID, s.Name, s.String(), uptime.String(), rate, lag, watermark, checkpoint, fmt.Sprint(s.Restarts),
		resumedFrom(s.Checkpoints.Resumed)}
}

// resumedFrom shows the checkpoint a job started from: "#789 of 2026-12-01 21:24:08",
// "savepoint #789 ...", "-" when it started from nothing.
func resumedFrom(r *obs.ResumeStatus) string {
	if r == nil {
		return "-"
	}
	s := fmt.Sprintf("#%d", r.ID)
	if r.Savepoint != "" {
		s = "savepoint " + s
	}
	if !r.Taken.IsZero() {
		s += " of " + r.Taken.Local().Format("2006-01-02 15:04:05")
	}
	return s
}

// findJob returns the job with id, or the only job whose id starts with it.
func findJob(jobs []*engine.Job, id string) (*engine.Job, error) {
	id = strings.TrimSpace(id)
	var match []*engine.Job
	for _, j := range jobs {
		if j.ID() == id {
			return j, nil
		}
		if id != "" && strings.HasPrefix(j.ID(), id) {
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
