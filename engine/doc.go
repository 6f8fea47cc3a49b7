// Package engine runs pipesql's jobs: it is what `pipesql run`, `pipesql shell` and
// `pipesql demo` have in common, and what a program embedding pipesql uses. It sits
// between the planner, which turns statements into a planner.Program, and the front
// ends, which read statements and show results.
//
// # Jobs
//
// Submit (or SubmitAll, for the jobs of a file that start together) compiles a program
// into an exec.Job, opens its checkpoint store, tracks it for the status displays and
// starts it in the background. A Job runs until its bounded inputs end, until the
// context it was submitted with is cancelled, or until Stop stops it; either way it
// stops cleanly (a final checkpoint when it checkpoints, sinks flushed). Restarts under
// restart-strategy.* happen inside exec.Job.Run, from the latest completed checkpoint.
// Jobs lists every job submitted, the ended ones too.
//
// # Checkpoints
//
// A job that sets execution.checkpointing.interval keeps its checkpoints in a Badger
// directory of its own, <state.checkpoints.dir>/<job key> (execution.checkpointing.dir
// is read first; the default is the user's state directory, DefaultCheckpointRoot),
// logged when the job starts, and a job submitted again with the same key, in this
// process or a later one, resumes from its latest checkpoint, if its sources still read
// the input it read (see exec). pipesql.restore.fresh (pipesql run --fresh) renames the
// old checkpoints to <dir>.<time> and starts from nothing. The key is pipeline.name when set (numbered when several jobs are
// submitted together), else "insert-into-" and the sink tables: it must survive edits of
// the query, so that a changed plan is recognised and refused instead of silently
// starting over (an error wrapping state.ErrPlanMismatch, unless
// execution.savepoint.ignore-unclaimed-state allows dropping the state the new plan
// cannot use). The engine is the one place that opens checkpoint stores.
//
// # Status and metrics
//
// Every job is tracked by an obs.Tracker in the engine's obs.Registry: one status model
// (RUNNING, DEGRADED, RESTARTING, FAILED, FINISHED, CANCELED) for the progress line,
// the shell's SHOW JOBS and the /status endpoint, and the same jobs in /metrics. The
// engine serves the registry on Options.MetricsAddr, or on the metrics.address setting
// of the first job that has one; Options.Handler replaces what it serves (pipesql gives
// it the web console, package console, which serves /metrics and /status too). The
// address must be loopback unless Options.AllowRemote says otherwise (then a warning is
// logged): the console's actions stop jobs. Savepoint takes a savepoint of a running job
// without stopping it.
package engine
