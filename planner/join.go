package planner

import (
	"strings"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Plans with more than one input
//
// A JOIN ... ON with at least one equality between a column of each side is a regular
// Join (Flink's StreamingJoinOperator): both inputs are kept in state by the equality
// keys, an Exchange(distribution=[hash[keys]]) below each side says so, and the rest of
// the ON condition is evaluated on each joined pair. An input may be updating (an
// aggregate's result, a CDC or upsert source): its retractions retract the joined rows,
// and the join's output is updating then, as it is for every outer join. The output drops time attributes (a regular join does not keep rows in event-time
// order) and makes the columns of a null-supplying side nullable; an outer join's output
// is updating, since it retracts a null-padded row when the row's first match arrives.
//
// UNION ALL of any number of queries is one Union node over inputs cast to the common
// type of each column (Flink's least restrictive type); UNION is SELECT DISTINCT over it.
//
// A condition over both sides' time attributes makes an interval join (interval_join.go);
// IN (SELECT ...) and [NOT] EXISTS in WHERE make semi and anti joins (semi_join.go); a
// list of tables in FROM or a CROSS JOIN takes its condition from WHERE (cross_join.go).
// The other multi-input forms are refused with their position: joins without an equality
// (a cross join whose WHERE equates no columns of its sides), a window table function
// joined with a plain input.

func (p *planner) planJoin(x *parser.Join, env *cteEnv) (*relation, error) {
	var typ JoinType
	switch strings.ToUpper(x.Kind) {
	case "INNER":
		typ = InnerJoin
	case "LEFT":
		typ = LeftOuterJoin
	case "RIGHT":
		typ = RightOuterJoin
	case "FULL":
		typ = FullOuterJoin
	case "CROSS":
		return nil, errAt(x.Right.Pos(), ErrUnsupported, "unsupported: a cross join: no condition in WHERE equates a column of this table with one of the tables before it (Flink runs a cross join on a single task; pipesql runs equi-joins: add a.k = b.k to WHERE, or write JOIN ... ON a.k = b.k)")
	default:
		return nil, errAt(x.At, ErrUnsupported, "unsupported: %s JOIN", x.Kind)
	}
	if tn, ok := x.Right.(*parser.TableName); ok && tn.AsOf != nil {
		return p.planSystemTimeJoin(x, typ, tn, env) // temporal_join.go
	}
	left, err := p.planFrom(x.Left, env)
	if err != nil {
		return nil, err
	}
	right, err := p.planFrom(x.Right, env)
	if err != nil {
		return nil, err
	}
	if left.tvf != nil && right.tvf != nil && left.changelog == InsertOnly && right.changelog == InsertOnly {
		return p.planWindowJoin(x, typ, left, right) // window_join.go
	}
	for _, side := range []struct {
		rel  *relation
		pos  parser.Pos
		name string
	}{{left, x.Left.Pos(), "left"}, {right, x.Right.Pos(), "right"}} {
		if side.rel.tvf != nil {
			return nil, errAt(side.pos, ErrUnsupported, "unsupported: a join of a window table function with an input that is not one (a window join needs TABLE(TUMBLE|HOP|CUMULATE(...)) on both sides)")
		}
	}
	lw := len(left.scope.cols)
	in := &scope{cols: append(append([]scopeCol(nil), left.scope.cols...), right.scope.cols...)}
	cond, err := (&binder{scope: in, clause: "ON"}).bind(x.On)
	if err != nil {
		return nil, err
	}
	if err := checkBoolean(x.On.Pos(), cond, "the JOIN condition"); err != nil {
		return nil, err
	}
	j := &Join{Type: typ, Condition: cond}
	var rest Expr
	var timeConds []Expr
	for _, c := range splitAnd(cond) {
		if usesTimeOfBoth(c, in, lw) {
			timeConds = append(timeConds, c) // an interval join's bound (interval_join.go)
			rest = and(rest, c)
			continue
		}
		if l, r, t, ok := equiKey(c, lw); ok {
			j.LeftKeys = append(j.LeftKeys, l)
			j.RightKeys = append(j.RightKeys, r)
			j.KeyTypes = append(j.KeyTypes, t)
			continue
		}
		rest = and(rest, c)
	}
	if len(timeConds) > 0 && oneSidedByColumn(splitAnd(cond), in, lw) {
		timeConds = nil // a regular join, as Flink plans it (interval_join.go)
	}
	if len(timeConds) > 0 {
		for _, side := range []struct {
			rel  *relation
			pos  parser.Pos
			name string
		}{{left, x.Left.Pos(), "left"}, {right, x.Right.Pos(), "right"}} {
			if side.rel.changelog != InsertOnly {
				return nil, errAt(side.pos, ErrUpdatingInput, "unsupported: an interval join over an updating input (the %s side): IntervalJoin doesn't support consuming update and delete changes", side.name)
			}
		}
		j.Where = rest
		return p.planIntervalJoin(x, j, left, right, in, timeConds)
	}
	if len(j.LeftKeys) == 0 {
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: JOIN without an equality between a column of each side (pipesql runs equi-joins)")
	}
	j.Where = rest
	j.LeftTTL, j.RightTTL = p.ttlHint.side(x.Left), p.ttlHint.side(x.Right) // state_ttl.go
	j.Left = &Exchange{Input: left.node, Keys: j.LeftKeys}
	j.Right = &Exchange{Input: right.node, Keys: j.RightKeys}
	j.Out = joinSchema(left.node.Schema(), right.node.Schema(), typ)
	for i, c := range in.cols {
		j.Out[i].Name = c.name // a view's column list renames what its plan calls otherwise
	}
	out := &scope{}
	for i, c := range in.cols {
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	changelog := InsertOnly
	if typ != InnerJoin || left.changelog != InsertOnly || right.changelog != InsertOnly {
		changelog = Updating
	}
	return &relation{node: j, scope: out, changelog: changelog}, nil
}

// joinSchema is the output of a join of left and right: their columns without time
// attributes, nullable on a side that may be null-padded.
func joinSchema(left, right types.Schema, typ JoinType) types.Schema {
	var out types.Schema
	for s, side := range []types.Schema{left, right} {
		padded := (s == 0 && typ.RightOuter()) || (s == 1 && typ.LeftOuter())
		for _, c := range side {
			t := c.Type.WithoutTimeAttr()
			if padded {
				t = t.Nullable()
			}
			out = append(out, types.Column{Name: c.Name, Type: t})
		}
	}
	return out
}

// splitAnd returns the conjuncts of e.
func splitAnd(e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Func == "AND" && len(c.Args) == 2 {
		return append(splitAnd(c.Args[0]), splitAnd(c.Args[1])...)
	}
	return []Expr{e}
}

// equiKey reads c as left column = right column (either way round) of a join whose
// left side has lw columns, with the type both are compared in.
func equiKey(c Expr, lw int) (l, r int, t types.Type, ok bool) {
	call, isCall := c.(*Call)
	if !isCall || call.Func != "=" || len(call.Args) != 2 {
		return 0, 0, types.Type{}, false
	}
	a, okA := call.Args[0].(*ColumnRef)
	b, okB := call.Args[1].(*ColumnRef)
	if !okA || !okB {
		return 0, 0, types.Type{}, false
	}
	if a.Index >= lw {
		a, b = b, a
	}
	if a.Index >= lw || b.Index < lw {
		return 0, 0, types.Type{}, false
	}
	t, ok = funcs.CommonType(a.T, b.T)
	if !ok {
		return 0, 0, types.Type{}, false
	}
	return a.Index, b.Index - lw, t, true
}

// usesTimeOfBoth reports whether c reads a time attribute of each side.
func usesTimeOfBoth(c Expr, s *scope, lw int) bool {
	var l, r bool
	visit(c, func(x Expr) {
		if ref, ok := x.(*ColumnRef); ok && s.cols[ref.Index].t.TimeAttr != types.NoTimeAttr {
			if ref.Index < lw {
				l = true
			} else {
				r = true
			}
		}
	})
	return l && r
}

// planSetOp plans UNION ALL (one Union over every input of a chain of UNION ALLs) and
// UNION (the same, then DISTINCT).
func (p *planner) planSetOp(op *parser.SetOp, env *cteEnv) (*relation, error) {
	if !strings.EqualFold(op.Op, "UNION") {
		return p.planIntersectExcept(op, env) // set_ops.go
	}
	var bodies []parser.QueryBody
	var flatten func(b parser.QueryBody)
	flatten = func(b parser.QueryBody) {
		if s, ok := b.(*parser.SetOp); ok && s.All == op.All && strings.EqualFold(s.Op, "UNION") {
			flatten(s.Left)
			flatten(s.Right)
			return
		}
		bodies = append(bodies, b)
	}
	flatten(op.Left)
	flatten(op.Right)
	var ins []*relation
	for _, b := range bodies {
		r, err := p.planBody(b, env) // set_ops.go
		if err != nil {
			return nil, err
		}
		ins = append(ins, r)
	}
	first := ins[0].scope.cols
	ts, err := setOpTypes("UNION", bodies, ins)
	if err != nil {
		return nil, err
	}
	u := &Union{}
	changelog := InsertOnly
	for _, r := range ins {
		u.Inputs = append(u.Inputs, castTo(r.node, ts))
		if r.changelog != InsertOnly {
			changelog = Updating
		}
	}
	out := &scope{}
	for i, c := range first {
		u.Out = append(u.Out, types.Column{Name: c.name, Type: ts[i]})
		out.cols = append(out.cols, scopeCol{name: c.name, t: ts[i]})
	}
	rel := &relation{node: u, scope: out, changelog: changelog}
	if !op.All {
		return distinct(op.At, rel)
	}
	return rel, nil
}

// setOpTypes is the type of each column of a set operation (op names it) over ins: the
// inputs' common type, a time attribute where every input's column is one.
func setOpTypes(op string, bodies []parser.QueryBody, ins []*relation) ([]types.Type, error) {
	first := ins[0].scope.cols
	n := len(first)
	ts := make([]types.Type, n)
	for i, c := range first {
		ts[i] = c.t
	}
	for k, r := range ins[1:] {
		if len(r.scope.cols) != n {
			return nil, errAt(bodies[k+1].Pos(), ErrTypeMismatch, "%s inputs have different numbers of columns: %d and %d", op, n, len(r.scope.cols))
		}
		for i, c := range r.scope.cols {
			attr := ts[i].TimeAttr
			t, ok := funcs.CommonType(ts[i], c.t)
			if !ok {
				return nil, errAt(bodies[k+1].Pos(), ErrTypeMismatch, "type mismatch: column %d of %s is %s in one input and %s in another", i+1, op, ts[i].WithoutTimeAttr(), c.t.WithoutTimeAttr())
			}
			if attr == c.t.TimeAttr && t.Kind == c.t.Kind {
				t.TimeAttr = attr // every input's time attribute: the union's too
			}
			ts[i] = t
		}
	}
	return ts, nil
}

// castTo returns n with its columns cast to ts where their types differ (a Calc above
// it), n itself when none does.
func castTo(n Node, ts []types.Type) Node {
	in := n.Schema()
	calc := &Calc{Input: n}
	changed := false
	for i, c := range in {
		var e Expr = &ColumnRef{Index: i, Name: c.Name, T: c.Type}
		t := c.Type
		if !c.Type.SameKind(ts[i]) || c.Type.TimeAttr != ts[i].TimeAttr {
			changed = true
			t = ts[i]
			if !c.Type.SameKind(ts[i]) {
				e = &Cast{X: e, T: ts[i].WithoutTimeAttr()}
			}
		}
		calc.Projections = append(calc.Projections, e)
		calc.Out = append(calc.Out, types.Column{Name: c.Name, Type: t})
	}
	if !changed {
		return n
	}
	return calc
}

// pruneJoin prunes both inputs of a join to the columns its parent uses, its keys and
// its condition read.
func (o *optimizer) pruneJoin(x *Join, used []bool) (Node, []int, error) {
	lw := len(x.Left.Schema())
	width := lw + len(x.Right.Schema())
	all := append([]bool(nil), used...)
	markUsed(x.Condition, all)
	for i := range x.LeftKeys {
		all[x.LeftKeys[i]] = true
		all[lw+x.RightKeys[i]] = true
	}
	left, ml, err := o.prune(x.Left, all[:lw])
	if err != nil {
		return nil, nil, err
	}
	right, mr, err := o.prune(x.Right, all[lw:width])
	if err != nil {
		return nil, nil, err
	}
	nl := len(left.Schema())
	m := make([]int, width)
	for i := range m {
		switch {
		case i < lw:
			m[i] = ml[i]
		case mr[i-lw] >= 0:
			m[i] = nl + mr[i-lw]
		default:
			m[i] = -1
		}
	}
	j := &Join{Left: left, Right: right, Type: x.Type, KeyTypes: x.KeyTypes,
		LeftKeys: remapInts(x.LeftKeys, ml), RightKeys: remapInts(x.RightKeys, mr),
		Condition: remap(x.Condition, m), Out: joinSchema(left.Schema(), right.Schema(), x.Type),
		LeftTTL: x.LeftTTL, RightTTL: x.RightTTL}
	for i, to := range m {
		if to >= 0 {
			j.Out[to].Name = x.Out[i].Name
		}
	}
	if x.Where != nil {
		j.Where = remap(x.Where, m)
	}
	return j, m, nil
}

func (o *optimizer) pruneExchange(x *Exchange, used []bool) (Node, []int, error) {
	all := append([]bool(nil), used...)
	for _, k := range x.Keys {
		all[k] = true
	}
	in, m, err := o.prune(x.Input, all)
	if err != nil {
		return nil, nil, err
	}
	return &Exchange{Input: in, Keys: remapInts(x.Keys, m)}, m, nil
}

// pruneUnion prunes every input to the used columns, in the same places.
func (o *optimizer) pruneUnion(x *Union, used []bool) (Node, []int, error) {
	u := &Union{}
	mapping := make([]int, len(x.Out))
	for i := range mapping {
		mapping[i] = -1
		if used[i] {
			mapping[i] = len(u.Out)
			u.Out = append(u.Out, x.Out[i])
		}
	}
	for _, in := range x.Inputs {
		n, m, err := o.prune(in, used)
		if err != nil {
			return nil, nil, err
		}
		// The input may keep more columns than used (a watermark's): project exactly
		// the used ones, in order.
		calc := &Calc{Input: n}
		identity := len(n.Schema()) == len(u.Out)
		s := n.Schema()
		for i := range x.Out {
			if !used[i] {
				continue
			}
			j := len(calc.Projections)
			if m[i] != j {
				identity = false
			}
			calc.Projections = append(calc.Projections, &ColumnRef{Index: m[i], Name: s[m[i]].Name, T: s[m[i]].Type})
			calc.Out = append(calc.Out, s[m[i]])
		}
		if identity {
			u.Inputs = append(u.Inputs, n)
		} else {
			u.Inputs = append(u.Inputs, calc)
		}
	}
	return u, mapping, nil
}

// foldValues turns a Union of Values (a VALUES list, which the parser gives as a UNION
// ALL of one SELECT per row) into one Values node; other unions are returned as they are.
func foldValues(u *Union) Node {
	v := &Values{Out: u.Out}
	for _, in := range u.Inputs {
		x, ok := in.(*Values)
		if !ok {
			return u
		}
		v.Rows = append(v.Rows, x.Rows...)
	}
	return v
}
