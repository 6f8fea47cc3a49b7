package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Semi and anti joins
//
// A conjunct of WHERE that is x IN (SELECT y ...), EXISTS (SELECT ... WHERE inner.k =
// outer.k ...) or NOT EXISTS (...) filters the rows of FROM by whether a row of the
// subquery matches them: Flink plans it as a Join(joinType=[LeftSemiJoin]) or
// [LeftAntiJoin], and so does pipesql. The equalities between the subquery's columns and
// the outer query's are the join keys; the rest of the subquery's WHERE is the join's
// condition. A semi join of append-only inputs is append-only: a row is emitted once,
// when its first match is there. An anti join's output is updating: a row is emitted
// when it arrives without a match and deleted (-D) when its first match arrives. Either
// input may be updating (an upsert or CDC table, an aggregation), as in Flink: a
// retracted left row retracts its output, and a right row's retraction that takes a left
// row's last match away deletes it from a semi join's result (puts it back into an anti
// join's); the output is then updating.
// x NOT IN (SELECT y ...) is a null-aware anti join, as in Flink: a row qualifies when the
// subquery is empty, or when x is not NULL, no y equals it and no y is NULL (so a NULL x,
// or one NULL y, keeps the row out once the subquery has a row); it needs append-only
// inputs.

// SemiJoin keeps the rows of Left that have (Anti: do not have) a row of Right with equal
// keys for which Where holds. Its output is Left's columns.
type SemiJoin struct {
	Left, Right Node
	Anti        bool
	// NullAware is NOT IN's anti join: NULL keys count (see above); one key, no Where.
	NullAware           bool
	LeftKeys, RightKeys []int
	KeyTypes            []types.Type
	// Where is the rest of the condition over the joined row (left then right columns),
	// nil when there is none; Condition is the whole one, as EXPLAIN shows it.
	Where, Condition Expr
	Out              types.Schema
}

func (n *SemiJoin) Children() []Node     { return []Node{n.Left, n.Right} }
func (n *SemiJoin) Schema() types.Schema { return n.Out }

// Changelog says a semi join of append-only inputs is append-only and an anti join is
// updating (a later match deletes a row emitted without one).
func (n *SemiJoin) Changelog() Changelog {
	if n.Anti || ChangelogOf(n.Left) != InsertOnly || ChangelogOf(n.Right) != InsertOnly {
		return Updating
	}
	return InsertOnly
}

func (n *SemiJoin) joinType() string {
	if n.Anti {
		return "LeftAntiJoin"
	}
	return "LeftSemiJoin"
}

func (n *SemiJoin) Explain() string {
	return fmt.Sprintf("Join(joinType=[%s], where=[%s], select=[%s], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])",
		n.joinType(), ExplainExpr(n.Condition), names(n.Out))
}

// splitAndAST returns the conjuncts of a WHERE condition.
func splitAndAST(e parser.Expr) []parser.Expr {
	if b, ok := e.(*parser.BinaryExpr); ok && strings.EqualFold(b.Op, "AND") {
		return append(splitAndAST(b.L), splitAndAST(b.R)...)
	}
	return []parser.Expr{e}
}

// planSubqueryFilters turns the IN (SELECT ...) and [NOT] EXISTS conjuncts of where into
// semi and anti joins over from; it returns from with them and the rest of where (nil
// when nothing is left).
func (p *planner) planSubqueryFilters(from *relation, where parser.Expr, env *cteEnv) (*relation, parser.Expr, error) {
	if where == nil || !hasSubquery(where) {
		return from, where, nil
	}
	var rest parser.Expr
	for _, c := range splitAndAST(where) {
		var err error
		switch x := c.(type) {
		case *parser.InExpr:
			if x.Subquery == nil {
				break
			}
			if from, err = p.planInSubquery(from, x, env); err != nil {
				return nil, nil, err
			}
			continue
		case *parser.SubqueryExpr:
			if !x.Exists {
				break
			}
			if from, err = p.planExists(from, x, false, env); err != nil {
				return nil, nil, err
			}
			continue
		case *parser.UnaryExpr:
			if sq, ok := x.X.(*parser.SubqueryExpr); ok && sq.Exists && strings.EqualFold(x.Op, "NOT") {
				if from, err = p.planExists(from, sq, true, env); err != nil {
					return nil, nil, err
				}
				continue
			}
		}
		if subqueryUnderOr(c) {
			if from, err = p.planSubqueryOr(from, c, env); err != nil { // subquery_or.go
				return nil, nil, err
			}
			continue
		}
		if rest == nil {
			rest = c
		} else {
			rest = &parser.BinaryExpr{At: c.Pos(), Op: "AND", L: rest, R: c}
		}
	}
	return from, rest, nil
}

// hasSubquery reports whether a conjunct of e is a subquery filter.
func hasSubquery(e parser.Expr) bool {
	for _, c := range splitAndAST(e) {
		switch x := c.(type) {
		case *parser.InExpr:
			if x.Subquery != nil {
				return true
			}
		case *parser.SubqueryExpr:
			return x.Exists
		case *parser.UnaryExpr:
			if sq, ok := x.X.(*parser.SubqueryExpr); ok && sq.Exists {
				return true
			}
		}
		if subqueryUnderOr(c) {
			return true
		}
	}
	return false
}

func checkAppendOnly(pos parser.Pos, rel *relation, what string) error {
	if rel.changelog != InsertOnly {
		return errAt(pos, ErrUnsupported, "unsupported: %s over an updating input (the result of an aggregation or an outer join)", what)
	}
	return nil
}

// planInSubquery plans x IN (SELECT y ...) as a semi join on x = y, x NOT IN (SELECT y
// ...) as a null-aware anti join.
func (p *planner) planInSubquery(from *relation, x *parser.InExpr, env *cteEnv) (*relation, error) {
	if rel, ok, err := p.planWindowIn(from, x, env); ok || err != nil { // window_semi_join.go
		return rel, err
	}
	sub, err := p.planQuery(x.Subquery, env)
	if err != nil {
		return nil, err
	}
	if len(sub.scope.cols) != 1 {
		return nil, errAt(x.Subquery.At, ErrTypeMismatch, "the subquery of IN returns %d columns, want 1", len(sub.scope.cols))
	}
	if x.Not { // the null-aware anti join runs over append-only inputs only
		if err := checkAppendOnly(x.At, from, "NOT IN (SELECT ...)"); err != nil {
			return nil, err
		}
		if err := checkAppendOnly(x.Subquery.At, sub, "NOT IN (SELECT ...)"); err != nil {
			return nil, err
		}
	}
	lhs, err := (&binder{scope: from.scope, clause: "WHERE"}).bind(x.X)
	if err != nil {
		return nil, err
	}
	ref, ok := lhs.(*ColumnRef)
	if !ok {
		return nil, errAt(x.X.Pos(), ErrUnsupported, "unsupported: IN (SELECT ...) of an expression: compare a column (or select the expression in a subquery in FROM)")
	}
	lw := len(from.scope.cols)
	y := sub.scope.cols[0]
	cond := &Call{Func: "=", Args: []Expr{ref, &ColumnRef{Index: lw, Name: y.name, T: y.t}}, T: types.TypeBoolean}
	l, r, t, ok := equiKey(cond, lw)
	if !ok {
		return nil, errAt(x.At, ErrTypeMismatch, "type mismatch: %s IN (SELECT ...) compares %s with %s", ExplainExpr(ref), ref.T.WithoutTimeAttr(), y.t.WithoutTimeAttr())
	}
	if !x.Not {
		return semiJoin(from, sub, false, []int{l}, []int{r}, []types.Type{t}, nil, cond), nil
	}
	// As Flink shows it: OR(=(x, y), IS NULL(x), IS NULL(y)).
	isNull := func(e Expr) Expr {
		return &Call{Func: "IS NULL", Args: []Expr{e}, T: types.TypeBoolean.WithNotNull(true)}
	}
	naCond := &Call{Func: "OR", Args: []Expr{&Call{Func: "OR", Args: []Expr{cond, isNull(cond.Args[0])}, T: types.TypeBoolean}, isNull(cond.Args[1])}, T: types.TypeBoolean}
	rel := semiJoin(from, sub, true, []int{l}, []int{r}, []types.Type{t}, nil, naCond)
	rel.node.(*SemiJoin).NullAware = true
	return rel, nil
}

// planExists plans [NOT] EXISTS (SELECT ... FROM t WHERE t.k = outer.k [AND ...]) as a
// semi (anti) join by the equalities between the subquery's and the outer query's columns.
func (p *planner) planExists(from *relation, x *parser.SubqueryExpr, anti bool, env *cteEnv) (*relation, error) {
	what := "EXISTS"
	if anti {
		what = "NOT EXISTS"
	}
	sel, ok := x.Query.Body.(*parser.Select)
	if !ok || len(x.Query.With) > 0 || x.Query.Limit != nil || len(x.Query.OrderBy) > 0 {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: %s over a query other than SELECT ... FROM ... WHERE ...", what)
	}
	if sel.From == nil || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Qualify != nil {
		return nil, errAt(sel.At, ErrUnsupported, "unsupported: %s over a SELECT without FROM, or with GROUP BY, HAVING or QUALIFY", what)
	}
	for _, it := range sel.Items {
		if it.Expr != nil && hasAggregateAST(it.Expr) {
			return nil, errAt(it.At, ErrUnsupported, "unsupported: %s over an aggregate", what)
		}
	}
	sel, err := p.withJoinWhere(sel, env) // cross_join.go
	if err != nil {
		return nil, err
	}
	inner, err := p.planFrom(sel.From, env)
	if err != nil {
		return nil, err
	}
	if sel.Where == nil {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: %s without a correlation (write WHERE inner.col = outer.col in the subquery)", what)
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
	if rel, ok, err := p.windowSemiJoin(from, inner, cond, anti, false, sel.Where.Pos(), what); ok || err != nil { // window_semi_join.go
		return rel, err
	}
	var lk, rk []int
	var kt []types.Type
	var rest Expr
	for _, c := range splitAnd(cond) {
		if l, r, t, ok := equiKey(c, lw); ok {
			lk, rk, kt = append(lk, l), append(rk, r), append(kt, t)
			continue
		}
		rest = and(rest, c)
	}
	if len(lk) == 0 {
		return nil, errAt(sel.Where.Pos(), ErrUnsupported, "unsupported: %s without an equality between a column of the subquery and one of the outer query (pipesql runs semi and anti joins by keys)", what)
	}
	return semiJoin(from, inner, anti, lk, rk, kt, rest, cond), nil
}

func semiJoin(left, right *relation, anti bool, lk, rk []int, kt []types.Type, where, cond Expr) *relation {
	j := &SemiJoin{Anti: anti, LeftKeys: lk, RightKeys: rk, KeyTypes: kt, Where: where, Condition: cond}
	j.Left = &Exchange{Input: left.node, Keys: lk}
	j.Right = &Exchange{Input: right.node, Keys: rk}
	for i, c := range left.node.Schema() {
		j.Out = append(j.Out, types.Column{Name: left.scope.cols[i].name, Type: c.Type.WithoutTimeAttr()})
	}
	out := &scope{}
	for i, c := range left.scope.cols {
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	return &relation{node: j, scope: out, changelog: j.Changelog()}
}

// hasAggregateAST reports whether e calls an aggregate function.
func hasAggregateAST(e parser.Expr) bool {
	f, ok := e.(*parser.FuncCall)
	if !ok {
		return false
	}
	switch f.Name {
	case "COUNT", "SUM", "AVG", "MIN", "MAX":
		return true
	}
	return false
}

// pruneSemiJoin prunes the left input to the used columns, the keys and the condition's,
// and the right one to its keys and the condition's.
func (o *optimizer) pruneSemiJoin(x *SemiJoin, used []bool) (Node, []int, error) {
	lw := len(x.Left.Schema())
	width := lw + len(x.Right.Schema())
	all := make([]bool, width)
	copy(all, used)
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
	j := *x
	j.Left, j.Right = left, right
	j.LeftKeys, j.RightKeys = remapInts(x.LeftKeys, ml), remapInts(x.RightKeys, mr)
	j.Condition = remap(x.Condition, m)
	if x.Where != nil {
		j.Where = remap(x.Where, m)
	}
	j.Out = make(types.Schema, nl)
	for i, c := range left.Schema() {
		j.Out[i] = types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()}
	}
	for i, to := range ml {
		if to >= 0 {
			j.Out[to].Name = x.Out[i].Name
		}
	}
	return &j, ml, nil
}

// describeSemiJoin writes what shapes a semi join's state, for the fingerprint.
func describeSemiJoin(b *strings.Builder, x *SemiJoin) {
	fmt.Fprintf(b, "semi-join anti=%v null-aware=%v", x.Anti, x.NullAware)
	for i := range x.LeftKeys {
		fmt.Fprintf(b, " key=%s=%s:%s", lineage(x.Left, x.LeftKeys[i]), lineage(x.Right, x.RightKeys[i]), x.KeyTypes[i])
	}
	for _, side := range []Node{x.Left, x.Right} {
		b.WriteString(" side=[")
		for i, c := range side.Schema() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Type.WithoutTimeAttr().String())
		}
		b.WriteString("]")
	}
	b.WriteByte('\n')
}
