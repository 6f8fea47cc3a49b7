// Package difftest checks pipesql's results against an independent SQL engine.
//
// A generator makes random tables (INT, BIGINT, DOUBLE, STRING over small alphabets so
// that groups collide, BOOLEAN, NULLs in every nullable column, and a TIMESTAMP(3) event
// time with a WATERMARK) and random queries over the SQL subset pipesql runs:
// projections with arithmetic, CASE, CAST, COALESCE and string functions; WHERE with
// NULLs, AND/OR/NOT, IN, BETWEEN, LIKE and IS [NOT] NULL; GROUP BY with COUNT, SUM,
// MIN, MAX and AVG, DISTINCT and FILTER (WHERE ...); HAVING; SELECT DISTINCT; TUMBLE,
// HOP and CUMULATE window aggregates; subqueries in FROM and WITH.
//
// Each query is rendered twice from one expression tree: in Flink SQL, which pipesql
// runs in-process over the table's file (a bounded filesystem source), and in DuckDB's
// dialect, translated where the two engines mean different things by the same text
// (integer division and AVG over integers keep the integer type in Flink, a streaming
// global aggregate over no rows emits nothing, CAST from DOUBLE to INT truncates, ...).
// Flink's semantics are the reference. The final state of pipesql's changelog (+I, -U,
// +U, -D applied to a multiset) must equal DuckDB's result as a multiset of rows, DOUBLEs
// compared with a relative tolerance.
//
// Tables vary in format (JSON, CSV with a NULL literal), number of files, size (some
// longer than a source poll, so that windows fire before the end), watermark delay, and
// event time: a TIMESTAMP(3), or a TIMESTAMP_LTZ(3) computed from epoch milliseconds in a
// zone with a fixed offset. Each query runs with a random operator batch size, and a
// fifth of them with a checkpoint every millisecond.
//
// # Running
//
// DuckDB is linked only into this package's tests, never into the pipesql binary. The
// short run (300 queries from a fixed seed) is part of go test ./...; the long one runs
// under the build tag soak, 3000 queries by default, with a random seed:
//
//	go test -tags soak -run Soak -v ./internal/difftest/ [-difftest.queries=N]
//
// PIPESQL_DIFFTEST_SEED (or -difftest.seed) sets the seed of either run; every failure
// prints it with the table's DDL and data, both queries and both results.
//
// # Switched off
//
// Features switches each construct; the tests' features() turns off what pipesql
// rejects as unsupported and what shows an open bug, each with the reason.
package difftest
