// Package state stores the checkpoints of pipesql jobs: the state of every
// operator and the source offsets, cut consistently at a checkpoint barrier.
// It owns how checkpoints are written, verified, retained and exported, and
// nothing about what is in them: values are opaque bytes that operators
// serialize (with their own version byte) and restore.
//
// Two implementations share one engine: OpenBadger keeps checkpoints in a
// Badger directory, NewMemory keeps them in a map for tests. Package
// statetest holds the conformance suite both pass. Badger types never leave
// this package.
//
// # Data model
//
// A job is identified by a key string, such as a plan fingerprint. Its
// checkpoints have increasing ids. A checkpoint holds values under
// (operator, key): an aggregate may write one key per window or key group,
// a source one per partition. An incremental checkpoint reuses unchanged
// values of an earlier checkpoint (Writer.Reuse) without rewriting them.
// Meta records the plan fingerprint, a description of the stateful
// operators (see Meta.CheckPlan) and free-form properties.
//
// # Commit is atomic
//
// A checkpoint is visible exactly when its commit record exists: its Meta
// plus a manifest (the number of index entries and their checksum). That
// record is the "latest completed" marker, and it is written last, in one
// transaction:
//
//   - A small checkpoint (under 1 MiB of values and index, the usual
//     incremental one) is kept in memory until Commit, which writes its
//     values, its index, its commit record and the retirement of old
//     checkpoints in a single synced transaction.
//   - A larger one streams its values to storage under its checkpoint id
//     as they are put, in as many transactions as they need, with nothing
//     referring to them. Commit writes the index the same way, waits until
//     all of it is durable, and then writes the commit record (and the
//     retirements) in one final transaction.
//
// Either way a checkpoint of any size appears whole or not at all. If the
// process dies before the commit record, the previous checkpoint stays the
// latest, and the next OpenBadger removes the leftovers.
//
// # Verification
//
// Every record and every stored chunk of a value carries a crc32c. Open and
// Latest verify a whole checkpoint before returning it (manifest, index and
// all values), and Get and Scan verify again what they read. Failures are
// *CorruptError values that wrap ErrCorrupt and name the directory, job,
// checkpoint, operator and key. Latest falls back to the newest checkpoint
// that verifies, reporting each skipped one to Options.Warn; if none does,
// it fails rather than let a job start over from nothing.
//
// # Retention
//
// Each commit retires the completed checkpoints beyond Options.NumRetained
// in the transaction that writes its commit record; a background collection then deletes their data,
// except values that a retained incremental checkpoint still reuses. A
// checkpoint that an in-progress Writer reuses from is kept until that
// Writer ends.
//
// # Savepoints
//
// ExportSavepoint writes a checkpoint to a single self-describing file in a
// directory of its own; OpenSavepoint reads it back as a Checkpoint, from
// wherever it was moved.
package state
