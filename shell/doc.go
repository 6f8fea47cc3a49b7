// Package shell is pipesql's SQL client: the statements of a script executed against one
// planner session (Runner, which `pipesql run`, `explain` and `demo` use too, so that a
// file means the same thing everywhere), and the interactive shell of `pipesql shell`
// (Interactive). Jobs and queries run on an engine.Engine; the shell only reads
// statements and shows what they do.
//
// # The interactive shell
//
// On a terminal the shell reads statements with line editing (readline: emacs keys,
// Ctrl-R history search, Tab completion, complete.go), runs each once its ';' arrives,
// prints errors with their position and goes on. Its history is kept across runs, one
// statement per entry (history.go, text.go). SELECT shows live results in Flink's result
// modes (render.go). INSERT submits a job to the engine and the prompt comes back while
// it runs: the same job `pipesql run` starts, checkpointing into state.checkpoints.dir,
// resuming from its checkpoint when submitted again with the same pipeline.name, and on
// /status and /metrics when they are served. SHOW JOBS shows the engine's status of each
// job (RUNNING, DEGRADED(reason), RESTARTING(n, next attempt at), FAILED(error),
// FINISHED, CANCELED) with its rate, lag, watermark and last checkpoint (jobs.go); STOP
// JOB stops one, WITH SAVEPOINT after a savepoint.
//
// Ctrl-C belongs to the statement running: it cancels a query, detaches from a job that
// is starting, or stops waiting for a job to stop. At the prompt, readline has the
// terminal in raw mode and Ctrl-C clears the line being typed (it stays in the history).
// While a statement runs, the terminal is in cooked mode and Ctrl-C arrives as SIGINT.
// Output from the background (job notices, print sinks, warnings) is held while a
// statement has the screen and released after it.
package shell
