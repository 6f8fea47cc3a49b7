package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
)

// Checkpoints of `pipesql run`
//
// A job that sets execution.checkpointing.interval keeps its checkpoints in a Badger
// directory of its own, <state.checkpoints.dir>/<job key> (execution.checkpointing.dir
// is read first; the default directory is ./pipesql-checkpoints), and running the same
// job file again resumes from its latest checkpoint. The job key is pipeline.name when
// set (numbered when a file runs several jobs), else "insert-into-" and the sink
// tables: it must survive edits of the query, so that a changed plan is recognised and
// refused instead of silently starting over (exit code 2, naming what changed;
// --allow-non-restored-state starts anyway, dropping the state the new plan cannot use).
//
// SIGTERM and SIGINT stop a job with a final checkpoint, also written as a savepoint
// when --savepoint-dir (execution.checkpointing.savepoint-dir) is set; --from-savepoint
// (execution.savepoint.path) starts from a savepoint directory, which may have been moved.

// addCheckpointFlags adds the flags of run that map onto checkpoint settings.
func addCheckpointFlags(fs *flag.FlagSet, cf *commonFlags) {
	set := func(key string) func(string) error {
		return func(v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("needs a directory")
			}
			cf.sets = append(cf.sets, key+"="+v)
			return nil
		}
	}
	fs.Func("from-savepoint", "start from the savepoint in `DIR` (execution.savepoint.path)", set(exec.KeySavepointPath))
	fs.Func("savepoint-dir", "write a savepoint under `DIR` when the job is stopped (execution.checkpointing.savepoint-dir)",
		set(exec.KeySavepointDir))
	fs.BoolFunc("allow-non-restored-state", "start even if the saved state has operators the job no longer has or changed,"+
		" dropping their state (execution.savepoint.ignore-unclaimed-state)", func(v string) error {
		if v != "true" && v != "false" {
			return fmt.Errorf("takes no value")
		}
		cf.sets = append(cf.sets, exec.KeyIgnoreUnclaimedState+"="+v)
		return nil
	})
}

// jobKeys names the checkpoints of each job, unique among them.
func jobKeys(progs []*planner.Program) []string {
	keys := make([]string, len(progs))
	seen := map[string]int{}
	for i, prog := range progs {
		key := jobKey(prog)
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

// jobKey is pipeline.name, else derived from the tables the job writes.
func jobKey(prog *planner.Program) string {
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
func (r *runner) openCheckpoints(prog *planner.Program, key string, opts *exec.Options) (state.Store, error) {
	cfg, err := exec.ReadCheckpointConfig(prog.Settings)
	if err != nil {
		return nil, sqlError{err}
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
	log := r.log.With("job", key)
	store, err := state.OpenBadger(dir, state.Options{
		NumRetained: cfg.NumRetained + 1,
		Warn:        func(err error) { log.Warn("checkpoint storage", "err", err) },
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoints of job %s: %w", key, err)
	}
	opts.Store = store
	if d, err := time.ParseDuration(os.Getenv(commitDelayEnv)); err == nil && d > 0 {
		opts.Store = slowCommits{Store: store, delay: d}
	}
	return store, nil
}

// commitDelayEnv, set to a duration, makes every checkpoint wait that long between
// writing its values and writing its commit record, after announcing it on stderr. It
// is for the crash test, which kills the process in that window; nothing else sets it.
const commitDelayEnv = "PIPESQL_TEST_COMMIT_DELAY"

// commitAnnouncement starts the line slowCommits writes before each delayed commit.
const commitAnnouncement = "pipesql-test: committing checkpoint"

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
	fmt.Fprintf(os.Stderr, "%s %d\n", commitAnnouncement, w.id)
	time.Sleep(w.delay)
	return w.Writer.Commit(m)
}

// userError marks the failures that are the user's to resolve (exit code 2): a job that
// cannot take over its saved state.
func userError(err error) error {
	if errors.Is(err, state.ErrPlanMismatch) {
		return sqlError{err}
	}
	return err
}
