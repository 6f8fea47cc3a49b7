package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// binary is the real pipesql binary, built once by TestMain: CLI tests run it as a user would.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pipesql-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "pipesql")
	// A job without state.checkpoints.dir keeps its checkpoints in the user's state
	// directory: the binaries the tests start use one of the test run's own.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pipesql:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
}

// pipesql runs the binary in the repository root with args and a time limit.
func pipesql(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = "../.."
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
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

func TestVersionAndHelp(t *testing.T) {
	r := pipesql(t, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pipesql ") {
		t.Errorf("--version: code %d, stdout %q", r.code, r.stdout)
	}
	r = pipesql(t, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "pipesql run") || !strings.Contains(r.stdout, "Examples:") {
		t.Errorf("--help: code %d, stdout %q", r.code, r.stdout)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"rnu", "x.sql"},
		{"run"},
		{"run", "a.sql", "b.sql"},
		{"run", "--no-such-flag", "a.sql"},
		{"explain", "does-not-exist.sql"},
		{"run", "--set", "novalue", "examples/dau.sql"},
	} {
		r := pipesql(t, args...)
		if r.code != 2 {
			t.Errorf("pipesql %q: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
	}
	if r := pipesql(t, "rnu"); !strings.Contains(r.stderr, `did you mean "run"`) {
		t.Errorf("misspelt command: stderr %q lacks a suggestion", r.stderr)
	}
}

func TestExplainDAU(t *testing.T) {
	r := pipesql(t, "explain", "examples/dau.sql")
	if r.code != 0 {
		t.Fatalf("explain examples/dau.sql: exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{"TableSourceScan", "WatermarkAssigner", "WindowAggregate", "roaring", "Sink"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A misspelt option key in a copy of the DAU job: explain fails with exit 2 and a
// message naming the file, the line, the bad key and the valid one.
func TestExplainOptionTypo(t *testing.T) {
	src, err := os.ReadFile("../../examples/dau.sql")
	if err != nil {
		t.Fatal(err)
	}
	const good, bad = "scan.topic-partition-discovery.interval", "scan.topic-partition-discover.interval"
	text := strings.Replace(string(src), "'"+good+"'", "'"+bad+"'", 1)
	line := 1 + strings.Count(text[:strings.Index(text, bad)], "\n")
	file := filepath.Join(t.TempDir(), "dau-typo.sql")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "explain", file)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
	}
	for _, want := range []string{fmt.Sprintf("%s:%d:", file, line), bad, good} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("error lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestExplainSyntaxErrorShowsCaret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.sql")
	os.WriteFile(file, []byte("CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\nSELECT a FORM t;\n"), 0o644)
	r := pipesql(t, "explain", file)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, file+":2:") || !strings.Contains(r.stderr, "SELECT a FORM t") || !strings.Contains(r.stderr, "^") {
		t.Errorf("error lacks position, line or caret:\n%s", r.stderr)
	}
}

// explain touches nothing: a Kafka table whose brokers do not exist and a filesystem
// path that does not exist still explain.
func TestExplainConnectsToNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(file, []byte(`
CREATE TABLE src (a STRING) WITH ('connector' = 'filesystem', 'path' = '/no/such/dir', 'format' = 'json');
CREATE TABLE dst (a STRING) WITH ('connector' = 'kafka', 'topic' = 't',
  'properties.bootstrap.servers' = '192.0.2.1:9092', 'format' = 'json');
INSERT INTO dst SELECT a FROM src;
`), 0o644)
	r := pipesql(t, "explain", file)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "192.0.2.1") {
		t.Errorf("explain mentions the broker, as if it connected: %s", r.stderr)
	}
}

func TestRunDatagenExample(t *testing.T) {
	r := pipesql(t, "run", "examples/dau-datagen.sql")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	rows := 0
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "+I[") {
			rows++
		}
	}
	// 5 apps; the generated event times may straddle midnight, giving a second day.
	if rows < 5 || rows > 10 {
		t.Errorf("got %d result rows, want 5 (or up to 10 across midnight):\n%s", rows, r.stdout)
	}
}

// The demo runs examples/dau.sql unchanged but for its broker port (so that the test
// does not need 9092 free) against the embedded cluster, and shows closed days.
func TestDemoShowsDAU(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs for 12 s")
	}
	src, err := os.ReadFile("../../examples/dau.sql")
	if err != nil {
		t.Fatal(err)
	}
	port := freePortRange(t, 3)
	job := filepath.Join(t.TempDir(), "dau.sql")
	text := strings.ReplaceAll(string(src), "localhost:9092", fmt.Sprintf("localhost:%d", port))
	os.WriteFile(job, []byte(text), 0o644)
	r := pipesql(t, "demo", "--port", fmt.Sprint(port), "--duration", "12s", "--speedup", "8h", job)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	frames := strings.Split(r.stdout, "pipesql demo:")
	last := frames[len(frames)-1]
	rows := 0
	for _, line := range strings.Split(last, "\n") {
		f := strings.Fields(strings.Trim(line, "|"))
		if len(f) == 5 && f[1] == "|" && f[3] == "|" && strings.HasPrefix(f[0], "20") {
			rows++
		}
	}
	// 12 s at 8 h per second is 96 hours of event time: at least 3 closed days of 5 apps.
	if rows < 15 {
		t.Errorf("the last frame shows %d DAU rows, want at least 15:\n%s", rows, last)
	}
}

// freePortRange finds n consecutive free ports on 127.0.0.1.
func freePortRange(t *testing.T, n int) int {
	t.Helper()
	for base := 29092; base < 40000; base += 17 {
		ok := true
		for i := 0; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}
