package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/pipesql/pipesql/shell"
)

// These tests drive the real binary through a pseudo-terminal, as a user at a terminal
// would: they type, and read the screen until the text they expect appears. There are
// no sleeps: every wait is for output, with a deadline that only a hung shell reaches.

// ptyDeadline bounds each wait for output.
const ptyDeadline = 90 * time.Second

// terminal is a pipesql shell running on a pseudo-terminal.
type terminal struct {
	t   *testing.T
	pty *os.File
	cmd *exec.Cmd

	mu     sync.Mutex
	raw    bytes.Buffer  // everything the shell wrote
	more   chan struct{} // signalled when output arrives
	closed bool          // the shell closed its side
	seen   int           // offset in screenText up to which expectations matched
	exited chan error
}

// startShell starts `pipesql shell args...` on a 50x160 terminal in the repository root.
func startShell(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"shell"}, args...)...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatalf("starting the shell on a pty: %v", err)
	}
	tm := &terminal{t: t, pty: f, cmd: cmd, more: make(chan struct{}, 1), exited: make(chan error, 1)}
	go tm.read()
	go func() { tm.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
		f.Close()
		if t.Failed() {
			t.Logf("screen:\n%s", tm.screen())
		}
		if d := os.Getenv("PIPESQL_PTY_DUMP"); d != "" {
			os.WriteFile(filepath.Join(d, t.Name()+".raw"), []byte(tm.rawOutput()), 0o644)
			os.WriteFile(filepath.Join(d, t.Name()+".txt"), []byte(tm.screen()), 0o644)
		}
	})
	return tm
}

func (tm *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := tm.pty.Read(buf)
		tm.mu.Lock()
		tm.raw.Write(buf[:n])
		if err != nil {
			tm.closed = true
		}
		tm.mu.Unlock()
		select {
		case tm.more <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// screen is the output as a terminal shows it, but for vertical moves: carriage returns,
// erasures and backspaces are applied to the line they happen on, so that a line that
// readline redrew on each key, or a status line erased and rewritten, reads as its last
// state. Redrawn frames of a live view follow each other, as the cursor-up sequences
// that put them in place are ignored.
func (tm *terminal) screen() string {
	tm.mu.Lock()
	raw := tm.raw.String()
	tm.mu.Unlock()
	return renderScreen(raw)
}

func renderScreen(raw string) string {
	var out strings.Builder
	var line []rune
	col := 0
	rs := []rune(raw)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '\x1b':
			if i+1 < len(rs) && rs[i+1] == '[' {
				j := i + 2
				for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';' || rs[j] == '?') {
					j++
				}
				if j >= len(rs) {
					i = j
					continue
				}
				n, err := strconv.Atoi(string(rs[i+2 : j]))
				if err != nil || n < 1 {
					n = 1
				}
				switch rs[j] {
				case 'K', 'J':
					if col < len(line) {
						line = line[:col]
					}
				case 'D':
					col = max(0, col-n)
				case 'C':
					col += n
				}
				i = j
				continue
			}
			i++ // a two-character escape
		case '\r':
			col = 0
		case '\n':
			out.WriteString(string(line))
			out.WriteByte('\n')
			line, col = line[:0], 0
		case '\b':
			col = max(0, col-1)
		case '\a':
		default:
			for len(line) < col {
				line = append(line, ' ')
			}
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	out.WriteString(string(line))
	return out.String()
}

func (tm *terminal) rawOutput() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.String()
}

// send types s.
func (tm *terminal) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, s); err != nil {
		tm.t.Fatalf("typing %q: %v", s, err)
	}
}

// line types a line and Enter.
func (tm *terminal) line(s string) { tm.t.Helper(); tm.send(s + "\r") }

// expect waits until the output after the last match holds re, and returns its
// submatches; the next expect looks after this match.
func (tm *terminal) expect(re string) []string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	tm.waitFor("/"+re+"/", func(screen string) bool {
		if tm.seen > len(screen) {
			return false // the line being redrawn is shorter for now
		}
		loc := rx.FindStringSubmatchIndex(screen[tm.seen:])
		if loc == nil {
			return false
		}
		for i := 0; i < len(loc); i += 2 {
			if loc[i] < 0 {
				m = append(m, "")
			} else {
				m = append(m, screen[tm.seen+loc[i]:tm.seen+loc[i+1]])
			}
		}
		tm.seen += loc[1]
		return true
	})
	return m
}

// expectText waits for a literal text.
func (tm *terminal) expectText(s string) { tm.t.Helper(); tm.expect(regexp.QuoteMeta(s)) }

// waitFor waits until ok accepts the screen.
func (tm *terminal) waitFor(what string, ok func(screen string) bool) {
	tm.t.Helper()
	deadline := time.NewTimer(ptyDeadline)
	defer deadline.Stop()
	for {
		screen := tm.screen()
		if ok(screen) {
			return
		}
		tm.mu.Lock()
		closed := tm.closed
		tm.mu.Unlock()
		if closed {
			tm.t.Fatalf("the shell ended before %s appeared", what)
		}
		select {
		case <-tm.more:
		case <-deadline.C:
			tm.t.Fatalf("%s did not appear within %v", what, ptyDeadline)
		}
	}
}

// wait waits for the shell to exit and returns its error.
func (tm *terminal) wait() error {
	tm.t.Helper()
	select {
	case err := <-tm.exited:
		return err
	case <-time.After(ptyDeadline):
		tm.t.Fatalf("the shell did not exit within %v", ptyDeadline)
		return nil
	}
}

// The session of the issue: a multi-line CREATE TABLE with a typo, its error with the
// position, the fix from the history, a live SELECT in table mode whose values change,
// Ctrl-C, an INSERT job in SHOW JOBS, STOP JOB, and quitting with a job running.
func TestShellSession(t *testing.T) {
	dir := t.TempDir()
	histFile := filepath.Join(dir, "history")
	tm := startShell(t, []string{"PIPESQL_HISTORY=" + histFile, "HOME=" + dir})
	tm.expectText(shell.PrimaryPrompt)

	// A multi-line CREATE TABLE with a typo on its third line.
	lines := []string{
		"CREATE TABLE clicks (",
		"  app_id   INT,",
		"  user_num INTT, -- the user",
		"  ts AS PROCTIME()",
		") WITH (",
		"  'connector' = 'datagen',",
		"  'rows-per-second' = '40',",
		"  'fields.app_id.min' = '1', 'fields.app_id.max' = '3'",
		");",
	}
	for i, l := range lines {
		tm.line(l)
		if i < len(lines)-1 {
			tm.expectText(shell.ContinuationPrompt)
		}
	}
	m := tm.expect(`\[ERROR\] 3:12: (unknown type INTT[^\n]*)\n([^\n]*)\n( *)\^`)
	if m[2] != "  user_num INTT, -- the user" || len(m[3]) != 11 {
		t.Errorf("the error shows line %q and the caret at column %d, want line 3 and column 12", m[2], len(m[3])+1)
	}

	// Up arrow: the statement comes back as one line; move left to the typo and fix it.
	recalled := shell.HistoryLine(strings.Join(lines, "\n"))
	tm.send("\x1b[A")
	tm.expectText(recalled)
	after := recalled[strings.Index(recalled, "INTT")+len("INTT"):]
	tm.send(strings.Repeat("\x1b[D", len([]rune(after))) + "\x7f\r")
	tm.expectText("[INFO] Execute statement succeeded.")
	tm.expectText(shell.PrimaryPrompt)

	// Tab completes a table name.
	tm.send("DESCRIBE cli\t")
	tm.expectText("DESCRIBE clicks ")
	tm.line(";")
	tm.expect(`\|\s+user_num \|\s+INT \|`)
	tm.expectText(shell.PrimaryPrompt)

	// A live query in table mode: the count of app 1 changes in place.
	tm.line("SELECT app_id, COUNT(*) AS cnt FROM clicks GROUP BY app_id;")
	tm.expectText("SQL Query Result (Table)")
	counts := regexp.MustCompile(`\|\s+1 \|\s+(\d+) \|`)
	tm.waitFor("two different counts of app 1", func(screen string) bool {
		seen := map[string]bool{}
		for _, m := range counts.FindAllStringSubmatch(screen[min(tm.seen, len(screen)):], -1) {
			seen[m[1]] = true
		}
		return len(seen) >= 2
	})
	if !regexp.MustCompile(`\x1b\[\d+A`).MatchString(tm.rawOutput()) {
		t.Errorf("the table view is not redrawn in place (no cursor-up sequence)")
	}
	tm.send("\x03") // Ctrl-C cancels the query, not the shell
	tm.expect(`Query cancelled after \d+\.\ds\.`)
	tm.expectText(shell.PrimaryPrompt)

	// An INSERT job runs in the background; SHOW JOBS lists it; STOP JOB stops it.
	tm.line("CREATE TABLE sink (app_id INT, user_num INT) WITH ('connector' = 'blackhole');")
	tm.expectText("[INFO] Execute statement succeeded.")
	tm.line("INSERT INTO sink SELECT app_id, user_num FROM clicks;")
	tm.expectText("[INFO] Submitting SQL update statement to the cluster...")
	id := tm.expect(`Job ID: ([0-9a-f]{32})`)[1]
	tm.expectText(shell.PrimaryPrompt)
	tm.line("SHOW JOBS;")
	tm.expect(`\| +job id \| +job name \| +status \| +uptime \| +records/s \| +lag \| +watermark \| +last checkpoint \| +restarts \|`)
	tm.expect(id + ` \| +insert-into_sink \| +(RUNNING|INITIALIZING) \|`)
	tm.line("STOP JOB '" + id + "';")
	tm.expectText("[INFO] Job " + id + " stopped.")
	tm.line("SHOW JOBS;")
	tm.expect(id + ` \| +insert-into_sink \| +CANCELED \|`)

	// Quitting with a job running asks first.
	tm.line("INSERT INTO sink SELECT app_id, user_num FROM clicks;")
	id2 := tm.expect(`Job ID: ([0-9a-f]{32})`)[1]
	tm.line("QUIT;")
	tm.expectText("1 job is still running (" + id2 + "). Stop and quit? [y/N]")
	tm.line("n")
	tm.expectText(shell.PrimaryPrompt)
	tm.line("QUIT;")
	tm.expectText("Stop and quit? [y/N]")
	tm.line("y")
	if err := tm.wait(); err != nil {
		t.Fatalf("the shell exited with %v", err)
	}

	// Everything typed is in the history file, the failed statement too.
	hist, err := os.ReadFile(histFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{recalled, strings.Replace(recalled, "INTT", "INT", 1), "SHOW JOBS;", "STOP JOB '" + id + "';"} {
		if !strings.Contains(string(hist), want+"\n") {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
}

// The history is there in the next session; -i runs a file first, its INSERT in the
// background; Ctrl-C clears the line and Ctrl-D leaves (asking first, a job running).
func TestShellHistoryAcrossRunsAndInitFile(t *testing.T) {
	dir := t.TempDir()
	histFile := filepath.Join(dir, "history")
	if err := os.WriteFile(histFile, []byte("SHOW TABLES;\nSELECT 'from the last session' AS greeting;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	initFile := filepath.Join(dir, "init.sql")
	if err := os.WriteFile(initFile, []byte("CREATE TABLE t_from_init (a INT) WITH ('connector' = 'datagen');\n"+
		"CREATE TABLE sink_from_init (a INT) WITH ('connector' = 'blackhole');\n"+
		"INSERT INTO sink_from_init SELECT a FROM t_from_init;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := startShell(t, []string{"PIPESQL_HISTORY=" + histFile}, "-i", initFile)
	initJob := tm.expect(`\[INFO\] Job of the init file submitted: Job ID: ([0-9a-f]{32})`)[1]
	tm.expectText(shell.PrimaryPrompt)
	tm.send("\x1b[A")
	tm.expectText("SELECT 'from the last session' AS greeting;")
	tm.send("\r")
	tm.expect(`\|\s+from the last session \|`)
	tm.expectText(shell.PrimaryPrompt)
	tm.line("SHOW TABLES;")
	tm.expect(`\|\s+t_from_init \|`)
	tm.expectText(shell.PrimaryPrompt)

	// A ';' in a string or a comment does not end the statement; one in code does.
	tm.line("SELECT ';' AS semi, -- not the end;")
	tm.expectText(shell.ContinuationPrompt)
	tm.line("  'x' AS x")
	tm.expectText(shell.ContinuationPrompt)
	tm.line(";")
	tm.expect(`\| semi \| x \|\n[+-]+\n\|    ; \| x \|`)
	tm.expectText(shell.PrimaryPrompt)
	tm.send("SELECT 'never run'")
	tm.send("\x03")
	tm.expectText(shell.PrimaryPrompt)
	tm.send("\x04")
	tm.expectText("1 job is still running (" + initJob + "). Stop and quit? [y/N]")
	tm.line("y")
	if err := tm.wait(); err != nil {
		t.Fatalf("Ctrl-D: the shell exited with %v", err)
	}
	hist, _ := os.ReadFile(histFile)
	if !strings.Contains(string(hist), "SELECT 'never run'\n") {
		t.Errorf("the line cleared with Ctrl-C is not in the history:\n%s", hist)
	}
}

// -f FILE and a script piped in give what `pipesql run` gives for the same file: the
// same output and exit code, errors included.
func TestShellScriptsMatchRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sql")
	os.WriteFile(good, []byte(`
-- a bounded table: the output is the same on every run
CREATE TABLE nums (id INT, n BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '6',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '6',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '10', 'fields.n.end' = '15'
);
CREATE TABLE out1 (id INT, n BIGINT) WITH ('connector' = 'print');
SHOW TABLES;
DESCRIBE nums;
SET 'pipeline.name' = 'copy';
SET;
SELECT id, n * 2 AS twice FROM nums WHERE id > 2;
EXPLAIN INSERT INTO out1 SELECT id, n FROM nums;
INSERT INTO out1 SELECT id, n FROM nums WHERE MOD(id, 2) = 0;
`), 0o644)
	bad := filepath.Join(dir, "bad.sql")
	os.WriteFile(bad, []byte("SHOW TABLES;\nSELECT a FORM t;\n"), 0o644)

	for _, file := range []string{good, bad} {
		run := pipesql(t, "run", file)
		withF := pipesql(t, "shell", "-f", file)
		piped := pipesqlStdin(t, file, "shell")
		if file == good && (run.code != 0 || !strings.Contains(run.stdout, "+I[4, 13]")) {
			t.Fatalf("run %s: exit %d, stdout %q, stderr %q", file, run.code, run.stdout, run.stderr)
		}
		if file == bad && run.code != 2 {
			t.Fatalf("run %s: exit %d, want 2", file, run.code)
		}
		for name, got := range map[string]result{"shell -f": withF, "shell < file": piped} {
			if got.stdout != run.stdout || got.code != run.code {
				t.Errorf("%s %s: exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s", name, filepath.Base(file), got.code, got.stdout, run.code, run.stdout)
			}
		}
		// The error names the file (or <stdin>) and the position.
		if file == bad {
			if !strings.Contains(withF.stderr, run.stderr) {
				t.Errorf("shell -f: stderr %q, want %q", withF.stderr, run.stderr)
			}
			if !strings.Contains(piped.stderr, "<stdin>:2:15: ") {
				t.Errorf("shell < file: stderr %q lacks the position", piped.stderr)
			}
		}
	}
}

// pipesqlStdin runs the binary with the file as its standard input.
func pipesqlStdin(t *testing.T, file string, args ...string) result {
	t.Helper()
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = "../.."
	cmd.Stdin = in
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running pipesql %v: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}

// The changelog and tableau result modes; a job with checkpoints shows its last one and
// stops with a savepoint; one without checkpoints cannot.
func TestShellResultModesAndSavepoints(t *testing.T) {
	dir := t.TempDir()
	tm := startShell(t, []string{"PIPESQL_HISTORY=" + filepath.Join(dir, "history")})
	tm.expectText(shell.PrimaryPrompt)
	tm.line("CREATE TABLE nums (id INT, n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '4', " +
		"'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4', 'fields.n.min' = '1', 'fields.n.max' = '1');")
	tm.expectText("[INFO] Execute statement succeeded.")
	// A key without effect in pipesql is set with a warning saying so.
	tm.line("SET 'parallelism.default' = '2';")
	tm.expectText("[WARN] setting 'parallelism.default' has no effect in pipesql")
	tm.expectText("[INFO] Execute statement succeeded.")

	// changelog: the changes with their kinds; a bounded query ends by itself.
	tm.line("SET 'sql-client.execution.result-mode' = 'changelog';")
	tm.expectText("[INFO] Execute statement succeeded.")
	tm.line("SELECT n, COUNT(*) AS c FROM nums GROUP BY n;")
	tm.expectText("SQL Query Result (Changelog)")
	tm.expect(`Query finished after \d+\.\ds\.\n\+----\+---\+---\+\n\| op \| n \| c \|\n\+----\+---\+---\+\n\| \+I \| 1 \| 1 \|\n\| -U \| 1 \| 1 \|\n\| \+U \| 1 \| 2 \|`)
	tm.expectText("7 changes")
	tm.expectText(shell.PrimaryPrompt)

	// tableau: appended rows with their kinds, as pipesql run prints them.
	tm.line("SET 'sql-client.execution.result-mode' = 'tableau';")
	tm.expectText("[INFO] Execute statement succeeded.")
	tm.line("SELECT id FROM nums WHERE id > 2;")
	tm.expect(`\| op \|\s+id \|\n\+----\+-+\+\n\| \+I \|\s+3 \|\n\| \+I \|\s+4 \|\n\+----\+-+\+\nReceived a total of 2 rows`)
	tm.expectText(shell.PrimaryPrompt)

	// A job without checkpointing cannot stop with a savepoint.
	tm.line("CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');")
	tm.line("CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');")
	tm.line("INSERT INTO sink SELECT a FROM gen;")
	plain := tm.expect(`Job ID: ([0-9a-f]{32})`)[1]
	tm.line("SET 'execution.checkpointing.savepoint-dir' = '" + filepath.Join(dir, "savepoints") + "';")
	tm.line("STOP JOB '" + plain + "' WITH SAVEPOINT;")
	tm.expect(`\[ERROR\] 1:1: STOP JOB \.\.\. WITH SAVEPOINT needs checkpointing, and job ` + plain + ` was submitted without`)
	tm.line("STOP JOB '" + plain[:8] + "';") // a unique prefix of the id will do
	tm.expectText("[INFO] Job " + plain + " stopped.")

	// With checkpointing: SHOW JOBS shows the last checkpoint; STOP JOB WITH SAVEPOINT.
	tm.line("SET 'execution.checkpointing.interval' = '100 ms';")
	tm.line("INSERT INTO sink SELECT a FROM gen;")
	id := tm.expect(`Job ID: ([0-9a-f]{32})`)[1]
	tm.expectText(shell.PrimaryPrompt)
	// Each SHOW JOBS waits for its own output; the first checkpoint is 100 ms away.
	for deadline := time.Now().Add(ptyDeadline); ; {
		tm.line("SHOW JOBS;")
		m := tm.expect(`\| ` + id + ` \|[^\n]*\| +(#\d+, \d+s ago|-) \| +0 \|`)
		if strings.HasPrefix(m[1], "#") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed checkpoint in SHOW JOBS within %v", ptyDeadline)
		}
	}
	tm.line("STOP JOB '" + id + "' WITH SAVEPOINT;")
	sp := tm.expect(`\[INFO\] Savepoint path: ([^\n]+)\n`)[1]
	tm.expectText("[INFO] Job " + id + " stopped.")
	if !strings.HasPrefix(sp, filepath.Join(dir, "savepoints")) {
		t.Errorf("savepoint %s is not in the savepoint directory", sp)
	}
	if _, err := os.Stat(sp); err != nil {
		t.Errorf("savepoint: %v", err)
	}
	tm.line("SHOW JOBS;")
	tm.expect(id + ` \| +insert-into_sink \| +FINISHED \|`)
	tm.line("QUIT;")
	if err := tm.wait(); err != nil {
		t.Fatalf("the shell exited with %v", err)
	}
}

// SIGTERM (or the terminal closing) ends the shell: its jobs stop cleanly, without a question.
func TestShellTerminates(t *testing.T) {
	dir := t.TempDir()
	tm := startShell(t, []string{"PIPESQL_HISTORY=" + filepath.Join(dir, "history")})
	tm.expectText(shell.PrimaryPrompt)
	tm.line("CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');")
	tm.line("CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');")
	tm.line("INSERT INTO sink SELECT a FROM gen;")
	tm.expect(`Job ID: [0-9a-f]{32}`)
	tm.expectText(shell.PrimaryPrompt)
	if err := tm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := tm.wait(); err != nil {
		t.Fatalf("after SIGTERM the shell exited with %v", err)
	}
}
