package exec

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupportedPlan is returned by NewJob when the program has a node or a shape the
	// runtime cannot run (an unknown node, a watermark assigner away from its scan, an
	// aggregate over an updating input).
	ErrUnsupportedPlan = errors.New("unsupported plan")

	// ErrInvalidOptions is returned by NewJob when Options or a runtime setting of the
	// program (pipeline.auto-watermark-interval, table.local-time-zone ...) is invalid.
	ErrInvalidOptions = errors.New("invalid job options")

	// ErrNoCollector is returned by NewJob when the program has a SELECT (a Collect root)
	// and Options.Collect is nil.
	ErrNoCollector = errors.New("select results need Options.Collect")

	// ErrJobRunning is returned by Run when the job is already running.
	ErrJobRunning = errors.New("job is already running")

	// ErrJobNotRunning is returned when a checkpoint is requested while the job is not running.
	ErrJobNotRunning = errors.New("job is not running")

	// ErrBadRow is returned (inside an *OperatorError) when a connector returns a row whose
	// width does not match the columns it was asked to produce.
	ErrBadRow = errors.New("row does not match the schema")

	// ErrRetraction is returned (inside an *OperatorError) when an operator that only
	// accepts inserts receives an update or delete.
	ErrRetraction = errors.New("updates and deletes are not supported here")

	// ErrInternal is returned (inside an *OperatorError) when an operator panicked: a bug
	// in pipesql, reported as a failure of the job rather than a crash of the process.
	ErrInternal = errors.New("internal error")

	// ErrCheckpointBusy is returned when a checkpoint is requested while the sources
	// still have too many barriers to inject.
	ErrCheckpointBusy = errors.New("too many checkpoints in flight")

	// ErrCheckpointTimeout is the reason a checkpoint failed when its barriers did not
	// reach every sink within execution.checkpointing.timeout.
	ErrCheckpointTimeout = errors.New("checkpoint expired")

	// ErrCheckpointFailures is returned by Run (unless a restart recovers) when more
	// checkpoints failed in a row than execution.checkpointing.tolerable-failed-checkpoints
	// allows.
	ErrCheckpointFailures = errors.New("too many failed checkpoints")

	// ErrCheckpointingDisabled is returned by Savepoint and StopWithSavepoint when the
	// job does not checkpoint (execution.checkpointing.interval is not set).
	ErrCheckpointingDisabled = errors.New("checkpointing is not enabled (set execution.checkpointing.interval)")

	// ErrRestore is returned by Run when the job cannot start from its saved state: the
	// savepoint cannot be opened, every checkpoint fails verification, or an operator
	// cannot read its state. A plan that does not match the state is reported with
	// state.ErrPlanMismatch instead, and a source whose input is not the one the
	// checkpoint read (connectors.Identified) with connectors.ErrInputMismatch; neither
	// is retried by the restart strategy.
	ErrRestore = errors.New("cannot restore the job's state")
)

// OperatorError is the error of a failed job: it names the operator that failed, as
// fs.PathError names the file. Err carries the operator's own detail (a source error
// names the split and position).
type OperatorError struct {
	Pipeline int    // index of the pipeline in planner.Program.Pipelines
	Operator string // "source events", "calc", "window aggregate", "sink dau" ...
	Err      error
}

func (e *OperatorError) Error() string { return fmt.Sprintf("%s: %v", e.Operator, e.Err) }

func (e *OperatorError) Unwrap() error { return e.Err }
