package config

// Names of the keys pipesql reads, as Flink names them.
const (
	LocalTimeZone     = "table.local-time-zone"
	SourceIdleTimeout = "table.exec.source.idle-timeout"
	MiniBatchEnabled  = "table.exec.mini-batch.enabled"
	StateTTL          = "table.exec.state.ttl"
	// CDCEventsDuplicate: a CDC source (debezium-json ...) with a PRIMARY KEY may repeat
	// changes, so the planner deduplicates them with a ChangelogNormalize.
	CDCEventsDuplicate = "table.exec.source.cdc-events-duplicate"

	PipelineName            = "pipeline.name"
	AutoWatermarkInterval   = "pipeline.auto-watermark-interval"
	ResultMode              = "sql-client.execution.result-mode"
	MaxTableResultRows      = "sql-client.execution.max-table-result.rows"
	DisplayMaxColumnWidth   = "sql-client.display.max-column-width"
	TableMaxColumnWidth     = "table.display.max-column-width"
	MetricsAddress          = "metrics.address"
	CheckpointInterval      = "execution.checkpointing.interval"
	CheckpointTimeout       = "execution.checkpointing.timeout"
	CheckpointMinPause      = "execution.checkpointing.min-pause"
	CheckpointMode          = "execution.checkpointing.mode"
	CheckpointMaxConcurrent = "execution.checkpointing.max-concurrent-checkpoints"
	CheckpointNumRetained   = "execution.checkpointing.num-retained"
	CheckpointTolerable     = "execution.checkpointing.tolerable-failed-checkpoints"
	CheckpointDir           = "execution.checkpointing.dir"
	SavepointDir            = "execution.checkpointing.savepoint-dir"
	SavepointPath           = "execution.savepoint.path"
	IgnoreUnclaimedState    = "execution.savepoint.ignore-unclaimed-state"

	// pipesql's own restore settings: Flink resumes only when told where from, pipesql
	// resumes a job from its latest checkpoint by itself.
	FreshStart        = "pipesql.restore.fresh"
	AllowChangedInput = "pipesql.restore.allow-changed-input"

	RestartType            = "restart-strategy.type"
	FixedDelayAttempts     = "restart-strategy.fixed-delay.attempts"
	FixedDelayDelay        = "restart-strategy.fixed-delay.delay"
	FailureRateMax         = "restart-strategy.failure-rate.max-failures-per-interval"
	FailureRateInterval    = "restart-strategy.failure-rate.failure-rate-interval"
	FailureRateDelay       = "restart-strategy.failure-rate.delay"
	ExpInitialBackoff      = "restart-strategy.exponential-delay.initial-backoff"
	ExpMaxBackoff          = "restart-strategy.exponential-delay.max-backoff"
	ExpMultiplier          = "restart-strategy.exponential-delay.backoff-multiplier"
	ExpJitter              = "restart-strategy.exponential-delay.jitter-factor"
	ExpResetThreshold      = "restart-strategy.exponential-delay.reset-backoff-threshold"
	ExpAttemptsBeforeReset = "restart-strategy.exponential-delay.attempts-before-reset-backoff"
)

// Old names Flink still reads.
const (
	CheckpointDirOld         = "state.checkpoints.dir"
	CheckpointNumRetainedOld = "state.checkpoints.num-retained"
	SavepointDirOld          = "state.savepoints.dir"
	RestartTypeOld           = "restart-strategy"
)

// Why keys have no effect, where several share a reason.
const (
	oneProcess    = "pipesql runs each job in one process, one goroutine per operator"
	noCluster     = "pipesql has no cluster: a job runs inside the pipesql process"
	ownPlanner    = "pipesql's planner applies its own fixed rules"
	localBadger   = "pipesql keeps operator state in memory and checkpoints in Badger under execution.checkpointing.dir"
	noMiniBatch   = "a batch is what a source read in one poll (see table.exec.mini-batch.enabled)"
	noEmit        = "windows fire when the watermark passes their end, as Flink does without early or late firing"
	noLookup      = "lookup joins look keys up synchronously, one row at a time"
	oneCheckpoint = "pipesql takes one checkpoint at a time, and an operator with several inputs (a join, a union) always aligns their barriers"
	noJars        = "pipesql has no user-defined functions or connectors from jars"
)

var restartStrategies = []string{
	"none", "off", "disable", "fixed-delay", "fixeddelay", "failure-rate", "failurerate",
	"exponential-delay", "exponentialdelay",
}

// keys is the table of every key pipesql declares: first those with an effect, in the
// order the README shows them, then those accepted without one.
var keys = []Key{
	// The planner and the runtime.
	{Name: LocalTimeZone, Type: String, Default: "default", Shown: "`UTC`", ReadBy: Planner, Check: timeZone,
		Doc: "where a day starts for windows over `TIMESTAMP_LTZ` (`Asia/Shanghai`: 16:00 UTC) and how `TIMESTAMP_LTZ` is shown"},
	{Name: SourceIdleTimeout, Type: Duration, Default: "0 ms", Shown: "`0` (never idle)", ReadBy: Planner,
		Doc: "a source split without data for this long stops holding the watermark back"},
	{Name: MiniBatchEnabled, Type: Bool, Default: "false", ReadBy: Exec,
		Doc: "a group aggregate emits one change per group for each batch a source read, instead of one per row"},
	{Name: StateTTL, Type: Duration, Default: "0 ms", Shown: "`0` (kept for ever)", ReadBy: Exec,
		Doc: "a regular join forgets a row this long (processing time) after it last wrote it, as Flink's idle state retention does; window state goes when the window fires, and group aggregates and Top-N keep theirs for ever"},
	{Name: PipelineName, Type: String, ReadBy: Engine,
		Doc: "the job's name; it also names the job's checkpoints"},
	{Name: AutoWatermarkInterval, Type: Duration, Default: "200 ms", ReadBy: Exec,
		Doc: "the longest a source waits to emit a watermark that advanced (it also emits one after every batch it reads)"},
	{Name: ResultMode, Type: Enum, Enum: []string{"table", "changelog", "tableau"}, Default: "table", Shown: "`table` on a terminal", ReadBy: Shell,
		Doc: "how the shell shows a `SELECT`: `table`, `changelog` or `tableau`"},
	{Name: MaxTableResultRows, Type: Int, Default: "1000000", ReadBy: Shell, Check: atLeast(1),
		Doc: "the most rows the shell keeps of a `SELECT` in `table` mode"},
	{Name: DisplayMaxColumnWidth, Type: Int, Default: "30", ReadBy: Shell, Check: atLeast(1),
		Doc: "the widest the shell shows a column (it wins over `table.display.max-column-width`)"},
	{Name: TableMaxColumnWidth, Type: Int, Default: "30", ReadBy: Shell, Check: atLeast(1),
		Doc: "as `sql-client.display.max-column-width`"},
	{Name: MetricsAddress, Type: String, ReadBy: Engine,
		Doc: "as `--metrics-addr`"},

	// Checkpoints and savepoints (exec.ReadCheckpointConfig).
	{Name: CheckpointInterval, Type: Duration, Shown: "off", ReadBy: Exec,
		Doc: "take a checkpoint this often: every operator's state, every split's offset and watermark, one consistent cut"},
	{Name: CheckpointTimeout, Type: Duration, Default: "10 min", ReadBy: Exec, Check: positiveDuration,
		Doc: "a checkpoint not complete by then fails (counted)"},
	{Name: CheckpointMinPause, Type: Duration, Default: "0 ms", Shown: "`0`", ReadBy: Exec,
		Doc: "least time between the end of one checkpoint and the start of the next"},
	{Name: CheckpointNumRetained, Aliases: []string{CheckpointNumRetainedOld}, Type: Int, Default: "1", ReadBy: Exec, Check: atLeast(1),
		Doc: "completed checkpoints kept (one more is kept as a fallback for a corrupt newest one)"},
	{Name: CheckpointTolerable, Type: Int, Default: "0", ReadBy: Exec, Check: atLeast(0),
		Doc: "failed checkpoints in a row that the job tolerates before it fails"},
	{Name: CheckpointDir, Aliases: []string{CheckpointDirOld}, Type: Dir, Shown: "`$XDG_STATE_HOME/pipesql`, else `~/.local/state/pipesql`", ReadBy: Exec,
		Doc: "one Badger directory per job under it, named by `pipeline.name` (else by the sinks), logged at start; a job started again resumes from its latest checkpoint if its sources read the same input. `/x`, `file:/x` and `file:///x` are the same directory; other file systems are refused"},
	{Name: SavepointDir, Aliases: []string{SavepointDirOld}, Type: Dir, ReadBy: Exec,
		Doc: "where SIGTERM writes a savepoint (`--savepoint-dir`); a path or `file:` URI as the checkpoint directory"},
	{Name: SavepointPath, Type: Dir, ReadBy: Exec,
		Doc: "start from this savepoint (`--from-savepoint`)"},
	{Name: IgnoreUnclaimedState, Type: Bool, Default: "false", ReadBy: Exec,
		Doc: "start even when the saved state does not match the plan (`--allow-non-restored-state`); otherwise the refusal names the operator that differs and exits 2"},
	{Name: FreshStart, Type: Bool, Default: "false", ReadBy: Exec,
		Doc: "start the job without restoring its checkpoints (they are moved aside, not overwritten); an explicit `execution.savepoint.path` is still restored"},
	{Name: AllowChangedInput, Type: Bool, Default: "false", ReadBy: Exec,
		Doc: "resume even when a source's input is not the one the checkpoint read (another Kafka cluster, a recreated topic, offsets out of range, a rewritten file), with a warning instead of the refusal"},

	// Restart strategies (restart.FromSettings), with Flink's names and defaults.
	{Name: RestartType, Aliases: []string{RestartTypeOld}, Type: Enum, Enum: restartStrategies,
		Shown: "`exponential-delay` with checkpoints, else `none`", ReadBy: Restart,
		Doc: "`none`, `fixed-delay`, `failure-rate` or `exponential-delay`; a restart rebuilds the pipeline in-process from the latest completed checkpoint"},
	{Name: FixedDelayAttempts, Type: Int, Default: "1", ReadBy: Restart, Check: atLeast(0),
		Doc: "restarts `fixed-delay` makes before the job fails"},
	{Name: FixedDelayDelay, Type: Duration, Default: "1 s", ReadBy: Restart,
		Doc: "wait before each `fixed-delay` restart"},
	{Name: FailureRateMax, Type: Int, Default: "1", ReadBy: Restart, Check: atLeast(1),
		Doc: "failures `failure-rate` tolerates within the interval"},
	{Name: FailureRateInterval, Type: Duration, Default: "1 min", ReadBy: Restart, Check: positiveDuration,
		Doc: "the interval `failure-rate` counts failures in"},
	{Name: FailureRateDelay, Type: Duration, Default: "1 s", ReadBy: Restart,
		Doc: "wait before each `failure-rate` restart"},
	{Name: ExpInitialBackoff, Type: Duration, Default: "1 s", ReadBy: Restart,
		Doc: "first wait of `exponential-delay`"},
	{Name: ExpMaxBackoff, Type: Duration, Default: "1 min", ReadBy: Restart,
		Doc: "longest wait of `exponential-delay` (at least the initial backoff)"},
	{Name: ExpMultiplier, Type: Float, Default: "1.5", ReadBy: Restart, Check: between(1, 0),
		Doc: "each wait of `exponential-delay` is the last one times this"},
	{Name: ExpJitter, Type: Float, Default: "0.1", ReadBy: Restart, Check: between(0, 1),
		Doc: "random part of each `exponential-delay` wait, as a fraction of it"},
	{Name: ExpResetThreshold, Type: Duration, Default: "1 h", ReadBy: Restart,
		Doc: "a job running this long without failing starts `exponential-delay` over from the initial backoff"},
	{Name: ExpAttemptsBeforeReset, Type: Int, Shown: "unlimited", ReadBy: Restart, Check: atLeast(1),
		Doc: "restarts `exponential-delay` makes before the backoff resets and the job fails"},

	// Accepted, because Flink job files set them, but without effect in pipesql.
	{Name: CheckpointMode, Type: Enum, Enum: []string{"EXACTLY_ONCE", "AT_LEAST_ONCE"}, Default: "EXACTLY_ONCE", ReadBy: Exec,
		NoEffect: "both modes give exactly-once state: " + oneCheckpoint},
	{Name: CheckpointMaxConcurrent, Type: Int, Default: "1", Check: atLeast(1), NoEffect: oneCheckpoint},
	{Name: "execution.checkpointing.unaligned", Type: Bool, NoEffect: oneCheckpoint},
	{Name: "execution.checkpointing.unaligned.enabled", Type: Bool, NoEffect: oneCheckpoint},
	{Name: "execution.checkpointing.aligned-checkpoint-timeout", Type: Duration, NoEffect: oneCheckpoint},
	{Name: "execution.checkpointing.externalized-checkpoint-retention", Type: String,
		NoEffect: "checkpoints are always kept after the job ends, so that it resumes when started again"},
	{Name: "execution.checkpointing.incremental", Type: Bool, NoEffect: "checkpoints are always incremental"},
	{Name: "execution.checkpointing.snapshot-compression", Type: Bool, NoEffect: "pipesql does not compress checkpoints"},
	{Name: "execution.savepoint-restore-mode", Type: Enum, Enum: []string{"CLAIM", "NO_CLAIM", "LEGACY"},
		NoEffect: "a savepoint is only read, never claimed or deleted"},
	{Name: "execution.runtime-mode", Type: Enum, Enum: []string{"STREAMING", "BATCH", "AUTOMATIC"}, Default: "STREAMING",
		NoEffect: "pipesql always runs in streaming mode; a job over bounded sources ends when they do"},
	{Name: "execution.buffer-timeout", Type: String, NoEffect: oneProcess},
	{Name: "execution.buffer-timeout.interval", Type: Duration, NoEffect: oneProcess},
	{Name: "execution.target", Type: String, NoEffect: noCluster},
	{Name: "execution.attached", Type: Bool, NoEffect: noCluster},
	{Name: "high-availability.type", Aliases: []string{"high-availability"}, Type: String, Default: "NONE", Check: haType,
		NoEffect: "a job runs in one process, which resumes from its latest checkpoint when started again; `ZOOKEEPER` and `KUBERNETES` are refused (high availability on Kafka is not built yet)"},
	{Name: "parallelism.default", Type: Int, Default: "1", NoEffect: oneProcess},
	{Name: "table.exec.resource.default-parallelism", Type: Int, Default: "-1", NoEffect: oneProcess},
	{Name: "pipeline.max-parallelism", Type: Int, NoEffect: oneProcess},
	{Name: "pipeline.object-reuse", Type: Bool, NoEffect: oneProcess},
	{Name: "pipeline.operator-chaining", Type: Bool, NoEffect: oneProcess},
	{Name: "pipeline.operator-chaining.enabled", Type: Bool, NoEffect: oneProcess},
	{Name: "pipeline.jars", Type: String, NoEffect: noJars},
	{Name: "pipeline.classpaths", Type: String, NoEffect: noJars},
	{Name: "taskmanager.numberOfTaskSlots", Type: Int, NoEffect: noCluster},
	{Name: "taskmanager.memory.process.size", Type: String, NoEffect: noCluster},
	{Name: "taskmanager.memory.managed.size", Type: String, NoEffect: noCluster},
	{Name: "taskmanager.memory.managed.fraction", Type: Float, NoEffect: noCluster},
	{Name: "jobmanager.memory.process.size", Type: String, NoEffect: noCluster},
	{Name: "state.backend", Type: String, NoEffect: localBadger},
	{Name: "state.backend.type", Type: String, NoEffect: localBadger},
	{Name: "state.backend.incremental", Type: Bool, NoEffect: "checkpoints are always incremental"},
	{Name: "state.backend.local-recovery", Type: Bool, NoEffect: localBadger},
	{Name: "state.checkpoint-storage", Type: String, NoEffect: localBadger},
	{Name: "table.exec.mini-batch.allow-latency", Type: Duration, Default: "0 ms", NoEffect: noMiniBatch},
	{Name: "table.exec.mini-batch.size", Type: Int, Default: "-1", NoEffect: noMiniBatch},
	{Name: "table.exec.sink.not-null-enforcer", Type: Enum, Enum: []string{"ERROR", "DROP"}, Default: "ERROR",
		NoEffect: "pipesql does not check at run time that a NOT NULL sink column gets no NULL"},
	{Name: "table.exec.sink.upsert-materialize", Type: Enum, Enum: []string{"NONE", "AUTO", "FORCE"}, Default: "AUTO", NoEffect: ownPlanner},
	{Name: "table.exec.sink.keyed-shuffle", Type: Enum, Enum: []string{"NONE", "AUTO", "FORCE"}, Default: "AUTO", NoEffect: oneProcess},
	{Name: "table.exec.emit.early-fire.enabled", Type: Bool, NoEffect: noEmit},
	{Name: "table.exec.emit.early-fire.delay", Type: Duration, NoEffect: noEmit},
	{Name: "table.exec.emit.late-fire.enabled", Type: Bool, NoEffect: noEmit},
	{Name: "table.exec.emit.late-fire.delay", Type: Duration, NoEffect: noEmit},
	{Name: "table.exec.emit.allow-lateness", Type: Duration, NoEffect: noEmit},
	{Name: "table.exec.async-lookup.buffer-capacity", Type: Int, NoEffect: noLookup},
	{Name: "table.exec.async-lookup.timeout", Type: Duration, NoEffect: noLookup},
	{Name: CDCEventsDuplicate, Type: Bool, Default: "false", ReadBy: Planner,
		Doc: "a CDC source (debezium-json, canal-json, maxwell-json) may deliver a change more than once: its rows are normalized by the PRIMARY KEY (ChangelogNormalize keeps the last row per key), as Flink does"},
	{Name: "table.exec.legacy-cast-behaviour", Type: Enum, Enum: []string{"ENABLED", "DISABLED"}, Default: "DISABLED",
		NoEffect: "casts behave as Flink's current ones"},
	{Name: "table.exec.window-agg.buffer-size-limit", Type: Int, NoEffect: oneProcess},
	{Name: "table.exec.uid.generation", Type: String, NoEffect: "pipesql names operator state by the plan"},
	{Name: "table.exec.simplify-operator-name-enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.agg-phase-strategy", Type: Enum, Enum: []string{"AUTO", "ONE_PHASE", "TWO_PHASE"}, Default: "AUTO", NoEffect: ownPlanner},
	{Name: "table.optimizer.distinct-agg.split.enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.distinct-agg.split.bucket-num", Type: Int, NoEffect: ownPlanner},
	{Name: "table.optimizer.reuse-sub-plan-enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.reuse-source-enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.join-reorder-enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.multiple-input-enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.source.report-statistics-enabled", Type: Bool, NoEffect: ownPlanner},
	{Name: "table.optimizer.non-deterministic-update.strategy", Type: String, NoEffect: ownPlanner},
	{Name: "table.generated-code.max-length", Type: Int, NoEffect: "pipesql compiles expressions into closures, not generated code"},
	{Name: "table.dml-sync", Type: Bool, Default: "false",
		NoEffect: "run waits for every job, and the shell submits INSERT jobs in the background"},
}
