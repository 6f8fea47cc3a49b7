package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
)

// stepClock is a Clock that moves forward by step each time it is read, so that the
// checkpoint interval passes as the sources poll, and by hand with Advance. Each new
// ticker's period is sent on created: a test sees the restart strategy's waits there.
type stepClock struct {
	mu      sync.Mutex
	now     time.Time
	step    time.Duration
	tickers []*fakeTicker
	timers  fakeTimers
	created chan time.Duration
}

func newStepClock(step time.Duration) *stepClock {
	return &stepClock{now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), step: step, created: make(chan time.Duration, 1024)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveLocked(c.step)
	return c.now
}

func (c *stepClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveLocked(d)
}

func (c *stepClock) moveLocked(d time.Duration) {
	c.now = c.now.Add(d)
	for _, t := range c.tickers {
		for !t.next.After(c.now) {
			select {
			case t.c <- t.next:
			default:
			}
			t.next = t.next.Add(t.d)
		}
	}
	c.timers.fire(c.now)
}

func (c *stepClock) NewTimer(d time.Duration) connectors.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timers.add(c.now, d)
}

func (c *stepClock) NewTicker(d time.Duration) connectors.Ticker {
	c.mu.Lock()
	t := &fakeTicker{c: make(chan time.Time, 1), d: d, next: c.now.Add(d)}
	c.tickers = append(c.tickers, t)
	c.mu.Unlock()
	c.created <- d
	return t
}

// autoAdvance moves the clock past every wait other than the checkpoint interval (a
// restart's), so that a job failing unexpectedly ends instead of waiting for ever.
func (c *stepClock) autoAdvance(interval time.Duration) {
	go func() {
		for d := range c.created {
			if d != interval {
				c.Advance(d)
			}
		}
	}()
}

// dauFixture is DAU input in JSON files with its answer.
type dauFixture struct {
	in    string
	truth map[string][2]int // "day,app" -> distinct users, events
}

// writeDAUFixture writes events over several UTC days, a few seconds out of order
// (within the watermark's 5 s), into files read in order.
func writeDAUFixture(t *testing.T, events, files int) dauFixture {
	t.Helper()
	f := dauFixture{in: t.TempDir(), truth: map[string][2]int{}}
	users := map[string]map[string]bool{}
	rng := rand.New(rand.NewPCG(5, 7))
	apps := []string{"shop", "news", "maps", "mail"}
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	span := 12 * 24 * time.Hour
	for file := range files {
		var b strings.Builder
		for i := file * events / files; i < (file+1)*events/files; i++ {
			at := start.Add(time.Duration(i) * (span / time.Duration(events))).Add(-time.Duration(rng.IntN(4000)) * time.Millisecond)
			app, user := apps[rng.IntN(len(apps))], fmt.Sprintf("u%04d", rng.IntN(3000))
			fmt.Fprintf(&b, `{"app":%q,"user_id":%q,"event_time":%d}`+"\n", app, user, at.UnixMilli())
			key := at.UTC().Format("2006-01-02") + "," + app
			if users[key] == nil {
				users[key] = map[string]bool{}
			}
			users[key][user] = true
			c := f.truth[key]
			c[1]++
			f.truth[key] = c
		}
		if err := os.WriteFile(filepath.Join(f.in, fmt.Sprintf("events-%02d.json", file)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for key, u := range users {
		c := f.truth[key]
		c[0] = len(u)
		f.truth[key] = c
	}
	return f
}

// dauJob plans the DAU INSERT into a filesystem sink at out with extra SET lines.
func (f dauFixture) job(t *testing.T, out string, sets ...string) *planner.Program {
	t.Helper()
	var b strings.Builder
	b.WriteString("SET 'table.local-time-zone' = 'UTC';\n")
	for _, s := range sets {
		fmt.Fprintf(&b, "SET %s;\n", s)
	}
	fmt.Fprintf(&b, `
CREATE TABLE events (
  app STRING, user_id STRING, event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE dau (%s STRING, app STRING, dau BIGINT, events BIGINT)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
`, f.in, "`day`", out)
	return planSQL(t, b.String())
}

// publishedLines returns the lines of the visible part files of a filesystem sink in
// dir (files being written start with '.'), each with the name of its file.
func publishedLines(t *testing.T, dir string) (lines, files []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line != "" {
				lines, files = append(lines, line), append(files, e.Name())
			}
		}
	}
	return lines, files
}

// readDAU reads the visible part files of a filesystem sink, failing on a window
// written twice.
func readDAU(t *testing.T, dir string) map[string][2]int {
	t.Helper()
	got := map[string][2]int{}
	lines, files := publishedLines(t, dir)
	for i, line := range lines {
		var r struct {
			Day    string `json:"day"`
			App    string `json:"app"`
			DAU    int    `json:"dau"`
			Events int    `json:"events"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %q: %v", files[i], line, err)
		}
		key := r.Day + "," + r.App
		if _, dup := got[key]; dup {
			t.Errorf("window %s written twice", key)
		}
		got[key] = [2]int{r.DAU, r.Events}
	}
	return got
}

func (f dauFixture) check(t *testing.T, out string) {
	t.Helper()
	got := readDAU(t, out)
	for key, want := range f.truth {
		if got[key] != want {
			t.Errorf("window %s: got %v (dau, events), want %v", key, got[key], want)
		}
	}
	for key := range got {
		if _, ok := f.truth[key]; !ok {
			t.Errorf("window %s should not exist", key)
		}
	}
}

var errInjected = errors.New("injected failure")

// TestRestartStrategiesRecoverExactly fails the window aggregate twice while the DAU job
// runs, each time after checkpoints completed, and checks that each restart strategy
// restarts after the delays it prescribes (seen on the injected clock) from the latest
// checkpoint, with the final output exactly the truth: no window lost or written twice.
func TestRestartStrategiesRecoverExactly(t *testing.T) {
	fx := writeDAUFixture(t, 60000, 6)
	for _, tc := range []struct {
		name     string
		sets     []string
		waits    []time.Duration
		failWith string // the job fails for good with this in its error, "" when it recovers
	}{
		{"fixed-delay", []string{"'restart-strategy.type' = 'fixed-delay'", "'restart-strategy.fixed-delay.attempts' = '3'",
			"'restart-strategy.fixed-delay.delay' = '7 s'"}, []time.Duration{7 * time.Second, 7 * time.Second}, ""},
		{"failure-rate", []string{"'restart-strategy.type' = 'failure-rate'", "'restart-strategy.failure-rate.max-failures-per-interval' = '2'",
			"'restart-strategy.failure-rate.failure-rate-interval' = '1 h'", "'restart-strategy.failure-rate.delay' = '3 s'"},
			[]time.Duration{3 * time.Second, 3 * time.Second}, ""},
		{"exponential-delay", []string{"'restart-strategy.type' = 'exponential-delay'",
			"'restart-strategy.exponential-delay.initial-backoff' = '1 s'", "'restart-strategy.exponential-delay.backoff-multiplier' = '2'",
			"'restart-strategy.exponential-delay.jitter-factor' = '0'"}, []time.Duration{time.Second, 2 * time.Second}, ""},
		{"default (exponential-delay, jittered)", nil, nil, ""},
		{"fixed-delay exhausted", []string{"'restart-strategy.type' = 'fixed-delay'"}, []time.Duration{time.Second}, "no more restarts"},
		{"none", []string{"'restart-strategy.type' = 'none'"}, nil, "injected failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			sets := append([]string{"'execution.checkpointing.interval' = '100 ms'"}, tc.sets...)
			clock := newStepClock(20 * time.Millisecond)
			j, err := NewJob(fx.job(t, out, sets...), Options{Clock: clock, JobKey: "dau"})
			if err != nil {
				t.Fatal(err)
			}
			// Fail once two checkpoints completed, and again once two more did.
			var failures int
			var next int64 = 2
			j.failHook = func(_ int, op string) error {
				if op != "window aggregate" || failures == 2 {
					return nil
				}
				if c := j.Metrics().Checkpoints.Completed; c >= next {
					failures++
					next = c + 2
					return errInjected
				}
				return nil
			}
			done := make(chan error, 1)
			go func() { done <- j.Run(context.Background()) }()
			var waits []time.Duration
			for runErr := error(nil); ; {
				select {
				case d := <-clock.created:
					if d != 100*time.Millisecond {
						waits = append(waits, d)
						clock.Advance(d)
					}
					continue
				case runErr = <-done:
				}
				m := j.Metrics().Checkpoints
				if tc.failWith != "" {
					if runErr == nil || !strings.Contains(runErr.Error(), tc.failWith) || !errors.Is(runErr, errInjected) {
						t.Fatalf("Run: %v, want a failure mentioning %q", runErr, tc.failWith)
					}
					var oe *OperatorError
					if !errors.As(runErr, &oe) || oe.Operator != "window aggregate" {
						t.Fatalf("Run: %v, want the window aggregate's failure", runErr)
					}
				} else {
					if runErr != nil {
						t.Fatalf("Run: %v", runErr)
					}
					if failures != 2 || m.Restarts != 2 {
						t.Fatalf("%d failures injected, %d restarts; the job must fail twice and restart twice", failures, m.Restarts)
					}
					if m.RestoredFrom != "checkpoint" || m.RestoredID < 4 {
						t.Fatalf("the last restart started from %q %d, want the fourth checkpoint or a later one", m.RestoredFrom, m.RestoredID)
					}
					fx.check(t, out)
				}
				break
			}
			if tc.waits != nil && !slices.Equal(waits, tc.waits) {
				t.Fatalf("restarts waited %v, want %v", waits, tc.waits)
			}
			if tc.waits == nil && tc.failWith == "" {
				// Flink's default: 1 s, then 1.5 s, each within 10% jitter, never below 1 s.
				if len(waits) != 2 || waits[0] < time.Second || waits[0] > 1100*time.Millisecond ||
					waits[1] < 1350*time.Millisecond || waits[1] > 1650*time.Millisecond {
					t.Fatalf("default strategy waited %v, want about 1 s and 1.5 s", waits)
				}
			}
		})
	}
}

// countAll changes the DAU plan's COUNT(DISTINCT user_id) into COUNT(user_id).
func countAll(p *planner.Program) {
	agg := &p.Pipelines[0].Root.(*planner.Sink).Input.(*planner.Calc).Input.(*planner.WindowAggregate).Aggs[0]
	agg.Distinct, agg.State = false, planner.StateCounter
	p.Fingerprint = "changed"
}

// failingStore is a state.Store whose commits fail while failCommits is positive,
// after okCommits succeeded.
type failingStore struct {
	state.Store
	mu                     sync.Mutex
	okCommits, failCommits int
}

type failingWriter struct {
	state.Writer
	s *failingStore
}

func (s *failingStore) Begin(job string, id uint64) (state.Writer, error) {
	w, err := s.Store.Begin(job, id)
	if err != nil {
		return nil, err
	}
	return &failingWriter{Writer: w, s: s}, nil
}

var errDiskFull = errors.New("no space left on device")

func (w *failingWriter) Commit(m state.Meta) error {
	w.s.mu.Lock()
	fail := w.s.okCommits == 0 && w.s.failCommits > 0
	switch {
	case w.s.okCommits > 0:
		w.s.okCommits--
	case fail:
		w.s.failCommits--
	}
	w.s.mu.Unlock()
	if fail {
		w.Writer.Abort()
		return errDiskFull
	}
	return w.Writer.Commit(m)
}

// TestFailedCheckpointsTolerated checks that a failed checkpoint write fails the
// checkpoint, counted, not the job, up to tolerable-failed-checkpoints in a row, and
// that one failure too many fails the job. In the tolerated case the job then fails
// and restores from a checkpoint written after the failed ones, which must be whole:
// operators cannot reuse what a failed checkpoint held.
func TestFailedCheckpointsTolerated(t *testing.T) {
	fx := writeDAUFixture(t, 60000, 6)
	for _, tc := range []struct {
		name      string
		failures  int
		tolerable string
		wantErr   bool
	}{
		{"tolerated", 2, "2", false},
		{"one too many", 3, "2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			store := &failingStore{Store: state.NewMemory(state.Options{NumRetained: 2}), okCommits: 1, failCommits: tc.failures}
			clock := newStepClock(20 * time.Millisecond)
			clock.autoAdvance(60 * time.Millisecond)
			strategy := "'restart-strategy.type' = 'fixed-delay'"
			if tc.wantErr {
				strategy = "'restart-strategy.type' = 'none'"
			}
			j, err := NewJob(fx.job(t, out, "'execution.checkpointing.interval' = '60 ms'",
				"'execution.checkpointing.tolerable-failed-checkpoints' = '"+tc.tolerable+"'", strategy),
				Options{Clock: clock, Store: store, JobKey: "dau"})
			if err != nil {
				t.Fatal(err)
			}
			injected := false
			j.failHook = func(_ int, op string) error {
				if op != "window aggregate" || injected || tc.wantErr {
					return nil
				}
				if j.Metrics().Checkpoints.Completed >= 3 {
					injected = true
					return errInjected
				}
				// Until then each batch takes a millisecond, so that a loaded machine's
				// checkpoint writes keep up with the input instead of the job ending first.
				time.Sleep(time.Millisecond)
				return nil
			}
			err = j.Run(context.Background())
			m := j.Metrics().Checkpoints
			if tc.wantErr {
				if !errors.Is(err, ErrCheckpointFailures) || !errors.Is(err, errDiskFull) {
					t.Fatalf("Run: %v, want ErrCheckpointFailures caused by the disk", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Failed != int64(tc.failures) || !injected || m.Restarts != 1 || m.RestoredID < 4 {
				t.Fatalf("checkpoints: %d failed, restarted %d times from checkpoint %d; want %d failed and a restart after them",
					m.Failed, m.Restarts, m.RestoredID, tc.failures)
			}
			fx.check(t, out)
		})
	}
}

// TestStopWithSavepointAndResume stops the DAU job halfway with a savepoint (its
// directory given as a file:/// URI), moves the savepoint directory, and resumes from it
// (given as file:/path) with a fresh checkpoint store: the output is exactly the truth.
// A changed query is then refused on that savepoint, naming the operator and both
// descriptions, unless non-restored state is allowed.
// runStoppedHalfway runs j and, once it has completed minCheckpoints checkpoints and
// operator op is about to process a batch, stops it with a savepoint in dir, as a user
// would from another goroutine. It returns the savepoint's path, "" when the stop
// failed (reported as a test error).
func runStoppedHalfway(t *testing.T, j *Job, op string, minCheckpoints int64, dir string) string {
	t.Helper()
	var once sync.Once
	spPath := make(chan string, 1)
	j.failHook = func(_ int, name string) error {
		if name == op && j.Metrics().Checkpoints.Completed >= minCheckpoints {
			once.Do(func() {
				go func() {
					p, err := j.StopWithSavepoint(context.Background(), dir)
					if err != nil {
						t.Error(err)
					}
					spPath <- p
				}()
			})
		}
		return nil
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Run returns once the savepoint is written, which may be before the goroutine that
	// asked for it has passed its path on: wait for it.
	select {
	case p := <-spPath:
		return p
	case <-time.After(time.Minute):
		t.Fatal("the job finished before it was stopped")
	}
	return ""
}

func TestStopWithSavepointAndResume(t *testing.T) {
	fx := writeDAUFixture(t, 40000, 4)
	out, spDir := t.TempDir(), t.TempDir()
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	store1 := state.NewMemory(state.Options{})
	j, err := NewJob(fx.job(t, out, "'execution.checkpointing.interval' = '100 ms'"), Options{Clock: clock, Store: store1, JobKey: "dau"})
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "window aggregate", 2, "file://"+spDir)
	if path == "" || filepath.Dir(path) != spDir {
		t.Fatalf("savepoint at %q, want it under %s", path, spDir)
	}
	read := j.Metrics().Sources[0].RecordsRead
	if read >= 40000 {
		t.Fatalf("the job read all %d rows before stopping; the test needs it stopped halfway", read)
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}

	// A changed query on that savepoint is refused, naming what changed.
	changed := fx.job(t, t.TempDir(), "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+moved+"'")
	countAll(changed)
	j2, err := NewJob(changed, Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "dau"})
	if err != nil {
		t.Fatal(err)
	}
	err = j2.Run(context.Background())
	if !errors.Is(err, state.ErrPlanMismatch) || !strings.Contains(err.Error(), "0/window aggregate") ||
		!strings.Contains(err.Error(), "COUNT(DISTINCT STRING)") || !strings.Contains(err.Error(), "ignore-unclaimed-state") {
		t.Fatalf("changed query: %v, want a refusal naming the window aggregate and how to override", err)
	}

	// The same query resumes from the moved savepoint into the first job's output.
	j3, err := NewJob(fx.job(t, out, "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = 'file:"+moved+"'"),
		Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "dau"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j3.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := j3.Metrics(); m.Checkpoints.RestoredFrom != moved || m.Sources[0].RecordsRead+read != 40000 {
		t.Fatalf("resumed from %q and read %d more rows after %d; want the savepoint and the rest of the 40000",
			m.Checkpoints.RestoredFrom, m.Sources[0].RecordsRead, read)
	}
	fx.check(t, out)

	// Allowed to drop the state it cannot use, the changed query runs.
	changedOut := t.TempDir()
	changed = fx.job(t, changedOut, "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+moved+"'",
		"'execution.savepoint.ignore-unclaimed-state' = 'true'")
	countAll(changed)
	j4, err := NewJob(changed, Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "dau"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j4.Run(context.Background()); err != nil || j4.Metrics().Checkpoints.Restarts != 0 {
		t.Fatalf("changed query with ignore-unclaimed-state: %v, %d restarts", err, j4.Metrics().Checkpoints.Restarts)
	}
}
