// Package parser reads Flink SQL scripts into pipesql's own syntax tree.
//
// It owns everything between the text of a job file and the planner: splitting a
// script into statements, parsing the statements a Flink SQL client accepts (CREATE
// TABLE ... WITH, CREATE VIEW, DROP, SET, RESET, SHOW, DESCRIBE, EXPLAIN, INSERT,
// queries, statement sets, STOP JOB, HELP, QUIT), the AST in ast.go, a canonical
// formatter, and positioned errors. Nothing outside this package sees a sqlparser type.
//
// # Statements and DDL
//
// A hand-written lexer turns the script into tokens that know their file, line, column
// and byte offset. Split and ParseScript cut the tokens at semicolons; a statement set
// (EXECUTE STATEMENT SET BEGIN ...; END, or the older BEGIN STATEMENT SET; ...; END)
// stays one statement although it holds semicolons. Everything except queries is parsed
// by recursive descent: CREATE TABLE with Flink's types, computed and metadata columns,
// watermarks, primary keys and options; the commands of the SQL client.
//
// # Queries: Flink syntax lowered onto sqlparser
//
// Queries go through github.com/xwb1989/sqlparser, a MySQL grammar, after their tokens
// are re-emitted as text it accepts (query.go explains the scheme). Identifiers and
// literals become placeholders named after the emitted token, so every leaf of the tree
// sqlparser returns leads back to the original token: its exact spelling and position.
// Flink-only constructs are parsed here and replaced by placeholders for prebuilt nodes:
// window table functions TABLE(TUMBLE|HOP|CUMULATE(...)) with positional or named
// arguments, INTERVAL literals with plural and range units, typed literals, CAST to Flink
// types, agg(x) FILTER (WHERE c), FLOOR/CEIL(x TO unit), EXTRACT(unit FROM x),
// SUBSTRING(s FROM a FOR b), TRIM(BOTH c FROM s), POSITION(a IN b), the || operator,
// niladic functions such as CURRENT_TIMESTAMP, FULL JOIN, WITH clauses, the nested-type
// syntax (ARRAY[...], MAP[...], element access x[i] and field access after it, UNNEST(...)
// [WITH ORDINALITY] AS t(cols) in FROM) and the SQL/JSON forms of JSON_OBJECT, JSON_ARRAY
// and JSON_VALUE ... RETURNING (json.go). A query with INTERSECT or EXCEPT is cut at its set
// operators and each operand lowered on its own, INTERSECT binding tighter (setop.go):
// sqlparser knows UNION only. A dotted name stays one Ident: whether t.r.f is
// a column of t and its field or a column's two fields is for the planner. Words that
// are MySQL keywords but not Flink ones (KEY, STATUS, DIV) stay identifiers; a word Flink
// reserves (USER, VALUE, DAY, TIMESTAMP: keywords.go) is refused bare wherever a name
// goes, in queries and DDL alike, with an error that says to back-quote it.
//
// Hints are tokens, not comments: OPTIONS('k' = 'v') right after a table name (in FROM,
// in TABLE t of a window function, after INSERT INTO t) is carried on the TableName or
// Insert as dynamic table options; Flink's other hints (BROADCAST, SHUFFLE_HASH,
// SHUFFLE_MERGE, NEST_LOOP, LOOKUP, STATE_TTL) are refused by name, and a hint anywhere
// else is an error (hint.go). Plain comments, /* ... */ and --, are dropped.
//
// When sqlparser rejects the text, the failing emitted token maps back to the source
// token, and the message lists what would have been accepted there, found by asking
// sqlparser again with each candidate in its place. sqlparser is never trusted not to
// panic: a panic becomes an error at the query.
//
// # Formatting and errors
//
// Format prints any node as canonical Flink SQL; parsing its output gives the same tree,
// so formatting is idempotent. QuoteIdent backquotes identifiers only when needed.
// Every error is an *Error carrying the position and, from ParseScript, the source line
// for a caret; errors.Is tells syntax errors (ErrSyntax) from recognized but unsupported
// Flink features (ErrUnsupported). The planner reuses *Error for its own messages.
package parser
