// Package config declares every configuration key pipesql accepts, once: its name and
// older aliases, type, default, the component that reads it, and whether it has an
// effect in pipesql (keys.go). SET 'key' = 'value' and --set key=value are checked
// against the table by Validate; the planner, exec, exec/restart, the engine and the
// shell read typed values through Read, which takes defaults from the table, so that no
// component declares a key or a default of its own.
//
// # Which keys are accepted
//
// A job file written for Flink sets many keys pipesql has no use for (parallelism,
// memory, optimizer switches), and it should run unchanged. So:
//
//   - A declared key with an effect is checked against its type (and range) and set.
//   - A declared key without an effect (parallelism.default, state.backend.type ...)
//     is checked and accepted with a warning saying why it has no effect in pipesql.
//   - An undeclared key within two edits of a declared one is refused as its typo,
//     naming it: silently ignoring a misspelt execution.checkpointing.interval would
//     lose checkpoints.
//   - An undeclared key under one of Flink's namespaces (table., execution., pipeline.,
//     state., taskmanager. ...; see flinkNamespaces) is accepted with a warning that
//     pipesql does not know it and ignores it.
//   - Any other key is refused, naming the closest declared key when one is near.
//
// # Directories
//
// Checkpoint and savepoint directories (type Dir) are local: '/x', 'file:/x' and
// 'file:///x' (and 'file://localhost/x') name the same directory, as in Flink. Another
// host or file system (file://host/x, s3://bucket/x) is refused, since pipesql would
// otherwise write somewhere the user did not mean.
//
// # Suggestions
//
// Distance and Closest are the one edit distance behind every "did you mean" in
// pipesql: setting keys, connector options, tables, columns, functions, types and
// commands.
package config
