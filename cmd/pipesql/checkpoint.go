package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/exec"
)

// Checkpoints of `pipesql run`
//
// The engine keeps each checkpointing job's checkpoints (see package engine) and
// resumes a job run again from them; a changed plan that cannot take over the saved
// state exits with code 2, naming what changed, and --allow-non-restored-state starts
// anyway, dropping the state the new plan cannot use. So does a job whose sources read
// another input than the checkpoint (another Kafka cluster, a recreated topic, a
// rewritten file): --fresh starts it from nothing, keeping the old checkpoints aside.
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
	fs.BoolFunc("fresh", "start without restoring the job's checkpoints, which are kept aside, renamed to DIR.<time>"+
		" (pipesql.restore.fresh)", func(v string) error {
		if v != "true" && v != "false" {
			return fmt.Errorf("takes no value")
		}
		cf.sets = append(cf.sets, exec.KeyFreshStart+"="+v)
		return nil
	})
}
