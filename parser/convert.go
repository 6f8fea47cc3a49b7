package parser

import (
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// Converting sqlparser's tree into pipesql's AST. Each conv function returns the node
// and the index of the emitted token it starts at, from which positions of enclosing
// nodes that begin with a keyword (NOT, CASE, EXISTS, '(') are found.

// posOf is the source position of emitted token k.
func (l *lowering) posOf(k int) Pos {
	if k < 0 || k >= len(l.toks) {
		return l.p.toks[l.toks[0].src].pos
	}
	e := l.toks[k]
	if e.leaf != nil {
		return e.leaf.pos
	}
	return l.p.toks[e.src].pos
}

// internalErr reports a sqlparser node the lowering should never have let through.
func (l *lowering) internalErr(k int, what string) error {
	return syntaxErr(l.posOf(k), "unexpected %s in query", what)
}

// placeholder resolves a placeholder name (`pN` or :vN) to its emitted token index.
func (l *lowering) placeholder(name string) (int, *leaf, bool) {
	var digits string
	switch {
	case strings.HasPrefix(name, ":v"):
		digits = name[2:]
	case strings.HasPrefix(name, "p"):
		digits = name[1:]
	default:
		return 0, nil, false
	}
	k, err := strconv.Atoi(digits)
	if err != nil || k < 0 || k >= len(l.toks) || l.toks[k].leaf == nil {
		return 0, nil, false
	}
	return k, l.toks[k].leaf, true
}

// alias resolves an alias placeholder to the identifier written.
func (l *lowering) alias(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	k, lf, ok := l.placeholder(name)
	if !ok || lf.kind != leafIdent {
		return "", l.internalErr(0, "alias")
	}
	if lf.parts == nil {
		return "", nil // the stand-in for a subquery written without an alias
	}
	if len(lf.parts) != 1 {
		return "", syntaxErr(lf.pos, "syntax error at %s: an alias is a single name", l.p.toks[l.toks[k].src].describe())
	}
	return lf.parts[0], nil
}

// backTo returns the nearest emitted token before k whose text is want, or k.
func (l *lowering) backTo(k int, want string) int {
	for j := k - 1; j >= 0; j-- {
		if l.toks[j].text == want {
			return j
		}
	}
	return k
}

func (l *lowering) convQuery(s sqlparser.SelectStatement) (*Query, int, error) {
	switch s := s.(type) {
	case *sqlparser.Select:
		body, start, err := l.convSelect(s)
		if err != nil {
			return nil, 0, err
		}
		q := &Query{At: l.posOf(start), Body: body}
		if err := l.convOrderLimit(q, s.OrderBy, s.Limit); err != nil {
			return nil, 0, err
		}
		return q, start, nil
	case *sqlparser.Union:
		body, start, err := l.convUnion(s)
		if err != nil {
			return nil, 0, err
		}
		q := &Query{At: l.posOf(start), Body: body}
		if err := l.convOrderLimit(q, s.OrderBy, s.Limit); err != nil {
			return nil, 0, err
		}
		return q, start, nil
	case *sqlparser.ParenSelect:
		q, start, err := l.convQuery(s.Select)
		if err != nil {
			return nil, 0, err
		}
		start = l.backTo(start, "(")
		q.At = l.posOf(start)
		return q, start, nil
	}
	return nil, 0, l.internalErr(0, "statement")
}

func (l *lowering) convOrderLimit(q *Query, order sqlparser.OrderBy, limit *sqlparser.Limit) error {
	var starts []int
	for _, o := range order {
		e, start, err := l.convExpr(o.Expr)
		if err != nil {
			return err
		}
		q.OrderBy = append(q.OrderBy, OrderItem{At: e.Pos(), Expr: e, Desc: o.Direction == sqlparser.DescScr})
		starts = append(starts, start)
	}
	for i := range q.OrderBy {
		l.orders = append(l.orders, orderRef{item: &q.OrderBy[i], start: starts[i]})
	}
	if limit != nil {
		e, _, err := l.convExpr(limit.Rowcount)
		if err != nil {
			return err
		}
		if limit.Offset != nil {
			return unsupportedErr(e.Pos(), "LIMIT offset, count is not supported: use LIMIT count")
		}
		q.Limit = e
	}
	return nil
}

// convBody converts a UNION branch, which can hold no ORDER BY or LIMIT of its own.
func (l *lowering) convBody(s sqlparser.SelectStatement) (QueryBody, int, error) {
	switch s := s.(type) {
	case *sqlparser.Select:
		body, start, err := l.convSelect(s)
		if err == nil && (s.OrderBy != nil || s.Limit != nil) {
			err = unsupportedErr(l.posOf(start), "ORDER BY and LIMIT inside a UNION are not supported: put them after the last SELECT")
		}
		return body, start, err
	case *sqlparser.Union:
		body, start, err := l.convUnion(s)
		if err == nil && (s.OrderBy != nil || s.Limit != nil) {
			err = unsupportedErr(l.posOf(start), "ORDER BY and LIMIT inside a UNION are not supported: put them after the last SELECT")
		}
		return body, start, err
	case *sqlparser.ParenSelect:
		body, start, err := l.convBody(s.Select)
		return body, l.backTo(start, "("), err
	}
	return nil, 0, l.internalErr(0, "query")
}

func (l *lowering) convUnion(s *sqlparser.Union) (*SetOp, int, error) {
	left, start, err := l.convBody(s.Left)
	if err != nil {
		return nil, 0, err
	}
	right, _, err := l.convBody(s.Right)
	if err != nil {
		return nil, 0, err
	}
	op := &SetOp{At: left.Pos(), Op: "UNION", Left: left, Right: right}
	switch s.Type {
	case sqlparser.UnionAllStr:
		op.All = true
	case sqlparser.UnionStr, sqlparser.UnionDistinctStr:
	default:
		return nil, 0, l.internalErr(start, s.Type)
	}
	return op, start, nil
}

func (l *lowering) convSelect(s *sqlparser.Select) (*Select, int, error) {
	if len(s.Comments) != 1 {
		return nil, 0, l.internalErr(0, "SELECT")
	}
	c := strings.TrimSuffix(strings.TrimPrefix(string(s.Comments[0]), "/*"), "*/")
	start, err := strconv.Atoi(c)
	if err != nil || start < 0 || start >= len(l.toks) || l.toks[start].sel == nil {
		return nil, 0, l.internalErr(0, "SELECT")
	}
	info := l.toks[start].sel
	sel := &Select{At: info.pos, Distinct: s.Distinct != "", StateTTL: info.stateTTL}
	for n, se := range s.SelectExprs {
		itemPos := info.pos
		if n < len(info.items) {
			itemPos = info.items[n]
		}
		switch se := se.(type) {
		case *sqlparser.StarExpr:
			star := &Star{At: itemPos}
			if !se.TableName.IsEmpty() {
				_, lf, ok := l.placeholder(se.TableName.Name.String())
				if !ok || lf.kind != leafIdent || !se.TableName.Qualifier.IsEmpty() {
					return nil, 0, l.internalErr(start, "'*'")
				}
				if len(lf.parts) != 1 {
					return nil, 0, unsupportedErr(lf.pos, "qualified * with more than one name part is not supported")
				}
				star.Qualifier = lf.parts[0]
			}
			sel.Items = append(sel.Items, SelectItem{At: itemPos, Expr: star})
		case *sqlparser.AliasedExpr:
			e, _, err := l.convExpr(se.Expr)
			if err != nil {
				return nil, 0, err
			}
			alias, err := l.alias(se.As.String())
			if err != nil {
				return nil, 0, err
			}
			sel.Items = append(sel.Items, SelectItem{At: itemPos, Expr: e, Alias: alias})
		default:
			return nil, 0, l.internalErr(start, "select item")
		}
	}
	if !(len(s.From) == 1 && isDual(s.From[0])) {
		from, err := l.convTableExprs(s.From)
		if err != nil {
			return nil, 0, err
		}
		sel.From = from
	}
	if s.Where != nil {
		if sel.Where, _, err = l.convExpr(s.Where.Expr); err != nil {
			return nil, 0, err
		}
	}
	for _, g := range s.GroupBy {
		e, _, err := l.convExpr(g)
		if err != nil {
			return nil, 0, err
		}
		sel.GroupBy = append(sel.GroupBy, e)
	}
	if s.Having != nil {
		if sel.Having, _, err = l.convExpr(s.Having.Expr); err != nil {
			return nil, 0, err
		}
	}
	sel.Windows, sel.Qualify = info.windows, info.qualify
	return sel, start, nil
}

// isDual reports sqlparser's stand-in for a missing FROM; a real table is always a
// placeholder, so the name cannot clash.
func isDual(te sqlparser.TableExpr) bool {
	a, ok := te.(*sqlparser.AliasedTableExpr)
	if !ok {
		return false
	}
	tn, ok := a.Expr.(sqlparser.TableName)
	return ok && tn.Name.String() == "dual" && tn.Qualifier.IsEmpty()
}

// convTableExprs converts a FROM list; a, b is a cross join.
func (l *lowering) convTableExprs(list sqlparser.TableExprs) (TableExpr, error) {
	var out TableExpr
	for _, te := range list {
		t, _, err := l.convTable(te)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = t
		} else {
			out = &Join{At: out.Pos(), Kind: "CROSS", Left: out, Right: t}
		}
	}
	return out, nil
}

func (l *lowering) convTable(te sqlparser.TableExpr) (TableExpr, int, error) {
	switch te := te.(type) {
	case *sqlparser.AliasedTableExpr:
		if te.Hints != nil || len(te.Partitions) > 0 {
			return nil, 0, l.internalErr(0, "table hint")
		}
		alias, err := l.alias(te.As.String())
		if err != nil {
			return nil, 0, err
		}
		switch e := te.Expr.(type) {
		case sqlparser.TableName:
			k, lf, ok := l.placeholder(e.Name.String())
			if !ok || !e.Qualifier.IsEmpty() {
				return nil, 0, l.internalErr(0, "table name")
			}
			switch lf.kind {
			case leafIdent:
				return &TableName{At: lf.pos, Name: ObjectName(lf.parts), Options: lf.options, AsOf: lf.asOf, Alias: alias}, k, nil
			case leafTable:
				switch t := lf.table.(type) {
				case *WindowTVF:
					tvf := *t
					tvf.Alias = alias
					return &tvf, k, nil
				case *MatchRecognize:
					mr := *t
					mr.Alias = alias
					return &mr, k, nil
				case *Unnest:
					if alias != "" {
						return nil, 0, l.internalErr(k, "UNNEST alias")
					}
					return t, k, nil
				}
				return nil, 0, l.internalErr(k, "table")
			case leafQuery:
				return &SubqueryTable{At: lf.pos, Query: lf.query, Alias: alias}, k, nil
			}
			return nil, 0, syntaxErr(lf.pos, "syntax error at %s: expected a table", l.p.toks[l.toks[k].src].describe())
		case *sqlparser.Subquery:
			q, start, err := l.convQuery(e.Select)
			if err != nil {
				return nil, 0, err
			}
			start = l.backTo(start, "(")
			return &SubqueryTable{At: l.posOf(start), Query: q, Alias: alias}, start, nil
		}
		return nil, 0, l.internalErr(0, "table")
	case *sqlparser.ParenTableExpr:
		t, err := l.convTableExprs(te.Exprs)
		if err != nil {
			return nil, 0, err
		}
		return t, 0, nil
	case *sqlparser.JoinTableExpr:
		left, start, err := l.convTable(te.LeftExpr)
		if err != nil {
			return nil, 0, err
		}
		right, _, err := l.convTable(te.RightExpr)
		if err != nil {
			return nil, 0, err
		}
		j := &Join{At: left.Pos(), Left: left, Right: right}
		if te.Condition.Using != nil {
			return nil, 0, unsupportedErr(right.Pos(), "JOIN ... USING is not supported: use JOIN ... ON")
		}
		if te.Condition.On != nil {
			if j.On, _, err = l.convExpr(te.Condition.On); err != nil {
				return nil, 0, err
			}
		}
		switch te.Join {
		case sqlparser.JoinStr:
			j.Kind = "INNER"
			if j.On == nil {
				j.Kind = "CROSS"
			}
		case sqlparser.LeftJoinStr:
			j.Kind = "LEFT"
		case sqlparser.RightJoinStr:
			j.Kind = "RIGHT"
		case sqlparser.StraightJoinStr:
			j.Kind = "FULL"
		default:
			return nil, 0, l.internalErr(start, te.Join)
		}
		if j.Kind != "INNER" && j.Kind != "CROSS" && j.On == nil {
			return nil, 0, syntaxErr(right.Pos(), "%s JOIN needs an ON condition", j.Kind)
		}
		return j, start, nil
	}
	return nil, 0, l.internalErr(0, "table")
}

var comparisonOps = map[string]string{
	sqlparser.EqualStr: "=", sqlparser.LessThanStr: "<", sqlparser.GreaterThanStr: ">",
	sqlparser.LessEqualStr: "<=", sqlparser.GreaterEqualStr: ">=", sqlparser.NotEqualStr: "<>",
}

var arithmeticOps = map[string]string{
	sqlparser.PlusStr: "+", sqlparser.MinusStr: "-", sqlparser.MultStr: "*",
	sqlparser.DivStr: "/", sqlparser.ModStr: "%", sqlparser.IntDivStr: "||",
}

func (l *lowering) convExpr(e sqlparser.Expr) (Expr, int, error) {
	switch e := e.(type) {
	case *sqlparser.AndExpr:
		return l.binary("AND", e.Left, e.Right)
	case *sqlparser.OrExpr:
		return l.binary("OR", e.Left, e.Right)
	case *sqlparser.NotExpr:
		x, xs, err := l.convExpr(e.Expr)
		if err != nil {
			return nil, 0, err
		}
		start := l.backTo(xs, "NOT")
		return &UnaryExpr{At: l.posOf(start), Op: "NOT", X: x}, start, nil
	case *sqlparser.ParenExpr:
		x, xs, err := l.convExpr(e.Expr)
		if err != nil {
			return nil, 0, err
		}
		return x, l.backTo(xs, "("), nil
	case *sqlparser.ComparisonExpr:
		return l.comparison(e)
	case *sqlparser.RangeCond:
		x, xs, err := l.convExpr(e.Left)
		if err != nil {
			return nil, 0, err
		}
		lo, _, err := l.convExpr(e.From)
		if err != nil {
			return nil, 0, err
		}
		hi, _, err := l.convExpr(e.To)
		if err != nil {
			return nil, 0, err
		}
		return &BetweenExpr{At: l.posOf(xs), X: x, Not: e.Operator == sqlparser.NotBetweenStr, Lo: lo, Hi: hi}, xs, nil
	case *sqlparser.IsExpr:
		x, xs, err := l.convExpr(e.Expr)
		if err != nil {
			return nil, 0, err
		}
		is := &IsExpr{At: l.posOf(xs), X: x}
		switch e.Operator {
		case sqlparser.IsNullStr:
			is.What = "NULL"
		case sqlparser.IsNotNullStr:
			is.What, is.Not = "NULL", true
		case sqlparser.IsTrueStr:
			is.What = "TRUE"
		case sqlparser.IsNotTrueStr:
			is.What, is.Not = "TRUE", true
		case sqlparser.IsFalseStr:
			is.What = "FALSE"
		case sqlparser.IsNotFalseStr:
			is.What, is.Not = "FALSE", true
		default:
			return nil, 0, l.internalErr(xs, e.Operator)
		}
		return is, xs, nil
	case *sqlparser.ExistsExpr:
		q, qs, err := l.convQuery(e.Subquery.Select)
		if err != nil {
			return nil, 0, err
		}
		start := l.backTo(l.backTo(qs, "("), "EXISTS")
		return &SubqueryExpr{At: l.posOf(start), Exists: true, Query: q}, start, nil
	case *sqlparser.Subquery:
		q, qs, err := l.convQuery(e.Select)
		if err != nil {
			return nil, 0, err
		}
		start := l.backTo(qs, "(")
		return &SubqueryExpr{At: l.posOf(start), Query: q}, start, nil
	case *sqlparser.SQLVal:
		if e.Type == sqlparser.ValArg {
			if k, lf, ok := l.placeholder(string(e.Val)); ok && lf.kind == leafExpr {
				return lf.expr, k, nil
			}
		}
		return nil, 0, l.internalErr(0, "literal")
	case *sqlparser.ColName:
		k, lf, ok := l.placeholder(e.Name.String())
		if !ok || !e.Qualifier.IsEmpty() {
			return nil, 0, l.internalErr(0, "column")
		}
		switch lf.kind {
		case leafIdent:
			return &Ident{At: lf.pos, Parts: lf.parts}, k, nil
		case leafQuery:
			return &SubqueryExpr{At: lf.pos, Query: lf.query}, k, nil
		case leafTable:
			return nil, 0, syntaxErr(lf.pos, "a window table function TABLE(...) is only allowed in FROM")
		}
		return nil, 0, l.internalErr(k, "name")
	case sqlparser.ValTuple:
		if len(e) == 0 {
			return nil, 0, l.internalErr(0, "tuple")
		}
		args := make([]Expr, len(e))
		first := 0
		for i, item := range e {
			a, xs, err := l.convExpr(item)
			if err != nil {
				return nil, 0, err
			}
			if i == 0 {
				first = xs
			}
			args[i] = a
		}
		// (a, b) is the implicit row constructor, ROW(a, b).
		start := l.backTo(first, "(")
		return &FuncCall{At: l.posOf(start), Name: "ROW", Args: args}, start, nil
	case *sqlparser.BinaryExpr:
		op, ok := arithmeticOps[e.Operator]
		if !ok {
			return nil, 0, l.internalErr(0, "operator "+e.Operator)
		}
		return l.binary(op, e.Left, e.Right)
	case *sqlparser.UnaryExpr:
		x, xs, err := l.convExpr(e.Expr)
		if err != nil {
			return nil, 0, err
		}
		if e.Operator != sqlparser.UMinusStr && e.Operator != sqlparser.UPlusStr {
			return nil, 0, l.internalErr(xs, "operator "+e.Operator)
		}
		start := l.backTo(xs, e.Operator)
		return &UnaryExpr{At: l.posOf(start), Op: e.Operator, X: x}, start, nil
	case *sqlparser.FuncExpr:
		return l.call(e)
	case *sqlparser.CaseExpr:
		return l.caseExpr(e)
	}
	return nil, 0, l.internalErr(0, "expression")
}

func (l *lowering) binary(op string, left, right sqlparser.Expr) (Expr, int, error) {
	x, xs, err := l.convExpr(left)
	if err != nil {
		return nil, 0, err
	}
	y, _, err := l.convExpr(right)
	if err != nil {
		return nil, 0, err
	}
	return &BinaryExpr{At: l.posOf(xs), Op: op, L: x, R: y}, xs, nil
}

func (l *lowering) comparison(e *sqlparser.ComparisonExpr) (Expr, int, error) {
	if op, ok := comparisonOps[e.Operator]; ok {
		return l.binary(op, e.Left, e.Right)
	}
	x, xs, err := l.convExpr(e.Left)
	if e.Operator == sqlparser.NullSafeEqualStr && err == nil {
		// Only IS [NOT] DISTINCT FROM is lowered to <=>: the operator is the token just
		// before the right operand, and the source token after its IS says which form.
		y, ys, err := l.convExpr(e.Right)
		if err != nil {
			return nil, 0, err
		}
		if ys < 1 || l.toks[ys-1].text != "<=>" {
			return nil, 0, l.internalErr(xs, "IS DISTINCT FROM")
		}
		op := "IS DISTINCT FROM"
		if src := l.toks[ys-1].src; src+1 < len(l.p.toks) && l.p.toks[src+1].is("NOT") {
			op = "IS NOT DISTINCT FROM"
		}
		return &BinaryExpr{At: l.posOf(xs), Op: op, L: x, R: y}, xs, nil
	}
	if err != nil {
		return nil, 0, err
	}
	switch e.Operator {
	case sqlparser.InStr, sqlparser.NotInStr:
		in := &InExpr{At: l.posOf(xs), X: x, Not: e.Operator == sqlparser.NotInStr}
		switch r := e.Right.(type) {
		case sqlparser.ValTuple:
			for _, item := range r {
				v, _, err := l.convExpr(item)
				if err != nil {
					return nil, 0, err
				}
				in.List = append(in.List, v)
			}
		case *sqlparser.Subquery:
			if in.Subquery, _, err = l.convQuery(r.Select); err != nil {
				return nil, 0, err
			}
		default:
			return nil, 0, l.internalErr(xs, "IN list")
		}
		return in, xs, nil
	case sqlparser.LikeStr, sqlparser.NotLikeStr:
		pat, ps, err := l.convExpr(e.Right)
		if err != nil {
			return nil, 0, err
		}
		like := &LikeExpr{At: l.posOf(xs), X: x, Not: e.Operator == sqlparser.NotLikeStr, Pattern: pat}
		// The emitted LIKE is the token just before the pattern; SIMILAR TO emits it too.
		if ps >= 1 {
			if src := l.toks[ps-1].src; src >= 0 && src < len(l.p.toks) && l.p.toks[src].is("SIMILAR") {
				like.Similar = true
			}
		}
		if e.Escape != nil {
			if like.Escape, _, err = l.convExpr(e.Escape); err != nil {
				return nil, 0, err
			}
		}
		return like, xs, nil
	}
	return nil, 0, l.internalErr(xs, "operator "+e.Operator)
}

func (l *lowering) call(e *sqlparser.FuncExpr) (Expr, int, error) {
	k, lf, ok := l.placeholder(e.Name.String())
	if !ok || lf.kind != leafFunc || !e.Qualifier.IsEmpty() {
		return nil, 0, l.internalErr(0, "function")
	}
	var args []Expr
	star := false
	for _, se := range e.Exprs {
		switch se := se.(type) {
		case *sqlparser.StarExpr:
			if !se.TableName.IsEmpty() || len(e.Exprs) != 1 {
				return nil, 0, syntaxErr(lf.pos, "* is only allowed alone, as in COUNT(*)")
			}
			star = true
		case *sqlparser.AliasedExpr:
			if !se.As.IsEmpty() {
				ak, alf, ok := l.placeholder(se.As.String())
				if ok {
					return nil, 0, syntaxErr(alf.pos, "syntax error at %s: expected ',' or ')'", l.p.toks[l.toks[ak].src].describe())
				}
				return nil, 0, l.internalErr(k, "alias")
			}
			a, _, err := l.convExpr(se.Expr)
			if err != nil {
				return nil, 0, err
			}
			args = append(args, a)
		default:
			return nil, 0, l.internalErr(k, "argument")
		}
	}
	fn := lf.fn
	switch {
	case fn.filter:
		if len(args) != 2 {
			return nil, 0, l.internalErr(k, "FILTER")
		}
		agg, ok := args[0].(*FuncCall)
		if !ok || agg.Filter != nil {
			return nil, 0, l.internalErr(k, "FILTER")
		}
		agg.Filter = args[1]
		return agg, k, nil
	case fn.cast != nil:
		if len(args) != 1 || star || e.Distinct {
			return nil, 0, l.internalErr(k, "CAST")
		}
		return &Cast{At: lf.pos, X: args[0], Type: *fn.cast, Try: fn.try}, k, nil
	case fn.over != nil:
		o := fn.over
		n := len(args) - o.nPart - len(o.order)
		if n < 0 || star {
			return nil, 0, l.internalErr(k, "OVER")
		}
		over := &Over{At: o.at, Name: o.name, PartitionBy: args[n : n+o.nPart], Frame: o.frame}
		for j, it := range o.order {
			it.Expr = args[n+o.nPart+j]
			over.OrderBy = append(over.OrderBy, it)
		}
		return &FuncCall{At: lf.pos, Name: fn.name, Args: args[:n:n], Distinct: e.Distinct, Star: o.star, Over: over}, k, nil
	}
	return &FuncCall{At: lf.pos, Name: fn.name, Args: args, Distinct: e.Distinct, Star: star}, k, nil
}

func (l *lowering) caseExpr(e *sqlparser.CaseExpr) (Expr, int, error) {
	c := &Case{}
	first := -1
	if e.Expr != nil {
		x, xs, err := l.convExpr(e.Expr)
		if err != nil {
			return nil, 0, err
		}
		c.Operand, first = x, xs
	}
	for _, w := range e.Whens {
		cond, cs, err := l.convExpr(w.Cond)
		if err != nil {
			return nil, 0, err
		}
		if first < 0 {
			first = cs
		}
		res, _, err := l.convExpr(w.Val)
		if err != nil {
			return nil, 0, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Result: res})
	}
	if e.Else != nil {
		x, _, err := l.convExpr(e.Else)
		if err != nil {
			return nil, 0, err
		}
		c.Else = x
	}
	start := l.backTo(first, "CASE")
	c.At = l.posOf(start)
	return c, start, nil
}
