// Package funcs is pipesql's catalog of scalar functions and operators: their names,
// signatures, type rules and implementations, following the semantics Flink documents
// for its SQL system functions.
//
// # Who uses it
//
// The planner looks calls up by name (Lookup, Closest for "did you mean"), asks Infer for
// the result type or a readable error ("DATE_FORMAT expects a TIMESTAMP or STRING as its
// 1st argument, got INT"), lists Names for SHOW FUNCTIONS, and leaves aggregates
// (IsAggregate) and window functions (IsWindowFunc) to its own machinery. exec/eval binds
// each call site once with Func.Bind, which precompiles what is constant (a LIKE or regex
// pattern, a DATE_FORMAT layout, a time unit) and returns a Kernel evaluated per row.
//
// # Values and NULL
//
// Implementations take and return types.Value. Unless a function says otherwise it is
// strict: a NULL argument gives NULL without running the body, as in Flink. AND, OR, the
// IS predicates, COALESCE, IFNULL, IF, CONCAT_WS and the other NULL-aware functions see
// their NULL arguments.
//
// Arithmetic follows Java as Flink's generated code does: integer overflow wraps, integer
// division truncates toward zero and fails on a zero divisor, DOUBLE division by zero
// gives an infinity or NaN. DECIMAL arithmetic is exact (big.Rat); the caller rounds the
// result to the DECIMAL(p, s) the planner inferred (exec/eval does, HALF_UP).
//
// # Time
//
// TIMESTAMP values are wall-clock microseconds with no zone; TIMESTAMP_LTZ values are
// instants (microseconds since the epoch, UTC). Everything that turns one into the other
// (CAST, DATE_FORMAT and EXTRACT on TIMESTAMP_LTZ, FLOOR(ltz TO DAY), FROM_UNIXTIME,
// UNIX_TIMESTAMP(string), CURRENT_DATE, LOCALTIMESTAMP ...) uses Context.Location, the
// session's table.local-time-zone. Flink defaults that to the JVM zone; pipesql defaults
// to UTC, so a job means the same thing on every machine. Nothing reads a global clock:
// CURRENT_TIMESTAMP, NOW, PROCTIME and friends call Context.Now.
//
// Date patterns (DATE_FORMAT, TO_TIMESTAMP, FROM_UNIXTIME, UNIX_TIMESTAMP, TO_DATE) are
// Java's: yyyy MM dd HH hh mm ss SSS a E z Z X and 'quoted text'. A pattern is compiled
// once into a Layout; formatting writes digits directly and does not allocate beyond the
// result string.
package funcs
