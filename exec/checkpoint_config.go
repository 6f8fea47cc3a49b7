package exec

import (
	"fmt"
	"time"

	"github.com/pipesql/pipesql/config"
)

// Checkpoint setting keys, as Flink names them (declared, with their types and
// defaults, in package config). Where Flink renamed a key (1.20 moved state.* under
// execution.checkpointing.*), both names are read, the newer first.
const (
	KeyCheckpointInterval       = config.CheckpointInterval
	KeyCheckpointTimeout        = config.CheckpointTimeout
	KeyCheckpointMinPause       = config.CheckpointMinPause
	KeyCheckpointMode           = config.CheckpointMode
	KeyCheckpointMaxConcurrent  = config.CheckpointMaxConcurrent
	KeyCheckpointTolerable      = config.CheckpointTolerable
	KeyCheckpointNumRetained    = config.CheckpointNumRetained
	KeyCheckpointNumRetainedOld = config.CheckpointNumRetainedOld
	KeyCheckpointDir            = config.CheckpointDir
	KeyCheckpointDirOld         = config.CheckpointDirOld
	KeySavepointDir             = config.SavepointDir
	KeySavepointDirOld          = config.SavepointDirOld
	KeySavepointPath            = config.SavepointPath
	KeyIgnoreUnclaimedState     = config.IgnoreUnclaimedState
)

// pipesql's own restore settings, which Flink has no counterpart of: Flink resumes only
// when told where from, pipesql resumes a job from its latest checkpoint by itself.
const (
	// KeyFreshStart ('true') starts the job without restoring its checkpoints. The
	// caller that opens the store moves the old checkpoints aside first (pipesql run
	// --fresh renames their directory), so that they are kept, not overwritten.
	KeyFreshStart = "pipesql.restore.fresh"
	// KeyAllowChangedInput ('true') resumes even when a source's input is not the one
	// the checkpoint read (another Kafka cluster, a recreated topic, offsets out of
	// range, a rewritten file), with a warning instead of the refusal.
	KeyAllowChangedInput = "pipesql.restore.allow-changed-input"
)

// CheckpointConfig is the checkpointing configuration of a job, read from its settings
// by ReadCheckpointConfig.
type CheckpointConfig struct {
	// Interval is execution.checkpointing.interval; 0 (not set) disables checkpointing.
	Interval time.Duration
	// Timeout is execution.checkpointing.timeout (10 min): a checkpoint whose barriers
	// have not reached every sink by then fails. It is checked at each interval tick. A
	// write to storage that started is never abandoned: it commits or fails.
	Timeout time.Duration
	// MinPause is execution.checkpointing.min-pause (0): the least time between the end of
	// one checkpoint and the start of the next; the next starts at the first interval
	// tick after the pause.
	MinPause time.Duration
	// AtLeastOnce is execution.checkpointing.mode = AT_LEAST_ONCE. An operator with
	// several inputs (a join, a union) aligns their barriers in either mode, so both give
	// exactly-once state; the mode is accepted for compatibility.
	AtLeastOnce bool
	// NumRetained is execution.checkpointing.num-retained (state.checkpoints.num-retained),
	// 1 by default: completed checkpoints kept. The store keeps one more, so that a
	// newest checkpoint found corrupt has an older one to fall back to.
	NumRetained int
	// TolerableFailures is execution.checkpointing.tolerable-failed-checkpoints (0): how
	// many checkpoints in a row may fail (a storage error, a timeout) before the job
	// fails; a completed checkpoint resets the count.
	TolerableFailures int
	// Dir is execution.checkpointing.dir (state.checkpoints.dir), "" when not set: the
	// caller opens the store (engine.DefaultCheckpointRoot, the user's state directory).
	Dir string
	// SavepointDir is execution.checkpointing.savepoint-dir (state.savepoints.dir): when
	// set, stopping the job (a cancelled context, SIGTERM) writes a savepoint there.
	SavepointDir string
	// RestorePath is execution.savepoint.path: a savepoint directory to start from
	// instead of the latest checkpoint.
	RestorePath string
	// AllowNonRestoredState is execution.savepoint.ignore-unclaimed-state: start even
	// when the saved state has operators the plan lacks or changed, dropping their state.
	AllowNonRestoredState bool
	// Fresh is pipesql.restore.fresh: start without restoring from the checkpoints of
	// the store (an explicit execution.savepoint.path is still restored).
	Fresh bool
	// AllowChangedInput is pipesql.restore.allow-changed-input: resume even when a
	// source reads another input than its checkpoint did (connectors.Identified).
	AllowChangedInput bool
}

// Enabled reports whether checkpointing is on.
func (c CheckpointConfig) Enabled() bool { return c.Interval > 0 }

// ReadCheckpointConfig reads the checkpointing settings, with the defaults of package
// config's table. Directories are local paths: 'file:///x', 'file:/x' and '/x' read as
// '/x'. The error wraps ErrInvalidOptions and names the key.
func ReadCheckpointConfig(settings map[string]string) (CheckpointConfig, error) {
	v := config.Read(settings)
	c := CheckpointConfig{
		Interval:              v.Duration(KeyCheckpointInterval),
		Timeout:               v.Duration(KeyCheckpointTimeout),
		MinPause:              v.Duration(KeyCheckpointMinPause),
		AtLeastOnce:           v.Enum(KeyCheckpointMode) == "AT_LEAST_ONCE",
		NumRetained:           v.Int(KeyCheckpointNumRetained),
		TolerableFailures:     v.Int(KeyCheckpointTolerable),
		Dir:                   v.Dir(KeyCheckpointDir),
		SavepointDir:          v.Dir(KeySavepointDir),
		RestorePath:           v.Dir(KeySavepointPath),
		AllowNonRestoredState: v.Bool(KeyIgnoreUnclaimedState),
		Fresh:                 v.Bool(KeyFreshStart),
		AllowChangedInput:     v.Bool(KeyAllowChangedInput),
	}
	// pipesql takes one checkpoint at a time; more concurrent ones are accepted (and
	// checked), as they would only change timing.
	v.Int(KeyCheckpointMaxConcurrent)
	if err := v.Err(); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return c, nil
}
