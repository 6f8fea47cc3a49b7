package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/state"
)

// Crash recovery through the real binary: the DAU job over a bounded input of JSON files,
// checkpointing every 200 ms, is killed with SIGKILL again and again, and restarted with
// the same job file and checkpoint directory each time. Its output must be exactly the
// truth computed here: every (day, app) window once, with the right counts.

const crashJob = `
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.dir' = '%[1]s';
SET 'restart-strategy.type' = 'none';
CREATE TABLE events (
  app STRING, user_id STRING, event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'json');
CREATE TABLE dau ({day} STRING, app STRING, dau BIGINT, events BIGINT)
WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = 'json');
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, %[4]s, COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
`

// crashJobText writes the job file; dauExpr is the aggregate computing the dau column.
func crashJobText(t *testing.T, dir, ckpt, in, out, dauExpr string) string {
	t.Helper()
	text := strings.ReplaceAll(fmt.Sprintf(crashJob, ckpt, in, out, dauExpr), "{day}", "`day`")
	path := filepath.Join(dir, fmt.Sprintf("job-%d.sql", rand.Uint32()))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeCrashEvents writes n events over 20 days of UTC time into 16 files, up to 4 s out
// of order (inside the watermark's 5 s, so none is late), and returns the truth.
func writeCrashEvents(t *testing.T, dir string, n int) map[dauKey][2]int64 {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2024, 5))
	apps := []string{"shop", "news", "maps", "mail", "game"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	span := int64(20 * 24 * time.Hour / time.Millisecond)
	users := map[dauKey]map[int32]bool{}
	events := map[dauKey]int64{}
	const files = 16
	var line []byte
	for f := range files {
		file, err := os.Create(filepath.Join(dir, fmt.Sprintf("events-%02d.json", f)))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(file, 1<<20)
		for i := f * n / files; i < (f+1)*n/files; i++ {
			at := start + int64(i)*span/int64(n) - rng.Int64N(4000)
			app := apps[rng.IntN(len(apps))]
			user := int32(rng.IntN(400_000))
			if rng.IntN(3) == 0 {
				user = int32(rng.IntN(2_000)) // regulars, every day
			}
			line = append(line[:0], `{"app":"`...)
			line = append(line, app...)
			line = append(line, `","user_id":"u`...)
			line = strconv.AppendInt(line, int64(user), 10)
			line = append(line, `","event_time":`...)
			line = strconv.AppendInt(line, at, 10)
			line = append(line, "}\n"...)
			w.Write(line)
			k := dauKey{time.UnixMilli(at).UTC().Format("2006-01-02"), app}
			if users[k] == nil {
				users[k] = map[int32]bool{}
			}
			users[k][user] = true
			events[k]++
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		file.Close()
	}
	truth := map[dauKey][2]int64{}
	for k, u := range users {
		truth[k] = [2]int64{int64(len(u)), events[k]}
	}
	return truth
}

// crashRun is one run of the binary that the test may kill.
type crashRun struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	// commits receives each announced checkpoint commit (PIPESQL_TEST_COMMIT_DELAY).
	commits chan string
	// kafkaCommits receives each announced commit of an exactly-once Kafka sink's
	// transactions (PIPESQL_TEST_KAFKA_COMMIT_DELAY).
	kafkaCommits chan string
	done         chan struct{}
	err          error
}

func startCrashRun(t *testing.T, env []string, args ...string) *crashRun {
	t.Helper()
	r := &crashRun{cmd: exec.Command(binary, args...), commits: make(chan string, 1024), kafkaCommits: make(chan string, 1024), done: make(chan struct{})}
	r.cmd.Dir = "../.."
	r.cmd.Env = append(os.Environ(), env...)
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		in := bufio.NewScanner(pipe)
		for in.Scan() {
			line := in.Text()
			if strings.HasPrefix(line, engine.CommitAnnouncement) {
				select {
				case r.commits <- line:
				default:
				}
				continue
			}
			if strings.HasPrefix(line, kafka.CommitAnnouncement) {
				select {
				case r.kafkaCommits <- line:
				default:
				}
				continue
			}
			r.stderr.WriteString(line + "\n")
		}
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	return r
}

// exited reports whether the process ended by itself, and its exit code.
func (r *crashRun) exitCode() int {
	var ee *exec.ExitError
	if errors.As(r.err, &ee) {
		return ee.ExitCode()
	}
	if r.err != nil {
		return -1
	}
	return 0
}

func (r *crashRun) kill(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	<-r.done
}

func (r *crashRun) wait(t *testing.T, limit time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		r.kill(t)
		t.Fatalf("pipesql did not finish within %s\nstderr: %s", limit, r.stderr.String())
	}
}

// TestCrashRecoveryExactlyOnce kills the DAU job over 6M events (1M outside -tags soak) with SIGKILL at 10
// moments, half of them right after a checkpoint's values were written and before its
// commit record was (the commit is held there for 30 ms and announced), half at random
// moments around a checkpoint, and restarts it each time from its checkpoint directory.
// The whole job takes a few seconds, so the kills come within a few hundred
// milliseconds of each start.
func TestCrashRecoveryExactlyOnce(t *testing.T) {
	// Each round gets at most about two checkpoint intervals and 100 ms of processing
	// (~300k events on 2 cores), so 6M events outlast the 10 killed rounds however fast
	// the machine is.
	n, minKills := 6_000_000, 10
	switch {
	case testing.Short():
		n, minKills = 300_000, 2
	case !soak:
		// The fast set: enough input for a few killed rounds (at least two of them, one
		// inside a commit); -tags soak runs the full 6M events and 10 kills.
		n, minKills = 1_000_000, 3
	}
	dir := t.TempDir()
	in, out, ckpt := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "checkpoints")
	truth := writeCrashEvents(t, in, n)
	job := crashJobText(t, dir, ckpt, in, out, "COUNT(DISTINCT user_id)")
	env := []string{engine.CommitDelayEnv + "=30ms"}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	// Every round waits for a checkpoint commit to begin, so that each run gets somewhere.
	// Odd rounds kill inside the first or second commit of the run; even rounds at a
	// random moment up to 100 ms after the first began, inside it or after.
	killed, inCommit := crashRounds(t, env, job, 10, func(round int) killPlan {
		if round%2 == 1 {
			return killPlan{commits: 1 + rng.IntN(2), inCommit: true}
		}
		return killPlan{commits: 1, delay: time.Duration(rng.IntN(100)) * time.Millisecond}
	}, func(round int) string { return fmt.Sprintf("latest checkpoint %d", latestCheckpoint(t, ckpt)) })
	if latest := latestCheckpoint(t, ckpt); latest < 3 {
		t.Fatalf("the killed runs completed only %d checkpoints: they did not resume from each other's", latest)
	}
	began := time.Now()
	r := startCrashRun(t, env, "run", job)
	r.wait(t, 2*time.Minute)
	t.Logf("the final run took %s", time.Since(began))
	if code := r.exitCode(); code != 0 {
		t.Fatalf("final run: exit %d\nstderr: %s", code, r.stderr.String())
	}
	t.Logf("%d kills (%d inside a commit), then a run to the end", killed, inCommit)
	if killed < minKills || inCommit < minKills/2 {
		t.Fatalf("only %d kills (%d inside a commit) happened before the job finished: the input is too small to test recovery", killed, inCommit)
	}
	compareDAU(t, "after crashes", readDAUOutput(t, out), truth)
}

// killPlan is when one round of a crash test kills its run: right when the commits-th
// checkpoint commit of the run is announced (inside that commit) when inCommit, else
// delay after it. kafkaCommit kills at the first announced Kafka transaction commit
// after that instead: the checkpoint completed, its transactions are not committed.
type killPlan struct {
	commits     int
	inCommit    bool
	kafkaCommit bool
	delay       time.Duration
}

// crashRounds runs job up to rounds times, SIGKILLing each run as plan says, and stops
// early when a run finishes by itself (which must then exit 0). It returns how many runs
// it killed, and how many of them inside a commit. after, when set, describes the state
// after each kill for the log.
func crashRounds(t *testing.T, env []string, job string, rounds int, plan func(round int) killPlan, after func(round int) string) (killed, inCommit int) {
	t.Helper()
	for round := range rounds {
		p := plan(round)
		r := startCrashRun(t, env, "run", job)
		ended := false
		for n := p.commits; !ended && n > 0; n-- {
			select {
			case <-r.commits:
			case <-r.done:
				ended = true
			case <-time.After(time.Minute):
				r.kill(t)
				t.Fatalf("round %d: no checkpoint committed within a minute\nstderr: %s", round, r.stderr.String())
			}
		}
		if !ended && p.kafkaCommit {
			select {
			case <-r.kafkaCommits:
			case <-r.done:
				ended = true
			case <-time.After(time.Minute):
				r.kill(t)
				t.Fatalf("round %d: no Kafka commit within a minute\nstderr: %s", round, r.stderr.String())
			}
		} else if !ended && !p.inCommit {
			select {
			case <-time.After(p.delay):
			case <-r.done:
				ended = true
			}
		}
		if ended {
			if code := r.exitCode(); code != 0 {
				t.Fatalf("round %d: exit %d\nstderr: %s", round, code, r.stderr.String())
			}
			t.Logf("round %d: the job finished before the kill", round)
			return killed, inCommit
		}
		r.kill(t)
		killed++
		if p.inCommit {
			inCommit++
		}
		state := ""
		if after != nil {
			state = "; " + after(round)
		}
		t.Logf("round %d: killed (inside a commit: %v, before a Kafka commit: %v)%s", round, p.inCommit, p.kafkaCommit, state)
		if strings.Contains(r.stderr.String(), "level=ERROR") {
			t.Fatalf("round %d: errors before the kill:\n%s", round, r.stderr.String())
		}
	}
	return killed, inCommit
}

// latestCheckpoint is the id of the latest checkpoint of the crash job, 0 for none.
func latestCheckpoint(t *testing.T, root string) uint64 {
	t.Helper()
	st, err := state.OpenBadger(filepath.Join(root, "insert-into-dau"), state.Options{Warn: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp, err := st.Latest("insert-into-dau")
	if errors.Is(err, state.ErrNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return cp.ID()
}

// TestStopSavepointAndUpgradeGuard stops the job with SIGTERM (a final checkpoint and a
// savepoint), then shows that a changed query is refused on that state with exit code 2
// naming the operator, that --allow-non-restored-state runs it anyway, and that the
// savepoint, moved elsewhere, resumes the unchanged job to the exact truth.
func TestStopSavepointAndUpgradeGuard(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	dir := t.TempDir()
	in, out, ckpt, sps := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "checkpoints"), filepath.Join(dir, "savepoints")
	truth := writeCrashEvents(t, in, n)
	job := crashJobText(t, dir, ckpt, in, out, "COUNT(DISTINCT user_id)")

	r := startCrashRun(t, []string{engine.CommitDelayEnv + "=1ms"}, "run", "--savepoint-dir", sps, job)
	for range 2 { // two checkpoints in: the job is well under way
		select {
		case <-r.commits:
		case <-r.done:
			t.Fatalf("the job ended before it could be stopped: exit %d\nstderr: %s", r.exitCode(), r.stderr.String())
		}
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r.wait(t, time.Minute)
	if code := r.exitCode(); code != 0 {
		t.Fatalf("SIGTERM: exit %d\nstderr: %s", code, r.stderr.String())
	}
	entries, err := os.ReadDir(sps)
	if err != nil || len(entries) != 1 {
		t.Fatalf("savepoints after SIGTERM: %v (%v), want one", entries, err)
	}
	moved := filepath.Join(dir, "moved-savepoint")
	if err := os.Rename(filepath.Join(sps, entries[0].Name()), moved); err != nil {
		t.Fatal(err)
	}

	// The checkpoint directory holds the stop's final checkpoint: a changed query is
	// refused on it, naming what changed.
	changed := crashJobText(t, dir, ckpt, in, filepath.Join(dir, "out-changed"), "COUNT(user_id)")
	res := pipesql(t, "run", changed)
	if res.code != exitUsage || !strings.Contains(res.stderr, `"0/window aggregate" changed`) ||
		!strings.Contains(res.stderr, "COUNT(DISTINCT STRING)") || !strings.Contains(res.stderr, "--allow-non-restored-state") {
		t.Fatalf("changed query: exit %d, want %d and a refusal naming the window aggregate\nstderr: %s", res.code, exitUsage, res.stderr)
	}
	res = pipesql(t, "run", "--allow-non-restored-state", changed)
	if res.code != 0 {
		t.Fatalf("changed query with --allow-non-restored-state: exit %d\nstderr: %s", res.code, res.stderr)
	}

	// The savepoint, moved, resumes the unchanged job into the original output, in a
	// checkpoint directory of its own.
	resumed := crashJobText(t, dir, filepath.Join(dir, "checkpoints-2"), in, out, "COUNT(DISTINCT user_id)")
	res = pipesql(t, "run", "--from-savepoint", moved, resumed)
	if res.code != 0 {
		t.Fatalf("--from-savepoint: exit %d\nstderr: %s", res.code, res.stderr)
	}
	compareDAU(t, "stopped and resumed from a savepoint", readDAUOutput(t, out), truth)
}
