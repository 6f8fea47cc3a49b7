package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chzyer/readline"

	"github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// The interactive shell
//
// `pipesql shell` on a terminal reads statements with line editing (readline: emacs
// keys, Ctrl-R history search, Tab completion), runs each once its ';' arrives, prints
// errors with their position and goes on. Its history is kept across runs, one statement
// per entry. SELECT shows live results (shell_render.go), INSERT runs in the background
// (shell_jobs.go). Given -f FILE, or a pipe on its standard input, the shell runs the
// script as `pipesql run` would: same statements, same output, same exit code.
//
// Ctrl-C belongs to the statement running: it cancels a query, detaches from a job that
// is starting, or stops waiting for a job to stop. At the prompt, readline has the
// terminal in raw mode and Ctrl-C clears the line being typed (it stays in the history).
// While a statement runs, the terminal is in cooked mode and Ctrl-C arrives as SIGINT.

const (
	primaryPrompt      = "pipesql> "
	continuationPrompt = "      -> "
)

const shellHelpText = `
Keys at the prompt: Tab completes keywords, tables, columns and connector options;
Up/Down browse the history (kept across runs), Ctrl-R searches it; Ctrl-C clears the line;
Ctrl-D leaves. While a query runs, Ctrl-C cancels it. Statements end with ';'.
Results: SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau';
`

// cmdShell runs the shell: interactive on a terminal, else (-f FILE or a pipe) a script.
func cmdShell(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cf commonFlags
	fs := newFlagSet("shell", stderr, &cf)
	fs.StringVar(&cf.file, "f", "", "run `FILE` non-interactively and exit")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) != 0 {
		return usageError(stderr, "shell takes no arguments (got %q); use -f FILE to run a file", rest)
	}
	in, isFile := stdin.(*os.File)
	if cf.file == "" && isFile && isTerminal(in) {
		return runInteractive(&cf, in, stdout, stderr)
	}
	// A script, from -f or piped in, means what it means to `pipesql run`.
	file := cf.file
	if file == "" {
		file = "-"
	}
	ctx, stop := signalContext()
	defer stop()
	err = runFile(ctx, &cf, file, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pipesql: %v\n", err)
	}
	return exitCode(err)
}

func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// shell is an interactive session.
type shell struct {
	r     *runner
	rl    *readline.Instance
	hist  *history
	jobs  *jobTable
	gate  *gate
	in    *os.File  // the terminal
	out   io.Writer // the terminal, for the output of the statement running
	err   io.Writer
	log   *slog.Logger
	clock exec.Clock
	size  termSize
	// live is whether the output is a terminal a view can be redrawn on.
	live bool

	mu        sync.Mutex
	pending   string // lines of an unfinished statement, for the completer
	interrupt func() // what Ctrl-C does while a statement runs; nil at the prompt
	// terminating is set by SIGTERM or SIGHUP: the shell stops its jobs and leaves.
	terminating atomic.Bool
}

func runInteractive(cf *commonFlags, stdin *os.File, stdout, stderr io.Writer) int {
	sh := &shell{in: stdin, out: stdout, err: stderr, clock: exec.WallClock{}, live: isTerminal(stdout), gate: &gate{}}
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

	var session *planner.Session // set once prepare made the runner
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
		Prompt:                 primaryPrompt,
		HistoryLimit:           historyLimit,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           completer,
		Stdin:                  stdin,
		Stdout:                 stdout,
		Stderr:                 stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "pipesql: starting the shell: %v\n", err)
		return exitJobFailed
	}
	sh.rl = rl
	defer rl.Close()
	hist.load(rl)

	// Background output (job notices, print sinks, warnings) goes through readline, which
	// redraws the prompt below it, and through the gate, which holds it while a statement
	// has the screen.
	bgOut, bgErr := sh.gate.writer(rl.Stdout()), sh.gate.writer(rl.Stderr())
	sh.log = newLogger(bgErr)
	restorePrint := builtin.SetPrintOutput(bgOut, bgErr)
	defer restorePrint()

	ctx := context.Background()
	r, err := prepare(ctx, cf, stdout, bgErr, false)
	if err != nil {
		fmt.Fprintf(stderr, "pipesql: %v\n", err)
		return exitCode(err)
	}
	r.chatty = true
	r.log = sh.log
	sh.r = r
	session = r.session
	sh.jobs = &jobTable{clock: sh.clock, log: sh.log, notify: func(line string) { fmt.Fprintln(bgOut, line) }}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go sh.signals(sigs)

	fmt.Fprintf(stdout, "pipesql %s shell. Statements end with ';'. HELP; lists them, Tab completes, QUIT; leaves.\n", version)
	if herr != nil {
		fmt.Fprintf(stderr, "[WARNING] %v: this session's history will not be kept\n", herr)
		hist.path = ""
	}
	// INSERT statements of the -i files run in the background, as typed ones do.
	for _, prog := range r.jobs {
		j, err := sh.jobs.submit(prog)
		if err != nil {
			sh.printError(r.sqlErr(err))
			continue
		}
		fmt.Fprintf(stdout, "[INFO] Job of the init file submitted: Job ID: %s\n", j.id)
	}
	r.jobs = nil
	sh.loop()
	sh.stopAll()
	return exitOK
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
			sh.rl.SetPrompt(primaryPrompt)
		} else {
			sh.rl.SetPrompt(continuationPrompt)
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
	stmts, err := sh.r.parseText("", text)
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
			sh.r.printTable(showJobsHeader, sh.jobs.rows(sh.clock.Now()))
			return false, nil
		}
	}
	return false, sh.r.execute(context.Background(), stmt)
}

// ---- queries ----

// query runs a SELECT until it ends or Ctrl-C, showing its results as they change.
func (sh *shell) query(s *parser.QueryStatement) error {
	prog, err := sh.r.session.Plan(s)
	if err != nil {
		return sh.r.sqlErr(err)
	}
	mode := strings.ToLower(sh.r.session.Setting("sql-client.execution.result-mode"))
	if !sh.live {
		mode = modeTableau
	}
	maxCol := sh.intSetting("table.display.max-column-width", 30)
	if v, ok := sh.setting("sql-client.display.max-column-width"); ok {
		maxCol = atoiOr(v, maxCol)
	}
	view := newResultView(mode, prog.Pipelines[0].Root.Schema(), viewOptions{
		out: sh.out, size: sh.size, live: sh.live, maxColWidth: maxCol,
		maxRows: sh.intSetting("sql-client.execution.max-table-result.rows", 1_000_000),
	})
	job, err := exec.NewJob(prog, exec.Options{Clock: sh.clock, Log: sh.log, Collect: view.collect})
	if err != nil {
		return sh.r.sqlErr(err)
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

func (sh *shell) setting(key string) (string, bool) {
	for _, kv := range sh.r.session.Settings() {
		if kv[0] == key {
			return kv[1], true
		}
	}
	return "", false
}

func (sh *shell) intSetting(key string, def int) int {
	return atoiOr(sh.r.session.Setting(key), def)
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
		return n
	}
	return def
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
	j, err := sh.jobs.submit(prog)
	if err != nil {
		return sh.r.sqlErr(err)
	}
	detach := make(chan struct{})
	var once sync.Once
	release := sh.onInterrupt(func() { once.Do(func() { close(detach) }) })
	defer release()
	line := statusLine{w: sh.out, live: sh.live}
	tick := sh.clock.NewTicker(refreshInterval)
	defer tick.Stop()
wait:
	for {
		text, started := j.start.phase(j.job.Metrics())
		if started {
			break
		}
		line.show(text + " (" + seconds(sh.clock.Now().Sub(j.begun)) + ")")
		select {
		case <-j.done:
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
	fmt.Fprintf(sh.out, "Job ID: %s\n", j.id)
	return nil
}

// stopJob runs STOP JOB 'id': the job stops cleanly, its sinks flushed.
func (sh *shell) stopJob(s *parser.StopJob) error {
	j, err := sh.jobs.find(s.ID)
	if err != nil {
		return sh.r.sqlErr(atStatement(s.At, err))
	}
	switch {
	case s.WithDrain:
		return sh.r.sqlErr(atStatement(s.At, errors.New("STOP JOB ... WITH DRAIN is not supported; STOP JOB without it stops the job")))
	case !j.running():
		j.mu.Lock()
		status := j.endStatus()
		j.mu.Unlock()
		return sh.r.sqlErr(atStatement(s.At, fmt.Errorf("job %s is not running: it is %s", j.id, status)))
	case s.WithSavepoint:
		return sh.stopWithSavepoint(s, j)
	}
	j.stop()
	if sh.awaitStop([]*bgJob{j}) {
		fmt.Fprintf(sh.out, "[INFO] Job %s stopped.\n", j.id)
	}
	return nil
}

// stopWithSavepoint stops a job after a final checkpoint saved as a savepoint under the
// savepoint directory (execution.checkpointing.savepoint-dir, or state.savepoints.dir, as
// set now in the session or when the job was submitted).
func (sh *shell) stopWithSavepoint(s *parser.StopJob, j *bgJob) error {
	dir := ""
	for _, key := range []string{exec.KeySavepointDir, exec.KeySavepointDirOld} {
		if v, ok := sh.setting(key); ok && dir == "" {
			dir = v
		}
	}
	for _, key := range []string{exec.KeySavepointDir, exec.KeySavepointDirOld} {
		if v := j.settings[key]; v != "" && dir == "" {
			dir = v
		}
	}
	if dir == "" {
		return sh.r.sqlErr(atStatement(s.At, fmt.Errorf(
			"STOP JOB ... WITH SAVEPOINT needs a savepoint directory: SET '%s' = '/path/to/savepoints' first", exec.KeySavepointDir)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := sh.onInterrupt(cancel)
	line := statusLine{w: sh.out, live: sh.live}
	line.show(fmt.Sprintf("stopping job %s with a savepoint in %s", j.id, dir))
	j.mu.Lock()
	j.stopped = true
	j.mu.Unlock()
	path, err := j.job.StopWithSavepoint(ctx, dir)
	line.clear()
	release()
	if errors.Is(err, exec.ErrCheckpointingDisabled) {
		j.mu.Lock()
		j.stopped = false
		j.mu.Unlock()
		return sh.r.sqlErr(atStatement(s.At, fmt.Errorf(
			"STOP JOB ... WITH SAVEPOINT needs checkpointing, and job %s was submitted without: "+
				"SET '%s' = '10 s' before submitting a job to stop it with a savepoint (STOP JOB without WITH SAVEPOINT stops this one)",
			j.id, exec.KeyCheckpointInterval)))
	}
	if err != nil {
		return fmt.Errorf("stopping job %s with a savepoint: %w", j.id, err)
	}
	j.mu.Lock()
	j.savepoint = path
	j.mu.Unlock()
	sh.awaitStop([]*bgJob{j})
	fmt.Fprintf(sh.out, "[INFO] Savepoint path: %s\n", path)
	fmt.Fprintf(sh.out, "[INFO] Job %s stopped.\n", j.id)
	return nil
}

// atStatement positions an error at a statement.
func atStatement(pos parser.Pos, err error) error {
	return parser.Errorf(pos, "%v", err)
}

// awaitStop waits for stopping jobs to end, showing a status line. Ctrl-C stops the
// waiting (the jobs go on stopping); it returns whether they all ended.
func (sh *shell) awaitStop(jobs []*bgJob) bool {
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
		for j.running() {
			line.show(fmt.Sprintf("stopping %s: draining and flushing sinks (%s)", plural(int64(len(jobs)), "job"), seconds(sh.clock.Now().Sub(begun))))
			select {
			case <-j.done:
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

// confirmQuit asks before leaving jobs running and stops them if told to.
func (sh *shell) confirmQuit() bool {
	running := sh.jobs.running()
	if len(running) == 0 {
		return true
	}
	ids := make([]string, len(running))
	for i, j := range running {
		ids[i] = j.id
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
	for _, j := range running {
		j.stop()
	}
	sh.awaitStop(running)
	return true
}

// stopAll stops the jobs still running when the shell ends and waits for them.
func (sh *shell) stopAll() {
	if sh.jobs == nil {
		return
	}
	running := sh.jobs.running()
	for _, j := range running {
		j.stop()
	}
	for _, j := range running {
		<-j.done
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
