package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// The Kafka tests of the binary: a kfake cluster runs in the test process, the pipesql
// binary connects to it over TCP as it would to any cluster, records are produced and
// read back with franz-go (a client independent of the binary's librdkafka), and every
// expected result is computed here from what was produced.

// kafkaDeadline bounds how long a test waits for something that must happen; reaching it
// fails the test. It is not a timing threshold: healthy runs finish far sooner.
const kafkaDeadline = 90 * time.Second

// jobProcess is a pipesql binary running in the background.
type jobProcess struct {
	t      *testing.T
	args   []string
	cmd    *exec.Cmd
	stdout *lineLog
	stderr *lineLog
	done   chan struct{}
	err    error // of Wait, valid after done
}

// startPipesql starts the binary in the repository root with args; the test's cleanup
// kills it if it still runs.
func startPipesql(t *testing.T, args ...string) *jobProcess {
	t.Helper()
	p := &jobProcess{t: t, args: args, stdout: &lineLog{}, stderr: &lineLog{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Dir = "../.."
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting pipesql %v: %v", args, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// running reports whether the process has not exited yet.
func (p *jobProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// wait waits for the process to exit by itself, failing the test after timeout.
func (p *jobProcess) wait(timeout time.Duration) result {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("pipesql %v did not finish within %s\nstdout: %s\nstderr: %s", p.args, timeout, p.stdout, p.stderr)
	}
	return p.result()
}

// stop sends SIGTERM, as a user stopping the job would, and waits for the exit.
func (p *jobProcess) stop() result {
	p.t.Helper()
	if p.running() {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			p.t.Fatalf("SIGTERM: %v", err)
		}
	}
	return p.wait(kafkaDeadline)
}

func (p *jobProcess) result() result {
	p.t.Helper()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(p.err, &exitErr):
		code = exitErr.ExitCode()
	case p.err != nil:
		p.t.Fatalf("pipesql %v: %v", p.args, p.err)
	}
	return result{p.stdout.String(), p.stderr.String(), code}
}

// failIfExited fails the test when the job ended while it should be running.
func (p *jobProcess) failIfExited() {
	p.t.Helper()
	if !p.running() {
		r := p.result()
		p.t.Fatalf("the job exited (code %d) while it should run\nstderr: %s", r.code, r.stderr)
	}
}

// lineLog is an io.Writer that keeps what was written and when each line arrived.
type lineLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   []timedLine
	partial []byte
}

type timedLine struct {
	at   time.Time
	text string
}

func (l *lineLog) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, timedLine{now, string(l.partial[:i])})
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// first returns the first line containing every one of subs.
func (l *lineLog) first(subs ...string) (timedLine, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, line := range l.lines {
		for _, s := range subs {
			if !strings.Contains(line.text, s) {
				continue next
			}
		}
		return line, true
	}
	return timedLine{}, false
}

// count returns how many lines contain sub.
func (l *lineLog) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line.text, sub) {
			n++
		}
	}
	return n
}

// restartMarks are what the runtime logs when a job fails or restarts ("job failed;
// restarting from its latest checkpoint") and what pipesql run prints when a job fails
// ("pipesql: job #1 failed: ..."); a job that rides out broker trouble logs none of them.
var restartMarks = []string{"restarting", "job failed", "pipesql: job"}

// restartCount matches a progress line counting restarts other than none.
var restartCount = regexp.MustCompile(`\brestarts\W+[1-9]`)

// checkNoRestart fails the test when the job's log shows a failure or a restart.
func checkNoRestart(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		for _, m := range restartMarks {
			if strings.Contains(line, m) {
				t.Errorf("the job failed or restarted: %s", line)
			}
		}
		if restartCount.MatchString(line) {
			t.Errorf("the job restarted: %s", line)
		}
	}
}

// checkpointing turns checkpointing on with a checkpoint directory of the test's own:
// pipesql run keeps checkpoints in the user's state directory by default (TestMain points
// XDG_STATE_HOME at the test run's) and resumes from them, which tests running side by
// side (or again) must not share.
func checkpointing(t *testing.T, interval string) string {
	return fmt.Sprintf("SET 'execution.checkpointing.interval' = '%s';\nSET 'execution.checkpointing.dir' = '%s';\n",
		interval, t.TempDir())
}

// writeJob writes a job file into the test's directory and returns its path.
func writeJob(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.sql")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// outRecord is a record of a sink topic and when the test's consumer received it.
type outRecord struct {
	*kgo.Record
	arrived time.Time
}

// topicWatch consumes a topic from its start for the whole test, with franz-go.
type topicWatch struct {
	t      *testing.T
	topic  string
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	records []outRecord
	seen    map[[2]int64]bool // partition and offset of each record received
	reread  int               // records received again (the consumer reset its position)
	lastErr error
}

// watchTopic starts consuming topic (read_committed) from its first record.
func watchTopic(t *testing.T, c *kafkatest.Cluster, topic string) *topicWatch {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.MetadataMinAge(100*time.Millisecond),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	if err != nil {
		t.Fatalf("watch %s: %v", topic, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &topicWatch{t: t, topic: topic, cancel: cancel, done: make(chan struct{}), seen: map[[2]int64]bool{}}
	go func() {
		defer close(w.done)
		defer cl.Close()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			now := time.Now()
			w.mu.Lock()
			fs.EachError(func(_ string, _ int32, err error) {
				if !errors.Is(err, context.Canceled) {
					w.lastErr = err
				}
			})
			fs.EachRecord(func(r *kgo.Record) {
				// A record the consumer fetches again is not written again: keep the first.
				k := [2]int64{int64(r.Partition), r.Offset}
				if w.seen[k] {
					w.reread++
					return
				}
				w.seen[k] = true
				w.records = append(w.records, outRecord{r, now})
			})
			w.mu.Unlock()
		}
	}()
	t.Cleanup(w.close)
	return w
}

func (w *topicWatch) close() {
	w.cancel()
	<-w.done
}

// snapshot returns the records received so far.
func (w *topicWatch) snapshot() []outRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]outRecord(nil), w.records...)
}

func (w *topicWatch) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.records)
}

// until waits for cond over the records received so far; it fails the test at the
// deadline or when p (if not nil) exits meanwhile.
func (w *topicWatch) until(what string, p *jobProcess, cond func([]outRecord) bool) []outRecord {
	w.t.Helper()
	deadline := time.Now().Add(kafkaDeadline)
	for {
		rs := w.snapshot()
		if cond(rs) {
			return rs
		}
		if p != nil {
			p.failIfExited()
		}
		if time.Now().After(deadline) {
			w.mu.Lock()
			lastErr := w.lastErr
			w.mu.Unlock()
			stderr := ""
			if p != nil {
				stderr = p.stderr.String()
			}
			w.t.Fatalf("waiting for %s in topic %s: deadline passed with %d records (last consumer error %v)\njob stderr: %s",
				what, w.topic, len(rs), lastErr, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventuallyTrue polls cond until it holds, failing the test at the deadline.
func eventuallyTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(kafkaDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: deadline passed", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// idRecord is the value of the test topics' simple records and of a pass-through
// job's output.
type idRecord struct {
	ID int64  `json:"id"`
	U  string `json:"u"`
	N  int64  `json:"n"`
}

func idJSON(id int) []byte {
	return []byte(fmt.Sprintf(`{"id":%d,"u":"u%d","n":%d}`, id, id%7, id%100))
}

// decodeIDs decodes pass-through output and counts each id.
func decodeIDs(t *testing.T, rs []outRecord) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	for _, r := range rs {
		var v idRecord
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("output %s[%d]@%d: %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
		}
		out[v.ID]++
	}
	return out
}

// checkIDs checks that every id of want was output exactly once and nothing else was.
func checkIDs(t *testing.T, got map[int64]int, want []int64) {
	t.Helper()
	wantSet := map[int64]bool{}
	for _, id := range want {
		wantSet[id] = true
	}
	var missing, extra, dup []int64
	for id := range wantSet {
		switch n := got[id]; {
		case n == 0:
			missing = append(missing, id)
		case n > 1:
			dup = append(dup, id)
		}
	}
	for id := range got {
		if !wantSet[id] {
			extra = append(extra, id)
		}
	}
	for _, s := range [][]int64{missing, extra, dup} {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	if len(missing)+len(extra)+len(dup) > 0 {
		t.Errorf("output: %d ids missing %v, %d unexpected %v, %d written more than once %v",
			len(missing), head(missing), len(extra), head(extra), len(dup), head(dup))
	}
}

func head(ids []int64) []int64 {
	if len(ids) > 10 {
		return ids[:10]
	}
	return ids
}

// produceIDs writes records with ids [from, to) round-robin over partitions.
func produceIDs(t *testing.T, c *kafkatest.Cluster, topic string, partitions, from, to int) {
	t.Helper()
	var rs []kafkatest.Record
	for id := from; id < to; id++ {
		rs = append(rs, kafkatest.Record{Partition: int32(id % partitions), Value: idJSON(id)})
	}
	c.Produce(t, topic, rs...)
}

func idRange(from, to int) []int64 {
	out := make([]int64, 0, to-from)
	for id := from; id < to; id++ {
		out = append(out, int64(id))
	}
	return out
}
