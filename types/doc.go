// Package types holds pipesql's SQL types and values: the vocabulary every other package
// shares, so that none of them depends on another's representation.
//
// # Types
//
// Type is a Flink logical type (STRING, BIGINT, TIMESTAMP(3), TIMESTAMP_LTZ(3), ARRAY<INT>,
// ROW<...>, ...) with its nullability and, for timestamps, whether the column is a time
// attribute (rowtime or proctime). Type.String prints it the way Flink's DESCRIBE does.
//
// # Values
//
// Value is one SQL value in a small struct, copied by value, with no allocation for
// scalars. Timestamps are int64 microseconds: TIMESTAMP counts the wall clock as if it were
// UTC, TIMESTAMP_LTZ counts an instant since the Unix epoch; table.local-time-zone converts
// between them. Row is a record: values in schema order.
//
// # Dates, times and encodings
//
// civil.go is the one proleptic Gregorian calendar (days <-> year, month, day) and the
// one parser and printer of DATE, TIME and TIMESTAMP text, for SQL literals, CAST and
// the JSON and CSV formats alike; a Syntax says which spellings a caller accepts. It
// reads a string or the []byte of a record without allocating.
//
// encoding.go is the one byte encoding of a Value, for checkpointed state, group keys
// and distinct-value identities; an Encoding names the variants they use.
package types
