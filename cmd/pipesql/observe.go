package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/console"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/obs"
	"github.com/pipesql/pipesql/shell"
)

// obsFlags are the observability flags of run, shell and demo.
type obsFlags struct {
	metricsAddr      string
	webAddr          string // the same server as metricsAddr, by the console's name
	webAllowRemote   bool
	webToken         string
	logFormat        string
	logLevel         string
	progress         string
	progressInterval time.Duration

	once sync.Once
	o    *observer
	err  error
	eng  *engine.Engine
}

func (f *obsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on `HOST:PORT`/metrics and job status on /status")
	fs.StringVar(&f.webAddr, "web-addr", "", "serve the web console (and the metrics) on `HOST:PORT`; the same server as --metrics-addr")
	fs.BoolVar(&f.webAllowRemote, "web-allow-remote", false, "allow --metrics-addr/--web-addr on an address other hosts reach (the console's actions then need --web-token)")
	fs.StringVar(&f.webToken, "web-token", "", "the `TOKEN` the console's actions need when other hosts reach it (default: a random one, logged)")
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

// newEngine makes the process's engine: its jobs log to o and are tracked in o's
// registry; it serves metrics on --metrics-addr.
func (f *obsFlags) newEngine(o *observer, opts engine.Options) (*engine.Engine, error) {
	addr, flagName := f.metricsAddr, "--metrics-addr"
	if f.webAddr != "" {
		if addr != "" && addr != f.webAddr {
			return nil, fmt.Errorf("--web-addr %s and --metrics-addr %s: the console and the metrics share one server; give one address", f.webAddr, addr)
		}
		addr, flagName = f.webAddr, "--web-addr"
	}
	token := f.webToken
	if f.webAllowRemote && token == "" {
		var err error
		if token, err = engine.FlinkJobID(0); err != nil {
			return nil, err
		}
	}
	opts.Log, opts.Registry, opts.MetricsAddr, opts.AllowRemote = o.log, o.reg, addr, f.webAllowRemote
	opts.Handler = func(e *engine.Engine) http.Handler {
		if f.webAllowRemote {
			o.log.Warn("the web console is served to other hosts; its actions need this token in the X-Pipesql-Token header",
				"token", token)
		}
		return console.Handler(e, console.Options{Token: token})
	}
	eng, err := engine.New(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	f.eng = eng
	return eng, nil
}

// close stops the engine's jobs and metrics server and flushes the log, if open was
// called.
func (f *obsFlags) close() {
	if f.eng != nil {
		if err := f.eng.Close(); err != nil && f.o != nil {
			f.o.log.Warn("closing the engine", "err", err)
		}
	}
	if f.o != nil {
		f.o.close()
	}
}

// observer is what a pipesql process shows about its jobs: its log and the progress of
// pipesql run, reading the obs.Registry the engine tracks its jobs in (and serves).
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
}

func newObserver(f *obsFlags, stdout, stderr io.Writer) (*observer, error) {
	o := &observer{flags: f, stdout: stdout, stderr: stderr, reg: obs.NewRegistry(), width: func() int { return 100 }}
	switch strings.ToLower(f.progress) {
	case "auto", "":
		o.mode = obs.ProgressLog
		if shell.IsTerminal(stderr) {
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
		if shell.IsTerminal(stdout) {
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
	return o, nil
}

// watch shows the progress of the jobs of a pipesql run while they run. The returned
// stop ends it (a terminal keeps its last line).
func (o *observer) watch(ctx context.Context) (stop func()) {
	if o == nil || o.mode == obs.ProgressOff {
		return func() {}
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
	}
}

// close reports the log lines still folded.
func (o *observer) close() {
	if o.dedup != nil {
		o.dedup.Flush(context.Background())
	}
}
