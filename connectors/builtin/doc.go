// Package builtin holds the connectors every pipesql binary has, registered with
// connectors.Register when the package is imported, with Flink's option names and
// meaning: datagen, filesystem, print and blackhole. Importing it also registers the
// json and csv formats, which the filesystem connector reads and writes.
//
// # datagen
//
// Generates the physical columns a plan asks for: random values (fields.#.min, max,
// length, var-len, max-past, null-rate) or sequences (fields.#.start to end), at
// rows-per-second, for number-of-rows rows or, when unset, without end. A sequence
// makes the table bounded: it ends when the first sequence is exhausted. Row i is a
// function of i: random fields come from a generator seeded by the table name, the
// column name and i, so a source restored from a snapshot (which holds just the row
// count) goes on with exactly the rows it would have produced, and two runs produce
// the same data. Only timestamps differ, being relative to the clock. Random strings
// are hex digits, as in Flink.
//
// # filesystem
//
// Reads a file, or every file under a directory in name order (hidden files starting
// with '.' or '_' are skipped), one record per line in the table's format. Each file
// is a split, read one after another; the snapshot holds the byte offset and line of
// every file, so a restored source goes on at the next record. The source is bounded
// unless source.monitor-interval is set, when it keeps looking for new files. A bad
// record fails the job with a *RecordError (table, file, line, field, snippet), or is
// skipped and counted when the format ignores parse errors. Metadata: file.path,
// file.name, file.size, file.modification-time, and a CDC format's own keys
// (source.timestamp ...), which its decoder fills per record.
//
// The sink writes part files named part-<uuid>-0-<n> into the path directory, as
// Flink does; a part stays hidden (.part-...inprogress) until a Flush, which the
// runtime calls at checkpoints and at the end, or, in a checkpointed job, until the
// checkpoint covering it completes (a connectors.CommittingSink). It takes inserts
// only, but in a CDC format (debezium-json ...), whose encoder writes every row with its
// kind. Parts roll by Flink's rolling policy and at every checkpoint. A lookup join reads
// the files whole (filelookup.go), applying a CDC format's changes in order.
//
// A parquet table is a bulk format (connectors.BulkFormat): the sink hands each
// in-progress part a writer of row groups, closed (footer written) when the part rolls;
// the source reads files row by row, its position the rows returned from each file.
//
// PARTITIONED BY tables (partition.go) keep rows under path/k=v/..., the key columns
// out of the files and read back from the path. The sink commits partitions
// (sink.partition-commit.*, a _SUCCESS file) when the trigger allows at a completed
// checkpoint: the partition-time trigger compares the watermark at the checkpoint's
// barrier, which the sink sees as a connectors.WatermarkSink, with the partition's time.
//
// # print and blackhole
//
// print writes rows as Flink's print connector does ("+I[2024-01-01, app1, 42]",
// "<identifier>> " first when print-identifier is set) to the writers set with
// SetPrintOutput, os.Stdout and os.Stderr by default. blackhole drops every row.
//
// Sources and sinks take time from the runtime's clock (SourceConfig.Clock,
// SinkConfig.Clock: datagen's throttle and timestamps, directory monitoring, file
// rolling); tests pass one that moves when waited on, so nothing sleeps.
package builtin
