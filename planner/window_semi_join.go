package planner

import (
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Semi and anti window joins
//
// x IN (SELECT y FROM <window TVF> R WHERE L.window_start = R.window_start AND
// L.window_end = R.window_end) over a window table function L, and [NOT] EXISTS and NOT
// IN of the same shape, are Flink's semi and anti window joins: a WindowJoin with
// joinType=[LeftSemiJoin] or [LeftAntiJoin] keeping the left rows that have (have not) a
// match in their window, by the further equalities (IN's x = y among them). Each window is
// decided once, when the watermark passes its end, so the output is append-only, also for
// an anti join; its columns are the left input's. NOT IN is null-aware within the window,
// as the regular NOT IN is: a left row is kept when the window's right side is empty, or
// when its x is not NULL, no right row of the window has it and none has a NULL y.

// planWindowIn plans x [NOT] IN (SELECT y FROM ... WHERE <correlation>) over windows; ok
// is false when the subquery is not correlated that way (planInSubquery plans it).
func (p *planner) planWindowIn(from *relation, x *parser.InExpr, env *cteEnv) (*relation, bool, error) {
	q := x.Subquery
	sel, isSel := q.Body.(*parser.Select)
	if !isSel || len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || sel.From == nil || sel.Where == nil ||
		len(sel.GroupBy) > 0 || sel.Having != nil || sel.Qualify != nil || sel.Distinct || len(sel.Items) != 1 || !hasWindowColumns(from.scope) {
		return nil, false, nil
	}
	if _, star := sel.Items[0].Expr.(*parser.Star); star {
		return nil, false, nil
	}
	sel, err := p.withJoinWhere(sel, env) // cross_join.go
	if err != nil {
		return nil, true, err
	}
	inner, err := p.planFrom(sel.From, env)
	if err != nil {
		return nil, true, err
	}
	lw := len(from.scope.cols)
	in := &scope{cols: append(append([]scopeCol(nil), from.scope.cols...), inner.scope.cols...)}
	cond, err := (&binder{scope: in, clause: "WHERE"}).bind(sel.Where)
	if err != nil {
		return nil, false, nil // not over these scopes: planned as an uncorrelated IN, or refused there
	}
	correlated := false
	visit(cond, func(e Expr) {
		if ref, ok := e.(*ColumnRef); ok && ref.Index < lw {
			correlated = true
		}
	})
	if !correlated {
		return nil, false, nil
	}
	if err := checkBoolean(sel.Where.Pos(), cond, "the WHERE condition"); err != nil {
		return nil, true, err
	}
	lhs, err := (&binder{scope: from.scope, clause: "WHERE"}).bind(x.X)
	if err != nil {
		return nil, true, err
	}
	y, err := (&binder{scope: inner.scope, clause: "SELECT"}).bind(sel.Items[0].Expr)
	if err != nil {
		return nil, true, err
	}
	ref, ok1 := lhs.(*ColumnRef)
	yref, ok2 := y.(*ColumnRef)
	if !ok1 || !ok2 {
		return nil, true, errAt(x.X.Pos(), ErrUnsupported, "unsupported: IN (SELECT ...) over windows of an expression: compare a column with a column of the subquery")
	}
	eq := &Call{Func: "=", Args: []Expr{ref, &ColumnRef{Index: lw + yref.Index, Name: yref.Name, T: yref.T}}, T: types.TypeBoolean}
	if _, _, _, ok := equiKey(eq, lw); !ok {
		return nil, true, errAt(x.At, ErrTypeMismatch, "type mismatch: %s IN (SELECT ...) compares %s with %s", ExplainExpr(ref), ref.T.WithoutTimeAttr(), yref.T.WithoutTimeAttr())
	}
	what := "IN (SELECT ...)"
	if x.Not {
		what = "NOT IN (SELECT ...)"
	}
	rel, ok, err := p.windowSemiJoin(from, inner, and(eq, cond), x.Not, x.Not, sel.Where.Pos(), what)
	if err == nil && !ok {
		err = errAt(sel.Where.Pos(), ErrUnsupported, "unsupported: a correlated %s (pipesql runs one over window table functions only, as a window semi join: equate L.window_start = R.window_start AND L.window_end = R.window_end)", what)
	}
	return rel, true, err
}

// hasWindowColumns reports whether s shows a window table function's window_start.
func hasWindowColumns(s *scope) bool {
	for _, c := range s.cols {
		if c.win == winStart {
			return true
		}
	}
	return false
}

// windowSemiJoin plans a semi (anti) join of from and inner on cond, a condition over both
// (from's columns first), as a window join when cond equates the window_start and
// window_end of both; ok is false when it equates neither.
func (p *planner) windowSemiJoin(from, inner *relation, cond Expr, anti, nullAware bool, pos parser.Pos, what string) (*relation, bool, error) {
	lw := len(from.scope.cols)
	in := &scope{cols: append(append([]scopeCol(nil), from.scope.cols...), inner.scope.cols...)}
	typ := LeftSemiJoin
	if anti {
		typ = LeftAntiJoin
	}
	j := &WindowJoin{Type: typ, NullAware: nullAware, Condition: cond, LeftStart: -1, LeftEnd: -1, RightStart: -1, RightEnd: -1}
	var lwin, rwin *windowInfo
	var rest Expr
	for _, c := range splitAnd(cond) {
		l, r, t, ok := equiKey(c, lw)
		if !ok {
			rest = and(rest, c)
			continue
		}
		lc, rc := in.cols[l], in.cols[lw+r]
		switch {
		case lc.win == winStart && rc.win == winStart:
			j.LeftStart, j.RightStart, lwin, rwin = l, r, lc.tvf, rc.tvf
		case lc.win == winEnd && rc.win == winEnd:
			j.LeftEnd, j.RightEnd = l, r
		default:
			j.LeftKeys, j.RightKeys, j.KeyTypes = append(j.LeftKeys, l), append(j.RightKeys, r), append(j.KeyTypes, t)
		}
	}
	switch {
	case j.LeftStart < 0 && j.LeftEnd < 0:
		return nil, false, nil
	case j.LeftStart < 0:
		return nil, true, errAt(pos, ErrUnsupported, "unsupported: %s over windows without L.window_start = R.window_start (a window semi or anti join must equate both window_start and window_end)", what)
	case j.LeftEnd < 0:
		return nil, true, errAt(pos, ErrUnsupported, "unsupported: %s over windows without L.window_end = R.window_end (a window semi or anti join must equate both window_start and window_end)", what)
	case in.cols[j.LeftEnd].tvf != lwin || in.cols[lw+j.RightEnd].tvf != rwin:
		return nil, true, errAt(pos, ErrUnsupported, "unsupported: %s equating the window_start of one window and the window_end of another", what)
	}
	if !sameWindow(lwin.win, rwin.win) {
		return nil, true, errAt(pos, ErrUnsupported, "unsupported: %s over different windows (%s and %s): both sides need the same window", what, explainJoinWindow(lwin.win, "window_start", "window_end"), explainJoinWindow(rwin.win, "window_start", "window_end"))
	}
	if lwin.win.ProcTime || lwin.timeType.Kind == types.TimestampLTZ || rwin.timeType.Kind == types.TimestampLTZ {
		return nil, true, errAt(pos, ErrUnsupported, "unsupported: %s over processing-time or TIMESTAMP_LTZ windows (pipesql joins event-time TIMESTAMP windows)", what)
	}
	if err := checkAppendOnly(pos, from, what); err != nil {
		return nil, true, err
	}
	if err := checkAppendOnly(pos, inner, what); err != nil {
		return nil, true, err
	}
	if nullAware && (rest != nil || len(j.LeftKeys) != 1) {
		return nil, true, errAt(pos, ErrUnsupported, "unsupported: %s over windows with conditions beside the window equalities (write NOT EXISTS)", what)
	}
	j.Where, j.LeftWindow, j.RightWindow = rest, lwin.win, rwin.win
	j.Left, j.Right = from.node, inner.node
	j.Out = windowJoinSchema(from.node.Schema(), inner.node.Schema(), typ)
	out := &scope{}
	for i, c := range from.scope.cols {
		j.Out[i].Name = c.name
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	return &relation{node: j, scope: out, changelog: InsertOnly}, true, nil
}
