package exec

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/state"
)

// syncBuffer is a log destination the job's goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A job resumes from its latest checkpoint only when its sources read the input that
// checkpoint read, and says so; a rewritten input file is refused, naming both
// versions of the file and how to start fresh, unless allowed.
func TestResumeChecksTheInput(t *testing.T) {
	fx := writeDAUFixture(t, 4000, 2)
	store := state.NewMemory(state.Options{})
	every := "'execution.checkpointing.interval' = '100 ms';\nSET 'restart-strategy.type' = 'none'"
	run := func(t *testing.T, out string, sets ...string) (*Job, string, error) {
		t.Helper()
		var logs syncBuffer
		clock := newStepClock(20 * time.Millisecond)
		clock.autoAdvance(100 * time.Millisecond)
		j, err := NewJob(fx.job(t, out, append([]string{every}, sets...)...), Options{
			Clock: clock, Store: store, JobKey: "dau", Log: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		err = j.Run(context.Background())
		return j, logs.String(), err
	}

	out := t.TempDir()
	if _, _, err := run(t, out); err != nil {
		t.Fatal(err)
	}
	fx.check(t, out)

	// Run again on the same input: it resumes at the end of its input and says from where.
	j, logs, err := run(t, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	info := j.Metrics().Checkpoints.Resumed
	if info == nil || info.From != "checkpoint" || info.ID == 0 || info.Taken.IsZero() || info.Splits == 0 {
		t.Fatalf("Resumed = %+v, want the checkpoint with its time and splits", info)
	}
	if !strings.Contains(logs, "resumed job 'dau' from checkpoint") || !strings.Contains(logs, "offsets of") ||
		!strings.Contains(logs, " files)") {
		t.Errorf("no resume announcement in the log:\n%s", logs)
	}

	// Rewrite an input file: the resume is refused for good, naming the file.
	path := filepath.Join(fx.in, "events-00.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	extra := data[:bytes.IndexByte(data, '\n')+1] // one more record
	if err := os.WriteFile(path, append(data, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	j, _, err = run(t, t.TempDir())
	var me *connectors.InputMismatchError
	if !errors.As(err, &me) || !errors.Is(err, connectors.ErrInputMismatch) {
		t.Fatalf("after rewriting an input file: %v, want an input mismatch", err)
	}
	for _, want := range []string{"job 'dau' cannot resume from checkpoint", "file " + path + " changed", "--fresh",
		KeyFreshStart, KeyAllowChangedInput} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if r := j.Metrics().Checkpoints.Restarts; r != 0 {
		t.Errorf("%d restarts after a refused restore, want none", r)
	}
	if _, logs, _ := run(t, t.TempDir()); strings.Contains(logs, "resumed job") {
		t.Errorf("a refused restore was announced as a resume:\n%s", logs)
	}

	// Allowed, it resumes with a warning.
	if _, logs, err := run(t, t.TempDir(), "'"+KeyAllowChangedInput+"' = 'true'"); err != nil ||
		!strings.Contains(logs, "although the input is not the one it read") {
		t.Fatalf("allowed: %v\n%s", err, logs)
	}

	// Fresh, it restores nothing and reads everything again.
	out = t.TempDir()
	j, logs, err = run(t, out, "'"+KeyFreshStart+"' = 'true'")
	if err != nil {
		t.Fatal(err)
	}
	if m := j.Metrics(); m.Checkpoints.Resumed != nil || m.Sources[0].RecordsRead != 4001 {
		t.Errorf("fresh start: resumed %+v, read %d rows", m.Checkpoints.Resumed, m.Sources[0].RecordsRead)
	}
	if !strings.Contains(logs, "fresh") {
		t.Errorf("the fresh start is not logged:\n%s", logs)
	}
}
