package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Top-N and deduplication
//
// Flink runs ROW_NUMBER, RANK and DENSE_RANK only in one pattern: a subquery whose
// select list ranks its rows, filtered by the query around it on the rank:
//
//	SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM t)
//	WHERE rn <= 3
//
// planTopN recognizes it and plans a Rank node (the top N rows per partition, an updating
// changelog) or, for ROW_NUMBER ... = 1 ordered by a time attribute with the rank not
// selected, a Deduplicate node. Any other OVER is refused by the binder.

// RankType is the ranking function of a Rank.
type RankType int

const (
	RowNumber RankType = iota
	RankFunc           // RANK(): ties share a rank, the next rank skips
	DenseRank          // DENSE_RANK(): ties share a rank, the next rank follows
)

func (t RankType) String() string { return [...]string{"ROW_NUMBER", "RANK", "DENSE_RANK"}[t] }

// RankStrategy is how a Rank keeps its state, named as Flink's EXPLAIN names it.
type RankStrategy int

const (
	// AppendFastStrategy: an insert-only input; only the rows that are or may become
	// the top N of a partition are kept.
	AppendFastStrategy RankStrategy = iota
	// RetractStrategy: an updating input; every row of a partition is kept, so that a
	// retracted top row is replaced by the next one.
	RetractStrategy
	// UpdateFastStrategy: an updating input with a unique key whose order column only
	// moves in the rank's direction (rank_strategy.go).
	UpdateFastStrategy
)

func (s RankStrategy) String() string {
	return [...]string{"AppendFastStrategy", "RetractStrategy", "UpdateFastStrategy"}[s]
}

// SortKey is one ORDER BY column of a Rank, a TemporalSort or a Match. Nulls is where
// NULL goes: by default first ascending and last descending, as in Flink (sort_key.go).
type SortKey struct {
	Col   int
	Desc  bool
	Nulls parser.NullOrder
}

// Rank keeps, per partition, the rows ranked Start to End by OrderBy, and emits an
// updating changelog as rows enter and leave that range: +I for a row that enters,
// -D for one pushed out; with RankNumber, the rank number is the last output column
// and a row whose rank changes is updated (-U/+U).
type Rank struct {
	Input       Node
	Strategy    RankStrategy
	Type        RankType
	Start, End  int64
	PartitionBy []int
	OrderBy     []SortKey
	RankNumber  bool
	Out         types.Schema // the input columns, then the rank number when RankNumber
	UniqueKey   []int        // UpdateFastStrategy: the input's unique key
	// SortLimit: ORDER BY ... LIMIT End over the whole input (no PartitionBy, rows
	// 1..End, no rank number), which EXPLAIN names as Flink does.
	SortLimit bool
}

// Deduplicate keeps one row per key: the first (KeepLast false) or the last by the time
// attribute TimeCol. Keeping the first row by processing time is insert-only; the other
// kinds update the row they kept (-U/+U), as Flink's do.
type Deduplicate struct {
	Input    Node
	Keys     []int
	KeepLast bool
	TimeCol  int
	RowTime  bool // ordered by a rowtime attribute, else by processing time
	Out      types.Schema
}

// Changelog is what a Deduplicate emits.
func (n *Deduplicate) Changelog() Changelog {
	if !n.KeepLast && !n.RowTime {
		return InsertOnly
	}
	return Updating
}

var (
	_ Node = (*Rank)(nil)
	_ Node = (*Deduplicate)(nil)
)

func (n *Rank) Children() []Node            { return []Node{n.Input} }
func (n *Deduplicate) Children() []Node     { return []Node{n.Input} }
func (n *Rank) Schema() types.Schema        { return n.Out }
func (n *Deduplicate) Schema() types.Schema { return n.Out }

func (n *Rank) Explain() string {
	in := n.Input.Schema()
	if n.SortLimit {
		return fmt.Sprintf("SortLimit(orderBy=[%s], offset=[0], fetch=[%d], strategy=[%s])", sortKeysString(in, n.OrderBy), n.End, n.strategyText())
	}
	part := make([]string, len(n.PartitionBy))
	for i, k := range n.PartitionBy {
		part[i] = in[k].Name
	}
	order := make([]string, len(n.OrderBy))
	for i, k := range n.OrderBy {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		order[i] = in[k.Col].Name + " " + dir
	}
	return fmt.Sprintf("Rank(strategy=[%s], rankType=[%s], rankRange=[rankStart=%d, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s])",
		n.strategyText(), n.Type, n.Start, n.End, strings.Join(part, ", "), strings.Join(order, ", "), names(n.Out))
}

func (n *Deduplicate) Explain() string {
	in := n.Input.Schema()
	keep := "FirstRow"
	if n.KeepLast {
		keep = "LastRow"
	}
	order := "PROCTIME"
	if n.RowTime {
		order = "ROWTIME"
	}
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in[k].Name
	}
	return fmt.Sprintf("Deduplicate(keep=[%s], key=[%s], order=[%s])", keep, strings.Join(keys, ", "), order)
}

var rankTypes = map[string]RankType{"ROW_NUMBER": RowNumber, "RANK": RankFunc, "DENSE_RANK": DenseRank}

// topNSource is the ranked subquery of a Top-N: its query and what it is called.
type topNSource struct {
	sel   *parser.Select
	alias string
	env   *cteEnv // what the subquery sees
	call  *parser.FuncCall
	item  int // the select item that ranks
}

// rankedSubquery returns the subquery of sel's FROM when its select list ranks: a
// subquery in FROM or a WITH query.
func (p *planner) rankedSubquery(sel *parser.Select, env *cteEnv) *topNSource {
	var q *parser.Query
	var src topNSource
	switch f := sel.From.(type) {
	case *parser.SubqueryTable:
		q, src.alias, src.env = f.Query, f.Alias, env
	case *parser.TableName:
		if len(f.Name) != 1 || len(f.Options) > 0 {
			return nil
		}
		cte, ok := env.lookup(f.Name[0])
		if !ok {
			return nil
		}
		q, src.alias, src.env = cte.query, f.Name[0], cte.outer
		if f.Alias != "" {
			src.alias = f.Alias
		}
	default:
		return nil
	}
	inner, ok := q.Body.(*parser.Select)
	if !ok || len(q.OrderBy) > 0 || q.Limit != nil {
		return nil
	}
	for _, nq := range q.With {
		src.env = &cteEnv{name: nq.Name, query: nq.Query, outer: src.env}
	}
	src.sel, src.item = inner, -1
	for i, it := range inner.Items {
		c, ok := it.Expr.(*parser.FuncCall)
		if !ok || c.Over == nil {
			continue
		}
		if _, ok := rankTypes[strings.ToUpper(c.Name)]; !ok || src.item >= 0 {
			return nil
		}
		src.call, src.item = c, i
	}
	if src.item < 0 {
		return nil
	}
	return &src
}

// rankBounds takes the conditions on the rank column rn out of the conjuncts of a WHERE:
// rn <= N, rn < N, rn = N, rn >= M, rn > M, rn BETWEEN M AND N (either side of the
// comparison). It returns the range and the conjuncts left; ok is false without an upper bound.
func rankBounds(where parser.Expr, rn string) (start, end int64, rest []parser.Expr, ok bool) {
	start, end = 1, -1
	isRank := func(e parser.Expr) bool {
		id, ok := e.(*parser.Ident)
		return ok && strings.EqualFold(id.Parts[len(id.Parts)-1], rn)
	}
	intLit := func(e parser.Expr) (int64, bool) {
		l, ok := e.(*parser.Literal)
		if !ok || l.Kind != parser.NumberLit {
			return 0, false
		}
		n, err := strconv.ParseInt(l.Text, 10, 64)
		return n, err == nil
	}
	lower := func(n int64) { start = max(start, n) }
	upper := func(n int64) {
		if end < 0 || n < end {
			end = n
		}
	}
	flip := map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
	for _, c := range conjuncts(where) {
		switch x := c.(type) {
		case *parser.BinaryExpr:
			op, l, r := x.Op, x.L, x.R
			if isRank(r) && !isRank(l) {
				op, l, r = flip[op], r, l
			}
			n, lit := intLit(r)
			if !isRank(l) || !lit || flip[op] == "" {
				break
			}
			switch op {
			case "<":
				upper(n - 1)
			case "<=":
				upper(n)
			case "=":
				lower(n)
				upper(n)
			case ">":
				lower(n + 1)
			case ">=":
				lower(n)
			}
			continue
		case *parser.BetweenExpr:
			lo, ok1 := intLit(x.Lo)
			hi, ok2 := intLit(x.Hi)
			if !x.Not && isRank(x.X) && ok1 && ok2 {
				lower(lo)
				upper(hi)
				continue
			}
		}
		rest = append(rest, c)
	}
	return start, end, rest, end >= 0
}

func conjuncts(e parser.Expr) []parser.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*parser.BinaryExpr); ok && strings.EqualFold(b.Op, "AND") {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []parser.Expr{e}
}

func andAll(es []parser.Expr) parser.Expr {
	var out parser.Expr
	for _, e := range es {
		if out == nil {
			out = e
			continue
		}
		out = &parser.BinaryExpr{At: out.Pos(), Op: "AND", L: out, R: e}
	}
	return out
}

// mentions reports whether e names column col (unqualified or by any qualifier).
func mentions(e parser.Expr, col string) bool {
	found := false
	walkAST(e, func(x parser.Expr) bool {
		switch x := x.(type) {
		case *parser.Ident:
			if strings.EqualFold(x.Parts[len(x.Parts)-1], col) {
				found = true
			}
		case *parser.Star:
			found = true
		}
		return !found
	})
	return found
}

// planTopN plans the FROM of sel when it is a ranked subquery filtered on its rank by
// sel's WHERE; it returns the relation and the rest of the WHERE, or a nil relation when
// sel is not a Top-N.
func (p *planner) planTopN(sel *parser.Select, env *cteEnv) (*relation, parser.Expr, error) {
	src := p.rankedSubquery(sel, env)
	if src == nil {
		return nil, nil, nil
	}
	inner, call := src.sel, src.call
	rnItem := inner.Items[src.item]
	rn := rnItem.Alias
	if rn == "" {
		return nil, nil, nil // the outer query cannot name the rank
	}
	start, end, rest, ok := rankBounds(sel.Where, rn)
	if !ok {
		return nil, nil, nil
	}
	over := call.Over
	if len(call.Args) > 0 || call.Star || call.Distinct || call.Filter != nil {
		return nil, nil, errAt(call.At, ErrTypeMismatch, "%s takes no arguments", strings.ToUpper(call.Name))
	}
	if len(over.OrderBy) == 0 {
		return nil, nil, errAt(over.At, ErrUnsupported, "unsupported: %s() OVER without ORDER BY", strings.ToUpper(call.Name))
	}
	if start > end || start < 1 {
		return nil, nil, errAt(sel.Where.Pos(), ErrUnsupported, "unsupported: rank range %d to %d: Top-N needs 1 <= start <= end", start, end)
	}
	if inner.Distinct || len(inner.GroupBy) > 0 || inner.Having != nil || inner.From == nil {
		return nil, nil, errAt(over.At, ErrUnsupported, "unsupported: OVER in a query with GROUP BY, HAVING or DISTINCT: rank the rows of a subquery that aggregates")
	}
	for i, it := range inner.Items {
		if i != src.item && (hasAggregate(it.Expr) || hasOver(it.Expr)) {
			return nil, nil, errAt(it.At, ErrUnsupported, "unsupported: another aggregate or OVER beside the rank of a Top-N")
		}
	}
	rankNumber := false
	for _, it := range sel.Items {
		if star, ok := it.Expr.(*parser.Star); ok && (star.Qualifier == "" || strings.EqualFold(star.Qualifier, src.alias)) {
			rankNumber = true
		} else if mentions(it.Expr, rn) {
			rankNumber = true
		}
	}
	for _, e := range append(append(append([]parser.Expr{}, rest...), sel.GroupBy...), sel.Having) {
		if e != nil && mentions(e, rn) {
			rankNumber = true
		}
	}

	inner, err := p.withJoinWhere(inner, src.env) // cross_join.go
	if err != nil {
		return nil, nil, err
	}
	from, err := p.planFrom(inner.From, src.env)
	if err != nil {
		return nil, nil, err
	}
	if err := checkBareSession(inner, from, false); err != nil { // session_window.go
		return nil, nil, err
	}
	var where Expr
	if inner.Where != nil {
		if where, err = (&binder{scope: from.scope, clause: "WHERE"}).bind(inner.Where); err != nil {
			return nil, nil, err
		}
		if err := checkBoolean(inner.Where.Pos(), where, "the WHERE condition"); err != nil {
			return nil, nil, err
		}
	}
	// The rank item is expanded with the others (a placeholder in its place) so that it
	// gets its position and name as the select list gives them.
	all := append([]parser.SelectItem{}, inner.Items...)
	placeholder := &parser.Literal{At: rnItem.At, Kind: parser.NumberLit, Text: "0"}
	all[src.item] = parser.SelectItem{At: rnItem.At, Expr: placeholder, Alias: rn}
	items, err := expandItems(all, from.scope)
	if err != nil {
		return nil, nil, err
	}
	rIdx := 0
	for i, it := range items {
		if it.expr == parser.Expr(placeholder) {
			rIdx = i
		}
	}
	rnName := items[rIdx].name
	items = append(items[:rIdx:rIdx], items[rIdx+1:]...)

	// Below the rank: the selected columns, then partition and order keys not among them.
	b := &binder{scope: from.scope, clause: "SELECT"}
	pre := &Calc{Input: from.node, Filter: where}
	cols := map[string]int{}
	add := func(x Expr, name string) int {
		if i, ok := cols[x.String()]; ok {
			return i
		}
		if c, ok := x.(*ColumnRef); ok {
			taken := false
			for _, o := range pre.Out {
				taken = taken || strings.EqualFold(o.Name, c.Name)
			}
			if !taken {
				name = c.Name
			}
		}
		cols[x.String()] = len(pre.Projections)
		pre.Projections = append(pre.Projections, x)
		pre.Out = append(pre.Out, types.Column{Name: name, Type: x.Type()})
		return len(pre.Projections) - 1
	}
	srcCols := make([]scopeCol, len(items))
	for i, it := range items {
		x, err := b.bind(it.expr)
		if err != nil {
			return nil, nil, err
		}
		cols[x.String()] = len(pre.Projections) // a repeated item stays its own column
		pre.Projections = append(pre.Projections, x)
		pre.Out = append(pre.Out, types.Column{Name: it.name, Type: x.Type()})
		srcCols[i] = scopeCol{name: it.name, t: x.Type()}
	}
	ob := &binder{scope: from.scope, clause: "OVER"}
	var part []int
	for i, e := range over.PartitionBy {
		x, err := ob.bind(e)
		if err != nil {
			return nil, nil, err
		}
		part = append(part, add(x, fmt.Sprintf("$p%d", i)))
	}
	var order []SortKey
	for i, o := range over.OrderBy {
		x, err := ob.bind(o.Expr)
		if err != nil {
			return nil, nil, err
		}
		order = append(order, SortKey{Col: add(x, fmt.Sprintf("$o%d", i)), Desc: o.Desc, Nulls: o.Nulls})
	}

	rankType := rankTypes[strings.ToUpper(call.Name)]
	var node Node
	changelog := Updating
	if t := pre.Out[order[0].Col].Type; rankType == RowNumber && start == 1 && end == 1 && len(order) == 1 &&
		t.TimeAttr != types.NoTimeAttr && !rankNumber && !windowPartitioned(pre, part) { // window_rank.go
		if from.changelog != InsertOnly {
			return nil, nil, errAt(over.At, ErrUnsupported, "unsupported: deduplication over an updating input")
		}
		d := &Deduplicate{Input: pre, Keys: part, KeepLast: order[0].Desc, TimeCol: order[0].Col, RowTime: t.TimeAttr == types.RowTime}
		changelog = d.Changelog()
		for _, c := range pre.Out {
			if changelog != InsertOnly {
				c.Type = c.Type.WithoutTimeAttr()
			}
			d.Out = append(d.Out, c)
		}
		node = d
	} else {
		r := &Rank{Input: pre, Type: rankType, Start: start, End: end, PartitionBy: part, OrderBy: order, RankNumber: rankNumber}
		if from.changelog != InsertOnly {
			r.Strategy = RetractStrategy
			if key, ok := rankUniqueKey(r); ok { // rank_strategy.go
				r.Strategy, r.UniqueKey = UpdateFastStrategy, key
			}
		}
		for _, c := range pre.Out {
			c.Type = c.Type.WithoutTimeAttr()
			r.Out = append(r.Out, c)
		}
		if rankNumber {
			r.Out = append(r.Out, types.Column{Name: rnName, Type: types.Type{Kind: types.BigInt, NotNull: true}})
		}
		node = r
		if wr := asWindowRank(r); wr != nil { // window_rank.go
			node, changelog = wr, InsertOnly
		}
	}

	// Above: the subquery's columns in its order, the rank where it was selected.
	post := &Calc{Input: node}
	res := &scope{}
	out := node.Schema()
	for i, it := range items {
		if i == rIdx && rankNumber {
			post.Projections = append(post.Projections, &ColumnRef{Index: len(out) - 1, Name: rnName, T: out[len(out)-1].Type})
			post.Out = append(post.Out, out[len(out)-1])
			res.cols = append(res.cols, scopeCol{name: rnName, t: out[len(out)-1].Type})
		}
		post.Projections = append(post.Projections, &ColumnRef{Index: i, Name: it.name, T: out[i].Type})
		post.Out = append(post.Out, types.Column{Name: it.name, Type: out[i].Type})
		c := srcCols[i]
		c.t = out[i].Type
		res.cols = append(res.cols, c)
	}
	if rIdx >= len(items) && rankNumber {
		post.Projections = append(post.Projections, &ColumnRef{Index: len(out) - 1, Name: rnName, T: out[len(out)-1].Type})
		post.Out = append(post.Out, out[len(out)-1])
		res.cols = append(res.cols, scopeCol{name: rnName, t: out[len(out)-1].Type})
	}
	quals := []string{}
	if src.alias != "" {
		quals = []string{src.alias}
	}
	return &relation{node: post, scope: res.requalify(quals...), changelog: changelog}, andAll(rest), nil
}

func hasOver(e parser.Expr) bool {
	found := false
	walkAST(e, func(x parser.Expr) bool {
		if c, ok := x.(*parser.FuncCall); ok && c.Over != nil {
			found = true
		}
		return !found
	})
	return found
}

// pruneRank keeps the columns the parent uses and the partition and order keys.
func (o *optimizer) pruneRank(x *Rank, used []bool) (Node, []int, error) {
	width := len(x.Input.Schema())
	inUsed := append([]bool(nil), used[:width]...)
	for _, k := range x.PartitionBy {
		inUsed[k] = true
	}
	for _, k := range x.OrderBy {
		inUsed[k.Col] = true
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	r := *x
	r.Input, r.PartitionBy, r.OrderBy, r.Out = in, remapInts(x.PartitionBy, m), nil, nil
	r.UniqueKey = remapInts(x.UniqueKey, m)
	for _, k := range x.OrderBy {
		k.Col = m[k.Col]
		r.OrderBy = append(r.OrderBy, k)
	}
	for _, c := range in.Schema() {
		c.Type = c.Type.WithoutTimeAttr()
		r.Out = append(r.Out, c)
	}
	mapping := append([]int(nil), m...)
	if x.RankNumber {
		mapping = append(mapping, len(r.Out))
		r.Out = append(r.Out, x.Out[width])
	}
	return &r, mapping, nil
}

// pruneDedup keeps the columns the parent uses, the keys and the time attribute.
func (o *optimizer) pruneDedup(x *Deduplicate, used []bool) (Node, []int, error) {
	inUsed := append([]bool(nil), used...)
	for _, k := range x.Keys {
		inUsed[k] = true
	}
	inUsed[x.TimeCol] = true
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	d := *x
	d.Input, d.Keys, d.TimeCol, d.Out = in, remapInts(x.Keys, m), m[x.TimeCol], nil
	for _, c := range in.Schema() {
		if d.Changelog() != InsertOnly {
			c.Type = c.Type.WithoutTimeAttr()
		}
		d.Out = append(d.Out, c)
	}
	return &d, m, nil
}

// renamedLike is out with its first len(in) columns named as in's: a node that passes
// its input's columns through keeps their names when a Calc below it is merged away.
func renamedLike(out, in types.Schema) types.Schema {
	out = append(types.Schema(nil), out...)
	for i := range in {
		if i < len(out) {
			out[i].Name = in[i].Name
		}
	}
	return out
}

// describeRankKeys adds the partition (or deduplication) keys and the order of a Rank to
// the plan's fingerprint, traced back to source columns.
func describeRankKeys(b *strings.Builder, in Node, keys []int, order []SortKey) {
	s := in.Schema()
	for _, k := range keys {
		fmt.Fprintf(b, " key=%s:%s", lineage(in, k), s[k].Type.WithoutTimeAttr())
	}
	for _, k := range order {
		fmt.Fprintf(b, " order=%s:%s desc=%v%s", lineage(in, k.Col), s[k.Col].Type.WithoutTimeAttr(), k.Desc, k.NullsState())
	}
	b.WriteByte('\n')
}
