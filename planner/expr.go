package planner

// This file and plan.go are the contract between the planner and exec: bound, typed
// expressions and physical plan nodes. exec compiles them; it never sees the AST.

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/types"
)

// Expr is a bound, typed scalar expression over the rows of one input schema.
type Expr interface {
	Type() types.Type
	String() string
}

// ColumnRef reads column Index of the input row.
type ColumnRef struct {
	Index int
	Name  string
	T     types.Type
}

// Literal is a constant value of type T.
type Literal struct {
	Value types.Value
	T     types.Type
}

// Call applies a scalar function or operator. Func is the canonical upper-case name;
// operators are named by their symbol or keyword:
//
//	arithmetic  + - * / %  and NEG (unary minus)
//	comparison  = <> < <= > >=
//	logic       AND OR NOT (three-valued)
//	predicates  IS NULL, IS NOT NULL, IS TRUE, IS NOT TRUE, IS FALSE, IS NOT FALSE,
//	            LIKE, NOT LIKE (args: x, pattern[, escape]), BETWEEN, NOT BETWEEN (x, lo, hi)
//	strings     || and the functions LOWER UPPER CONCAT SUBSTRING TRIM LTRIM RTRIM CHAR_LENGTH
//	            REGEXP_EXTRACT REPLACE ...
//	time        DATE_FORMAT TO_TIMESTAMP TO_TIMESTAMP_LTZ FROM_UNIXTIME UNIX_TIMESTAMP
//	            CURRENT_TIMESTAMP LOCALTIMESTAMP PROCTIME CURRENT_DATE, FLOOR/CEIL (x, unit),
//	            EXTRACT (unit, x)
//	other       IF COALESCE NULLIF JSON_VALUE ...
//
// Time units (FLOOR(ts TO DAY)) arrive as a string Literal argument holding the unit name.
type Call struct {
	Func string
	Args []Expr
	T    types.Type
}

// Cast converts X to T; Try makes a failed conversion NULL instead of an error.
type Cast struct {
	X   Expr
	T   types.Type
	Try bool
}

// Case is a searched CASE: the first When whose Cond is TRUE gives the result, else Else
// (a NULL literal when the query had no ELSE). A simple CASE x WHEN v is bound as x = v.
type Case struct {
	Whens []CaseWhen
	Else  Expr
	T     types.Type
}

// CaseWhen is one WHEN cond THEN result.
type CaseWhen struct {
	Cond   Expr
	Result Expr
}

// In is X [NOT] IN (List).
type In struct {
	X    Expr
	List []Expr
	Not  bool
}

func (e *ColumnRef) Type() types.Type { return e.T }
func (e *Literal) Type() types.Type   { return e.T }
func (e *Call) Type() types.Type      { return e.T }
func (e *Cast) Type() types.Type      { return e.T }
func (e *Case) Type() types.Type      { return e.T }
func (e *In) Type() types.Type        { return types.TypeBoolean }

// String forms are what EXPLAIN prints: $index:name for columns, SQL-like for the rest.
func (e *ColumnRef) String() string { return fmt.Sprintf("$%d:%s", e.Index, e.Name) }

func (e *Literal) String() string {
	switch {
	case e.Value.IsNull():
		return "NULL"
	case e.T.IsString():
		return "'" + strings.ReplaceAll(e.Value.Str(), "'", "''") + "'"
	case e.T.Kind == types.IntervalDayTime || e.T.Kind == types.IntervalYearMonth:
		return "INTERVAL '" + e.Value.String() + "'"
	}
	return e.Value.String()
}

func (e *Call) String() string {
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = a.String()
	}
	if s, ok := formatNested(e, args); ok {
		return s
	}
	switch {
	case len(args) == 2 && isInfix(e.Func):
		return "(" + args[0] + " " + e.Func + " " + args[1] + ")"
	case len(args) == 1 && strings.HasPrefix(e.Func, "IS "):
		return "(" + args[0] + " " + e.Func + ")"
	case e.Func == "NOT" && len(args) == 1:
		return "NOT " + args[0]
	case e.Func == "NEG" && len(args) == 1:
		return "-" + args[0]
	}
	return e.Func + "(" + strings.Join(args, ", ") + ")"
}

func isInfix(f string) bool {
	switch f {
	case "+", "-", "*", "/", "%", "||", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "LIKE", "NOT LIKE",
		"SIMILAR TO", "NOT SIMILAR TO":
		return true
	}
	return false
}

func (e *Cast) String() string {
	name := "CAST"
	if e.Try {
		name = "TRY_CAST"
	}
	return fmt.Sprintf("%s(%s AS %s)", name, e.X, e.T.Nullable())
}

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Result)
	}
	if e.Else != nil {
		fmt.Fprintf(&b, " ELSE %s", e.Else)
	}
	b.WriteString(" END")
	return b.String()
}

func (e *In) String() string {
	items := make([]string, len(e.List))
	for i, a := range e.List {
		items[i] = a.String()
	}
	op := "IN"
	if e.Not {
		op = "NOT IN"
	}
	return fmt.Sprintf("(%s %s (%s))", e.X, op, strings.Join(items, ", "))
}

var (
	_ Expr = (*ColumnRef)(nil)
	_ Expr = (*Literal)(nil)
	_ Expr = (*Call)(nil)
	_ Expr = (*Cast)(nil)
	_ Expr = (*Case)(nil)
	_ Expr = (*In)(nil)
)
