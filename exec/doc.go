// Package exec runs a planned job: it turns a planner.Program into a streaming pipeline
// of operators and runs it until its bounded inputs end or its context is cancelled.
//
// # Tasks, batches and events
//
// Each pipeline (one INSERT INTO or SELECT) is a tree of tasks, each in its own
// goroutine, connected by channels of events: a source task per scan at the leaves, the
// sink or collect at the root, and operators with several inputs (a join, a union)
// where the plan has them. An event is one of a batch of rows with
// their change kinds (+I -U +U -D), a watermark, a checkpoint barrier, or the end of the
// stream. Rows travel in batches (Options.BatchSize, 1024 by default), never one per
// channel send, so channel costs are paid per batch.
//
// Each leaf of a pipeline is a source task: the connector's Poll, and fused into
// it the Calc nodes (computed columns, filters, projections) and the WatermarkAssigner
// right above the scan. Fusing puts the watermark where the split (Kafka partition, file)
// of each row is known. Every other operator (window aggregate, group aggregate, window
// table function, the Correlate of an UNNEST, a later Calc) runs in a task of its own,
// so that decoding and aggregating use two cores; the sink or the collect callback is
// the last task.
//
// # Event time
//
// For each split the source task keeps the largest value of the WATERMARK expression seen
// in it; the source's watermark is the minimum over the active splits. A split that has
// produced nothing holds the watermark back until it has been idle for the idle timeout
// (scan.watermark.idle-timeout, table.exec.source.idle-timeout); with no timeout it holds
// it back for ever, as in Flink. The watermark is emitted every
// pipeline.auto-watermark-interval (200 ms) when it advanced, and as +inf at the end of a
// bounded input, which fires every window. Rows with a NULL event time are dropped and
// counted (Flink fails the job on them; a job that fails on every restart on the same
// record helps nobody).
//
// Windows are computed on local time: for a TIMESTAMP_LTZ time column the wall clock in
// table.local-time-zone (a 1-day window in Asia/Shanghai runs from 16:00 UTC to 16:00 UTC,
// shown as 00:00 to 00:00), for a TIMESTAMP column its own value. A window fires when the
// watermark reaches its last millisecond; rows that arrive after every window they belong
// to has fired are dropped and counted as late.
//
// # Aggregation state
//
// Window aggregates keep state in slices, as Flink's window aggregates do: TUMBLE slices
// are windows, HOP slices are gcd(size, slide) long and merged per window when it fires,
// CUMULATE slices are one step long and merged into the window's running accumulator at
// each step end, which emits the running result (the daily active users, updated every
// minute). State of fired windows is deleted. Group keys are encoded into compact bytes
// for the state maps; aggregate state lives in exec/agg buffers. A non-windowed GROUP BY
// emits an updating changelog: +I for a new group, -U/+U when its result changes.
//
// # Changelog input
//
// Rows carry their kind (+I, -U, +U, -D) from the source on: a connector's SourceBatch
// has them (upsert-kafka, the CDC formats), the source task's Calc and watermark stages
// keep them with their rows. ChangelogNormalize (normalize.go) keeps the last row per
// key of an upsert stream and emits the retracting changelog the operators above expect.
// A GroupAggregate over updating input (group_retract.go) adds +I/+U rows and takes back
// -U/-D rows (agg.NewRetracting's buffers) and counts each group's rows, deleting the
// group (-D) when the count reaches zero.
//
// # Top-N and deduplication
//
// The rank operator (rank.go) runs Rank and Deduplicate: per partition key the rows in
// rank order (ORDER BY, ties by arrival), and after each input row the difference between
// what the partition shows (ranks Start to End) and what it showed: -U/+U as ranks shift
// when the rank number is output, +I for a row entering and -D for one pushed out when it
// is not, -U/+U when a deduplicated row is replaced. Over an insert-only input it keeps
// only the rows that can still rank; over an updating one every row, so that a retracted
// top row is replaced by the next. Its state is checkpointed per key group like the
// group aggregate's. A WindowRank (window_rank.go) ranks the rows of each window when the
// watermark that fired the window arrives (over a window table function: when the
// watermark reaches the window's window_time), insert-only.
//
// # OVER aggregates and sessions
//
// The over operator (over.go) keeps per partition the rows waiting for the watermark,
// the rows later frames or LAG can reach and, for UNBOUNDED frames, running buffers; it
// processes a partition's rows in time order once the watermark passes them (RANGE
// frames with their peers) and drops late rows. The session window operator
// (session_window.go) keeps each key's open sessions, merges those a row overlaps (their
// buffers with agg's Merge) and emits a session when the watermark passes its end. Both
// checkpoint per key group, with the watermark they reached. The temporal sort
// (temporal_sort.go) buffers rows until the watermark passes them and emits them in key
// order, its buffer one checkpointed value. CURRENT_WATERMARK reads the watermark of the
// task evaluating it (current_watermark.go).
//
// # Stopping and failing
//
// Cancelling the context given to Job.Run stops the job cleanly: sources stop polling,
// the rows already read drain through the pipeline, no window fires that had not, sinks
// flush and close, and Run returns nil. An operator error fails the job: every task stops,
// connectors are closed, and Run returns an *OperatorError naming the operator (a source
// error is named after its table and carries the connector's split and position),
// unless the restart strategy restarts it (below).
//
// # Checkpoints
//
// With execution.checkpointing.interval set, a coordinator (checkpoint.go) injects a
// barrier at every source task each interval. A source task, between two polls,
// snapshots its connector (the position after exactly the rows it emitted) and its
// splits' watermarks and sends the barrier after those rows; every operator passes the
// barrier on after the rows before it, snapshotting its state when it arrives. An
// operator with several inputs aligns the barriers (exactly once): an input whose barrier
// arrived is not read until it arrived on every other input that has not ended, so the
// snapshot holds exactly the rows before the barrier on each input; AT_LEAST_ONCE aligns
// too. Its watermark is the minimum of its inputs', and its input ends when all ended.
// Each source keeps its own position and split watermarks in the checkpoint, under the
// state id of its scan ("0/source orders", a second scan of one table "0/source orders 2"). When every root has the barrier, the
// cut is complete and a background goroutine writes it to the state.Store
// (Options.Store, one job key per job): new values with Put, unchanged ones with Reuse,
// the commit record last. Processing does not wait for the write: the in-line part is
// an operator capturing what changed since the last completed checkpoint — small state
// serialized at once, roaring bitmaps frozen copy-on-write (agg.FreezeBuffer) and new
// dictionary entries taken as a view of memory that never changes again
// (agg.Func.SharedView) — and the writer goroutine serializes the rest before its Puts.
// Metrics reports the pause (OperatorMetrics.SnapshotPause, CheckpointMetrics.LastPause).
//
// A regular join keeps both inputs' rows by join key and checkpoints them per side and
// key group, as the group aggregate does its groups (join.go); a semi or anti join runs on
// the same state (semi_join.go). An interval join keeps each row until no row of the
// other side can join it, one cleanup timer per key fired by the watermark (or the clock),
// and holds its output watermark back by its bounds so that the times it emits are not
// late (interval_join.go, the one operator that implements watermarkHolder). A window
// join buffers rows per window end and key and joins a window when the watermark passes
// its end (window_join.go).
// An event-time temporal join keeps the versioned side's rows per key by rowtime and
// joins each left row, once the watermark passes it, with the version valid at its time,
// emitting it with the left row's kind (temporal_join.go).
//
// Window aggregates checkpoint per window and key group (aggcheckpoint.go, opstate.go):
// a checkpoint rewrites the key groups that changed since the previous completed
// checkpoint and reuses the others; fired windows are simply not written again, which
// deletes them. Aggregate buffers are serialized by exec/agg (roaring bitmaps in the
// portable format behind a version byte). The COUNT(DISTINCT) dictionary is a chain of
// chunks, merged like a binary counter but never into more than 2^18 entries at once,
// which bounds both what one checkpoint rewrites and the chunks a restore replays. After a failed
// checkpoint, what it wrote is rewritten, nothing more.
//
// One checkpoint is in flight at a time; a failed one (storage error, timeout) is
// counted, and more than execution.checkpointing.tolerable-failed-checkpoints failures
// in a row fail the job. When every source has ended its input, or the job is stopped,
// one final checkpoint covers the last rows before the streams end; a stop exports it
// as a savepoint under execution.checkpointing.savepoint-dir when set, and
// Job.StopWithSavepoint (STOP JOB ... WITH SAVEPOINT) under the directory it is given.
// Job.Savepoint writes one without stopping.
//
// # Exactly-once output
//
// A sink implementing connectors.CommittingSink (the filesystem sink) commits in two
// phases: at each barrier it stages what it was given (its state goes into the
// checkpoint), and publishes it when the checkpoint completes; a restored sink publishes
// what its checkpoint staged and drops what was written after it. Rows replayed after a
// recovery are therefore never seen twice. Other sinks flush at each barrier and are
// at-least-once.
//
// # Recovery
//
// Run starts from the savepoint of execution.savepoint.path, else from the latest
// checkpoint of the job in Options.Store (falling back past corrupt ones, which the store
// reports), else from nothing; starting the process again with the same job and store
// therefore resumes it. The saved state must match the plan (state.Meta.CheckPlan on
// each stateful operator's description): a query whose aggregates, windows or keys
// changed is refused with an error wrapping state.ErrPlanMismatch naming the operator
// and both descriptions, unless execution.savepoint.ignore-unclaimed-state allows
// starting with the state it cannot use dropped. A job that already finished resumes at
// the end of its inputs and writes nothing more. pipesql.restore.fresh starts without
// restoring from the store.
//
// The saved state must also belong to the input: each checkpoint stores, beside a
// source's position, the identity of what it read (connectors.Identified: the Kafka
// cluster id and topic ids, file sizes and modification times), and a source restored
// from it checks, before its first Poll, that it reads the same input and that its
// positions are inside it. A mismatch fails the job for good with an error wrapping
// connectors.ErrInputMismatch that names both inputs, unless
// pipesql.restore.allow-changed-input allows it. Once every restored source passed, the
// resume is logged: "resumed job 'dau' from checkpoint 789 taken 2026-12-01 21:24:08 in
// DIR (watermark ..., offsets of 3 partitions)", and Metrics says the same
// (CheckpointMetrics.Resumed). A restart within the Run does not check again the inputs
// of checkpoints it took itself.
//
// When a run fails, the restart strategy (package restart: restart-strategy.type none,
// fixed-delay, failure-rate or exponential-delay, Flink's names and defaults;
// exponential-delay when checkpointing is on and no strategy is set) says whether and
// after how long, waited on the job's Clock; the job is then rebuilt in-process from its
// latest completed checkpoint (without checkpoints, from what it started from).
package exec
