package exec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// Checkpoint setting keys, as Flink names them. Where Flink renamed a key (1.20 moved
// state.* under execution.checkpointing.*), both names are read, the newer first.
const (
	KeyCheckpointInterval       = "execution.checkpointing.interval"
	KeyCheckpointTimeout        = "execution.checkpointing.timeout"
	KeyCheckpointMinPause       = "execution.checkpointing.min-pause"
	KeyCheckpointMode           = "execution.checkpointing.mode"
	KeyCheckpointMaxConcurrent  = "execution.checkpointing.max-concurrent-checkpoints"
	KeyCheckpointTolerable      = "execution.checkpointing.tolerable-failed-checkpoints"
	KeyCheckpointNumRetained    = "execution.checkpointing.num-retained"
	KeyCheckpointNumRetainedOld = "state.checkpoints.num-retained"
	KeyCheckpointDir            = "execution.checkpointing.dir"
	KeyCheckpointDirOld         = "state.checkpoints.dir"
	KeySavepointDir             = "execution.checkpointing.savepoint-dir"
	KeySavepointDirOld          = "state.savepoints.dir"
	KeySavepointPath            = "execution.savepoint.path"
	KeyIgnoreUnclaimedState     = "execution.savepoint.ignore-unclaimed-state"
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

// DefaultCheckpointDir is where checkpoints go when neither execution.checkpointing.dir
// nor state.checkpoints.dir is set: each job in a directory of its own below it.
const DefaultCheckpointDir = "pipesql-checkpoints"

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
	// AtLeastOnce is execution.checkpointing.mode = AT_LEAST_ONCE. Every pipeline is a
	// chain of operators with one input each, so barriers never need aligning and both
	// modes give exactly-once state; the mode is accepted for compatibility.
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
	// caller opens the store (see DefaultCheckpointDir).
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

// ReadCheckpointConfig reads the checkpointing settings. The error wraps
// ErrInvalidOptions and names the key.
func ReadCheckpointConfig(settings map[string]string) (CheckpointConfig, error) {
	c := CheckpointConfig{Timeout: 10 * time.Minute, NumRetained: 1}
	var err error
	fail := func(key, value, why string) {
		if err == nil {
			err = fmt.Errorf("%w: %s = '%s': %s", ErrInvalidOptions, key, value, why)
		}
	}
	duration := func(key string, dst *time.Duration) {
		v, ok := settings[key]
		if !ok {
			return
		}
		d, perr := connectors.ParseDuration(v)
		switch {
		case perr != nil:
			fail(key, v, "expected a duration such as '10 s' or '1 min'")
		case d < 0:
			fail(key, v, "must not be negative")
		default:
			*dst = d
		}
	}
	integer := func(key string, least int, dst *int) {
		v, ok := settings[key]
		if !ok {
			return
		}
		n, perr := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case perr != nil:
			fail(key, v, "expected an integer")
		case n < least:
			fail(key, v, fmt.Sprintf("must be at least %d", least))
		default:
			*dst = n
		}
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := settings[k]; ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	duration(KeyCheckpointInterval, &c.Interval)
	duration(KeyCheckpointTimeout, &c.Timeout)
	duration(KeyCheckpointMinPause, &c.MinPause)
	if c.Timeout == 0 {
		fail(KeyCheckpointTimeout, settings[KeyCheckpointTimeout], "must be positive")
	}
	if v, ok := settings[KeyCheckpointMode]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "EXACTLY_ONCE":
		case "AT_LEAST_ONCE":
			c.AtLeastOnce = true
		default:
			fail(KeyCheckpointMode, v, "expected EXACTLY_ONCE or AT_LEAST_ONCE")
		}
	}
	// pipesql takes one checkpoint at a time; more concurrent ones are accepted, as
	// Flink's unaligned or concurrent settings would only change timing.
	var concurrent int
	integer(KeyCheckpointMaxConcurrent, 1, &concurrent)
	integer(KeyCheckpointTolerable, 0, &c.TolerableFailures)
	if _, ok := settings[KeyCheckpointNumRetained]; ok {
		integer(KeyCheckpointNumRetained, 1, &c.NumRetained)
	} else {
		integer(KeyCheckpointNumRetainedOld, 1, &c.NumRetained)
	}
	c.Dir = first(KeyCheckpointDir, KeyCheckpointDirOld)
	c.SavepointDir = first(KeySavepointDir, KeySavepointDirOld)
	c.RestorePath = first(KeySavepointPath)
	for _, f := range []struct {
		key string
		dst *bool
	}{
		{KeyIgnoreUnclaimedState, &c.AllowNonRestoredState},
		{KeyFreshStart, &c.Fresh},
		{KeyAllowChangedInput, &c.AllowChangedInput},
	} {
		if v, ok := settings[f.key]; ok {
			b, perr := connectors.ParseBool(v)
			if perr != nil {
				fail(f.key, v, "expected true or false")
			}
			*f.dst = b
		}
	}
	return c, err
}
