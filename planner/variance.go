package planner

import (
	"github.com/pipesql/pipesql/parser"
)

// Variance and standard deviation
//
// STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP and VARIANCE (VAR_SAMP's other name) are not
// aggregates of their own. As Flink's planner does (Calcite's AggregateReduceFunctionsRule),
// each call is rewritten before it is bound into SUM(x * x), SUM(x) and COUNT(x) and an
// expression over them:
//
//	VAR_POP(x)     = (SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / COUNT(x)
//	VAR_SAMP(x)    = (SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / CASE WHEN COUNT(x) = 1 THEN NULL ELSE COUNT(x) - 1 END
//	STDDEV_POP(x)  = POWER(VAR_POP(x), 0.5)
//	STDDEV_SAMP(x) = POWER(VAR_SAMP(x), 0.5)
//
// with x cast to the result type first and the result cast to it at the end. So these
// calls retract, merge window slices and checkpoint exactly as SUM and COUNT do, and EXPLAIN
// shows the SUMs and COUNT, as Flink's does. The result type is AVG's (Flink types them
// alike): the argument's numeric type, DECIMAL(38, max(s, 6)) for DECIMAL; over an integer
// column the arithmetic is integer arithmetic, as in Flink. A FILTER applies to each of the
// three calls. DISTINCT is refused: SUM(DISTINCT x * x) would lose -1 when 1 is there.
// With no non-NULL input the result is NULL (the SUMs are).

// varianceFuncs are the calls reduced here: whether the denominator is COUNT(x) (population)
// and whether the square root is taken.
var varianceFuncs = map[string]struct{ population, sqrt bool }{
	"VAR_POP":     {true, false},
	"VAR_SAMP":    {false, false},
	"VARIANCE":    {false, false},
	"STDDEV_POP":  {true, true},
	"STDDEV_SAMP": {false, true},
}

func isVariance(name string) bool {
	_, ok := varianceFuncs[name]
	return ok
}

// reduceVariance returns the expression c (a call of varianceFuncs) is computed as.
func (a *aggContext) reduceVariance(c *parser.FuncCall, name string) (parser.Expr, error) {
	shape := varianceFuncs[name]
	switch {
	case c.Star || len(c.Args) != 1:
		return nil, errAt(c.At, ErrTypeMismatch, "%s takes 1 argument", name)
	case c.Distinct:
		return nil, errAt(c.At, ErrUnsupported, "unsupported: %s(DISTINCT ...)", name)
	}
	x, err := (&binder{scope: a.input, clause: clauseAggArg}).bind(c.Args[0])
	if err != nil {
		return nil, err
	}
	t, err := aggResultType(AggAvg, x.Type())
	if err != nil {
		return nil, errAt(c.Args[0].Pos(), ErrTypeMismatch, "type mismatch: %s expects %s, got %s", name, err.Error(), x.Type().Nullable())
	}
	dt, err := parser.ParseDataType("", t.String())
	if err != nil {
		return nil, errAt(c.At, ErrTypeMismatch, "%s over %s: %v", name, x.Type(), err)
	}
	dt.At = c.At
	at := c.At
	cast := func(e parser.Expr) parser.Expr { return &parser.Cast{At: at, X: e, Type: dt} }
	bin := func(op string, l, r parser.Expr) parser.Expr { return &parser.BinaryExpr{At: at, Op: op, L: l, R: r} }
	call := func(fn string, arg parser.Expr) parser.Expr {
		return &parser.FuncCall{At: at, Name: fn, Args: []parser.Expr{arg}, Filter: c.Filter}
	}
	num := func(text string) parser.Expr { return &parser.Literal{At: at, Kind: parser.NumberLit, Text: text} }

	arg := c.Args[0]
	if !x.Type().Nullable().WithoutTimeAttr().Equal(t.Nullable()) {
		arg = cast(arg)
	}
	sum := call("SUM", arg) // of AVG's type already: SUM keeps it
	count := call("COUNT", c.Args[0])
	diff := bin("-", call("SUM", bin("*", arg, arg)), bin("/", bin("*", sum, sum), count))
	denominator := count
	if !shape.population {
		denominator = &parser.Case{At: at,
			Whens: []parser.When{{Cond: bin("=", count, num("1")), Result: &parser.Literal{At: at, Kind: parser.NullLit, Text: "NULL"}}},
			Else:  bin("-", count, num("1"))}
	}
	result := bin("/", diff, denominator)
	if shape.sqrt {
		result = &parser.FuncCall{At: at, Name: "POWER", Args: []parser.Expr{result, num("0.5")}}
	}
	return cast(result), nil
}
