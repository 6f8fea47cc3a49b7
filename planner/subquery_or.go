package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Subqueries under OR
//
// A WHERE conjunct such as x IN (SELECT y FROM t) OR c, or EXISTS (SELECT ... FROM t
// WHERE t.k = o.k) OR NOT EXISTS (...), cannot be a semi join: a row may pass without a
// match. Calcite's SubQueryRemoveRule, which Flink runs, rewrites each subquery into a
// LEFT JOIN with the subquery's distinct keys and a TRUE marker, the subquery then read
// as "the marker is not NULL", and so does pipesql: the Join(joinType=[LeftOuterJoin])
// with a GroupAggregate of the keys on its right side, then a Calc filtering on the
// rewritten condition and dropping the join's extra columns. The right side is an
// aggregate, so the result is updating, as Flink's is. An IN is read so only where it is
// not under NOT (there NULL and FALSE differ: NOT IN under OR is refused), and EXISTS's
// subquery may correlate by equalities only (the rest of its WHERE over its own columns).

// subqueryUnderOr reports whether c, a conjunct of WHERE, holds an IN (SELECT ...) or
// [NOT] EXISTS inside AND, OR and NOT.
func subqueryUnderOr(c parser.Expr) bool {
	switch x := c.(type) {
	case *parser.BinaryExpr:
		if strings.EqualFold(x.Op, "AND") || strings.EqualFold(x.Op, "OR") {
			return subqueryUnderOr(x.L) || subqueryUnderOr(x.R)
		}
	case *parser.UnaryExpr:
		if strings.EqualFold(x.Op, "NOT") {
			return subqueryUnderOr(x.X)
		}
	case *parser.InExpr:
		return x.Subquery != nil
	case *parser.SubqueryExpr:
		return x.Exists
	}
	return false
}

// planSubqueryOr filters from by c, a conjunct with subqueries under OR (see above).
func (p *planner) planSubqueryOr(from *relation, c parser.Expr, env *cteEnv) (*relation, error) {
	ext := from
	n := 0
	var rw func(e parser.Expr, negated bool) (parser.Expr, error)
	rw = func(e parser.Expr, negated bool) (parser.Expr, error) {
		switch x := e.(type) {
		case *parser.BinaryExpr:
			if !strings.EqualFold(x.Op, "AND") && !strings.EqualFold(x.Op, "OR") {
				return e, nil
			}
			l, err := rw(x.L, negated)
			if err != nil {
				return nil, err
			}
			r, err := rw(x.R, negated)
			if err != nil {
				return nil, err
			}
			return &parser.BinaryExpr{At: x.At, Op: x.Op, L: l, R: r}, nil
		case *parser.UnaryExpr:
			if !strings.EqualFold(x.Op, "NOT") {
				return e, nil
			}
			inner, err := rw(x.X, !negated)
			if err != nil {
				return nil, err
			}
			return &parser.UnaryExpr{At: x.At, Op: x.Op, X: inner}, nil
		case *parser.InExpr:
			if x.Subquery == nil {
				return e, nil
			}
			if x.Not {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: NOT IN (SELECT ...) under OR (its NULLs make it no marker join; write NOT EXISTS)")
			}
			if negated {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: IN (SELECT ...) under NOT beside other conditions (NULL and FALSE differ there; write NOT EXISTS)")
			}
			marker := fmt.Sprintf("$sq%d", n)
			n++
			r, err := p.markerJoinIn(ext, x, marker, env)
			if err != nil {
				return nil, err
			}
			ext = r
			return &parser.IsExpr{At: x.At, X: &parser.Ident{At: x.At, Parts: []string{marker}}, Not: true, What: "NULL"}, nil
		case *parser.SubqueryExpr:
			if !x.Exists {
				return e, nil
			}
			marker := fmt.Sprintf("$sq%d", n)
			n++
			r, err := p.markerJoinExists(ext, x, marker, env)
			if err != nil {
				return nil, err
			}
			ext = r
			return &parser.IsExpr{At: x.At, X: &parser.Ident{At: x.At, Parts: []string{marker}}, Not: true, What: "NULL"}, nil
		}
		return e, nil
	}
	cond, err := rw(c, false)
	if err != nil {
		return nil, err
	}
	w, err := (&binder{scope: ext.scope, clause: "WHERE"}).bind(cond)
	if err != nil {
		return nil, err
	}
	if err := checkBoolean(c.Pos(), w, "the WHERE condition"); err != nil {
		return nil, err
	}
	calc := &Calc{Input: ext.node, Filter: w}
	out := &scope{}
	in := ext.node.Schema()
	for i, col := range from.scope.cols {
		calc.Projections = append(calc.Projections, &ColumnRef{Index: i, Name: in[i].Name, T: in[i].Type})
		calc.Out = append(calc.Out, types.Column{Name: col.name, Type: in[i].Type})
		out.cols = append(out.cols, scopeCol{name: col.name, quals: col.quals, t: in[i].Type})
	}
	return &relation{node: calc, scope: out, changelog: ext.changelog}, nil
}

// markerJoinIn joins from with the distinct values of x's subquery and a TRUE marker
// column named marker, on x = y.
func (p *planner) markerJoinIn(from *relation, x *parser.InExpr, marker string, env *cteEnv) (*relation, error) {
	sub, err := p.planQuery(x.Subquery, env)
	if err != nil {
		return nil, err
	}
	if len(sub.scope.cols) != 1 {
		return nil, errAt(x.Subquery.At, ErrTypeMismatch, "the subquery of IN returns %d columns, want 1", len(sub.scope.cols))
	}
	lhs, err := (&binder{scope: from.scope, clause: "WHERE"}).bind(x.X)
	if err != nil {
		return nil, err
	}
	ref, ok := lhs.(*ColumnRef)
	if !ok {
		return nil, errAt(x.X.Pos(), ErrUnsupported, "unsupported: IN (SELECT ...) of an expression: compare a column (or select the expression in a subquery in FROM)")
	}
	return p.markerJoin(from, sub.node, []int{ref.Index}, []int{0}, marker, x.At)
}

// markerJoinExists joins from with the distinct correlation keys of x's subquery and a
// TRUE marker column named marker.
func (p *planner) markerJoinExists(from *relation, x *parser.SubqueryExpr, marker string, env *cteEnv) (*relation, error) {
	sel, ok := x.Query.Body.(*parser.Select)
	if !ok || len(x.Query.With) > 0 || x.Query.Limit != nil || len(x.Query.OrderBy) > 0 || sel.From == nil ||
		len(sel.GroupBy) > 0 || sel.Having != nil || sel.Qualify != nil || sel.Where == nil {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: EXISTS under OR over a query other than SELECT ... FROM ... WHERE inner.k = outer.k ...")
	}
	sel, err := p.withJoinWhere(sel, env) // cross_join.go
	if err != nil {
		return nil, err
	}
	inner, err := p.planFrom(sel.From, env)
	if err != nil {
		return nil, err
	}
	lw := len(from.scope.cols)
	in := &scope{cols: append(append([]scopeCol(nil), from.scope.cols...), inner.scope.cols...)}
	cond, err := (&binder{scope: in, clause: "WHERE"}).bind(sel.Where)
	if err != nil {
		return nil, err
	}
	if err := checkBoolean(sel.Where.Pos(), cond, "the WHERE condition"); err != nil {
		return nil, err
	}
	var lk, rk []int
	var own Expr // the conditions over the subquery's columns only
	for _, c := range splitAnd(cond) {
		if l, r, _, ok := equiKey(c, lw); ok {
			lk, rk = append(lk, l), append(rk, r)
			continue
		}
		outer := false
		visit(c, func(e Expr) {
			if ref, ok := e.(*ColumnRef); ok && ref.Index < lw {
				outer = true
			}
		})
		if outer {
			return nil, errAt(sel.Where.Pos(), ErrUnsupported, "unsupported: EXISTS under OR whose condition %s reads the outer query beside equalities", ExplainExpr(c))
		}
		own = and(own, remap(c, shiftDown(len(in.cols), lw)))
	}
	if len(lk) == 0 {
		return nil, errAt(sel.Where.Pos(), ErrUnsupported, "unsupported: EXISTS under OR without an equality between a column of the subquery and one of the outer query")
	}
	keys := &Calc{Input: inner.node, Filter: own}
	is := inner.node.Schema()
	for i, k := range rk {
		keys.Projections = append(keys.Projections, &ColumnRef{Index: k, Name: is[k].Name, T: is[k].Type})
		keys.Out = append(keys.Out, types.Column{Name: is[k].Name, Type: is[k].Type})
		rk[i] = i
	}
	return p.markerJoin(from, keys, lk, rk, marker, x.At)
}

// shiftDown maps the columns lw.. of a width-wide row to 0.. (and the others nowhere).
func shiftDown(width, lw int) []int {
	m := make([]int, width)
	for i := range m {
		m[i] = i - lw
		if i < lw {
			m[i] = -1
		}
	}
	return m
}

// markerJoin is from LEFT JOIN (SELECT DISTINCT keys..., TRUE AS marker FROM right) on
// from's lk = right's rk; the keys and the marker join from's scope unnamed but for the
// marker.
func (p *planner) markerJoin(from *relation, right Node, lk, rk []int, marker string, pos parser.Pos) (*relation, error) {
	rs := right.Schema()
	agg := &GroupAggregate{Input: right}
	for i, k := range rk {
		agg.Keys = append(agg.Keys, k)
		agg.Out = append(agg.Out, types.Column{Name: rs[k].Name, Type: rs[k].Type.WithoutTimeAttr()})
		rk[i] = i
	}
	if ChangelogOf(right) != InsertOnly {
		retracting(agg) // changelog.go
	}
	mark := &Calc{Input: agg}
	for i, c := range agg.Out {
		mark.Projections = append(mark.Projections, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
		mark.Out = append(mark.Out, c)
	}
	mark.Projections = append(mark.Projections, &Literal{Value: types.BoolValue(true), T: types.TypeBoolean.WithNotNull(true)})
	mark.Out = append(mark.Out, types.Column{Name: marker, Type: types.TypeBoolean.WithNotNull(true)})
	lw := len(from.scope.cols)
	j := &Join{Type: LeftOuterJoin}
	var cond Expr
	for i := range lk {
		l := &ColumnRef{Index: lk[i], Name: from.node.Schema()[lk[i]].Name, T: from.scope.cols[lk[i]].t}
		r := &ColumnRef{Index: lw + rk[i], Name: mark.Out[rk[i]].Name, T: mark.Out[rk[i]].Type}
		eq := &Call{Func: "=", Args: []Expr{l, r}, T: types.TypeBoolean}
		_, _, t, ok := equiKey(eq, lw)
		if !ok {
			return nil, errAt(pos, ErrTypeMismatch, "type mismatch: the subquery compares %s with %s", l.T.WithoutTimeAttr(), r.T.WithoutTimeAttr())
		}
		j.LeftKeys, j.RightKeys, j.KeyTypes = append(j.LeftKeys, lk[i]), append(j.RightKeys, rk[i]), append(j.KeyTypes, t)
		cond = and(cond, eq)
	}
	j.Condition = cond
	j.Left = &Exchange{Input: from.node, Keys: j.LeftKeys}
	j.Right = &Exchange{Input: mark, Keys: j.RightKeys}
	j.Out = joinSchema(from.node.Schema(), mark.Out, LeftOuterJoin)
	out := &scope{}
	for i, c := range from.scope.cols {
		j.Out[i].Name = c.name
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	for i := lw; i < len(j.Out); i++ {
		name := j.Out[i].Name
		if name != marker {
			name = marker + "_key" // not a name the query can write
			j.Out[i].Name = name
		}
		out.cols = append(out.cols, scopeCol{name: name, t: j.Out[i].Type})
	}
	return &relation{node: j, scope: out, changelog: Updating}, nil
}
