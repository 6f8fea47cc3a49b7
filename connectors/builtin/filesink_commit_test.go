package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
)

var _ connectors.CommittingSink = (*fileSink)(nil)

// userLines returns the values of the first column of every visible line under dir, sorted.
func userLines(t *testing.T, dir string) []string {
	t.Helper()
	var users []string
	for _, name := range visible(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			u, _, _ := strings.Cut(strings.TrimPrefix(line, `{"user_id":"`), `"`)
			users = append(users, u)
		}
	}
	slices.Sort(users)
	return users
}

func users(from, to int) []string {
	var u []string
	for i := from; i < to; i++ {
		u = append(u, "u"+itoa(int64(i)))
	}
	slices.Sort(u)
	return u
}

func hiddenParts(t *testing.T, dir string) int {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".inprogress") {
			n++
		}
	}
	return n
}

// TestFileSinkTwoPhaseCommit checks that staged parts stay hidden until their
// checkpoint completes, and that a sink restored from a checkpoint publishes what it
// staged and drops what was written after it, so that the visible output is exactly
// what completed checkpoints cover.
func TestFileSinkTwoPhaseCommit(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	open := func(restored []byte) *fileSink {
		cfg := fsSinkConfig(dir, "json", map[string]string{"sink.rolling-policy.file-size": "200b"})
		cfg.Restored = restored
		s, err := newFileSink(cfg, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open(nil)
	if err := s.Write(ctx, sinkRows(0, 10)); err != nil {
		t.Fatal(err)
	}
	state1, err := s.PrepareCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(visible(t, dir)) != 0 {
		t.Fatal("parts became visible before their checkpoint completed")
	}
	if err := s.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := userLines(t, dir); !slices.Equal(got, users(0, 10)) {
		t.Fatalf("after checkpoint 1: %v", got)
	}
	// Rows for checkpoint 2 are staged, then rows after it; checkpoint 2 completes but
	// the process dies before it is told.
	s.Write(ctx, sinkRows(10, 20))
	state2, err := s.PrepareCommit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Write(ctx, sinkRows(20, 30))
	s.Close()

	// Restored from checkpoint 2: its staged rows are committed, the later ones dropped.
	r := open(state2)
	if got := userLines(t, dir); !slices.Equal(got, users(0, 20)) || hiddenParts(t, dir) != 0 {
		t.Fatalf("restored from checkpoint 2: %v and %d hidden parts, want rows 0-19 and none", got, hiddenParts(t, dir))
	}
	r.Write(ctx, sinkRows(20, 25))
	if _, err := r.PrepareCommit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckpointComplete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := userLines(t, dir); !slices.Equal(got, users(0, 25)) {
		t.Fatalf("after checkpoint 3: %v", got)
	}

	// Falling back to checkpoint 1 (2 and 3 found corrupt): what 2 and 3 committed is
	// written again by the restarted job, so it goes.
	r = open(state1)
	if got := userLines(t, dir); !slices.Equal(got, users(0, 10)) {
		t.Fatalf("restored from checkpoint 1: %v, want rows 0-9", got)
	}
	r.Close()

	// A state that is not the sink's is refused.
	cfg := fsSinkConfig(dir, "json", nil)
	cfg.Restored = []byte{9, '{'}
	if _, err := newFileSink(cfg, newFakeClock()); !errors.Is(err, ErrBadSinkState) {
		t.Fatalf("bad state: %v, want ErrBadSinkState", err)
	}
}

// TestFileSinkRestoreAfterPathChange checks that a sink restored with another path
// publishes what the checkpoint staged where it was written and writes its own parts
// in the new directory.
func TestFileSinkRestoreAfterPathChange(t *testing.T) {
	ctx := context.Background()
	old, moved := filepath.Join(t.TempDir(), "old"), filepath.Join(t.TempDir(), "new")
	s, err := newFileSink(fsSinkConfig(old, "json", nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	s.Write(ctx, sinkRows(0, 5))
	st, _ := s.PrepareCommit(ctx, 1)
	s.Close()
	cfg := fsSinkConfig(moved, "json", nil)
	cfg.Restored = st
	r, err := newFileSink(cfg, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	r.Write(ctx, sinkRows(5, 7))
	r.PrepareCommit(ctx, 2)
	r.CheckpointComplete(ctx, 2)
	if got := userLines(t, old); !slices.Equal(got, users(0, 5)) {
		t.Fatalf("old directory: %v", got)
	}
	if got := userLines(t, moved); !slices.Equal(got, users(5, 7)) {
		t.Fatalf("new directory: %v", got)
	}
}
