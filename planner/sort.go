package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// ORDER BY in streaming
//
// A query ORDER BY whose first key is an ascending event-time attribute plans as Flink's
// TemporalSort: rows wait until the watermark passes their time and are then emitted in
// the order of the time and the other keys, so the output is insert-only and keeps the
// time attribute. Flink refuses every other sort of an unbounded stream ("Sort on a
// non-time-attribute field is not supported"), and so does pipesql. ORDER BY a
// processing-time attribute, which Flink runs by sorting the rows of each millisecond of
// wall clock by the other keys, is refused here (not built).

// ORDER BY with LIMIT, when the first key is not an ascending event-time attribute
// (ORDER BY cnt DESC LIMIT 10 over a GROUP BY), is Flink's SortLimit: a Top-N over the
// whole input, one partition, kept as a Rank (ROW_NUMBER, rows 1..N, no rank column),
// whose result is updating. An ORDER BY key that is an expression or an aggregate is
// computed as a hidden column of the select list, sorted by and projected away.

// TemporalSort emits the rows of its insert-only input sorted by OrderBy, whose first key
// is the ascending event-time attribute: a row is emitted when the watermark reaches its
// time, rows of one time in the order of the other keys and then of arrival. A row at or
// behind the watermark on arrival is late: dropped and counted.
type TemporalSort struct {
	Input   Node
	OrderBy []SortKey
}

var _ Node = (*TemporalSort)(nil)

func (n *TemporalSort) Children() []Node     { return []Node{n.Input} }
func (n *TemporalSort) Schema() types.Schema { return n.Input.Schema() }
func (n *TemporalSort) Changelog() Changelog { return InsertOnly }
func (n *TemporalSort) Explain() string {
	return "TemporalSort(orderBy=[" + sortKeysString(n.Input.Schema(), n.OrderBy) + "])"
}

func sortKeysString(in types.Schema, keys []SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		parts[i] = in[k.Col].Name + " " + dir
	}
	return strings.Join(parts, ", ")
}

// planOrderBy plans the ORDER BY of query q over rel, its planned body: each key must be
// a column of the body's select list (by name or position) or, for a SELECT, a column of
// its FROM clause, which is then selected as a hidden column, sorted by and projected
// away, as Calcite does; the first key must be an ascending event-time attribute.
func (p *planner) planOrderBy(q *parser.Query, rel *relation, env *cteEnv) (*relation, error) {
	in, width := rel, len(rel.scope.cols)
	hidden := map[int]int{} // order item -> hidden column
	if sel, ok := q.Body.(*parser.Select); ok && !sel.Distinct {
		b := &binder{scope: rel.scope, clause: "ORDER BY"}
		ext := *sel
		ext.Items = slices.Clone(sel.Items)
		for i, it := range q.OrderBy {
			if x, err := b.bind(it.Expr); errors.Is(err, ErrUnknownColumn) || errors.Is(err, ErrMisplacedAggregate) || err == nil && !isColumnOrPosition(x) {
				hidden[i] = width + len(hidden)
				ext.Items = append(ext.Items, parser.SelectItem{At: it.At, Expr: it.Expr, Alias: hiddenName(it.Expr, i, ext.Items, rel.scope)})
			}
		}
		if len(hidden) > 0 {
			r, err := p.planSelect(&ext, env)
			if err != nil {
				return nil, err
			}
			in = r
		}
	}
	b := &binder{scope: in.scope, clause: "ORDER BY"}
	keys := make([]SortKey, 0, len(q.OrderBy))
	sortLimit := false
	for i, it := range q.OrderBy {
		var x Expr
		if col, ok := hidden[i]; ok {
			c := in.scope.cols[col]
			x = &ColumnRef{Index: col, Name: c.name, T: c.t}
		} else {
			var err error
			if x, err = b.bind(it.Expr); err != nil {
				return nil, err
			}
		}
		if lit, isLit := x.(*Literal); isLit && lit.T.IsInteger() && !lit.Value.IsNull() {
			// ORDER BY 2: the second column of the select list, as Calcite reads it.
			k := lit.Value.Int()
			if k < 1 || k > int64(width) {
				return nil, errAt(it.At, ErrUnsupported, "unsupported: ORDER BY %d: the select list has %d columns", k, width)
			}
			c := in.scope.cols[k-1]
			x = &ColumnRef{Index: int(k - 1), Name: c.name, T: c.t}
		}
		ref, ok := x.(*ColumnRef)
		if !ok {
			return nil, errAt(it.At, ErrUnsupported, "unsupported: ORDER BY %s: order by a column", parser.Format(it.Expr))
		}
		if i == 0 && q.Limit != nil && (ref.T.TimeAttr != types.RowTime || it.Desc) {
			sortLimit = true
		}
		if i == 0 && !sortLimit {
			switch {
			case ref.T.TimeAttr == types.ProcTime:
				return nil, errAt(it.At, ErrUnsupported, "unsupported: ORDER BY a processing-time attribute (%s); sort on an event-time attribute", parser.Format(it.Expr))
			case ref.T.TimeAttr != types.RowTime || it.Desc:
				return nil, errAt(it.At, ErrUnsupported, "unsupported: sort on a non-time-attribute field is not supported in streaming: ORDER BY must start with an ascending event-time attribute, and %s is %s", parser.Format(it.Expr), orderDesc(ref.T, it.Desc))
			}
			if in.changelog != InsertOnly {
				return nil, errAt(it.At, ErrUnsupported, "unsupported: ORDER BY over an updating input: a temporal sort needs an insert-only input")
			}
		}
		keys = append(keys, SortKey{Col: ref.Index, Desc: it.Desc, Nulls: it.Nulls})
	}
	var node Node = &TemporalSort{Input: in.node, OrderBy: keys}
	changelog := InsertOnly
	if sortLimit {
		n, err := limitCount(q.Limit)
		if err != nil {
			return nil, err
		}
		r := &Rank{Input: in.node, Type: RowNumber, Start: 1, End: n, OrderBy: keys, SortLimit: true}
		if in.changelog != InsertOnly {
			r.Strategy = RetractStrategy
			if key, ok := rankUniqueKey(r); ok { // rank_strategy.go
				r.Strategy, r.UniqueKey = UpdateFastStrategy, key
			}
		}
		for _, c := range in.node.Schema() {
			c.Type = c.Type.WithoutTimeAttr()
			r.Out = append(r.Out, c)
		}
		node, changelog = r, Updating
	}
	if len(hidden) > 0 {
		out := slices.Clone(node.Schema()[:width])
		projs := make([]Expr, width)
		for i, c := range out {
			projs[i] = &ColumnRef{Index: i, Name: c.Name, T: c.Type}
		}
		node = &Calc{Input: node, Projections: projs, Out: out}
	}
	out := rel.scope
	if sortLimit { // the Rank's columns are no time attributes
		out = &scope{cols: slices.Clone(rel.scope.cols)}
		for i := range out.cols {
			out.cols[i].t = out.cols[i].t.WithoutTimeAttr()
		}
	}
	return &relation{node: node, scope: out, changelog: changelog}, nil
}

// isColumnOrPosition reports whether an ORDER BY key bound to x names a column: a
// column reference, or a position in the select list (ORDER BY 2).
func isColumnOrPosition(x Expr) bool {
	switch x := x.(type) {
	case *ColumnRef:
		return true
	case *Literal:
		return x.T.IsInteger() && !x.Value.IsNull()
	}
	return false
}

// hiddenName names the hidden column of ORDER BY item i: the column's own name, unless
// the select list or an earlier hidden column has it, else $order<i>.
func hiddenName(e parser.Expr, i int, items []parser.SelectItem, s *scope) string {
	id, ok := e.(*parser.Ident)
	if !ok {
		return fmt.Sprintf("$order%d", i)
	}
	name := id.Parts[len(id.Parts)-1]
	for _, c := range s.cols {
		if strings.EqualFold(c.name, name) {
			return fmt.Sprintf("$order%d", i)
		}
	}
	for _, it := range items {
		if strings.EqualFold(it.Alias, name) {
			return fmt.Sprintf("$order%d", i)
		}
	}
	return name
}

func orderDesc(t types.Type, desc bool) string {
	if t.TimeAttr == types.RowTime && desc {
		return "descending"
	}
	return fmt.Sprintf("%s, not a time attribute", t)
}

// pruneTemporalSort keeps the input columns used above and the sort keys.
func (o *optimizer) pruneTemporalSort(x *TemporalSort, used []bool) (Node, []int, error) {
	inUsed := append([]bool(nil), used...)
	for _, k := range x.OrderBy {
		inUsed[k.Col] = true
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]SortKey, len(x.OrderBy))
	for i, k := range x.OrderBy {
		k.Col = m[k.Col]
		keys[i] = k
	}
	return &TemporalSort{Input: in, OrderBy: keys}, m, nil
}

// describeState is what shapes the sort's state: its keys traced to the sources, and the
// buffered row's types.
func (n *TemporalSort) describeState() string {
	var b strings.Builder
	in := n.Input.Schema()
	b.WriteString("temporal-sort")
	for _, k := range n.OrderBy {
		fmt.Fprintf(&b, " key=%s:%s desc=%v%s", lineage(n.Input, k.Col), in[k.Col].Type.WithoutTimeAttr(), k.Desc, k.NullsState())
	}
	for _, c := range in {
		fmt.Fprintf(&b, " col=%s", c.Type.WithoutTimeAttr())
	}
	return b.String()
}
