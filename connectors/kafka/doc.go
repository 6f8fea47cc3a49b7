// Package kafka is pipesql's Kafka connector: 'connector' = 'kafka' (a source and an
// append-only sink) and 'connector' = 'upsert-kafka' (a sink that keeps the latest row
// per primary key in a compactable topic), with the option names and meanings of
// Flink's Kafka SQL connectors. It is the only package that imports confluent-kafka-go
// (librdkafka, through cgo); the exactly-once sinks produce through franz-go (see
// Exactly-once below).
//
// # Why it is built this way
//
// A Flink job reading Kafka restarted for over an hour when 4 of 12 brokers were
// decommissioned: partition discovery asked a broker that was gone for metadata, hit
// "Timeout expired while fetching topic metadata", and the discovery thread cancelled
// the readers; every restart did the same. Here a failure to discover is never a
// failure to read.
//
// # Source
//
// An enumerator owns the assignment. On its own goroutine and its own librdkafka
// client it lists the partitions of 'topic' (or of the topics matching
// 'topic-pattern') at start and every 'scan.topic-partition-discovery.interval'
// (default 5 min; 0 turns it off), each attempt bounded by
// 'properties.default.api.timeout.ms' (default 60 s). A failed or timed-out attempt is
// logged, counted (Stats), shown by Degraded, and retried with jittered exponential
// backoff; the readers keep reading meanwhile. Partitions are only ever added: an
// answer that lacks a partition during an outage cannot drop it, and no partition is
// handed out twice. Partitions found after the first listing start at their earliest
// offset; the first ones start by 'scan.startup.mode', resolved to concrete offsets so
// that a checkpoint taken before the first record still restores exactly.
//
// One librdkafka consumer reads the assigned partitions with explicit assignment
// (IncrementalAssign), never group subscription, so there is no rebalance and no group
// membership to lose. A goroutine takes its records out of librdkafka ahead of Poll (a
// few thousand at most), so that this cgo work overlaps decoding records into rows;
// what the records mean, and where each partition stands, is decided by Poll alone. librdkafka reconnects to brokers and follows leaders by itself;
// broker errors are counted and logged, and Poll never fails on them. Poll fails only
// on a record it cannot decode (unless the format ignores parse errors), on a
// definitive problem (a bounded read's topic does not exist; 'group-offsets' without a
// committed offset and 'properties.auto.offset.reset' = 'none') and on a fatal client
// error. When every broker is down, Poll returns no rows and no error, and Degraded
// says "no broker reachable (tried ...)"; reading resumes when a broker is back, and
// the reason goes as soon as one answers the reader (asked every 500 ms while none
// does, so that a source of an idle topic does not stay degraded until its next
// record). Partitions that a listing shows without a leader (their brokers gone, no
// replica to take over) are named by Degraded until a listing shows them led again;
// the other partitions are read meanwhile.
//
// Without a checkpoint to restore, NewSource waits until the cluster has answered a
// listing, retrying with backoff for as long as its context allows; if the context
// ends first it fails with a *BrokersError naming every broker tried, so the
// runtime's restart strategy decides what happens next. With a checkpoint it starts
// reading at once and discovery catches up.
//
// Snapshot encodes each partition's next offset (and end, for a bounded read) behind a
// version byte. CheckpointComplete commits the last snapshot's offsets to
// 'properties.group.id' through the admin API on a background goroutine and a client of
// its own, replaced after a failed commit so that commits find a coordinator that moved
// (its broker decommissioned); a failed commit is a warning, a counter and a Degraded
// reason, never an error. Without checkpointing (no 'execution.checkpointing.interval'),
// or with 'properties.enable.auto.commit' = 'true', Poll also commits the positions read
// so far every 'properties.auto.commit.interval.ms' (default 5 s). Commits only show
// progress; the source always restores from pipesql's checkpoints.
//
// 'scan.bounded.mode' (latest-offset, group-offsets, timestamp, specific-offsets) ends
// the read of each partition at an offset resolved when the partition is assigned;
// Poll returns io.EOF once every partition is done. A bounded source lists partitions
// once.
//
// # Properties
//
// 'properties.*' are librdkafka configuration properties. Flink jobs carry Java client
// properties; those librdkafka lacks or names differently are translated
// (default.api.timeout.ms bounds discovery, request.timeout.ms becomes
// socket.timeout.ms on a consumer, max.block.ms bounds a sink's wait for queue space,
// sasl.jaas.config becomes sasl.username and sasl.password, ...) or accepted and
// ignored with a reason logged (key.deserializer, session.timeout.ms, ...).
// PropertyTranslations lists them all. Unless a table sets a reconnect backoff, the
// clients wait at most 1 s between attempts to reach a broker (the Java client's
// reconnect.backoff.max.ms; librdkafka's own is 10 s), so that reading resumes within
// about a second of brokers coming back. An unknown property is an error naming the
// closest valid one.
//
// # Sinks
//
// 'kafka' writes every row of an insert-only input as one record (key from
// 'key.fields' when 'key.format' is set), partitioned by 'sink.partitioner' (default:
// murmur2 of the key, as Kafka's default partitioner; fixed; round-robin). Flush waits
// for every acknowledgement and returns delivery errors ('at-least-once').
// 'upsert-kafka' keys records by the PRIMARY KEY, writes +I and +U as the key's new
// value, ignores -U and writes -D as a tombstone; 'sink.buffer-flush.*' keeps only
// the latest change per key between sends.
//
// # Exactly-once
//
// With 'exactly-once' a sink is a connectors.CommittingSink: PrepareCommit flushes the
// open transaction and leaves it open, its id, producer id and epoch in the returned
// state; CheckpointComplete commits it. A sink restored from that state commits it
// (EndTxn with the stored producer id and epoch, which librdkafka cannot send: hence
// franz-go for this path), then fences every id of its pool with InitProducerID,
// aborting and reporting what earlier runs left open. The ids are a small pool
// ('<sink.transactional-id-prefix>-0-<n>') reused round robin; sink_txn.go explains
// when an id may be reused. Without checkpoints Flush does both phases at once.
// ValidateWrite refuses, when the INSERT is planned, a checkpoint interval that is not
// shorter than transaction.timeout.ms.
//
// Metadata columns (topic, partition, offset, timestamp, timestamp-type, headers,
// leader-epoch) can be read; writing them waits for the sink configuration to say
// which input column carries which metadata key.
package kafka
