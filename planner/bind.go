package planner

import (
	"errors"
	"strings"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// binder turns AST expressions into typed Exprs over the columns of a scope.
type binder struct {
	scope *scope
	// clause names where the expression is ("WHERE", "GROUP BY", "a computed column"),
	// for the error that refuses an aggregate there.
	clause string
	// agg is set while binding the select list and HAVING of an aggregating query: then
	// column references must be grouped, and aggregate calls are collected.
	agg *aggContext
	// over maps the OVER calls of a select list to the OverAggregate's columns (over.go).
	over map[*parser.FuncCall]Expr
}

// clauseAggArg is the clause of an aggregate's argument, where another aggregate is nested.
const clauseAggArg = "an aggregate argument"

// clauseAggFilter is the clause of an aggregate's FILTER (WHERE ...) condition.
const clauseAggFilter = "a FILTER condition"

func (b *binder) bind(e parser.Expr) (Expr, error) {
	if b.agg != nil {
		if x, ok := b.agg.match(e); ok {
			return x, nil
		}
	}
	switch x := e.(type) {
	case *parser.Ident:
		i, fields, err := b.scope.resolvePath(x)
		if err != nil {
			return nil, err
		}
		if b.agg != nil {
			return nil, errAt(x.At, ErrNotGrouped, "expression '%s' is not being grouped", strings.Join(x.Parts, "."))
		}
		c := b.scope.cols[i]
		ref := &ColumnRef{Index: i, Name: c.name, T: c.t}
		if len(fields) == 0 {
			return ref, nil
		}
		return bindFields(x.At, ref, strings.Join(x.Parts[:len(x.Parts)-len(fields)], "."), fields)
	case *parser.Constructor, *parser.Subscript, *parser.FieldAccess:
		return b.bindNested(x)
	case *parser.Star:
		return nil, errAt(x.At, ErrUnsupported, "'*' is only allowed in the select list and in COUNT(*)")
	case *parser.Literal:
		return bindLiteral(x)
	case *parser.IntervalLit:
		return bindInterval(x)
	case *parser.TimeUnit:
		return &Literal{Value: types.StringValue(strings.ToUpper(x.Unit)), T: types.TypeString.WithNotNull(true)}, nil
	case *parser.FuncCall:
		return b.bindCall(x)
	case *parser.Cast:
		return b.bindCast(x)
	case *parser.Case:
		return b.bindCase(x)
	case *parser.BinaryExpr:
		l, err := b.bind(x.L)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(x.R)
		if err != nil {
			return nil, err
		}
		return callOp(x.At, strings.ToUpper(x.Op), l, r)
	case *parser.UnaryExpr:
		arg, err := b.bind(x.X)
		if err != nil {
			return nil, err
		}
		switch strings.ToUpper(x.Op) {
		case "NOT":
			return callOp(x.At, "NOT", arg)
		case "-":
			if lit, ok := arg.(*Literal); ok {
				if neg, ok := negateLiteral(lit); ok {
					return neg, nil
				}
			}
			return callOp(x.At, "NEG", arg)
		case "+":
			if !arg.Type().IsNumeric() && arg.Type().Kind != types.IntervalDayTime && arg.Type().Kind != types.IntervalYearMonth {
				return nil, errAt(x.At, ErrTypeMismatch, "type mismatch: unary + expects a number, got %s", arg.Type().Nullable())
			}
			return arg, nil
		}
		return nil, errAt(x.At, ErrUnsupported, "unsupported: unary operator %s", x.Op)
	case *parser.InExpr:
		if x.Subquery != nil {
			return nil, errAt(x.At, ErrUnsupported, "unsupported: subqueries in expressions (IN (SELECT ...))")
		}
		return b.bindIn(x)
	case *parser.LikeExpr:
		args := []parser.Expr{x.X, x.Pattern}
		if x.Escape != nil {
			args = append(args, x.Escape)
		}
		bound, err := b.bindAll(args)
		if err != nil {
			return nil, err
		}
		op := "LIKE"
		if x.Similar {
			op = "SIMILAR TO"
		}
		if x.Not {
			op = "NOT " + op
		}
		return callOp(x.At, op, bound...)
	case *parser.IsExpr:
		arg, err := b.bind(x.X)
		if err != nil {
			return nil, err
		}
		op := "IS "
		if x.Not {
			op += "NOT "
		}
		return callOp(x.At, op+strings.ToUpper(x.What), arg)
	case *parser.BetweenExpr:
		bound, err := b.bindAll([]parser.Expr{x.X, x.Lo, x.Hi})
		if err != nil {
			return nil, err
		}
		op := "BETWEEN"
		if x.Not {
			op = "NOT BETWEEN"
		}
		return callOp(x.At, op, bound...)
	case *parser.SubqueryExpr:
		what := "scalar subqueries"
		if x.Exists {
			what = "EXISTS"
		}
		return nil, errAt(x.At, ErrUnsupported, "unsupported: subqueries in expressions (%s)", what)
	}
	return nil, errAt(e.Pos(), ErrUnsupported, "unsupported: expression %T", e)
}

func (b *binder) bindAll(es []parser.Expr) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		x, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// callOp types a call of the function or operator name with funcs' rules.
func callOp(pos parser.Pos, name string, args ...Expr) (Expr, error) {
	f, ok := funcs.Lookup(name)
	if !ok {
		return nil, errAt(pos, ErrUnknownFunction, "unknown function '%s'%s", name, suggestFunc(name))
	}
	ts, consts := argTypes(args)
	t, err := f.InferConst(ts, consts)
	if err != nil {
		if errors.Is(err, funcs.ErrArgumentType) {
			return nil, wrapAt(pos, ErrTypeMismatch, err, "type mismatch")
		}
		return nil, wrapAt(pos, ErrTypeMismatch, err, "")
	}
	return &Call{Func: f.Name, Args: args, T: t}, nil
}

// argTypes returns the types of a call's arguments and the values of those that are
// literals (nil for the others), for funcs' type inference.
func argTypes(args []Expr) ([]types.Type, []*types.Value) {
	ts := make([]types.Type, len(args))
	consts := make([]*types.Value, len(args))
	for i, a := range args {
		ts[i] = a.Type()
		if lit, ok := a.(*Literal); ok {
			consts[i] = &lit.Value
		}
	}
	return ts, consts
}

func suggestFunc(name string) string {
	if c := funcs.Closest(name); c != "" {
		return ": did you mean '" + c + "'?"
	}
	return ""
}

// rankingFuncs are the OVER-window functions funcs lists among the aggregates.
var rankingFuncs = map[string]bool{
	"ROW_NUMBER": true, "RANK": true, "DENSE_RANK": true, "PERCENT_RANK": true,
	"CUME_DIST": true, "NTILE": true, "LEAD": true, "LAG": true,
}

func (b *binder) bindCall(c *parser.FuncCall) (Expr, error) {
	name := strings.ToUpper(c.Name)
	if c.Filter != nil && (!funcs.IsAggregate(name) || rankingFuncs[name]) {
		return nil, errAt(c.Filter.Pos(), ErrTypeMismatch, "FILTER (WHERE ...) is only allowed after an aggregate function, not after %s", name)
	}
	if x, ok := b.over[c]; ok {
		return x, nil
	}
	if c.Over != nil {
		// Top-N and deduplication are planned from their subquery (rank.go) before
		// binding, OVER aggregates by planOver (over.go) before the select list is bound.
		return nil, errAt(c.Over.At, ErrUnsupported, "unsupported: OVER windows (%s ... OVER); pipesql runs ROW_NUMBER, RANK and DENSE_RANK only as Top-N or deduplication: SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM t) WHERE rn <= N", name)
	}
	switch {
	case rankingFuncs[name]:
		return nil, errAt(c.At, ErrUnsupported, "unsupported: %s without OVER", name)
	case b.agg != nil && isVariance(name):
		x, err := b.agg.reduceVariance(c, name)
		if err != nil {
			return nil, err
		}
		return b.bind(x)
	case funcs.IsAggregate(name):
		if b.agg == nil {
			if b.clause == clauseAggArg {
				return nil, errAt(c.At, ErrMisplacedAggregate, "aggregate function calls cannot be nested: %s inside another aggregate", name)
			}
			return nil, errAt(c.At, ErrMisplacedAggregate, "aggregate function %s is not allowed in %s", name, b.clause)
		}
		return b.agg.aggregate(c)
	case legacyWindowFuncs[name]:
		if name == "SESSION" {
			return nil, errAt(c.At, ErrUnsupported, "unsupported: SESSION windows")
		}
		return nil, errAt(c.At, ErrUnsupported, "group window %s(...) is only allowed in GROUP BY; in FROM write TABLE(%s(TABLE t, DESCRIPTOR(ts), ...))", name, name)
	case funcs.IsWindowFunc(name):
		if b.agg == nil || b.agg.legacy == nil {
			return nil, errAt(c.At, ErrUnsupported, "%s is only allowed in the select list of a query grouped by %s(...)", name, strings.SplitN(name, "_", 2)[0])
		}
		return b.agg.legacyProperty(c, name)
	}
	if err := constructorCall(c); err != nil {
		return nil, err
	}
	if c.Star {
		return nil, errAt(c.At, ErrTypeMismatch, "%s(*) is not allowed: only COUNT(*) takes '*'", name)
	}
	if c.Distinct {
		return nil, errAt(c.At, ErrTypeMismatch, "DISTINCT is only allowed in aggregate functions, not in %s", name)
	}
	f, ok := funcs.Lookup(name)
	if !ok {
		return nil, errAt(c.At, ErrUnknownFunction, "unknown function '%s'%s", name, suggestFunc(name))
	}
	args, err := b.bindAll(c.Args)
	if err != nil {
		return nil, err
	}
	ts, consts := argTypes(args)
	t, err := f.InferConst(ts, consts)
	if err != nil {
		pos := c.At
		var se *funcs.SignatureError
		if errors.As(err, &se) && se.Arg > 0 && se.Arg <= len(c.Args) {
			pos = c.Args[se.Arg-1].Pos()
		}
		if errors.Is(err, funcs.ErrArgumentType) {
			return nil, wrapAt(pos, ErrTypeMismatch, err, "type mismatch")
		}
		return nil, wrapAt(pos, ErrTypeMismatch, err, "")
	}
	return jsonMembers(c, &Call{Func: f.Name, Args: args, T: t}) // nested.go
}

var legacyWindowFuncs = map[string]bool{"TUMBLE": true, "HOP": true, "SESSION": true, "CUMULATE": true}

func (b *binder) bindCast(c *parser.Cast) (Expr, error) {
	x, err := b.bind(c.X)
	if err != nil {
		return nil, err
	}
	to, err := convertType(c.Type)
	if err != nil {
		return nil, err
	}
	from := x.Type()
	if !funcs.CanCast(from, to) {
		return nil, errAt(c.At, ErrTypeMismatch, "cannot cast %s to %s", from.Nullable(), to.Nullable())
	}
	to.NotNull = c.Type.NotNull || (from.NotNull && !c.Try)
	return &Cast{X: x, T: to, Try: c.Try}, nil
}

func (b *binder) bindCase(c *parser.Case) (Expr, error) {
	var operand Expr
	if c.Operand != nil {
		var err error
		if operand, err = b.bind(c.Operand); err != nil {
			return nil, err
		}
	}
	out := &Case{}
	var results []Expr
	for _, w := range c.Whens {
		cond, err := b.bind(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = callOp(w.Cond.Pos(), "=", operand, cond); err != nil {
				return nil, err
			}
		} else if err := checkBoolean(w.Cond.Pos(), cond, "a WHEN condition"); err != nil {
			return nil, err
		}
		res, err := b.bind(w.Result)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, CaseWhen{Cond: cond, Result: res})
		results = append(results, res)
	}
	if c.Else != nil {
		e, err := b.bind(c.Else)
		if err != nil {
			return nil, err
		}
		out.Else = e
		results = append(results, e)
	}
	t := types.TypeNull
	for i, r := range results {
		if i == 0 {
			t = r.Type()
			continue
		}
		ct, ok := funcs.CommonType(t, r.Type())
		if !ok {
			pos := c.At
			if i < len(c.Whens) {
				pos = c.Whens[i].Result.Pos()
			} else if c.Else != nil {
				pos = c.Else.Pos()
			}
			return nil, errAt(pos, ErrTypeMismatch, "type mismatch: CASE branches are %s and %s, which have no common type", t.Nullable(), r.Type().Nullable())
		}
		t = ct
	}
	notNull := c.Else != nil
	for _, r := range results {
		notNull = notNull && r.Type().NotNull
	}
	out.T = t.WithoutTimeAttr().WithNotNull(notNull)
	if out.Else == nil {
		out.Else = &Literal{T: out.T.Nullable()}
	}
	return out, nil
}

func (b *binder) bindIn(x *parser.InExpr) (Expr, error) {
	v, err := b.bind(x.X)
	if err != nil {
		return nil, err
	}
	list, err := b.bindAll(x.List)
	if err != nil {
		return nil, err
	}
	for i, item := range list {
		if _, ok := funcs.ComparisonType(v.Type(), item.Type()); !ok {
			return nil, errAt(x.List[i].Pos(), ErrTypeMismatch, "type mismatch: IN compares %s with %s", v.Type().Nullable(), item.Type().Nullable())
		}
	}
	return &In{X: v, List: list, Not: x.Not}, nil
}

// checkBoolean refuses a condition that is not BOOLEAN (NULL is allowed: it filters all).
func checkBoolean(pos parser.Pos, e Expr, what string) error {
	if k := e.Type().Kind; k != types.Boolean && k != types.Null {
		return errAt(pos, ErrTypeMismatch, "type mismatch: %s must be BOOLEAN, got %s", what, e.Type().Nullable())
	}
	return nil
}

// negateLiteral folds -literal for numbers and intervals, so that -5 prints as -5.
func negateLiteral(l *Literal) (*Literal, bool) {
	if l.Value.IsNull() {
		return nil, false
	}
	switch l.T.Kind {
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return &Literal{Value: types.IntValue(l.T.Kind, -l.Value.Int()), T: l.T}, true
	case types.Double:
		return &Literal{Value: types.DoubleValue(-l.Value.Float()), T: l.T}, true
	case types.Decimal:
		r := l.Value.Rat()
		return &Literal{Value: types.DecimalValue(r.Neg(r)), T: l.T}, true
	case types.IntervalDayTime:
		return &Literal{Value: types.IntervalValue(-l.Value.Int()), T: l.T}, true
	case types.IntervalYearMonth:
		return &Literal{Value: types.IntervalMonthsValue(-l.Value.Int()), T: l.T}, true
	}
	return nil, false
}

// walkAST calls f on e and its sub-expressions (not into subqueries) until f returns false.
func walkAST(e parser.Expr, f func(parser.Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch x := e.(type) {
	case *parser.FuncCall:
		for _, a := range x.Args {
			walkAST(a, f)
		}
	case *parser.Cast:
		walkAST(x.X, f)
	case *parser.Case:
		walkAST(x.Operand, f)
		for _, w := range x.Whens {
			walkAST(w.Cond, f)
			walkAST(w.Result, f)
		}
		walkAST(x.Else, f)
	case *parser.BinaryExpr:
		walkAST(x.L, f)
		walkAST(x.R, f)
	case *parser.UnaryExpr:
		walkAST(x.X, f)
	case *parser.InExpr:
		walkAST(x.X, f)
		for _, a := range x.List {
			walkAST(a, f)
		}
	case *parser.LikeExpr:
		walkAST(x.X, f)
		walkAST(x.Pattern, f)
		walkAST(x.Escape, f)
	case *parser.IsExpr:
		walkAST(x.X, f)
	case *parser.BetweenExpr:
		walkAST(x.X, f)
		walkAST(x.Lo, f)
		walkAST(x.Hi, f)
	case *parser.Constructor:
		for _, a := range x.Args {
			walkAST(a, f)
		}
	case *parser.Subscript:
		walkAST(x.X, f)
		walkAST(x.Index, f)
	case *parser.FieldAccess:
		walkAST(x.X, f)
	}
}

// hasAggregate reports whether e calls an aggregate (or a group window property, which
// is computed by the aggregation too).
func hasAggregate(e parser.Expr) bool {
	found := false
	walkAST(e, func(x parser.Expr) bool {
		if c, ok := x.(*parser.FuncCall); ok {
			n := strings.ToUpper(c.Name)
			if c.Over == nil && ((funcs.IsAggregate(n) && !rankingFuncs[n]) || (funcs.IsWindowFunc(n) && !legacyWindowFuncs[n])) {
				found = true
			}
		}
		return !found
	})
	return found
}
