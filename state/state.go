package state

import (
	"errors"
	"log/slog"
	"time"
)

// Store keeps the checkpoints of jobs. A Store is safe for concurrent use.
type Store interface {
	// Begin starts writing checkpoint id of job. Nothing written through the
	// Writer is visible until its Commit returns.
	//
	// id must be greater than every completed checkpoint id of job, corrupt
	// ones included (take Completed()[0]+1, not Latest().ID()+1), and must
	// not be in the middle of being written; otherwise the error wraps
	// ErrStaleID. Several checkpoints of one job may be written at once.
	Begin(job string, id uint64) (Writer, error)

	// Latest returns the newest completed checkpoint of job that passes
	// verification. A newer one that fails is skipped and reported to
	// Options.Warn with its *CorruptError. With no completed checkpoint the
	// error wraps ErrNotFound; when every completed checkpoint is corrupt it
	// wraps ErrCorrupt, so that a job never silently starts from nothing.
	Latest(job string) (Checkpoint, error)

	// Completed lists the ids of job's completed checkpoints, newest first,
	// without verifying them. A job without checkpoints has an empty list.
	Completed(job string) ([]uint64, error)

	// Open returns completed checkpoint id of job after verifying it. The
	// error wraps ErrNotFound if it is not completed (or already deleted by
	// retention) and ErrCorrupt if it fails verification.
	Open(job string, id uint64) (Checkpoint, error)

	// Path is the directory the store keeps its data in, for messages; "" for
	// a store in memory.
	Path() string

	// Close waits for calls in progress and background deletions, abandons
	// uncommitted Writers (their data is removed when the storage is next
	// opened) and releases the storage. Later calls return ErrClosed; a
	// second Close returns nil.
	Close() error
}

// Writer writes one checkpoint. It is used from one goroutine at a time.
// Every Writer must end with Commit or Abort. After Put or Reuse fails to
// write to storage, Commit returns that error: only Abort remains.
type Writer interface {
	// Put stores value under key of operator, replacing an earlier Put or
	// Reuse of the same key. Put copies value; the caller may reuse it once
	// Put returns. operator must not be empty; key may be.
	Put(operator, key string, value []byte) error

	// Reuse puts key of operator with the value it has in completed
	// checkpoint from, without copying the data: this is how an incremental
	// checkpoint carries over state that did not change. from must be older
	// than the checkpoint being written; it stays retained until this Writer
	// ends. The error wraps ErrNotFound if from is not a completed checkpoint
	// or has no such key.
	Reuse(operator, key string, from uint64) error

	// Commit makes the checkpoint durable and visible, with meta, and
	// retires completed checkpoints beyond Options.NumRetained in the same
	// transaction (their data is deleted in the background). A zero
	// meta.Created is set to the current time. If Commit fails, the
	// checkpoint is not visible; the Writer is finished either way.
	Commit(meta Meta) error

	// Abort drops everything written. It returns nil when called after
	// Commit or Abort.
	Abort() error
}

// Checkpoint is a completed checkpoint, for reading. It is safe for
// concurrent use. A Checkpoint stays readable until retention deletes it;
// reads after that return errors wrapping ErrNotFound.
type Checkpoint interface {
	// Job and ID say which checkpoint this is.
	Job() string
	ID() uint64
	// Meta returns what the Writer committed with.
	Meta() Meta
	// Operators lists the operators that have at least one key, sorted.
	Operators() []string
	// Get returns a copy of the value of key of operator, verified against
	// its checksum. The error wraps ErrNotFound or ErrCorrupt.
	Get(operator, key string) ([]byte, error)
	// Scan calls fn for each key of operator in byte order of the keys, with
	// its verified value. value is only valid until fn returns. An error from
	// fn stops Scan and is returned.
	Scan(operator string, fn func(key string, value []byte) error) error
}

// Meta describes a checkpoint.
type Meta struct {
	// Plan is the fingerprint of the plan that wrote the checkpoint.
	Plan string
	// Operators describes the plan's stateful operators, so that a restoring
	// plan can be checked against them (see CheckPlan).
	Operators []Operator
	// Created is when the checkpoint was committed.
	Created time.Time
	// Props holds free-form key/values, such as the pipesql version.
	// Per-operator state, source offsets included, belongs in values.
	Props map[string]string
}

// Operator describes one stateful operator of a plan.
type Operator struct {
	// ID is the operator id used with Writer.Put; it must be stable across
	// restarts of the same plan.
	ID string
	// Desc says what the operator is and how its state is laid out, such as
	// "WindowAggregate(TUMBLE(ts, 1 DAY), COUNT(DISTINCT user_id)) v1". Equal
	// descriptions mean the state can be taken over.
	Desc string
}

// Options configures a Store. The zero value is valid.
type Options struct {
	// NumRetained is how many completed checkpoints each job keeps, like
	// Flink's execution.checkpointing.num-retained. Older ones are deleted
	// after each commit, except data that a retained incremental checkpoint
	// still reuses, and checkpoints an in-progress Writer reuses from.
	// With 1, a corrupt latest checkpoint has nothing to fall back to.
	// Default 1.
	NumRetained int

	// Warn receives problems the store worked around: a checkpoint Latest
	// skipped (wrapping its *CorruptError) and cleanup failures. Default:
	// slog.Default() at warning level.
	Warn func(err error)

	// Now returns the current time, for Meta.Created. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.NumRetained < 0 {
		return o, errors.New("options: NumRetained must not be negative")
	}
	if o.NumRetained == 0 {
		o.NumRetained = 1
	}
	if o.Warn == nil {
		o.Warn = func(err error) { slog.Warn("checkpoint state", "err", err) }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}
