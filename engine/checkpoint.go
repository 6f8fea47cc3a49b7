package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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
		if root, err = DefaultCheckpointRoot(); err != nil {
			return nil, invalidJob{err}
		}
	}
	dir := filepath.Join(root, key)
	log = log.With("job", key)
	if cfg.Fresh && cfg.RestorePath == "" {
		aside, err := moveAside(dir, time.Now())
		if err != nil {
			return nil, fmt.Errorf("checkpoints of job %s: starting fresh: %w", key, err)
		}
		if aside != "" {
			log.Warn(fmt.Sprintf("starting job '%s' fresh: its old checkpoints are kept in %s", key, aside))
		}
	}
	// At warning level, to show at the default log level: where a job's state is
	// decides what a later run resumes from.
	log.Warn(fmt.Sprintf("checkpoints of job '%s' in %s", key, dir))
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
	if id, err := strconv.ParseUint(os.Getenv(FailCheckpointEnv), 10, 64); err == nil && id > 0 {
		opts.Store = &failOnce{Store: opts.Store, id: id}
	}
	return store, nil
}

// DefaultCheckpointRoot is where checkpoints go when neither execution.checkpointing.dir
// nor state.checkpoints.dir is set: the user's state directory, $XDG_STATE_HOME/pipesql,
// else ~/.local/state/pipesql (never the current directory, so that a job file run from
// another directory resumes the same and nothing is left in checkouts).
func DefaultCheckpointRoot() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pipesql"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", fmt.Errorf("no directory for checkpoints: set %s (neither XDG_STATE_HOME nor HOME is set)", exec.KeyCheckpointDir)
	}
	return filepath.Join(home, ".local", "state", "pipesql"), nil
}

// moveAside renames a job's checkpoint directory to <dir>.<time>, so that a fresh
// start keeps the old checkpoints instead of deleting them; it returns the new name, ""
// when there was nothing to move.
func moveAside(dir string, now time.Time) (string, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	base := dir + "." + now.Format("20060102T150405")
	aside := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s-%d", base, n)
	}
	if err := os.Rename(dir, aside); err != nil {
		return "", err
	}
	return aside, nil
}

// CommitDelayEnv, set to a duration, makes every checkpoint wait that long between
// writing its values and writing its commit record, after announcing it on stderr
// (CommitAnnouncement and the checkpoint's id). It is for the crash test, which kills
// the process in that window; nothing else sets it.
const CommitDelayEnv = "PIPESQL_TEST_COMMIT_DELAY"

// CommitAnnouncement starts the line written before each delayed commit.
const CommitAnnouncement = "pipesql-test: committing checkpoint"

// FailCheckpointEnv, set to a checkpoint id, makes the commit record of that checkpoint
// fail once, as a full disk would, after its values were written (and after the sinks
// staged their output for it). It is for the tests of exactly-once sinks; nothing else
// sets it.
const FailCheckpointEnv = "PIPESQL_TEST_FAIL_CHECKPOINT"

// errInjectedStorage is the failure FailCheckpointEnv injects.
var errInjectedStorage = errors.New("injected storage failure (" + FailCheckpointEnv + ")")

type failOnce struct {
	state.Store
	id     uint64
	failed atomic.Bool
}

type failOnceWriter struct {
	state.Writer
	fail bool
}

func (s *failOnce) Begin(job string, id uint64) (state.Writer, error) {
	w, err := s.Store.Begin(job, id)
	if err != nil {
		return nil, err
	}
	return failOnceWriter{Writer: w, fail: id == s.id && s.failed.CompareAndSwap(false, true)}, nil
}

func (w failOnceWriter) Commit(m state.Meta) error {
	if w.fail {
		w.Writer.Abort()
		return errInjectedStorage
	}
	return w.Writer.Commit(m)
}

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
