package planner

import (
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Node is a physical plan node. Nodes are immutable once planned; exec turns each into
// an operator. Rows flow from the leaves (scans) to the root (a sink, or the collect
// node of a SELECT).
type Node interface {
	Children() []Node
	Schema() types.Schema
	// Explain is the one-line description of this node in EXPLAIN's tree, without children.
	Explain() string
}

// Changelog says what kinds of rows a node emits.
type Changelog int

const (
	InsertOnly Changelog = iota // +I only (append stream; window aggregates)
	Updating                    // +I, -U, +U, -D (non-windowed aggregates)
	// Upsert is +I/+U of the latest row per key and -D, without -U: an upsert scan, below
	// the ChangelogNormalize that makes it Updating (changelog.go).
	Upsert
)

// Program is everything one job runs: one or more pipelines (a statement set has several)
// and the settings they run with.
type Program struct {
	Pipelines []*Pipeline
	Settings  map[string]string // the SET options in force (table.*, execution.*, ...)
	// Fingerprint identifies the plan's state layout: the same query gives the same value,
	// a change to anything that shapes state (grouping, aggregates, windows, sources) gives another.
	Fingerprint string
}

// Pipeline is one INSERT INTO (Sink root) or one SELECT (Collect root).
type Pipeline struct {
	Root Node
	// Statement is the canonical SQL of the statement, for job names and SHOW JOBS.
	Statement string
}

// TableSourceScan reads a table through its connector. The connector decodes only
// Produce (projection pushed into the source). Computed columns, the watermark and
// filters are separate nodes above it; exec may fuse them with the scan into one task.
type TableSourceScan struct {
	Table     string
	Connector *connectors.Factory
	Info      connectors.TableInfo
	Produce   []connectors.ProducedColumn
	Out       types.Schema // Produce as a schema
	// Hint is the OPTIONS hint of this read as EXPLAIN shows it, "" without one; its
	// options are already in Info.Options.
	Hint string
	// Changelog is what the connector emits (connectors.ChangelogMode).
	Changelog Changelog
}

// WatermarkAssigner assigns event time: for each source split, the watermark is the
// largest value of Expr seen (minus nothing: Expr already subtracts the delay), and the
// node's watermark is the minimum over active splits. Splits that sent nothing for
// IdleTimeout (0 = never idle) stop holding the watermark back.
type WatermarkAssigner struct {
	Input       Node
	RowtimeCol  int  // index of the rowtime column in the input
	Expr        Expr // WATERMARK FOR col AS <Expr>, bound over the input
	IdleTimeout time.Duration
}

// Calc computes Projections over each input row that passes Filter (nil: all rows pass).
type Calc struct {
	Input       Node
	Projections []Expr
	Filter      Expr
	Out         types.Schema
}

// WindowKind is the kind of a time window.
type WindowKind int

const (
	Tumble WindowKind = iota
	Hop
	Cumulate
	SessionWindow // Size is the gap (session_window.go)
)

func (k WindowKind) String() string { return [...]string{"TUMBLE", "HOP", "CUMULATE", "SESSION"}[k] }

// Window describes a time window over the event-time column TimeCol of the input.
// Windows are aligned to the epoch in table.local-time-zone, shifted by Offset, so that a
// 1-day window in Asia/Shanghai starts at 16:00 UTC. TimeCol must be a rowtime attribute
// (processing time windows use a PROCTIME() column and fire on the wall clock).
type Window struct {
	Kind     WindowKind
	TimeCol  int
	Size     time.Duration
	Slide    time.Duration // HOP: slide; CUMULATE: step; TUMBLE: equal to Size
	Offset   time.Duration
	ProcTime bool
	// Location is table.local-time-zone, used to align windows over TIMESTAMP_LTZ columns
	// (TIMESTAMP columns are wall-clock already).
	Location *time.Location
}

// AggFunc is an aggregate function.
type AggFunc string

const (
	AggCount         AggFunc = "COUNT" // COUNT(x): non-null x; COUNT(*) has no Arg
	AggSum           AggFunc = "SUM"   // NULL when no non-null input
	AggMin           AggFunc = "MIN"   // NULL when no non-null input
	AggMax           AggFunc = "MAX"   // NULL when no non-null input
	AggAvg           AggFunc = "AVG"   // integer AVG truncates, as Flink's does
	AggApproxCountDi AggFunc = "APPROX_COUNT_DISTINCT"
	AggCollect       AggFunc = "COLLECT" // the MULTISET of the non-null values; empty when none
	// The aggregates of the input's order (arrival order, as Flink's): NULLs ignored but
	// by ARRAY_AGG, NULL when there is no value.
	AggFirstValue AggFunc = "FIRST_VALUE" // the first non-null value
	AggLastValue  AggFunc = "LAST_VALUE"  // the last non-null value
	AggListAgg    AggFunc = "LISTAGG"     // the non-null strings joined by Separator
	AggArrayAgg   AggFunc = "ARRAY_AGG"   // an ARRAY of the values, NULLs included
)

// StateKind says how an aggregate keeps its state; EXPLAIN prints it.
type StateKind string

const (
	StateCounter        StateKind = "counter"
	StateSum            StateKind = "sum"
	StateMinMax         StateKind = "min/max value"
	StateAvg            StateKind = "sum and count"
	StateRoaring32      StateKind = "roaring bitmap"              // integer keys that fit 32 bits (INT and smaller)
	StateRoaring64      StateKind = "roaring64 bitmap"            // BIGINT keys
	StateRoaringDict    StateKind = "roaring bitmap + dictionary" // string and other keys, dictionary-encoded to dense ids
	StateDistinctValues StateKind = "distinct value set"          // DISTINCT over types with no exact dense encoding
	// StateRetractMultiset: MIN/MAX and DISTINCT aggregates over an updating input keep
	// each value with its count, so that a retracted value can be taken back.
	StateRetractMultiset StateKind = "value counts"
	// StateValue: FIRST_VALUE and LAST_VALUE over an insert-only input keep one value.
	StateValue StateKind = "value"
	// StateValueList: LISTAGG, ARRAY_AGG, and FIRST_VALUE and LAST_VALUE over an updating
	// input, keep the values in arrival order.
	StateValueList StateKind = "value list"
)

// AggCall is one aggregate in an aggregation node.
type AggCall struct {
	Func     AggFunc
	Arg      int // input column of the argument, -1 for COUNT(*)
	Distinct bool
	Filter   int // input column of a BOOLEAN FILTER (WHERE ...) condition, -1 when none
	T        types.Type
	State    StateKind
	Name     string // output column name
	// Separator is LISTAGG's, ',' when not written.
	Separator string
}

// WindowAggregate groups rows by Keys within each window and emits one row per window and
// key when the watermark passes the window end (CUMULATE: at each step end). Its output is
// the keys, then the aggregates, then window_start, window_end, window_time (insert-only).
// Late rows (for windows that already fired) are dropped and counted.
type WindowAggregate struct {
	Input  Node
	Window Window
	Keys   []int // input columns
	Aggs   []AggCall
	Out    types.Schema
}

// GroupAggregate is a non-windowed GROUP BY: it emits an updating changelog, a -U/+U pair
// each time a group's result changes (+I for a new group).
type GroupAggregate struct {
	Input Node
	Keys  []int
	Aggs  []AggCall
	Out   types.Schema
	// Retract is set when the input is updating: the aggregates take back -U/-D rows
	// (state kinds that can), and a group whose rows are all retracted is deleted (-D).
	Retract bool
}

// WindowTableFunction adds window_start, window_end and window_time to each row, once per
// window the row belongs to (TABLE(TUMBLE(...)) selected without aggregation).
type WindowTableFunction struct {
	Input  Node
	Window Window
	Out    types.Schema
}

// Values emits constant rows (SELECT without FROM), then ends.
type Values struct {
	Rows [][]Expr
	Out  types.Schema
}

// Sink writes its input to a table.
type Sink struct {
	Input     Node
	Table     string
	Connector *connectors.Factory
	Info      connectors.TableInfo
	Changelog Changelog
	Out       types.Schema // the columns written, in the table's order
	// Written describes each column of Out: a physical column (MetadataKey "") or a
	// persisted metadata column the connector writes under MetadataKey (Kafka's headers).
	Written []connectors.ProducedColumn
	// Hint is the OPTIONS hint of this write as EXPLAIN shows it, "" without one; its
	// options are already in Info.Options.
	Hint string
}

// Limit passes the first N rows of its insert-only input and then ends the pipeline
// (SELECT ... LIMIT n, typical in the shell to peek at a stream).
type Limit struct {
	Input Node
	N     int64
}

// Collect is the root of an interactive SELECT: rows go back to the client (shell or CLI).
type Collect struct {
	Input     Node
	Changelog Changelog
}

func (n *TableSourceScan) Children() []Node     { return nil }
func (n *WatermarkAssigner) Children() []Node   { return []Node{n.Input} }
func (n *Calc) Children() []Node                { return []Node{n.Input} }
func (n *WindowAggregate) Children() []Node     { return []Node{n.Input} }
func (n *GroupAggregate) Children() []Node      { return []Node{n.Input} }
func (n *WindowTableFunction) Children() []Node { return []Node{n.Input} }
func (n *Values) Children() []Node              { return nil }
func (n *Sink) Children() []Node                { return []Node{n.Input} }
func (n *Collect) Children() []Node             { return []Node{n.Input} }
func (n *Limit) Children() []Node               { return []Node{n.Input} }

func (n *TableSourceScan) Schema() types.Schema     { return n.Out }
func (n *WatermarkAssigner) Schema() types.Schema   { return n.Input.Schema() }
func (n *Calc) Schema() types.Schema                { return n.Out }
func (n *WindowAggregate) Schema() types.Schema     { return n.Out }
func (n *GroupAggregate) Schema() types.Schema      { return n.Out }
func (n *WindowTableFunction) Schema() types.Schema { return n.Out }
func (n *Values) Schema() types.Schema              { return n.Out }
func (n *Sink) Schema() types.Schema                { return n.Out }
func (n *Collect) Schema() types.Schema             { return n.Input.Schema() }
func (n *Limit) Schema() types.Schema               { return n.Input.Schema() }

// Union is UNION ALL: the rows of every input, in no particular order across inputs.
// The inputs have the schema Out (the planner casts them to the unified types).
type Union struct {
	Inputs []Node
	Out    types.Schema
}

// JoinType is the kind of a regular join, named as Flink's EXPLAIN names it.
type JoinType int

const (
	InnerJoin JoinType = iota
	LeftOuterJoin
	RightOuterJoin
	FullOuterJoin
	// LeftSemiJoin and LeftAntiJoin keep the left rows that have (have not) a match, as
	// window joins run IN/EXISTS (NOT IN/NOT EXISTS) over windows (window_semi_join.go).
	LeftSemiJoin
	LeftAntiJoin
)

func (t JoinType) String() string {
	return [...]string{"InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin"}[t]
}

// Semi reports whether the join keeps left rows only (a semi or anti join).
func (t JoinType) Semi() bool { return t == LeftSemiJoin || t == LeftAntiJoin }

// LeftOuter reports whether unmatched left rows are emitted, null-padded.
func (t JoinType) LeftOuter() bool { return t == LeftOuterJoin || t == FullOuterJoin }

// RightOuter reports whether unmatched right rows are emitted, null-padded.
func (t JoinType) RightOuter() bool { return t == RightOuterJoin || t == FullOuterJoin }

// Join is a regular (unbounded) equi-join of two append-only inputs: both sides are kept
// in state by join key, and each row is joined with the rows of the other side that
// arrived before it. Its output is the left columns then the right ones. An outer join
// emits an unmatched row null-padded and retracts it (-D) when its first match
// arrives, so its changelog is updating.
type Join struct {
	Left, Right Node
	Type        JoinType
	// LeftKeys[i] = RightKeys[i] are the equality conditions (columns of each input);
	// KeyTypes[i] is the type both sides are compared in.
	LeftKeys, RightKeys []int
	KeyTypes            []types.Type
	// Where is the rest of the ON condition, over the joined row (left columns, then
	// right), nil when the ON condition is only equalities.
	Where Expr
	// Condition is the whole ON condition over the joined row, as EXPLAIN shows it.
	Condition Expr
	Out       types.Schema
	// LeftTTL and RightTTL are the STATE_TTL hint's retention of each side's rows, 0
	// when the hint does not name the side (table.exec.state.ttl applies).
	LeftTTL, RightTTL time.Duration
}

// Exchange distributes its input by the hash of Keys. pipesql runs each operator once,
// so it moves nothing; it shows in EXPLAIN where Flink's plan has it, and says by what
// the operator above keeps its state.
type Exchange struct {
	Input Node
	Keys  []int
}

func (n *Union) Children() []Node    { return n.Inputs }
func (n *Join) Children() []Node     { return []Node{n.Left, n.Right} }
func (n *Exchange) Children() []Node { return []Node{n.Input} }

func (n *Union) Schema() types.Schema    { return n.Out }
func (n *Join) Schema() types.Schema     { return n.Out }
func (n *Exchange) Schema() types.Schema { return n.Input.Schema() }
