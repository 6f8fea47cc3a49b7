package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
	"github.com/pipesql/pipesql/planner"
)

// settingMetricsAddress is the SET key that serves the metrics of the jobs planned with
// it, as --metrics-addr does.
const settingMetricsAddress = "metrics.address"

// obsFlags are the observability flags of run, shell and demo.
type obsFlags struct {
	metricsAddr      string
	logFormat        string
	logLevel         string
	progress         string
	progressInterval time.Duration

	once sync.Once
	o    *observer
	err  error
}

func (f *obsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on `HOST:PORT`/metrics and job status on /status")
	fs.StringVar(&f.logFormat, "log-format", "text", "log as `text` or json")
	fs.StringVar(&f.logLevel, "log-level", "warn", "least `LEVEL` logged: debug, info, warn or error")
	fs.StringVar(&f.progress, "progress", "auto", "how run shows progress: `auto` (a line on a terminal, else a log record), line, log or off")
	fs.DurationVar(&f.progressInterval, "progress-interval", 0, "time between progress updates (default 1s for the line, 30s for the log)")
}

// open builds the process's observer from the flags, the first time it is called.
func (f *obsFlags) open(stdout, stderr io.Writer) (*observer, error) {
	f.once.Do(func() { f.o, f.err = newObserver(f, stdout, stderr) })
	return f.o, f.err
}

// close flushes the log and stops the metrics server, if open was called.
func (f *obsFlags) close() {
	if f.o != nil {
		f.o.close()
	}
}

// observer is what a pipesql process shows about its jobs: its log, the progress of
// pipesql run, and the metrics server, all reading one obs.Registry.
type observer struct {
	flags *obsFlags
	// stdout and stderr are where the process writes: on a terminal with a progress
	// line, through it, so that what they print scrolls above the line.
	stdout, stderr io.Writer
	log            *slog.Logger
	dedup          *obs.Dedup
	progressLog    *slog.Logger // progress records: INFO whatever --log-level says
	line           *obs.StatusLine
	mode           obs.ProgressMode
	width          func() int
	reg            *obs.Registry

	mu     sync.Mutex
	server *obs.Server
	jobs   int // jobs tracked so far, for their ids
}

func newObserver(f *obsFlags, stdout, stderr io.Writer) (*observer, error) {
	o := &observer{flags: f, stdout: stdout, stderr: stderr, reg: obs.NewRegistry(), width: func() int { return 100 }}
	switch strings.ToLower(f.progress) {
	case "auto", "":
		o.mode = obs.ProgressLog
		if isTerminal(stderr) {
			o.mode = obs.ProgressTerminal
		}
	case "line":
		o.mode = obs.ProgressTerminal
	case "log":
		o.mode = obs.ProgressLog
	case "off":
		o.mode = obs.ProgressOff
	default:
		return nil, fmt.Errorf("--progress %q: want auto, line, log or off", f.progress)
	}
	if o.mode == obs.ProgressTerminal {
		o.line = obs.NewStatusLine(stderr)
		o.stderr = o.line.Writer(stderr)
		if isTerminal(stdout) {
			o.stdout = o.line.Writer(stdout)
		}
		if file, ok := stderr.(*os.File); ok {
			o.width = func() int {
				if w, _, err := readline.GetSize(int(file.Fd())); err == nil && w > 0 {
					return w
				}
				return 100
			}
		}
	}
	var err error
	if o.log, o.dedup, err = obs.NewLogger(o.stderr, obs.LogOptions{Format: f.logFormat, Level: f.logLevel}); err != nil {
		return nil, fmt.Errorf("--log-format/--log-level: %w", err)
	}
	h, err := obs.NewLogHandler(o.stderr, f.logFormat, slog.LevelInfo)
	if err != nil {
		return nil, err
	}
	o.progressLog = slog.New(h)
	if f.metricsAddr != "" {
		if err := o.serve(f.metricsAddr); err != nil {
			return nil, fmt.Errorf("--metrics-addr: %w", err)
		}
	}
	return o, nil
}

// serve starts the metrics server on addr, unless it runs already.
func (o *observer) serve(addr string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.server != nil {
		if addr != o.flags.metricsAddr && addr != o.server.Addr() {
			o.log.Warn("metrics are served already; another address is ignored", "serving", o.server.Addr(), "ignored", addr)
		}
		return nil
	}
	s, err := obs.Serve(addr, o.reg)
	if err != nil {
		return err
	}
	o.server = s
	o.log.Info("serving metrics and job status", "metrics", "http://"+s.Addr()+"/metrics", "status", "http://"+s.Addr()+"/status")
	return nil
}

// serveFrom starts the metrics server when settings ask for it (SET 'metrics.address').
func (o *observer) serveFrom(settings map[string]string) error {
	if o == nil {
		return nil
	}
	addr := strings.TrimSpace(settings[settingMetricsAddress])
	if addr == "" {
		return nil
	}
	if err := o.serve(addr); err != nil {
		return sqlError{fmt.Errorf("SET '%s' = '%s': %w", settingMetricsAddress, addr, err)}
	}
	return nil
}

// track shows a job in the metrics, /status and the progress line; id "" numbers it.
func (o *observer) track(id, name string, job *exec.Job, prog *planner.Program) *obs.Tracker {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	o.jobs++
	if id == "" {
		id = strconv.Itoa(o.jobs)
	}
	o.mu.Unlock()
	t := obs.NewTracker(job, obs.TrackerOptions{ID: id, Name: name, EventTime: obs.EventTimeOf(prog)})
	o.reg.Add(t)
	return t
}

// untrack stops showing a job.
func (o *observer) untrack(id string) {
	if o != nil {
		o.reg.Remove(id)
	}
}

// watch shows the jobs of a pipesql run while they run: it tracks them, serves their
// metrics when SET 'metrics.address' asks, and shows the progress. The returned stop
// ends the progress (a terminal keeps its last line).
func (o *observer) watch(ctx context.Context, progs []*planner.Program, jobs []*exec.Job) (stop func(), err error) {
	if o == nil {
		return func() {}, nil
	}
	for i, job := range jobs {
		if err := o.serveFrom(progs[i].Settings); err != nil {
			return nil, err
		}
		o.track("", insertJobName(progs[i]), job, progs[i])
	}
	if o.mode == obs.ProgressOff {
		return func() {}, nil
	}
	restorePrint := func() {}
	if o.line != nil {
		restorePrint = builtin.SetPrintOutput(o.stdout, o.stderr)
	}
	// The progress outlives a cancelled ctx: it shows the jobs draining, then how they ended.
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		obs.ShowProgress(pctx, o.reg, obs.ProgressOptions{
			Mode: o.mode, Interval: o.flags.progressInterval, Line: o.line, Width: o.width, Log: o.progressLog,
		})
	}()
	return func() {
		cancel()
		<-done
		restorePrint()
	}, nil
}

// close reports the log lines still folded and stops the metrics server.
func (o *observer) close() {
	if o.dedup != nil {
		o.dedup.Flush(context.Background())
	}
	o.mu.Lock()
	s := o.server
	o.server = nil
	o.mu.Unlock()
	if s != nil {
		if err := s.Close(); err != nil {
			o.log.Warn("stopping the metrics server", "err", err)
		}
	}
}
