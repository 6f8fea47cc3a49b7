package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// SettingMetricsAddress is the setting that serves the metrics and status of the jobs
// planned with it, as Options.MetricsAddr does.
const SettingMetricsAddress = config.MetricsAddress

// Options configures an Engine. The zero value is valid.
type Options struct {
	// Log receives the engine's log records and those of its jobs. Default: discarded.
	Log *slog.Logger
	// Clock is where the jobs' time comes from. Default: the wall clock.
	Clock connectors.Clock
	// Registry is where jobs are tracked, for /status, /metrics and the progress line.
	// Default: a new, empty one.
	Registry *obs.Registry
	// MetricsAddr, when set (host:port; port 0 picks one), serves the registry's
	// Prometheus metrics on /metrics and the jobs' status on /status from New on.
	// Without it, the first job whose settings have metrics.address starts the server.
	MetricsAddr string
	// JobID names the n-th job submitted (n from 1). Default: its number, "1", "2"...;
	// FlinkJobID makes ids shaped like Flink's.
	JobID func(n int) (string, error)
	// TagLogs adds job=<id> to the log records of each job, for front ends whose jobs
	// run side by side with other work (the shell).
	TagLogs bool
	// Handler, when set, builds what the metrics server serves in place of
	// obs.Handler(Registry): the web console (package console) serves that and its
	// page and JSON API.
	Handler func(*Engine) http.Handler
	// AllowRemote lets the metrics server listen where other hosts reach it (an
	// address that is not loopback: 0.0.0.0, a host name, an interface's address).
	// Without it such an address fails with ErrRemoteAddress; with it a warning is
	// logged. Default: false, loopback only.
	AllowRemote bool
}

// FlinkJobID returns 32 random hex digits, the shape of Flink's job ids.
func FlinkJobID(int) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("making a job id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Engine runs jobs and keeps them, for their status, until it is closed. It is safe for
// concurrent use.
type Engine struct {
	opts Options
	reg  *obs.Registry

	mu     sync.Mutex
	server *obs.Server
	jobs   []*Job
	closed bool
}

// New returns an Engine, serving metrics when Options.MetricsAddr is set. The error of
// a metrics address that cannot be served wraps obs.ErrListen.
func New(opts Options) (*Engine, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = connectors.WallClock{}
	}
	if opts.Registry == nil {
		opts.Registry = obs.NewRegistry()
	}
	if opts.JobID == nil {
		opts.JobID = func(n int) (string, error) { return strconv.Itoa(n), nil }
	}
	e := &Engine{opts: opts, reg: opts.Registry}
	if opts.MetricsAddr != "" {
		if err := e.serve(opts.MetricsAddr); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Registry returns the registry the engine's jobs are tracked in.
func (e *Engine) Registry() *obs.Registry { return e.reg }

// MetricsAddr returns the address metrics are served on, "" when they are not.
func (e *Engine) MetricsAddr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.server == nil {
		return ""
	}
	return e.server.Addr()
}

// serve starts the metrics server on addr, unless it runs already.
func (e *Engine) serve(addr string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.server != nil {
		if addr != e.opts.MetricsAddr && addr != e.server.Addr() {
			e.opts.Log.Warn("metrics are served already; another address is ignored", "serving", e.server.Addr(), "ignored", addr)
		}
		return nil
	}
	h := obs.Handler(e.reg)
	if e.opts.Handler != nil {
		h = e.opts.Handler(e)
	}
	s, err := obs.ServeHandler(addr, h)
	if err != nil {
		return err
	}
	if !s.Loopback() {
		if !e.opts.AllowRemote {
			s.Close()
			return fmt.Errorf("%w: %s (%s) is reachable from other hosts; serving there needs an explicit flag (pipesql --web-allow-remote)",
				ErrRemoteAddress, addr, s.Addr())
		}
		e.opts.Log.Warn("serving the metrics, job status and web console on an address other hosts reach; the console's actions need its token",
			"addr", s.Addr())
	}
	e.server = s
	e.opts.Log.Info("serving metrics and job status", "metrics", "http://"+s.Addr()+"/metrics", "status", "http://"+s.Addr()+"/status")
	return nil
}

// Submit starts prog in the background; see SubmitAll.
func (e *Engine) Submit(ctx context.Context, prog *planner.Program) (*Job, error) {
	jobs, err := e.SubmitAll(ctx, []*planner.Program{prog})
	if err != nil {
		return nil, err
	}
	return jobs[0], nil
}

// SubmitAll compiles the programs, opens their checkpoint stores, tracks them and
// starts them together in the background: either all start or none does. Each job runs
// until its bounded inputs end, until ctx is cancelled or until Stop stops it, and then
// stops cleanly. A job's checkpoint key is unique among the jobs submitted together and
// those still running (see JobKeys). Errors in what the user wrote match ErrInvalidJob.
func (e *Engine) SubmitAll(ctx context.Context, progs []*planner.Program) ([]*Job, error) {
	for _, prog := range progs {
		if addr := config.Read(prog.Settings).String(SettingMetricsAddress); addr != "" {
			if err := e.serve(addr); err != nil {
				return nil, invalidJob{fmt.Errorf("SET '%s' = '%s': %w", SettingMetricsAddress, addr, err)}
			}
		}
	}
	keys := e.uniqueKeys(JobKeys(progs))
	jobs := make([]*Job, len(progs))
	closeAll := func() {
		for _, j := range jobs {
			if j != nil && j.store != nil {
				j.store.Close()
			}
		}
	}
	for i, prog := range progs {
		j := &Job{name: JobName(prog), key: keys[i], prog: prog, done: make(chan struct{})}
		opts := exec.Options{Clock: e.opts.Clock, Log: e.opts.Log}
		store, err := openCheckpoints(e.opts.Log, prog, keys[i], &opts)
		if err != nil {
			closeAll()
			return nil, err
		}
		j.store, j.opts = store, opts
		jobs[i] = j
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		closeAll()
		return nil, ErrClosed
	}
	for i, j := range jobs {
		id, err := e.opts.JobID(len(e.jobs) + i + 1)
		if err != nil {
			closeAll()
			return nil, err
		}
		j.id = id
		if e.opts.TagLogs {
			j.opts.Log = j.opts.Log.With("job", id)
		}
		if j.exec, err = exec.NewJob(j.prog, j.opts); err != nil {
			closeAll()
			return nil, invalidJob{err}
		}
	}
	for _, j := range jobs {
		j.tracker = obs.NewTracker(j.exec, obs.TrackerOptions{
			ID: j.id, Name: j.name, EventTime: obs.EventTimeOf(j.prog), Clock: e.opts.Clock,
		})
		e.reg.Add(j.tracker)
		e.jobs = append(e.jobs, j)
		j.start(ctx, e.opts.Log)
	}
	return jobs, nil
}

// uniqueKeys numbers the keys that a running job has already: two jobs cannot share a
// checkpoint directory.
func (e *Engine) uniqueKeys(keys []string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	taken := map[string]bool{}
	for _, j := range e.jobs {
		if j.Running() {
			taken[j.key] = true
		}
	}
	for i, key := range keys {
		for n := 2; taken[key]; n++ {
			key = fmt.Sprintf("%s-%d", keys[i], n)
		}
		keys[i] = key
		taken[key] = true
	}
	return keys
}

// JobName is pipeline.name when set, else Flink's default: insert-into_ and the sink
// tables.
func JobName(prog *planner.Program) string {
	if name := config.Read(prog.Settings).String(config.PipelineName); name != "" {
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

// Jobs returns every job submitted, the ended ones too, in the order they were
// submitted.
func (e *Engine) Jobs() []*Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Job(nil), e.jobs...)
}

// Job returns the job with id, nil if there is none.
func (e *Engine) Job(id string) *Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, j := range e.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

// StopOptions says how Stop stops a job.
type StopOptions struct {
	// WithSavepoint takes a final checkpoint and exports it as a savepoint, as Flink's
	// stop with savepoint does; the job then ends FINISHED rather than CANCELED.
	WithSavepoint bool
	// SavepointDir is where the savepoint goes. Default: the job's
	// execution.checkpointing.savepoint-dir (state.savepoints.dir).
	SavepointDir string
}

// Stop asks the job with id to stop cleanly: its sources stop, what is in flight drains,
// its sinks flush. Without a savepoint it returns at once (Job.Done tells when the job
// has stopped); with one it returns the savepoint's path once written, or the error of
// ctx if that ends first. Stopping with a savepoint a job that does not checkpoint
// fails with exec.ErrCheckpointingDisabled and leaves it running.
func (e *Engine) Stop(ctx context.Context, id string, opts StopOptions) (savepointPath string, err error) {
	j := e.Job(id)
	if j == nil {
		return "", fmt.Errorf("%w: '%s'", ErrNoSuchJob, id)
	}
	if !j.Running() {
		return "", fmt.Errorf("%w: job %s is %s", ErrNotRunning, id, j.Status().State)
	}
	if !opts.WithSavepoint {
		j.stop()
		return "", nil
	}
	dir := opts.SavepointDir
	if dir == "" {
		dir = config.Read(j.prog.Settings).Dir(config.SavepointDir)
	}
	if dir == "" {
		return "", ErrNoSavepointDir
	}
	j.setStopped(true)
	path, err := j.exec.StopWithSavepoint(ctx, dir)
	if errors.Is(err, exec.ErrCheckpointingDisabled) {
		j.setStopped(false)
		return "", err
	}
	if err != nil {
		return "", err
	}
	j.tracker.StoppedWithSavepoint(path)
	return path, nil
}

// Savepoint takes a savepoint of the running job with id without stopping it, as
// Flink's trigger savepoint does, under dir (default: the job's
// execution.checkpointing.savepoint-dir), and returns its path once written. A job
// that does not checkpoint fails with exec.ErrCheckpointingDisabled.
func (e *Engine) Savepoint(ctx context.Context, id, dir string) (string, error) {
	j := e.Job(id)
	if j == nil {
		return "", fmt.Errorf("%w: '%s'", ErrNoSuchJob, id)
	}
	if !j.Running() {
		return "", fmt.Errorf("%w: job %s is %s", ErrNotRunning, id, j.Status().State)
	}
	if dir == "" {
		dir = config.Read(j.prog.Settings).Dir(config.SavepointDir)
	}
	if dir == "" {
		return "", ErrNoSavepointDir
	}
	return j.exec.Savepoint(ctx, dir)
}

// Query compiles a SELECT whose rows go to collect, with the engine's clock and log.
// The caller runs it; it checkpoints nowhere and is not one of the engine's Jobs.
func (e *Engine) Query(prog *planner.Program, collect func(kind connectors.RowKind, row types.Row)) (*exec.Job, error) {
	job, err := exec.NewJob(prog, exec.Options{Clock: e.opts.Clock, Log: e.opts.Log, Collect: collect})
	if err != nil {
		return nil, invalidJob{err}
	}
	return job, nil
}

// Close stops the jobs still running, waits for them to end, and stops the metrics
// server. Submit fails afterwards.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	jobs := append([]*Job(nil), e.jobs...)
	e.mu.Unlock()
	for _, j := range jobs {
		if j.Running() {
			j.stop()
		}
	}
	for _, j := range jobs {
		<-j.done
	}
	e.mu.Lock()
	s := e.server
	e.server = nil
	e.mu.Unlock()
	if s != nil {
		if err := s.Close(); err != nil {
			return fmt.Errorf("stopping the metrics server: %w", err)
		}
	}
	return nil
}
