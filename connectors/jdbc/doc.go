// Package jdbc holds pipesql's PostgreSQL connectors: Flink's 'jdbc' connector (sink,
// bounded scan, lookup source) and Flink CDC's 'postgres-cdc' changelog source, spoken
// through github.com/jackc/pgx/v5 and github.com/jackc/pglogrepl (their types stay
// inside this package). They share the connection, type mapping and table checks.
//
// # Options
//
// Flink's names: 'url' ('jdbc:postgresql://host:port/database', with the PostgreSQL JDBC
// driver's user, password, sslmode, currentSchema, ApplicationName, connectTimeout and
// options parameters), 'table-name' ([schema.]table, resolved as PostgreSQL resolves an
// unquoted name), 'username', 'password', and 'driver' when it is org.postgresql.Driver.
//
// # Sink
//
// Without a PRIMARY KEY the sink appends (COPY); with one it upserts with INSERT ... ON
// CONFLICT (key) DO UPDATE and deletes by key, folding the changes of a key between
// flushes to the last one and ignoring -U rows, as Flink's upsert writer does. It
// flushes 'sink.buffer-flush.max-rows' rows, after 'sink.buffer-flush.interval', and at
// every checkpoint, each flush one transaction. Replaying the changes after the last
// checkpoint writes the same rows again, so an upsert table is exact after any crash.
//
// A lost connection (the server shut down or restarting, the network gone) is retried
// with backoff for as long as it lasts: Write and Flush wait, the sink reports the
// reason through connectors.Status (the job shows DEGRADED), and the job goes on when
// the database is back, without a restart. A statement the database refuses (a value
// out of range, a constraint) is retried 'sink.max-retries' times, then fails the job.
//
// # Scan and lookup
//
// A jdbc table read in a query is a bounded scan: one split, or the ranges of
// 'scan.partition.column' between the bounds, each read through a cursor ('scan.fetch-size'
// rows a FETCH) ordered by every column it reads, so a checkpoint's (split, rows read)
// resumes exactly. As the dimension of a lookup join it is a connectors.LookupSource:
// one query by key per row, through Flink's PARTIAL cache (connectors.LookupCache) when
// 'lookup.cache' = 'PARTIAL'.
//
// # postgres-cdc
//
// A fresh start creates the slot with an exported snapshot, reads the table on it in
// primary-key order (+I), then streams the slot's pgoutput messages from the snapshot's
// consistent point, one transaction at a time (+I, -U/+U, -D; REPLICA IDENTITY FULL gives
// the old rows). The checkpoint holds the phase, the end LSN of the last transaction
// returned and the last snapshot key; the slot's confirmed LSN moves only at
// CheckpointComplete. A restore in the snapshot reads the keys after the last one from a
// temporary slot's snapshot and records its LSN per key range (snapRange): a streamed
// change to a row of such a range that committed before that LSN is in what was read, and
// is skipped.
//
// # Types
//
// Flink's JDBC type mapping for PostgreSQL: BOOLEAN boolean, SMALLINT smallint, INT
// integer, BIGINT bigint, FLOAT real, DOUBLE double precision, DECIMAL(p, s) numeric,
// CHAR/VARCHAR/STRING char, varchar or text, BYTES bytea, DATE date, TIME time,
// TIMESTAMP timestamp, and TIMESTAMP_LTZ timestamptz. A written value also goes into
// a wider column (an INT into bigint or numeric). When a table opens, the database
// table is checked against the declared columns: a missing table, a missing column or
// a type that does not map is an error naming it.
package jdbc
