package state

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNotFound is returned when a job has no completed checkpoint, when a
	// checkpoint id is not (or no longer) completed, when a checkpoint has no
	// value for an operator key, and when a directory holds no savepoint.
	ErrNotFound = errors.New("not found")

	// ErrCorrupt is returned when stored checkpoint data fails verification:
	// a checksum mismatch, a truncated or missing value, or a record that
	// cannot be decoded. The error is a *CorruptError that names the place.
	ErrCorrupt = errors.New("corrupt checkpoint data")

	// ErrStaleID is returned when a checkpoint id is not greater than every
	// completed checkpoint id of its job, or is already being written.
	ErrStaleID = errors.New("stale checkpoint id")

	// ErrPlanMismatch is returned when a checkpoint was written by a plan whose
	// stateful operators do not match the plan that wants to restore it.
	// The error is a *PlanMismatchError that names the operators.
	ErrPlanMismatch = errors.New("checkpoint does not match plan")

	// ErrClosed is returned when a Store is used after Close, or a Writer
	// after Commit, Abort or the Close of its Store.
	ErrClosed = errors.New("closed")
)

// Location names a place in checkpoint storage, for errors. Fields that do
// not apply are zero.
type Location struct {
	// Path is the Badger directory or the savepoint file; empty for the
	// in-memory store.
	Path string
	// Job is the job key the checkpoint belongs to.
	Job string
	// Checkpoint is the id of the checkpoint being read.
	Checkpoint uint64
	// Operator and Key name a value; both are empty for the checkpoint's own
	// record (its meta data and manifest).
	Operator string
	Key      string
	// Origin is the checkpoint that wrote the value, when the value was
	// reused by an incremental checkpoint; zero otherwise.
	Origin uint64
}

// String formats l as `path: job "j" checkpoint 7 operator "agg" key "k"`.
func (l Location) String() string {
	var b strings.Builder
	if l.Path != "" {
		b.WriteString(l.Path)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "job %q checkpoint %d", l.Job, l.Checkpoint)
	if l.Operator != "" || l.Key != "" {
		fmt.Fprintf(&b, " operator %q key %q", l.Operator, l.Key)
	}
	if l.Origin != 0 && l.Origin != l.Checkpoint {
		fmt.Fprintf(&b, " (written by checkpoint %d)", l.Origin)
	}
	return b.String()
}

// CorruptError reports checkpoint data that failed verification, and where.
// It wraps ErrCorrupt.
type CorruptError struct {
	Location
	// Reason says what is wrong, such as "checksum mismatch".
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%v: %v: %s", e.Location, ErrCorrupt, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// PlanMismatchError reports why a checkpoint cannot be restored by a plan.
// It wraps ErrPlanMismatch.
type PlanMismatchError struct {
	// CheckpointPlan and Plan are the fingerprints of the plan that wrote the
	// checkpoint and of the plan that wants to restore it.
	CheckpointPlan, Plan string
	// Dropped lists operators that have state in the checkpoint but are not
	// in the plan; restoring would lose their state.
	Dropped []Operator
	// Changed lists operators whose state layout changed, as pairs of the
	// checkpoint's description and the plan's.
	Changed [][2]Operator
}

func (e *PlanMismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint of plan %q does not match plan %q", e.CheckpointPlan, e.Plan)
	for _, c := range e.Changed {
		fmt.Fprintf(&b, "; operator %q changed from %q to %q", c[0].ID, c[0].Desc, c[1].Desc)
	}
	for _, op := range e.Dropped {
		fmt.Fprintf(&b, "; operator %q (%s) has state but is not in the plan", op.ID, op.Desc)
	}
	if len(e.Dropped) > 0 && len(e.Changed) == 0 {
		b.WriteString(" (allow non-restored state to drop it)")
	}
	return b.String()
}

func (e *PlanMismatchError) Unwrap() error { return ErrPlanMismatch }

// writtenBy records that the value at l was written by checkpoint origin.
func (l *Location) writtenBy(origin uint64) {
	if origin != l.Checkpoint {
		l.Origin = origin
	}
}
