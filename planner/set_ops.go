package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// INTERSECT and EXCEPT
//
// Flink rewrites INTERSECT ALL and EXCEPT ALL (RewriteIntersectAllRule,
// RewriteMinusAllRule) into plans of the operators it has, and pipesql plans all four set
// operations that way: both inputs, each with marker columns, are one Union; a
// GroupAggregate by every column counts the rows of each side; a Calc keeps the groups
// that belong to the result; for ALL, a Correlate of $REPLICATE_ROWS$1 emits a group's row
// as many times as the result holds it, and a Calc drops the counts.
//
//	INTERSECT      COUNT(vcol_left_marker) AS vcol_left_cnt, COUNT(vcol_right_marker) AS
//	               vcol_right_cnt, where=[(vcol_left_cnt >= 1) AND (vcol_right_cnt >= 1)]
//	INTERSECT ALL  the same, each row min(vcol_left_cnt, vcol_right_cnt) times
//	EXCEPT         the same counts, where=[(vcol_left_cnt >= 1) AND (vcol_right_cnt = 0)]
//	EXCEPT ALL     SUM(vcol_marker) AS sum_vcol_marker of 1 (left) and -1 (right),
//	               where=[(sum_vcol_marker > 0)], each row sum_vcol_marker times
//
// Grouping compares NULLs as equal, as set operations do (IS NOT DISTINCT FROM). (For
// INTERSECT and EXCEPT without ALL Flink plans a semi or anti Join on IS NOT DISTINCT
// FROM below a distinct GroupAggregate instead; the result is the same.) The output is
// updating, as a GroupAggregate's is: a row leaves the result (-U/-D) when a change of
// either input takes it out, so the inputs may be updating too.

func (p *planner) planIntersectExcept(op *parser.SetOp, env *cteEnv) (*relation, error) {
	name := strings.ToUpper(op.Op)
	bodies := []parser.QueryBody{op.Left, op.Right}
	var ins []*relation
	for _, b := range bodies {
		r, err := p.planBody(b, env)
		if err != nil {
			return nil, err
		}
		ins = append(ins, r)
	}
	ts, err := setOpTypes(name, bodies, ins)
	if err != nil {
		return nil, err
	}
	n := len(ts)
	for i := range ts {
		ts[i] = ts[i].WithoutTimeAttr()
	}
	exceptAll := name == "EXCEPT" && op.All
	var markerNames []string
	markers := func(side int) []Expr {
		if exceptAll {
			return []Expr{&Literal{Value: types.IntValue(types.BigInt, int64(1-2*side)), T: types.TypeBigInt.WithNotNull(true)}}
		}
		t, null := &Literal{Value: types.BoolValue(true), T: types.TypeBoolean.WithNotNull(true)}, &Literal{Value: types.NullValue, T: types.TypeBoolean}
		if side == 0 {
			return []Expr{t, null}
		}
		return []Expr{null, t}
	}
	if exceptAll {
		markerNames = []string{"vcol_marker"}
	} else {
		markerNames = []string{"vcol_left_marker", "vcol_right_marker"}
	}
	u := &Union{}
	updating := false
	for side, r := range ins {
		in := castTo(r.node, ts)
		calc := &Calc{Input: in}
		for i, c := range in.Schema() {
			calc.Projections = append(calc.Projections, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
			calc.Out = append(calc.Out, types.Column{Name: ins[0].scope.cols[i].name, Type: ts[i]})
		}
		for i, m := range markers(side) {
			calc.Projections = append(calc.Projections, m)
			calc.Out = append(calc.Out, types.Column{Name: markerNames[i], Type: m.Type().WithNotNull(false)})
		}
		u.Inputs = append(u.Inputs, calc)
		updating = updating || r.changelog != InsertOnly
	}
	u.Out = u.Inputs[0].Schema()
	agg := &GroupAggregate{Input: u, Keys: seq(n)}
	agg.Out = append(agg.Out, u.Out[:n]...)
	if exceptAll {
		agg.Aggs = []AggCall{{Func: AggSum, Arg: n, Filter: -1, T: types.TypeBigInt, State: StateSum, Name: "sum_vcol_marker"}}
	} else {
		agg.Aggs = []AggCall{
			{Func: AggCount, Arg: n, Filter: -1, T: types.TypeBigInt.WithNotNull(true), State: StateCounter, Name: "vcol_left_cnt"},
			{Func: AggCount, Arg: n + 1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), State: StateCounter, Name: "vcol_right_cnt"},
		}
	}
	for _, a := range agg.Aggs {
		agg.Out = append(agg.Out, types.Column{Name: a.Name, Type: a.T})
	}
	if updating {
		retracting(agg) // changelog.go
	}
	col := func(i int) *ColumnRef { return &ColumnRef{Index: i, Name: agg.Out[i].Name, T: agg.Out[i].Type} }
	cmp := func(f string, a Expr, v int64) Expr {
		return &Call{Func: f, Args: []Expr{a, &Literal{Value: types.IntValue(types.Int, v), T: types.TypeInt.WithNotNull(true)}}, T: types.TypeBoolean.WithNotNull(a.Type().NotNull)}
	}
	keep := &Calc{Input: agg, Out: agg.Out}
	for i := range agg.Out {
		keep.Projections = append(keep.Projections, col(i))
	}
	var times Expr // how many times a kept group's row is in the result (ALL)
	switch {
	case exceptAll:
		keep.Filter = cmp(">", col(n), 0)
		times = col(n)
	case name == "INTERSECT":
		keep.Filter = and(cmp(">=", col(n), 1), cmp(">=", col(n+1), 1))
		times = &Call{Func: "IF", Args: []Expr{&Call{Func: ">", Args: []Expr{col(n), col(n + 1)}, T: types.TypeBoolean.WithNotNull(true)}, col(n + 1), col(n)}, T: types.TypeBigInt.WithNotNull(true)}
	default: // EXCEPT
		keep.Filter = and(cmp(">=", col(n), 1), cmp("=", col(n+1), 0))
	}
	var top Node = keep
	if op.All {
		top = &Correlate{Input: keep, Arg: times, Replicate: true, Out: keep.Out}
	}
	out := &Calc{Input: top}
	res := &scope{}
	for i := 0; i < n; i++ {
		out.Projections = append(out.Projections, col(i))
		out.Out = append(out.Out, agg.Out[i])
		res.cols = append(res.cols, scopeCol{name: agg.Out[i].Name, t: agg.Out[i].Type})
	}
	return &relation{node: out, scope: res, changelog: Updating}, nil
}

// planBody plans one operand of a set operation.
func (p *planner) planBody(b parser.QueryBody, env *cteEnv) (*relation, error) {
	switch b := b.(type) {
	case *parser.Select:
		return p.planSelect(b, env)
	case *parser.SetOp:
		return p.planSetOp(b, env) // join.go
	}
	return nil, errAt(b.Pos(), ErrUnsupported, "unsupported: query body %T", b)
}
