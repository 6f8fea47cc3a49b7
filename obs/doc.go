// Package obs shows what pipesql jobs are doing, so that trouble is seen before it
// becomes an outage and a long catch-up is seen progressing: one job status model
// shared by the progress line of pipesql run, the shell's SHOW JOBS and the /status
// endpoint; Prometheus metrics; and the process's structured log.
//
// # Job status
//
// Status (and a Tracker, which adds rates) reads a job's exec.Lifecycle and
// exec.Metrics into a JobStatus. Its State is one of
//
//	RUNNING                         running, nothing wrong
//	INITIALIZING(reason)            running, but a source has nothing to read yet (connecting)
//	DEGRADED(reason)                running, but a connector works in a reduced way: partition
//	                                discovery failing or hung, offset commits failing, no broker
//	                                reachable; the reason is the connector's (connectors.Status);
//	                                or (a Tracker) most records of the last 30 s were dropped as
//	                                late: "97% of records in the last 30 s were late: watermark
//	                                2030-01-01 00:00:00, records around 2025-11-29"
//	RESTARTING(n, next attempt at)  failed, waiting to restart from its latest checkpoint
//	FAILED(error)                   failed for good
//	FINISHED                        its bounded inputs ended and everything was written
//	CANCELED                        stopped on request, cleanly
//	CREATED                         not started
//
// with the records read, their rate, the lag (for Kafka: high watermark minus position,
// summed over partitions), how long catching up will take at the rate the lag shrinks,
// the watermark and its delay behind the wall clock, the latest checkpoint, restarts,
// late and bad records, and the checkpoint the job resumed from (which the progress line
// shows in its first frames).
//
// # Progress
//
// FormatProgress renders a status as the one line pipesql run redraws on a terminal
// (ShowProgress with a StatusLine, under which log lines and printed rows scroll):
//
//	RUNNING | 18,402 rec/s | 1,204,331 records | lag 2,311,009, caught up in ~2m05s | watermark 2024-05-01 13:04:55.000 (41m12s behind) | checkpoint #12 8s ago | 0 restarts
//
// When stderr is not a terminal, ShowProgress logs the same status as one INFO record
// per job ("progress", with typed attributes) every 30 seconds instead.
//
// # Metrics
//
// Handler serves /metrics in the Prometheus text format and /status as JSON. Every
// series has the labels job_id and job_name; the names are:
//
//	pipesql_job_state{state}                         1 for the job's State, 0 for the others
//	pipesql_job_restarts_total                       restarts under the restart strategy
//	pipesql_job_uptime_seconds, pipesql_job_records_per_second
//	pipesql_job_lag_records, pipesql_job_catch_up_seconds
//	pipesql_job_watermark_seconds, pipesql_job_watermark_delay_seconds
//	pipesql_checkpoints_completed_total, pipesql_checkpoints_failed_total
//	pipesql_checkpoint_last_{id,duration_seconds,write_seconds,size_bytes,reused_values,pause_seconds}
//	pipesql_checkpoint_max_pause_seconds, pipesql_checkpoint_last_completed_timestamp_seconds
//	pipesql_operator_{records_in,records_out,late_records,bad_records}_total{pipeline,operator}
//	pipesql_operator_watermark_seconds, pipesql_operator_watermark_delay_seconds, pipesql_operator_checkpoint_pause_seconds
//	pipesql_operator_backpressured_seconds_total{pipeline,operator}
//	pipesql_aggregate_groups{pipeline,operator}
//	pipesql_aggregate_{shared_state_bytes,dictionary_entries}{pipeline,operator,aggregate}
//	pipesql_source_{records,skipped_records,null_rowtime_records}_total{pipeline,table}
//	pipesql_source_degraded, pipesql_source_watermark_seconds, pipesql_source_watermark_delay_seconds
//	pipesql_source_split_{records_total,idle,watermark_seconds}{pipeline,table,split}
//	pipesql_source_<measure>{pipeline,table[,split]}  what the connector reports (connectors.Reporter)
//	pipesql_sink_<measure>{pipeline,table}            what a sink's connector reports (a Histogram measure as a histogram)
//
// The Kafka source reports, per partition (split), offset, end_offset (its high
// watermark) and lag_records; and bytes_total, tombstones_total, client_errors_total,
// partitions, brokers, discovery_{attempts,successes,failures}_total,
// discovery_last_success_timestamp_seconds, discovery_since_success_seconds and
// commits_{succeeded,failed,superseded}_total. Watermarks are exported as the instants
// they stand for: a TIMESTAMP watermark is read in table.local-time-zone.
//
// The Kafka sinks report records_{delivered,failed}_total and, with 'exactly-once',
// transactions_{committed,aborted}_total, transactions_pending, transactional_ids and
// the histogram transaction_commit_seconds (from the barrier that staged a transaction
// to its commit).
//
// # Logs
//
// NewLogger builds the process's slog.Logger: text or JSON, a least level, and Dedup,
// which folds repeats of a line (lines that differ only in the digits of their message
// or error) within a window into one line and a later one carrying suppressed=N.
// librdkafka's own log lines reach it through the Kafka connector at their own levels,
// with the name of the client that wrote them.
package obs
