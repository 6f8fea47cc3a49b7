package parser

// This file is the contract between the parser and the planner: pipesql's own AST.
// No sqlparser type appears here. Every node knows where it starts (Pos), so that the
// planner's errors can name file, line and column too.

import "strings"

// Pos is a position in a script: file name, 1-based line and column (in runes), and
// the byte offset from the start of the script.
type Pos struct {
	File   string
	Line   int
	Col    int
	Offset int
}

// Node is any AST node.
type Node interface {
	Pos() Pos
}

// Statement is one statement of a script.
type Statement interface {
	Node
	stmt()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	expr()
}

// TableExpr is something a FROM clause reads: a table, a subquery, a window table function, a join.
type TableExpr interface {
	Node
	tableExpr()
}

// ObjectName is a possibly qualified name: [catalog.][database.]table, parts unquoted.
type ObjectName []string

// String joins the parts with dots, backquoting parts that are not plain identifiers.
func (n ObjectName) String() string {
	parts := make([]string, len(n))
	for i, p := range n {
		parts[i] = QuoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// Last returns the unqualified table name.
func (n ObjectName) Last() string {
	if len(n) == 0 {
		return ""
	}
	return n[len(n)-1]
}

// ---- Data types ----

// DataType is a Flink type as written: STRING, VARCHAR(10), DECIMAL(10, 2),
// TIMESTAMP(3), TIMESTAMP_LTZ(3) (also written TIMESTAMP(3) WITH LOCAL TIME ZONE),
// ARRAY<INT>, MAP<STRING, INT>, ROW<a INT, b STRING>.
type DataType struct {
	At      Pos
	Name    string     // upper case canonical name: STRING, VARCHAR, CHAR, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ, BYTES, VARBINARY, BINARY, ARRAY, MAP, ROW, MULTISET
	Params  []int      // VARCHAR(n), DECIMAL(p, s), TIMESTAMP(p); empty when not written
	Elems   []DataType // ARRAY<e>: one; MAP<k, v>: two; MULTISET<e>: one
	Fields  []RowField // ROW<...>
	NotNull bool
}

// RowField is one field of ROW<...>.
type RowField struct {
	Name    string
	Type    DataType
	Comment string
}

// ---- Statements ----

// CreateTable is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (...) [COMMENT '...'] [PARTITIONED BY (...)] WITH (...).
type CreateTable struct {
	At          Pos
	Name        ObjectName
	Temporary   bool
	IfNotExists bool
	Columns     []ColumnDef
	Watermark   *WatermarkDef // nil when absent
	PrimaryKey  *PrimaryKey   // nil when absent
	Comment     string
	PartitionBy []string
	PartitionAt Pos        // where PARTITIONED BY starts; zero when absent
	Options     []Option   // in the order written
	Like        *TableLike // nil when absent
	// AsQuery is the query of CREATE TABLE ... AS SELECT, nil when absent: the table
	// takes the query's columns and the query is written into it.
	AsQuery *Query
	AsAt    Pos // where AS starts
}

// TableLike is the LIKE clause of CREATE TABLE: the table whose definition the new one
// starts from, and how each part of it is merged.
type TableLike struct {
	At      Pos
	Source  ObjectName
	Options []LikeOption // in the order written
}

// LikeOption is one INCLUDING|EXCLUDING|OVERWRITING feature of a LIKE clause.
type LikeOption struct {
	At      Pos
	Mode    string // INCLUDING, EXCLUDING or OVERWRITING
	Feature string // ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS or WATERMARKS
}

// ColumnKind says how a column gets its value.
type ColumnKind int

const (
	PhysicalColumn ColumnKind = iota // name TYPE
	ComputedColumn                   // name AS expr
	MetadataColumn                   // name TYPE METADATA [FROM 'key'] [VIRTUAL]
)

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	At       Pos
	Name     string
	Kind     ColumnKind
	Type     *DataType // nil for computed columns
	Expr     Expr      // computed columns only
	Metadata string    // metadata columns: the key after FROM, or "" when the column name is the key
	Virtual  bool      // metadata columns: VIRTUAL (read only, not written by sinks)
	Comment  string
}

// WatermarkDef is WATERMARK FOR col AS expr.
type WatermarkDef struct {
	At     Pos
	Column string
	Expr   Expr
}

// PrimaryKey is [CONSTRAINT name] PRIMARY KEY (cols) NOT ENFORCED.
type PrimaryKey struct {
	At          Pos
	Name        string
	Columns     []string
	NotEnforced bool
}

// Option is one 'key' = 'value' of a WITH clause; the positions let the planner point at a bad key.
type Option struct {
	At    Pos // position of the key
	Key   string
	Value string
}

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] AS query.
type CreateView struct {
	At          Pos
	Name        ObjectName
	Temporary   bool
	IfNotExists bool
	Columns     []string
	Comment     string // COMMENT '...' before AS; "" when absent
	Query       *Query
}

// DropTable is DROP [TEMPORARY] TABLE [IF EXISTS] name.
type DropTable struct {
	At        Pos
	Name      ObjectName
	Temporary bool
	IfExists  bool
}

// DropView is DROP [TEMPORARY] VIEW [IF EXISTS] name.
type DropView struct {
	At        Pos
	Name      ObjectName
	Temporary bool
	IfExists  bool
}

// Set is SET 'key' = 'value', or SET alone (list the settings) when Key is "".
type Set struct {
	At    Pos
	Key   string
	Value string
}

// Reset is RESET 'key', or RESET alone (all keys) when Key is "".
type Reset struct {
	At  Pos
	Key string
}

// ShowKind says what SHOW lists.
type ShowKind int

const (
	ShowTables ShowKind = iota
	ShowViews
	ShowFunctions
	ShowJobs
	ShowCreateTable
	ShowCreateView
	ShowColumns
)

// Show is SHOW TABLES | VIEWS | FUNCTIONS | JOBS | CREATE TABLE name | CREATE VIEW name.
type Show struct {
	At   Pos
	What ShowKind
	Name ObjectName // SHOW CREATE TABLE/VIEW and SHOW COLUMNS only
	// Like is the [NOT] LIKE | ILIKE 'pattern' of SHOW TABLES, VIEWS, FUNCTIONS and
	// COLUMNS; nil without one.
	Like *ShowLike
}

// ShowLike is the pattern that filters what SHOW lists: SQL LIKE's % and _, matched
// ignoring case for ILIKE, negated by NOT.
type ShowLike struct {
	Pattern    string
	Not        bool
	IgnoreCase bool
}

// Describe is DESCRIBE name or DESC name.
type Describe struct {
	At   Pos
	Name ObjectName
}

// Explain is EXPLAIN [PLAN FOR] statement, where the statement is a query, INSERT or
// statement set. Flink's detail keywords (EXPLAIN CHANGELOG_MODE ...) are refused.
type Explain struct {
	At   Pos
	Stmt Statement
}

// Insert is INSERT INTO|OVERWRITE table [/*+ OPTIONS(...) */] [(cols)] query.
type Insert struct {
	At        Pos
	Table     ObjectName
	Overwrite bool
	// Options are the 'key' = 'value' pairs of OPTIONS hints after the table name: dynamic
	// table options for this write, in the order written; nil without a hint.
	Options []Option
	Columns []string
	Query   *Query
}

// QueryStatement is a bare query: SELECT ..., WITH ... SELECT ..., VALUES? (not supported).
type QueryStatement struct {
	At    Pos
	Query *Query
}

// StatementSet is EXECUTE STATEMENT SET BEGIN insert; ... END or BEGIN STATEMENT SET; insert; ... END.
type StatementSet struct {
	At      Pos
	Inserts []*Insert
}

// StopJob is STOP JOB 'id' [WITH SAVEPOINT] [WITH DRAIN].
type StopJob struct {
	At            Pos
	ID            string
	WithSavepoint bool
	WithDrain     bool
}

// Help is HELP.
type Help struct{ At Pos }

// Quit is QUIT or EXIT.
type Quit struct{ At Pos }

// ---- Queries ----

// Query is a full query: optional WITH, a body (SELECT or set operation), ORDER BY, LIMIT.
type Query struct {
	At      Pos
	With    []NamedQuery
	Body    QueryBody
	OrderBy []OrderItem
	Limit   Expr // nil when absent
}

// NamedQuery is one name AS (query) of a WITH clause.
type NamedQuery struct {
	At    Pos
	Name  string
	Query *Query
}

// QueryBody is a *Select or a *SetOp.
type QueryBody interface {
	Node
	queryBody()
}

// Select is SELECT [DISTINCT] items [FROM from] [WHERE] [GROUP BY] [HAVING].
type Select struct {
	At       Pos
	Distinct bool
	Items    []SelectItem
	From     TableExpr // nil for SELECT without FROM
	Where    Expr
	GroupBy  []Expr // may contain TUMBLE/HOP/SESSION(...) calls: the legacy group window syntax
	Having   Expr
	Windows  []NamedWindow // WINDOW w AS (...), ... (over.go)
	Qualify  Expr          // QUALIFY cond: a filter on the select list's OVER results
	// StateTTL is the STATE_TTL query hint after SELECT: a join input (table name or
	// alias) and the time its state is kept, in the order written.
	StateTTL []Option
}

// SetOp is left UNION [ALL] | INTERSECT | EXCEPT right.
type SetOp struct {
	At    Pos
	Op    string // UNION, INTERSECT, EXCEPT
	All   bool
	Left  QueryBody
	Right QueryBody
}

// SelectItem is expr [AS alias], or * / t.* (Expr is *Star).
type SelectItem struct {
	At    Pos
	Expr  Expr
	Alias string
}

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST].
type OrderItem struct {
	At    Pos
	Expr  Expr
	Desc  bool
	Nulls NullOrder
}

// NullOrder is where an ORDER BY item puts NULLs.
type NullOrder uint8

const (
	// NullsDefault is Flink's order: NULL first ascending, last descending (NULL is
	// the smallest value).
	NullsDefault NullOrder = iota
	NullsFirst
	NullsLast
)

func (n NullOrder) String() string {
	switch n {
	case NullsFirst:
		return "NULLS FIRST"
	case NullsLast:
		return "NULLS LAST"
	}
	return "default"
}

// NullsFirst reports whether the item puts NULL before every other value.
func (o OrderItem) NullsFirst() bool {
	return o.Nulls == NullsFirst || o.Nulls == NullsDefault && !o.Desc
}

// suffix is the item's direction and null order as written after its expression.
func (o OrderItem) suffix() string {
	s := ""
	if o.Desc {
		s = " DESC"
	}
	switch o.Nulls {
	case NullsFirst:
		s += " NULLS FIRST"
	case NullsLast:
		s += " NULLS LAST"
	}
	return s
}

// TableName is a table or view in FROM:
// name [/*+ OPTIONS(...) */] [FOR SYSTEM_TIME AS OF attr] [[AS] alias].
type TableName struct {
	At   Pos
	Name ObjectName
	// Options are the 'key' = 'value' pairs of OPTIONS hints after the name: dynamic
	// table options for this read, in the order written; nil without a hint.
	Options []Option
	// AsOf is the time attribute of FOR SYSTEM_TIME AS OF attr (a column of the table
	// joined before this one, e.g. o.order_time): the table is read as it was at that
	// time, in a temporal or lookup join. nil without the clause.
	AsOf  *Ident
	Alias string
}

// SubqueryTable is (query) [AS] alias in FROM.
type SubqueryTable struct {
	At    Pos
	Query *Query
	Alias string
}

// WindowTVF is a window table-valued function in FROM:
//
//	TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
//	TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
//	TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))
//
// Named arguments (DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => ...) are put in this order.
type WindowTVF struct {
	At      Pos
	Func    string    // TUMBLE, HOP, CUMULATE (SESSION is parsed and rejected by the planner)
	Input   TableExpr // TABLE t (a *TableName), or a subquery
	TimeCol string    // DESCRIPTOR(col)
	// PartitionBy are the columns of SESSION(TABLE t PARTITION BY a, b, ...).
	PartitionBy []string
	Args        []Expr // the interval arguments in positional order
	Alias       string
}

// Unnest is UNNEST(collection) [WITH ORDINALITY] [[AS] alias [(columns)]] in FROM, a
// table of the elements of an ARRAY (or the entries of a MAP) of each row of the tables
// joined before it: FROM t CROSS JOIN UNNEST(t.tags) AS u(tag).
type Unnest struct {
	At         Pos
	Args       []Expr
	Ordinality bool
	Alias      string
	Columns    []string // the column aliases; nil without a list
}

// Join is left [kind] JOIN right ON cond (parsed; the planner may reject it as unsupported).
type Join struct {
	At    Pos
	Kind  string // INNER, LEFT, RIGHT, FULL, CROSS
	Left  TableExpr
	Right TableExpr
	On    Expr
}

// ---- Expressions ----

// Ident is a column reference: col or t.col.
type Ident struct {
	At    Pos
	Parts []string
}

// Star is * or t.*.
type Star struct {
	At        Pos
	Qualifier string
}

// LitKind says which kind of literal.
type LitKind int

const (
	NumberLit    LitKind = iota // 42, 3.14, 1e3 (Text as written)
	StringLit                   // 'text' (Text unescaped)
	BoolLit                     // TRUE / FALSE (Text upper case)
	NullLit                     // NULL
	DateLit                     // DATE '2024-01-01' (Text is the string)
	TimeLit                     // TIME '12:00:00'
	TimestampLit                // TIMESTAMP '2024-01-01 00:00:00'
)

// Literal is a constant.
type Literal struct {
	At   Pos
	Kind LitKind
	Text string
}

// IntervalLit is INTERVAL '5' SECOND, INTERVAL '1' DAY, INTERVAL '10:30' MINUTE TO SECOND.
type IntervalLit struct {
	At      Pos
	Value   string // the quoted text, e.g. "5", "-1", "10:30"
	Unit    string // SECOND, MINUTE, HOUR, DAY, MONTH, YEAR (Flink also takes plurals; stored singular)
	ToUnit  string // the end unit of a range like MINUTE TO SECOND, or ""
	UnitPos Pos
}

// TimeUnit is a time unit used as a function argument: FLOOR(ts TO DAY), EXTRACT(DAY FROM ts),
// TIMESTAMPADD(DAY, 1, ts).
type TimeUnit struct {
	At   Pos
	Unit string
}

// FuncCall is name(args), COUNT(*) (Star true) or agg(DISTINCT x).
// Special forms are normalized to calls: FLOOR(x TO unit) and CEIL(x TO unit) are
// FLOOR/CEIL(x, TimeUnit); EXTRACT(unit FROM x) is EXTRACT(TimeUnit, x);
// TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) is TRIM(s) or TRIM_BOTH/TRIM_LEADING/TRIM_TRAILING(chars, s);
// SUBSTRING(s FROM a FOR b) is SUBSTRING(s, a, b).
type FuncCall struct {
	At       Pos
	Name     string // upper case
	Args     []Expr
	Distinct bool
	Star     bool
	Filter   Expr  // agg(x) FILTER (WHERE cond): the condition; nil when absent
	Over     *Over // f(...) OVER (...): the window; nil when absent
}

// Over is the window of f(...) OVER ([PARTITION BY exprs] [ORDER BY expr [ASC|DESC], ...]
// [ROWS|RANGE frame]), or f(...) OVER name, a window of the WINDOW clause (Name set, the
// rest empty).
type Over struct {
	At          Pos // the OVER keyword
	Name        string
	PartitionBy []Expr
	OrderBy     []OrderItem
	Frame       *Frame // nil when not written
}

// Constructor is ARRAY[a, b, ...] or MAP[k1, v1, k2, v2, ...]. ROW(a, b) and the implicit
// row (a, b) are a FuncCall named ROW.
type Constructor struct {
	At   Pos
	Kind string // ARRAY, MAP
	Args []Expr
}

// Subscript is x[index]: an element of an ARRAY (from 1) or the value of a MAP key.
type Subscript struct {
	At    Pos
	X     Expr
	Index Expr
}

// FieldAccess is x.field where x is not a name: a field of an element (a[1].f), of a
// call's result (f(x).f) or of a parenthesized expression ((CAST(r AS ROW<f INT>)).f). A
// dotted name such as t.r.f stays an Ident: which of its parts is the column is for
// the planner to resolve.
type FieldAccess struct {
	At    Pos
	X     Expr
	Field string
}

// Cast is CAST(x AS type) or TRY_CAST(x AS type).
type Cast struct {
	At   Pos
	X    Expr
	Type DataType
	Try  bool
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	At      Pos
	Operand Expr // nil for a searched CASE
	Whens   []When
	Else    Expr // nil when absent
}

// When is one WHEN cond THEN result.
type When struct {
	Cond   Expr
	Result Expr
}

// BinaryExpr is L op R with op one of + - * / % || = <> < <= > >= AND OR.
type BinaryExpr struct {
	At Pos
	Op string
	L  Expr
	R  Expr
}

// UnaryExpr is NOT x, -x or +x.
type UnaryExpr struct {
	At Pos
	Op string // NOT, -, +
	X  Expr
}

// InExpr is x [NOT] IN (list) or x [NOT] IN (subquery).
type InExpr struct {
	At       Pos
	X        Expr
	Not      bool
	List     []Expr
	Subquery *Query
}

// LikeExpr is x [NOT] LIKE pattern [ESCAPE esc] or x [NOT] SIMILAR TO pattern [ESCAPE esc].
type LikeExpr struct {
	At      Pos
	X       Expr
	Not     bool
	Pattern Expr
	Escape  Expr // nil when absent
	Similar bool // x [NOT] SIMILAR TO pattern
}

// IsExpr is x IS [NOT] NULL | TRUE | FALSE.
type IsExpr struct {
	At   Pos
	X    Expr
	Not  bool
	What string // NULL, TRUE, FALSE
}

// BetweenExpr is x [NOT] BETWEEN lo AND hi.
type BetweenExpr struct {
	At  Pos
	X   Expr
	Not bool
	Lo  Expr
	Hi  Expr
}

// SubqueryExpr is a scalar subquery (query) or EXISTS (query).
type SubqueryExpr struct {
	At     Pos
	Exists bool
	Query  *Query
}

// Pos implementations.
func (n *CreateTable) Pos() Pos    { return n.At }
func (n *CreateView) Pos() Pos     { return n.At }
func (n *DropTable) Pos() Pos      { return n.At }
func (n *DropView) Pos() Pos       { return n.At }
func (n *Set) Pos() Pos            { return n.At }
func (n *Reset) Pos() Pos          { return n.At }
func (n *Show) Pos() Pos           { return n.At }
func (n *Describe) Pos() Pos       { return n.At }
func (n *Explain) Pos() Pos        { return n.At }
func (n *Insert) Pos() Pos         { return n.At }
func (n *QueryStatement) Pos() Pos { return n.At }
func (n *StatementSet) Pos() Pos   { return n.At }
func (n *StopJob) Pos() Pos        { return n.At }
func (n *Help) Pos() Pos           { return n.At }
func (n *Quit) Pos() Pos           { return n.At }
func (n *Query) Pos() Pos          { return n.At }
func (n *Select) Pos() Pos         { return n.At }
func (n *SetOp) Pos() Pos          { return n.At }
func (n *TableName) Pos() Pos      { return n.At }
func (n *SubqueryTable) Pos() Pos  { return n.At }
func (n *WindowTVF) Pos() Pos      { return n.At }
func (n *Join) Pos() Pos           { return n.At }
func (n *Unnest) Pos() Pos         { return n.At }
func (n *Ident) Pos() Pos          { return n.At }
func (n *Star) Pos() Pos           { return n.At }
func (n *Literal) Pos() Pos        { return n.At }
func (n *IntervalLit) Pos() Pos    { return n.At }
func (n *TimeUnit) Pos() Pos       { return n.At }
func (n *FuncCall) Pos() Pos       { return n.At }
func (n *Cast) Pos() Pos           { return n.At }
func (n *Constructor) Pos() Pos    { return n.At }
func (n *Subscript) Pos() Pos      { return n.At }
func (n *FieldAccess) Pos() Pos    { return n.At }
func (n *Case) Pos() Pos           { return n.At }
func (n *BinaryExpr) Pos() Pos     { return n.At }
func (n *UnaryExpr) Pos() Pos      { return n.At }
func (n *InExpr) Pos() Pos         { return n.At }
func (n *LikeExpr) Pos() Pos       { return n.At }
func (n *IsExpr) Pos() Pos         { return n.At }
func (n *BetweenExpr) Pos() Pos    { return n.At }
func (n *SubqueryExpr) Pos() Pos   { return n.At }

func (*CreateTable) stmt()    {}
func (*CreateView) stmt()     {}
func (*DropTable) stmt()      {}
func (*DropView) stmt()       {}
func (*Set) stmt()            {}
func (*Reset) stmt()          {}
func (*Show) stmt()           {}
func (*Describe) stmt()       {}
func (*Explain) stmt()        {}
func (*Insert) stmt()         {}
func (*QueryStatement) stmt() {}
func (*StatementSet) stmt()   {}
func (*StopJob) stmt()        {}
func (*Help) stmt()           {}
func (*Quit) stmt()           {}

func (*Select) queryBody() {}
func (*SetOp) queryBody()  {}

func (*TableName) tableExpr()     {}
func (*SubqueryTable) tableExpr() {}
func (*WindowTVF) tableExpr()     {}
func (*Join) tableExpr()          {}
func (*Unnest) tableExpr()        {}

func (*Ident) expr()        {}
func (*Star) expr()         {}
func (*Literal) expr()      {}
func (*IntervalLit) expr()  {}
func (*TimeUnit) expr()     {}
func (*FuncCall) expr()     {}
func (*Cast) expr()         {}
func (*Constructor) expr()  {}
func (*Subscript) expr()    {}
func (*FieldAccess) expr()  {}
func (*Case) expr()         {}
func (*BinaryExpr) expr()   {}
func (*UnaryExpr) expr()    {}
func (*InExpr) expr()       {}
func (*LikeExpr) expr()     {}
func (*IsExpr) expr()       {}
func (*BetweenExpr) expr()  {}
func (*SubqueryExpr) expr() {}
