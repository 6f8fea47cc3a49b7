// Package eval compiles the planner's bound expressions (planner.Expr) into closures that
// evaluate one row at a time, the inner loop of every Calc, filter, watermark and
// aggregate-argument in a pipesql job.
//
// # What compiling buys
//
// Compile walks an expression once. Function calls are bound to their funcs.Kernel with
// the constant arguments known, so a LIKE or REGEXP pattern, a DATE_FORMAT layout or a
// FLOOR unit written as a literal is compiled once and a bad one is reported before the
// job starts. Deterministic calls over literals are folded into constants. Column
// references, integer comparisons, IS NULL, AND and OR get dedicated closures; AND, OR,
// IF, CASE, COALESCE and IFNULL evaluate lazily, so IF(x <> 0, 1 / x, 0) never divides by
// zero. An IN list of literals becomes a hash set.
//
// # Types
//
// Each compiled node produces values of the type the planner gave the expression: a
// function whose natural result kind differs (an INT branch of a DECIMAL CASE, an exact
// DECIMAL quotient) is converted, DECIMALs rounded HALF_UP to the planned scale.
//
// # Errors and time
//
// A runtime error names the expression it came from, e.g.
// `CAST($2:amount AS INT): cannot parse "abc" as INT` (an *ExprError). TRY_CAST turns a
// failed conversion into NULL instead. Env carries table.local-time-zone and the clock:
// nothing here reads the machine's time, so tests pin Now and get the same answers.
//
// Evaluators hold no per-row state and are safe for concurrent use.
package eval
