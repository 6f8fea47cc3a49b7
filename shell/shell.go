package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chzyer/readline"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// The prompts: the first line of a statement, and the lines that continue it.
const (
	PrimaryPrompt      = "pipesql> "
	ContinuationPrompt = "      -> "
)

const shellHelpText = `
Keys at the prompt: Tab completes keywords, tables, columns and connector options;
Up/Down browse the history (kept across runs), Ctrl-R searches it; Ctrl-C clears the line;
Ctrl-D leaves. While a query runs, Ctrl-C cancels it. Statements end with ';'.
Results: SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau';
`

// IsTerminal reports whether f is a terminal.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	info, err := file.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// shell is an interactive session.
type shell struct {
	r     *Runner
	rl    *readline.Instance
	hist  *history
	gate  *gate
	in    *os.File  // the terminal
	out   io.Writer // the terminal, for the output of the statement running
	err   io.Writer
	clock connectors.Clock
	size  termSize
	// live is whether the output is a terminal a view can be redrawn on.
	live bool
	// notify prints a line in the background: a job that ended by itself.
	notify func(line string)

	mu        sync.Mutex
	pending   string // lines of an unfinished statement, for the completer
	interrupt func() // what Ctrl-C does while a statement runs; nil at the prompt
	// terminating is set by SIGTERM or SIGHUP: the shell stops its jobs and leaves.
	terminating atomic.Bool
}

// Config configures an interactive shell.
type Config struct {
	// Version is shown in the greeting.
	Version string
	// In is the terminal the shell reads; Out and Err are where it writes.
	In       *os.File
	Out, Err io.Writer
	// Prepare makes the session's Runner (with its engine), its flags applied and its
	// init files run. What its jobs print and log in the background is to go to stderr,
	// which the shell keeps below its prompt. Its queued INSERT jobs run in the
	// background, as typed ones do.
	Prepare func(stdout, stderr io.Writer) (*Runner, error)
}

// Interactive runs the shell on a terminal until QUIT, Ctrl-D, SIGTERM or SIGHUP, and
// stops the jobs still running. Its error is one of starting (Prepare's error, or the
// terminal's); the errors of statements are printed and the shell goes on.
func Interactive(cfg Config) error {
	stdin, stdout, stderr := cfg.In, cfg.Out, cfg.Err
	sh := &shell{in: stdin, out: stdout, err: stderr, clock: connectors.WallClock{}, live: IsTerminal(stdout), gate: &gate{}}
	sh.size = func() (int, int) {
		if f, ok := stdout.(*os.File); ok {
			if w, h, err := readline.GetSize(int(f.Fd())); err == nil && w > 0 && h > 0 {
				return w, h
			}
		}
		return 80, 24
	}
	hist, herr := loadHistory(historyFile())
	sh.hist = hist

	var session *planner.Session // set once Prepare made the runner
	completer := newCompleter(
		func() *planner.Catalog {
			if session == nil {
				return planner.NewCatalog()
			}
			return session.Catalog()
		},
		func() string {
			sh.mu.Lock()
			defer sh.mu.Unlock()
			return sh.pending
		})
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 PrimaryPrompt,
		HistoryLimit:           historyLimit,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           completer,
		Stdin:                  stdin,
		Stdout:                 stdout,
		Stderr:                 stderr,
	})
	if err != nil {
		return fmt.Errorf("starting the shell: %w", err)
	}
	sh.rl = rl
	defer rl.Close()
	hist.load(rl)

	// Background output (job notices, print sinks, warnings) goes through readline, which
	// redraws the prompt below it, and through the gate, which holds it while a statement
	// has the screen.
	bgOut, bgErr := sh.gate.writer(rl.Stdout()), sh.gate.writer(rl.Stderr())
	sh.notify = func(line string) { fmt.Fprintln(bgOut, line) }
	restorePrint := builtin.SetPrintOutput(bgOut, bgErr)
	defer restorePrint()

	r, err := cfg.Prepare(stdout, bgErr)
	if err != nil {
		return err
	}
	r.chatty = true
	sh.r = r
	session = r.session

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go sh.signals(sigs)

	fmt.Fprintf(stdout, "pipesql %s shell. Statements end with ';'. HELP; lists them, Tab completes, QUIT; leaves.\n", cfg.Version)
	if herr != nil {
		fmt.Fprintf(stderr, "[WARNING] %v: this session's history will not be kept\n", herr)
		hist.path = ""
	}
	// INSERT statements of the -i files run in the background, as typed ones do.
	for _, prog := range r.jobs {
		j, err := sh.start(prog)
		if err != nil {
			sh.printError(err)
			continue
		}
		fmt.Fprintf(stdout, "[INFO] Job of the init file submitted: Job ID: %s\n", j.ID())
	}
	r.jobs = nil
	sh.loop()
	sh.stopAll()
	return nil
}

// signals routes SIGINT to the statement running and makes SIGTERM and SIGHUP end the
// shell (its jobs stop cleanly).
func (sh *shell) signals(sigs <-chan os.Signal) {
	for s := range sigs {
		if s != os.Interrupt {
			sh.terminating.Store(true)
		}
		sh.mu.Lock()
		f := sh.interrupt
		sh.mu.Unlock()
		if f != nil {
			f()
		}
		if s != os.Interrupt {
			sh.rl.Close() // ends a Readline in progress with io.EOF
		}
	}
}

// onInterrupt makes Ctrl-C call f until the returned function is called.
func (sh *shell) onInterrupt(f func()) (release func()) {
	sh.mu.Lock()
	sh.interrupt = f
	sh.mu.Unlock()
	return func() {
		sh.mu.Lock()
		sh.interrupt = nil
		sh.mu.Unlock()
	}
}

func (sh *shell) setPending(s string) {
	sh.mu.Lock()
	sh.pending = s
	sh.mu.Unlock()
}

// loop reads and runs statements until QUIT, Ctrl-D or a terminating signal.
func (sh *shell) loop() {
	var buf strings.Builder
	for !sh.terminating.Load() {
		if buf.Len() == 0 {
			sh.rl.SetPrompt(PrimaryPrompt)
		} else {
			sh.rl.SetPrompt(ContinuationPrompt)
		}
		sh.setPending(buf.String())
		line, err := sh.rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			// The line is dropped from the screen, not lost: it goes to the history.
			sh.remember(buf.String() + line)
			buf.Reset()
			continue
		case err != nil: // io.EOF: Ctrl-D on an empty line, or the terminal closed
			sh.remember(buf.String())
			buf.Reset()
			if sh.terminating.Load() || sh.confirmQuit() {
				return
			}
			continue
		}
		if buf.Len() == 0 && isBareQuit(line) {
			sh.remember(line)
			if sh.confirmQuit() {
				return
			}
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		text := buf.String()
		if !parser.StatementComplete(text) {
			if chunks, err := parser.Split("", text); err == nil && len(chunks) == 0 {
				buf.Reset() // only comments and blank lines: nothing to run
			}
			continue
		}
		buf.Reset()
		sh.remember(text)
		if quit := sh.runText(text); quit && sh.confirmQuit() {
			return
		}
	}
}

// isBareQuit reports whether line is quit or exit without a ';', which psql accepts too.
func isBareQuit(line string) bool {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "quit", "exit", `\q`:
		return true
	}
	return false
}

// remember adds a statement to the history, the file and readline's copy.
func (sh *shell) remember(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if err := sh.hist.add(text); err != nil {
		fmt.Fprintf(sh.err, "[WARNING] %v\n", err)
	}
	sh.hist.load(sh.rl)
}

// runText runs the statements of text, stopping at the first error. quit reports a QUIT.
func (sh *shell) runText(text string) (quit bool) {
	sh.gate.hold()
	defer sh.gate.release()
	defer quietInput(sh.in)()
	stmts, err := sh.r.ParseText("", text)
	if err != nil {
		sh.printError(err)
		return false
	}
	for _, s := range stmts {
		quit, err := sh.execute(s)
		if err != nil {
			sh.printError(err)
			return false
		}
		if quit {
			return true
		}
	}
	return false
}

func (sh *shell) printError(err error) {
	fmt.Fprintf(sh.err, "[ERROR] %v\n", err)
}

// execute runs one statement: queries, jobs and job control here, the rest as a script
// runs them.
func (sh *shell) execute(stmt parser.Statement) (quit bool, err error) {
	switch s := stmt.(type) {
	case *parser.Quit:
		return true, nil
	case *parser.QueryStatement:
		return false, sh.query(s)
	case *parser.Insert, *parser.StatementSet:
		return false, sh.submit(s)
	case *parser.StopJob:
		return false, sh.stopJob(s)
	case *parser.Help:
		fmt.Fprint(sh.out, helpText)
		fmt.Fprint(sh.out, shellHelpText)
		return false, nil
	case *parser.Show:
		if s.What == parser.ShowJobs {
			sh.r.printTable(showJobsHeader, jobRows(sh.r.eng.Jobs(), sh.clock.Now()))
			return false, nil
		}
	}
	return false, sh.r.Execute(context.Background(), stmt)
}

// ---- queries ----

// query runs a SELECT until it ends or Ctrl-C, showing its results as they change.
func (sh *shell) query(s *parser.QueryStatement) error {
	prog, err := sh.r.session.Plan(s)
	if err != nil {
		return sh.r.sqlErr(err)
	}
	v := sh.values()
	mode := strings.ToLower(v.Enum(config.ResultMode))
	if !sh.live {
		mode = modeTableau
	}
	maxCol := v.Int(config.TableMaxColumnWidth)
	if v.IsSet(config.DisplayMaxColumnWidth) {
		maxCol = v.Int(config.DisplayMaxColumnWidth)
	}
	view := newResultView(mode, prog.Pipelines[0].Root.Schema(), viewOptions{
		out: sh.out, size: sh.size, live: sh.live, maxColWidth: maxCol,
		maxRows: v.Int(config.MaxTableResultRows),
	})
	job, err := sh.r.eng.Query(prog, view.collect)
	if err != nil {
		return sh.r.submitErr(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer sh.onInterrupt(cancel)()

	start := newStartup(prog)
	begun := sh.clock.Now()
	elapsed := func() string { return seconds(sh.clock.Now().Sub(begun)) }
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	tick := sh.clock.NewTicker(refreshInterval)
	defer tick.Stop()
	status := func() string {
		text, _ := start.phase(job.Metrics())
		return text + " (" + elapsed() + ")"
	}
	view.refresh(status())
	for {
		select {
		case err := <-done:
			how, word := finished, "finished"
			switch {
			case err != nil:
				how, word = failed, "failed"
			case ctx.Err() != nil:
				how, word = cancelled, "cancelled"
			}
			view.finish(how, fmt.Sprintf("Query %s after %s.", word, elapsed()))
			if err != nil {
				return fmt.Errorf("query failed: %w", err)
			}
			return nil
		case <-tick.C():
			view.refresh(status())
		}
	}
}

// values reads the session's settings, with the defaults of config's table.
func (sh *shell) values() *config.Values {
	m := map[string]string{}
	for _, kv := range sh.r.session.Settings() {
		m[kv[0]] = kv[1]
	}
	return config.Read(m)
}

// seconds formats d as 3.2s.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// ---- jobs ----

// submit starts an INSERT (or a statement set) in the background and waits, showing
// what it does, until its sources are connected.
func (sh *shell) submit(stmt parser.Statement) error {
	prog, err := sh.r.session.Plan(stmt)
	if err != nil {
		return sh.r.sqlErr(err)
	}
	fmt.Fprintln(sh.out, "[INFO] Submitting SQL update statement to the cluster...")
	j, err := sh.start(prog)
	if err != nil {
		return err
	}
	detach := make(chan struct{})
	var once sync.Once
	release := sh.onInterrupt(func() { once.Do(func() { close(detach) }) })
	defer release()
	line := statusLine{w: sh.out, live: sh.live}
	tick := sh.clock.NewTicker(refreshInterval)
	defer tick.Stop()
	start, begun := newStartup(prog), sh.clock.Now()
wait:
	for {
		text, started := start.phase(j.Exec().Metrics())
		if started {
			break
		}
		line.show(text + " (" + seconds(sh.clock.Now().Sub(begun)) + ")")
		select {
		case <-j.Done():
			break wait
		case <-detach:
			line.clear()
			fmt.Fprintln(sh.out, "[INFO] The job is still starting; it goes on in the background (SHOW JOBS follows it).")
			break wait
		case <-tick.C():
		}
	}
	line.clear()
	fmt.Fprintln(sh.out, "[INFO] SQL update statement has been successfully submitted to the cluster:")
	fmt.Fprintf(sh.out, "Job ID: %s\n", j.ID())
	return nil
}

// start submits prog to the engine, to run until it ends or is stopped, and has its end
// announced when it ends by itself (finishes or fails).
func (sh *shell) start(prog *planner.Program) (*engine.Job, error) {
	j, err := sh.r.eng.Submit(context.Background(), prog)
	if err != nil {
		return nil, sh.r.submitErr(err)
	}
	go func() {
		err := j.Wait()
		switch {
		case err != nil:
			sh.notify(fmt.Sprintf("[ERROR] Job %s (%s) failed: %v", j.ID(), j.Name(), err))
		case !j.Stopped():
			sh.notify(fmt.Sprintf("[INFO] Job %s (%s) finished.", j.ID(), j.Name()))
		}
	}()
	return j, nil
}

// stopJob runs STOP JOB 'id': the job stops cleanly, its sinks flushed.
func (sh *shell) stopJob(s *parser.StopJob) error {
	j, err := findJob(sh.r.eng.Jobs(), s.ID)
	if err != nil {
		return sh.r.sqlErr(atStatement(s.At, err))
	}
	switch {
	case s.WithDrain:
		return sh.r.sqlErr(atStatement(s.At, errors.New("STOP JOB ... WITH DRAIN is not supported; STOP JOB without it stops the job")))
	case !j.Running():
		return sh.r.sqlErr(atStatement(s.At, fmt.Errorf("job %s is not running: it is %s", j.ID(), j.Status().State)))
	case s.WithSavepoint:
		return sh.stopWithSavepoint(s, j)
	}
	if _, err := sh.r.eng.Stop(context.Background(), j.ID(), engine.StopOptions{}); err != nil && !errors.Is(err, engine.ErrNotRunning) {
		return err
	}
	if sh.awaitStop([]*engine.Job{j}) {
		fmt.Fprintf(sh.out, "[INFO] Job %s stopped.\n", j.ID())
	}
	return nil
}

// stopWithSavepoint stops a job after a final checkpoint saved as a savepoint under the
// savepoint directory (execution.checkpointing.savepoint-dir, or state.savepoints.dir, as
// set now in the session or when the job was submitted).
func (sh *shell) stopWithSavepoint(s *parser.StopJob, j *engine.Job) error {
	dir := sh.values().Dir(config.SavepointDir)
	if dir == "" {
		dir = config.Read(j.Program().Settings).Dir(config.SavepointDir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := sh.onInterrupt(cancel)
	line := statusLine{w: sh.out, live: sh.live}
	line.show(fmt.Sprintf("stopping job %s with a savepoint in %s", j.ID(), dir))
	path, err := sh.r.eng.Stop(ctx, j.ID(), engine.StopOptions{WithSavepoint: true, SavepointDir: dir})
	line.clear()
	release()
	switch {
	case errors.Is(err, engine.ErrNoSavepointDir):
		return sh.r.sqlErr(atStatement(s.At, fmt.Errorf(
			"STOP JOB ... WITH SAVEPOINT needs a savepoint directory: SET '%s' = '/path/to/savepoints' first", exec.KeySavepointDir)))
	case errors.Is(err, exec.ErrCheckpointingDisabled):
		return sh.r.sqlErr(atStatement(s.At, fmt.Errorf(
			"STOP JOB ... WITH SAVEPOINT needs checkpointing, and job %s was submitted without: "+
				"SET '%s' = '10 s' before submitting a job to stop it with a savepoint (STOP JOB without WITH SAVEPOINT stops this one)",
			j.ID(), exec.KeyCheckpointInterval)))
	case err != nil:
		return fmt.Errorf("stopping job %s with a savepoint: %w", j.ID(), err)
	}
	sh.awaitStop([]*engine.Job{j})
	fmt.Fprintf(sh.out, "[INFO] Savepoint path: %s\n", path)
	fmt.Fprintf(sh.out, "[INFO] Job %s stopped.\n", j.ID())
	return nil
}

// atStatement positions an error at a statement.
func atStatement(pos parser.Pos, err error) error {
	return parser.Errorf(pos, "%v", err)
}

// awaitStop waits for stopping jobs to end, showing a status line. Ctrl-C stops the
// waiting (the jobs go on stopping); it returns whether they all ended.
func (sh *shell) awaitStop(jobs []*engine.Job) bool {
	giveUp := make(chan struct{})
	var once sync.Once
	release := sh.onInterrupt(func() { once.Do(func() { close(giveUp) }) })
	defer release()
	line := statusLine{w: sh.out, live: sh.live}
	defer line.clear()
	tick := sh.clock.NewTicker(refreshInterval)
	defer tick.Stop()
	begun := sh.clock.Now()
	for _, j := range jobs {
		for j.Running() {
			line.show(fmt.Sprintf("stopping %s: draining and flushing sinks (%s)", plural(int64(len(jobs)), "job"), seconds(sh.clock.Now().Sub(begun))))
			select {
			case <-j.Done():
			case <-giveUp:
				line.clear()
				fmt.Fprintln(sh.out, "[INFO] Not waiting any longer; the jobs go on stopping in the background.")
				return false
			case <-tick.C():
			}
		}
	}
	return true
}

// running returns the shell's jobs that have not ended.
func (sh *shell) running() []*engine.Job {
	var out []*engine.Job
	if sh.r == nil {
		return nil
	}
	for _, j := range sh.r.eng.Jobs() {
		if j.Running() {
			out = append(out, j)
		}
	}
	return out
}

// stopJobs asks jobs to stop.
func (sh *shell) stopJobs(jobs []*engine.Job) {
	for _, j := range jobs {
		sh.r.eng.Stop(context.Background(), j.ID(), engine.StopOptions{})
	}
}

// confirmQuit asks before leaving jobs running and stops them if told to.
func (sh *shell) confirmQuit() bool {
	running := sh.running()
	if len(running) == 0 {
		return true
	}
	ids := make([]string, len(running))
	for i, j := range running {
		ids[i] = j.ID()
	}
	what := "1 job is"
	if len(running) > 1 {
		what = fmt.Sprintf("%d jobs are", len(running))
	}
	sh.rl.SetPrompt(fmt.Sprintf("%s still running (%s). Stop and quit? [y/N] ", what, strings.Join(ids, ", ")))
	answer, err := sh.rl.Readline()
	sh.hist.load(sh.rl) // the answer is no statement: drop it from readline's history
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); err == nil && a != "y" && a != "yes" {
		return false
	}
	sh.stopJobs(running)
	sh.awaitStop(running)
	return true
}

// stopAll stops the jobs still running when the shell ends and waits for them.
func (sh *shell) stopAll() {
	running := sh.running()
	sh.stopJobs(running)
	for _, j := range running {
		<-j.Done()
	}
}

// statusLine is a line redrawn in place while something starts or stops.
type statusLine struct {
	w     io.Writer
	live  bool
	shown bool
	tick  int
}

func (l *statusLine) show(text string) {
	if !l.live {
		return
	}
	l.tick++
	fmt.Fprintf(l.w, "%s%s %s", clearLine, spinner[l.tick%len(spinner)], text)
	l.shown = true
}

func (l *statusLine) clear() {
	if l.shown {
		fmt.Fprint(l.w, clearLine)
		l.shown = false
	}
}

// ---- background output ----

// maxHeld bounds the background output held while a statement runs.
const maxHeld = 1 << 20

// gate passes background output to the terminal while the prompt is shown, and holds it
// while a statement has the screen (a live view redrawn in place would be torn by it),
// releasing it in order afterwards. Output beyond maxHeld is dropped and counted.
type gate struct {
	mu      sync.Mutex
	held    bool
	pending []heldWrite
	size    int
	dropped int
}

type heldWrite struct {
	w io.Writer
	p []byte
}

type gateWriter struct {
	g *gate
	w io.Writer
}

func (g *gate) writer(w io.Writer) io.Writer { return gateWriter{g, w} }

func (gw gateWriter) Write(p []byte) (int, error) {
	g := gw.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held {
		return gw.w.Write(p)
	}
	if g.size+len(p) > maxHeld {
		g.dropped += len(p)
		return len(p), nil
	}
	g.pending = append(g.pending, heldWrite{gw.w, bytes.Clone(p)})
	g.size += len(p)
	return len(p), nil
}

func (g *gate) hold() {
	g.mu.Lock()
	g.held = true
	g.mu.Unlock()
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = false
	for _, hw := range g.pending {
		hw.w.Write(hw.p)
	}
	if g.dropped > 0 && len(g.pending) > 0 {
		fmt.Fprintf(g.pending[0].w, "[WARNING] %d bytes of background output were dropped while the statement ran\n", g.dropped)
	}
	g.pending, g.size, g.dropped = nil, 0, 0
}
