// Package connectors defines how pipesql reads and writes tables: the Source and Sink
// interfaces, the registry of connector factories ('connector' = 'kafka') and the registry
// of formats ('format' = 'json').
//
// Each connector declares its options (names, types, defaults, required ones) so that the
// planner validates a CREATE TABLE before anything connects, and so that a misspelt key is
// answered with the closest valid one. Implementations live in sub-packages and register
// themselves in init(): connectors/builtin (datagen, filesystem, print, blackhole),
// connectors/formats (json, csv) and connectors/kafka (kafka, upsert-kafka).
//
// # Consistent cuts
//
// A Source is driven by one goroutine: Poll returns records, Snapshot returns the position
// after exactly those records. The runtime takes a snapshot when a checkpoint barrier
// passes the source, so the positions and the operator state of a checkpoint describe the
// same cut of the input. Offsets go back to Kafka only in CheckpointComplete.
//
// # Changelogs
//
// A source may emit updates and deletes: SourceBatch.Kinds gives each row's RowKind, and
// the table's ChangelogMode (Factory.Changelog, else the value format's
// FormatFactory.Changelog) tells the planner what to expect: insert-only, upsert by the
// primary key (upsert-kafka; the planner adds a ChangelogNormalize), or all changes (the
// CDC formats, through ChangeDecoder and MetadataDecoder). See changelog.go.
//
// This package imports only the types package: connectors never see the planner or exec.
package connectors
