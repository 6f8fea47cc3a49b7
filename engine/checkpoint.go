package engine

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
)

// JobKeys names the checkpoints of jobs submitted together, unique among them: each
// job's JobKey, numbered when several jobs share a pipeline.name or the same sinks.
func JobKeys(progs []*planner.Program) []string {
	keys := make([]string, len(progs))
	seen := map[string]int{}
	for i, prog := range progs {
		key := JobKey(prog)
		if name := strings.TrimSpace(prog.Settings["pipeline.name"]); name != "" && len(progs) > 1 {
			key = fmt.Sprintf("%s-%d", key, i+1)
		}
		if seen[key]++; seen[key] > 1 {
			key = fmt.Sprintf("%s-%d", key, seen[key])
		}
		keys[i] = key
	}
	return keys
}

// JobKey is pipeline.name, else derived from the tables the job writes, made safe as a
// file name.
func JobKey(prog *planner.Program) string {
	if name := strings.TrimSpace(prog.Settings["pipeline.name"]); name != "" {
		return safeFileName(name)
	}
	var sinks []string
	for _, p := range prog.Pipelines {
		if s, ok := p.Root.(*planner.Sink); ok {
			sinks = append(sinks, s.Table)
		}
	}
	if len(sinks) > 0 {
		return safeFileName("insert-into-" + strings.Join(sinks, "+"))
	}
	fp := prog.Fingerprint
	return "select-" + fp[:min(12, len(fp))]
}

func safeFileName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '+':
			return r
		}
		return '_'
	}, s)
	if strings.Trim(s, ".") == "" {
		return "job"
	}
	return s
}

// openCheckpoints opens the checkpoint store of a job that checkpoints, filling in
// opts. The caller closes the store (nil when the job does not checkpoint).
func openCheckpoints(log *slog.Logger, prog *planner.Program, key string, opts *exec.Options) (state.Store, error) {
	cfg, err := exec.ReadCheckpointConfig(prog.Settings)
	if err != nil {
		return nil, invalidJob{err}
	}
	opts.JobKey = key
	if !cfg.Enabled() {
		return nil, nil
	}
	root := cfg.Dir
	if root == "" {
		root = exec.DefaultCheckpointDir
	}
	dir := filepath.Join(root, key)
	log = log.With("job", key)
	store, err := state.OpenBadger(dir, state.Options{
		NumRetained: cfg.NumRetained + 1,
		Warn:        func(err error) { log.Warn("checkpoint storage", "err", err) },
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoints of job %s: %w", key, err)
	}
	opts.Store = store
	if d, err := time.ParseDuration(os.Getenv(CommitDelayEnv)); err == nil && d > 0 {
		opts.Store = slowCommits{Store: store, delay: d}
	}
	return store, nil
}

// CommitDelayEnv, set to a duration, makes every checkpoint wait that long between
// writing its values and writing its commit record, after announcing it on stderr
// (CommitAnnouncement and the checkpoint's id). It is for the crash test, which kills
// the process in that window; nothing else sets it.
const CommitDelayEnv = "PIPESQL_TEST_COMMIT_DELAY"

// CommitAnnouncement starts the line written before each delayed commit.
const CommitAnnouncement = "pipesql-test: committing checkpoint"

type slowCommits struct {
	state.Store
	delay time.Duration
}

type slowCommitWriter struct {
	state.Writer
	id    uint64
	delay time.Duration
}

func (s slowCommits) Begin(job string, id uint64) (state.Writer, error) {
	w, err := s.Store.Begin(job, id)
	if err != nil {
		return nil, err
	}
	return slowCommitWriter{Writer: w, id: id, delay: s.delay}, nil
}

func (w slowCommitWriter) Commit(m state.Meta) error {
	fmt.Fprintf(os.Stderr, "%s %d\n", CommitAnnouncement, w.id)
	time.Sleep(w.delay)
	return w.Writer.Commit(m)
}
