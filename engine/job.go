package engine

import (
	"context"
	"log/slog"
	"sync"

	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
)

// Job is a job of the engine: running, or ended and kept for its status.
type Job struct {
	id, name, key string
	prog          *planner.Program
	opts          exec.Options
	exec          *exec.Job
	store         state.Store // nil when the job does not checkpoint
	tracker       *obs.Tracker
	done          chan struct{} // closed when the job has ended and its store is closed

	mu      sync.Mutex
	cancel  context.CancelFunc
	err     error
	stopped bool // Stop asked it to stop
}

// ID returns the job's id, unique in its engine.
func (j *Job) ID() string { return j.id }

// Name returns the job's name: pipeline.name, else insert-into_<sinks>.
func (j *Job) Name() string { return j.name }

// Key returns the name of the job's checkpoints (a directory under
// state.checkpoints.dir when it checkpoints).
func (j *Job) Key() string { return j.key }

// Program returns the program the job runs.
func (j *Job) Program() *planner.Program { return j.prog }

// Exec returns the runtime's job, for its metrics.
func (j *Job) Exec() *exec.Job { return j.exec }

// Status returns the job's status now, as /status shows it.
func (j *Job) Status() obs.JobStatus { return j.tracker.Status() }

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Running reports whether the job has not ended.
func (j *Job) Running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// Wait waits for the job to end and returns the error it failed with, nil if it
// finished or was stopped.
func (j *Job) Wait() error {
	<-j.done
	return j.Err()
}

// Err returns the error the job failed with; nil while it runs, or when it finished or
// was stopped.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Stopped reports whether Stop asked the job to stop.
func (j *Job) Stopped() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopped
}

func (j *Job) setStopped(v bool) {
	j.mu.Lock()
	j.stopped = v
	j.mu.Unlock()
}

// start runs the job in the background until it ends, then closes its store.
func (j *Job) start(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithCancel(ctx)
	j.mu.Lock()
	j.cancel = cancel
	j.mu.Unlock()
	go func() {
		defer cancel()
		err := j.exec.Run(ctx)
		if j.store != nil {
			if cerr := j.store.Close(); cerr != nil {
				log.Warn("closing checkpoint storage", "job", j.key, "err", cerr)
			}
		}
		j.mu.Lock()
		j.err = err
		j.mu.Unlock()
		close(j.done)
	}()
}

// stop asks the job to stop cleanly.
func (j *Job) stop() {
	j.mu.Lock()
	j.stopped = true
	cancel := j.cancel
	j.mu.Unlock()
	cancel()
}
