// Package planner turns parsed Flink SQL into what exec runs: it keeps the catalog of
// tables and views and the SET options of a session, validates every CREATE TABLE against
// its connector's declared options, resolves and types every expression, and plans
// INSERT and SELECT statements into physical plans that EXPLAIN prints.
//
// # Sessions
//
// A Session is the state a CLI run or a shell keeps between statements. Apply runs
// catalog and settings statements (CREATE/DROP TABLE and VIEW, SET, RESET); Plan turns
// INSERTs, statement sets and queries into a Program; Explain prints a plan; Describe and
// ShowCreate answer DESCRIBE and SHOW CREATE.
//
// # Errors
//
// Every error about a place in a script is a *parser.Error carrying file, line and column,
// and matches one of the sentinel errors of errors.go with errors.Is. Unknown names
// (tables, columns, functions, connectors, options, metadata keys, settings) are answered
// with the closest valid name: "unknown option 'scan.topic-partition-discover.interval'
// for connector 'kafka': did you mean 'scan.topic-partition-discovery.interval'?".
// Valid Flink SQL that pipesql does not run says so: "unsupported: interval join without
// an upper bound: o.order_time - s.ship_time is bounded only from below; ...".
//
// # Plans
//
// A plan is a tree whose leaves are the scans (a DAG in Flink's words: a Join has two
// inputs, a Union any number); each input is read by a scan of its own. Binding builds a
// logical plan out of the physical node types of plan.go, with each table read as a whole. Optimization then prunes it from the root down, so that a
// TableSourceScan decodes only the columns the query reads (projection pushed into the
// source) and computed columns are computed only when used, and merges adjacent Calcs.
// The watermark is assigned right above the scan and its computed columns, before any
// filter, so that filtered-out rows still advance event time.
//
// A GROUP BY over window_start and window_end of a window table function (TUMBLE, HOP,
// CUMULATE), or a legacy GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size), is a
// WindowAggregate: insert-only, one row per window and key once the watermark passes the
// window end. Any other GROUP BY is a GroupAggregate with an updating changelog, which
// only sinks that accept updates (print, blackhole, upsert-kafka) may consume. Each
// aggregate carries the kind of state exec keeps for it: COUNT(DISTINCT user_id) over a
// STRING is a roaring bitmap of dictionary-encoded ids (a value set in a SESSION window,
// whose sessions merge). GROUPING SETS, ROLLUP and CUBE put an Expand, which emits each
// row once per set with the grouping id $e, below the GroupAggregate, or below the
// WindowAggregate over a window table function's input (grouping.go).
//
// A JOIN ... ON with an equality between the two sides is a regular Join over an
// Exchange(distribution=[hash[keys]]) on each side, its other conditions evaluated on
// each pair; outer joins are updating. UNION ALL is a Union over inputs cast to each
// column's common type, UNION a DISTINCT over it (join.go); INTERSECT and EXCEPT [ALL]
// count each input's rows per distinct row in a GroupAggregate over such a Union, as
// Flink rewrites the ALL forms (set_ops.go). Bounds on the distance
// between both sides' time attributes make an IntervalJoin (interval_join.go: append-only,
// state kept as long as the bounds and the watermark require, time attributes kept); a
// join of two window table functions over the same window, on window_start and
// window_end, a WindowJoin (window_join.go); IN (SELECT ...) and [NOT] EXISTS in WHERE a
// SemiJoin, EXPLAINed as Join(joinType=[LeftSemiJoin|LeftAntiJoin]) (semi_join.go); under
// OR, a LEFT JOIN with the subquery's distinct keys and a marker (subquery_or.go).
// Regular joins and semi/anti joins take updating inputs (their output is updating
// then); interval joins, window joins and NOT IN's null-aware anti join need insert-only
// ones. FOR SYSTEM_TIME AS OF an event-time attribute
// against a versioned table is a TemporalJoin (temporal_join.go). Joins without an
// equality are refused.
//
// ROW_NUMBER, RANK and DENSE_RANK OVER (PARTITION BY ... ORDER BY ...) run only as
// Flink runs them: in a subquery filtered on the rank by the query around it (rn <= N,
// rn BETWEEN M AND N, ...), planned as a Rank (AppendFastStrategy over an insert-only
// input, RetractStrategy over an updating one) or, for ROW_NUMBER = 1 ordered by a time
// attribute with the rank not selected, a Deduplicate (rank.go). Both are updating but
// for keeping the first row by processing time. A Top-N partitioned by the window columns
// of a window aggregate or of an event-time window table function is a WindowRank,
// insert-only, and ROW_NUMBER = 1 over the table function ordered by its time attribute
// a WindowDeduplicate (window_rank.go). QUALIFY is planned
// as the query without it in a subquery, filtered (over.go).
//
// Other OVER calls are OVER aggregates (over.go): a Calc, an OverAggregate that appends
// one column per call (COUNT, SUM, AVG, MIN, MAX, also DISTINCT, FIRST_VALUE, LAST_VALUE,
// LAG) over the row's ROWS or RANGE frame, and a Calc for the select list; WINDOW w AS (...) is resolved
// first. Flink's streaming restrictions are errors at their position. SESSION windows
// (session_window.go) are a WindowAggregate over a SessionWindow.
//
// A query's ORDER BY whose first key is an ascending event-time attribute is a
// TemporalSort (sort.go), insert-only, with LIMIT planned above it; every other ORDER BY
// is refused with Flink's reason.
//
// Nested values (nested.go, unnest.go): a dotted name is resolved as Calcite resolves it,
// the table qualifier first, then the column, then the fields of its ROW type, and a field
// is read by a "." call holding the field's position; a[i] and m[k] are ITEM calls, the
// constructors ARRAY, MAP and ROW calls of those names, all printed as SQL by EXPLAIN.
// FROM t CROSS JOIN UNNEST(t.arr) is a Correlate node over t's plan: stateless, it keeps
// its input's changelog and time attributes. CREATE TABLE refuses a nested column its
// format cannot read (csv has no MAP). A MULTISET<T> is a MAP<T, INT NOT NULL> of each
// element's count marked Multiset (types.MultisetType), as Flink holds one, so formats
// and printing treat it as that map; COLLECT returns one, CARDINALITY sums its counts and
// UNNEST repeats each element by its count.
//
// An OPTIONS hint on a table in FROM or INSERT INTO (Flink's dynamic table options) is
// merged over the table's WITH options for that one scan or sink, which is validated
// again as CREATE TABLE is (hints.go); EXPLAIN shows it as hints=[OPTIONS(...)].
//
// Windows are aligned in table.local-time-zone, which defaults to UTC so that a job
// means the same everywhere (Flink defaults to the JVM's zone).
//
// Program.Fingerprint hashes what shapes a plan's state (sources, windows, keys and
// aggregates traced back to source columns, state kinds), so that a restart can tell
// whether a checkpoint belongs to the plan it is about to run.
package planner
