package planner

import (
	"fmt"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// From logical to physical plan
//
// The binder builds a tree of the physical node types whose leaves are tableRefs: a
// whole table, every column, as SELECT * would see it. Two passes make it physical:
//
//   - prune walks down from the root with the set of columns each node's parent reads,
//     drops projections nobody reads, and expands each tableRef into what reading the
//     table needs: a TableSourceScan that decodes only the physical and metadata columns
//     in use (projection pushed into the source), a Calc computing the computed columns
//     in use, and the WatermarkAssigner when the table declares a watermark.
//   - merge walks up and fuses adjacent Calcs (filters and projections) into one, folds
//     constant projections into Values, and removes Calcs that only pass columns through.

// tableRef is a table in the logical plan, before prune expands it.
type tableRef struct {
	table *Table
	out   types.Schema
}

func (n *tableRef) Children() []Node     { return nil }
func (n *tableRef) Schema() types.Schema { return n.out }
func (n *tableRef) Explain() string      { return fmt.Sprintf("Table(table=[%s])", n.table.Name) }

// optimizer holds what prune needs beyond the plan.
type optimizer struct {
	sourceIdle time.Duration // table.exec.source.idle-timeout
	// cdcDuplicate is table.exec.source.cdc-events-duplicate: CDC tables with a primary
	// key are normalized as upsert tables are.
	cdcDuplicate bool
}

// physical turns the logical plan under a Sink or Collect root into the physical plan.
func (o *optimizer) physical(root Node) (Node, error) {
	switch r := root.(type) {
	case *Sink:
		in, err := o.pruneAll(r.Input)
		if err != nil {
			return nil, err
		}
		s := *r
		s.Input = merge(in, false)
		return &s, nil
	case *Collect:
		in, err := o.pruneAll(r.Input)
		if err != nil {
			return nil, err
		}
		c := *r
		c.Input = merge(in, true)
		return &c, nil
	}
	return nil, fmt.Errorf("%w: plan root %T", ErrInvalidStatement, root)
}

func (o *optimizer) pruneAll(n Node) (Node, error) {
	used := make([]bool, len(n.Schema()))
	for i := range used {
		used[i] = true
	}
	out, _, err := o.prune(n, used)
	return out, err
}

// prune returns n rewritten to produce at least the used columns, and where each old
// column went (-1 when dropped).
func (o *optimizer) prune(n Node, used []bool) (Node, []int, error) {
	switch x := n.(type) {
	case *tableRef:
		node, m := o.expand(x.table, used)
		return node, m, nil
	case *Calc:
		inUsed := make([]bool, len(x.Input.Schema()))
		for i, p := range x.Projections {
			if used[i] {
				markUsed(p, inUsed)
			}
		}
		if x.Filter != nil {
			markUsed(x.Filter, inUsed)
		}
		in, m, err := o.prune(x.Input, inUsed)
		if err != nil {
			return nil, nil, err
		}
		c := &Calc{Input: in}
		if x.Filter != nil {
			c.Filter = remap(x.Filter, m)
		}
		mapping := make([]int, len(x.Projections))
		for i, p := range x.Projections {
			mapping[i] = -1
			if used[i] {
				mapping[i] = len(c.Projections)
				c.Projections = append(c.Projections, remap(p, m))
				c.Out = append(c.Out, x.Out[i])
			}
		}
		return c, mapping, nil
	case *WindowTableFunction:
		width := len(x.Input.Schema())
		inUsed := append([]bool(nil), used[:width]...)
		inUsed[x.Window.TimeCol] = true
		in, m, err := o.prune(x.Input, inUsed)
		if err != nil {
			return nil, nil, err
		}
		win := x.Window
		win.TimeCol = m[x.Window.TimeCol]
		out := append(types.Schema(nil), in.Schema()...)
		out[win.TimeCol].Type = out[win.TimeCol].Type.WithoutTimeAttr()
		mapping := append([]int(nil), m...)
		for j := width; j < len(x.Out); j++ {
			mapping = append(mapping, len(out))
			out = append(out, x.Out[j])
		}
		return &WindowTableFunction{Input: in, Window: win, Out: out}, mapping, nil
	case *WindowAggregate:
		in, m, err := o.pruneAggInput(x.Input, x.Keys, x.Aggs, x.Window.TimeCol)
		if err != nil {
			return nil, nil, err
		}
		win := x.Window
		win.TimeCol = m[win.TimeCol]
		return &WindowAggregate{Input: in, Window: win, Keys: remapInts(x.Keys, m), Aggs: remapAggs(x.Aggs, m), Out: x.Out}, seq(len(x.Out)), nil
	case *GroupAggregate:
		in, m, err := o.pruneAggInput(x.Input, x.Keys, x.Aggs, -1)
		if err != nil {
			return nil, nil, err
		}
		return &GroupAggregate{Input: in, Keys: remapInts(x.Keys, m), Aggs: remapAggs(x.Aggs, m), Out: x.Out, Retract: x.Retract}, seq(len(x.Out)), nil
	case *OverAggregate:
		return o.pruneOver(x, used) // over.go
	case *WindowRank:
		return o.pruneWindowRank(x, used) // window_rank.go
	case *Expand:
		return o.pruneExpand(x, used) // grouping.go
	case *Rank:
		return o.pruneRank(x, used)
	case *Deduplicate:
		return o.pruneDedup(x, used)
	case *TemporalSort:
		return o.pruneTemporalSort(x, used) // sort.go
	case *Match:
		return o.pruneMatch(x, used) // match.go
	case *Limit:
		in, m, err := o.prune(x.Input, used)
		if err != nil {
			return nil, nil, err
		}
		return &Limit{Input: in, N: x.N}, m, nil
	case *Join:
		return o.pruneJoin(x, used) // join.go
	case *IntervalJoin:
		return o.pruneIntervalJoin(x, used) // interval_join.go
	case *TemporalJoin:
		return o.pruneTemporalJoin(x, used) // temporal_join.go
	case *SemiJoin:
		return o.pruneSemiJoin(x, used) // semi_join.go
	case *WindowJoin:
		return o.pruneWindowJoin(x, used) // window_join.go
	case *Correlate:
		return o.pruneCorrelate(x, used) // unnest.go
	case *LookupJoin:
		return o.pruneLookupJoin(x, used) // lookup.go
	case *Exchange:
		return o.pruneExchange(x, used)
	case *ChangelogNormalize:
		return o.pruneNormalize(x, used) // changelog.go
	case *Union:
		return o.pruneUnion(x, used)
	case *Values:
		v := &Values{}
		mapping := make([]int, len(x.Out))
		for i := range x.Out {
			mapping[i] = -1
			if used[i] {
				mapping[i] = len(v.Out)
				v.Out = append(v.Out, x.Out[i])
			}
		}
		for _, row := range x.Rows {
			var r []Expr
			for i, e := range row {
				if used[i] {
					r = append(r, e)
				}
			}
			v.Rows = append(v.Rows, r)
		}
		return v, mapping, nil
	}
	return nil, nil, fmt.Errorf("%w: cannot prune %T", ErrUnsupported, n)
}

func (o *optimizer) pruneAggInput(in Node, keys []int, aggs []AggCall, timeCol int) (Node, []int, error) {
	used := make([]bool, len(in.Schema()))
	for _, k := range keys {
		used[k] = true
	}
	for _, a := range aggs {
		if a.Arg >= 0 {
			used[a.Arg] = true
		}
		if a.Filter >= 0 {
			used[a.Filter] = true
		}
	}
	if timeCol >= 0 {
		used[timeCol] = true
	}
	return o.prune(in, used)
}

func remapInts(xs []int, m []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = m[x]
	}
	return out
}

func remapAggs(aggs []AggCall, m []int) []AggCall {
	out := make([]AggCall, len(aggs))
	for i, a := range aggs {
		if a.Arg >= 0 {
			a.Arg = m[a.Arg]
		}
		if a.Filter >= 0 {
			a.Filter = m[a.Filter]
		}
		out[i] = a
	}
	return out
}

// expand reads table t for a parent that uses the columns marked in used (indexes of
// t.Columns). The returned mapping gives each used column's index in the output.
func (o *optimizer) expand(t *Table, used []bool) (Node, []int) {
	n := len(t.Columns)
	// Columns the expansion outputs: the used ones, plus the rowtime column and what the
	// watermark reads, since the watermark is assigned here, before any filter.
	outCols := append([]bool(nil), used...)
	mode := scanChangelog(t.Changelog())
	normalized := mode == Upsert || mode == Updating && o.cdcDuplicate && len(t.PrimaryKey) > 0
	if normalized {
		// ChangelogNormalize keeps the last row per key: it needs the key.
		for _, k := range t.primaryKeyIndexes() {
			outCols[k] = true
		}
	}
	if wm := t.Watermark; wm != nil {
		outCols[wm.Column] = true
		markUsed(wm.Expr, outCols)
	}
	// Columns the source must produce: physical and metadata columns output or read by an
	// output computed column.
	need := append([]bool(nil), outCols...)
	for i, c := range t.Columns {
		if outCols[i] && c.Kind == parser.ComputedColumn {
			markUsed(c.Expr, need)
		}
	}
	scan := &TableSourceScan{Table: t.Name, Connector: t.Connector, Info: t.Info(), Hint: hintText(t.Hint), Changelog: mode}
	scanIdx := make([]int, n)
	for i := range scanIdx {
		scanIdx[i] = -1
	}
	for _, kind := range []parser.ColumnKind{parser.PhysicalColumn, parser.MetadataColumn} {
		for i, c := range t.Columns {
			if c.Kind != kind || !need[i] {
				continue
			}
			scanIdx[i] = len(scan.Produce)
			pc := connectors.ProducedColumn{Name: c.Name, Type: c.Type.WithoutTimeAttr()}
			outType := c.Type
			if kind == parser.MetadataColumn {
				pc.MetadataKey = c.MetadataKey
				if !c.MetadataType.SameKind(c.Type) {
					pc.Type = c.MetadataType.WithNotNull(c.MetadataType.NotNull)
					outType = pc.Type
				}
			}
			scan.Produce = append(scan.Produce, pc)
			scan.Out = append(scan.Out, types.Column{Name: c.Name, Type: outType})
		}
	}
	// base[i] is column i read from the scan, cast when the declared type of a metadata
	// column differs from the type the connector gives.
	base := make([]Expr, n)
	for i, c := range t.Columns {
		if scanIdx[i] < 0 {
			continue
		}
		var e Expr = &ColumnRef{Index: scanIdx[i], Name: c.Name, T: scan.Out[scanIdx[i]].Type}
		if !scan.Out[scanIdx[i]].Type.SameKind(c.Type) {
			e = &Cast{X: e, T: c.Type.WithoutTimeAttr()}
		}
		base[i] = e
	}
	var projs []Expr
	var out types.Schema
	mapping := make([]int, n)
	identity := true
	for i, c := range t.Columns {
		mapping[i] = -1
		if !outCols[i] {
			continue
		}
		e := base[i]
		if c.Kind == parser.ComputedColumn {
			e = substitute(c.Expr, base)
		}
		if r, ok := e.(*ColumnRef); !ok || r.Index != len(projs) {
			identity = false
		}
		mapping[i] = len(projs)
		projs = append(projs, e)
		out = append(out, types.Column{Name: c.Name, Type: c.Type})
	}
	var node Node = scan
	if !identity || len(projs) != len(scan.Produce) {
		node = &Calc{Input: scan, Projections: projs, Out: out}
	}
	if wm := t.Watermark; wm != nil {
		node = &WatermarkAssigner{
			Input:       node,
			RowtimeCol:  mapping[wm.Column],
			Expr:        remap(wm.Expr, mapping),
			IdleTimeout: o.idleTimeout(t),
		}
	}
	if normalized {
		node = normalize(node, remapInts(t.primaryKeyIndexes(), mapping))
	}
	return node, mapping
}

// idleTimeout is the table's scan.watermark.idle-timeout, else the session's
// table.exec.source.idle-timeout.
func (o *optimizer) idleTimeout(t *Table) time.Duration {
	if v, ok := t.Options[optionIdleTimeout]; ok {
		if d, err := connectors.ParseDuration(v); err == nil {
			return d
		}
	}
	return o.sourceIdle
}

// merge fuses Calcs bottom-up. keepNames is true under a Collect root, where the output
// column names are what the user sees, so a Calc that only renames must stay.
func merge(n Node, keepNames bool) Node {
	switch x := n.(type) {
	case *Calc:
		c := &Calc{Input: merge(x.Input, false), Projections: x.Projections, Filter: x.Filter, Out: x.Out}
		// A renaming Calc below may have gone: the references take the names of what
		// they now read.
		in := c.Input.Schema()
		name := func(e Expr) Expr {
			return rewrite(e, func(y Expr) Expr {
				if r, ok := y.(*ColumnRef); ok && r.Index < len(in) && r.Name != in[r.Index].Name {
					return &ColumnRef{Index: r.Index, Name: in[r.Index].Name, T: r.T}
				}
				return y
			})
		}
		c.Projections = make([]Expr, len(x.Projections))
		for i, p := range x.Projections {
			c.Projections[i] = name(p)
		}
		if x.Filter != nil {
			c.Filter = name(x.Filter)
		}
		if inner, ok := c.Input.(*Calc); ok && canMerge(c, inner) {
			c = &Calc{
				Input:       inner.Input,
				Projections: make([]Expr, len(c.Projections)),
				Filter:      inner.Filter,
				Out:         c.Out,
			}
			for i, p := range x.Projections {
				c.Projections[i] = substitute(p, inner.Projections)
			}
			if x.Filter != nil {
				c.Filter = and(inner.Filter, substitute(x.Filter, inner.Projections))
			}
		}
		if v, ok := c.Input.(*Values); ok && c.Filter == nil {
			rows := make([][]Expr, len(v.Rows))
			for r, row := range v.Rows {
				rows[r] = make([]Expr, len(c.Projections))
				for i, p := range c.Projections {
					rows[r][i] = substitute(p, row)
				}
			}
			return &Values{Rows: rows, Out: c.Out}
		}
		if isIdentity(c, keepNames) {
			return c.Input
		}
		return c
	case *WatermarkAssigner:
		w := *x
		w.Input = merge(x.Input, false)
		return &w
	case *WindowTableFunction:
		w := *x
		w.Input = merge(x.Input, false)
		return &w
	case *WindowAggregate:
		w := *x
		w.Input = merge(x.Input, false)
		return &w
	case *GroupAggregate:
		g := *x
		g.Input = merge(x.Input, false)
		return &g
	case *OverAggregate:
		a := *x
		a.Input = merge(x.Input, false)
		a.Out = renamedLike(x.Out, a.Input.Schema())
		return &a
	case *WindowRank:
		w := *x
		w.Input = merge(x.Input, false)
		w.Out = renamedLike(x.Out, w.Input.Schema())
		return &w
	case *Expand:
		e := *x
		e.Input = merge(x.Input, false)
		e.Out = renamedLike(x.Out, e.Input.Schema())
		return &e
	case *Rank:
		r := *x
		r.Input = merge(x.Input, false)
		r.Out = renamedLike(x.Out, r.Input.Schema())
		return &r
	case *Deduplicate:
		d := *x
		d.Input = merge(x.Input, false)
		d.Out = renamedLike(x.Out, d.Input.Schema())
		return &d
	case *Limit:
		l := *x
		l.Input = merge(x.Input, keepNames)
		return &l
	case *TemporalSort:
		t := *x
		t.Input = merge(x.Input, keepNames)
		return &t
	case *Match:
		m := *x
		m.Input = merge(x.Input, true) // match.go
		return &m
	case *Exchange:
		e := *x
		e.Input = merge(x.Input, false)
		return &e
	case *ChangelogNormalize:
		c := *x
		c.Input = merge(x.Input, false)
		return &c
	case *Correlate:
		c := *x
		c.Input = merge(x.Input, false)
		return &c
	case *LookupJoin:
		l := *x
		l.Input = merge(x.Input, false)
		return &l
	case *Join:
		j := *x
		j.Left, j.Right = merge(x.Left, false), merge(x.Right, false)
		return &j
	case *IntervalJoin:
		j := *x
		j.Left, j.Right = merge(x.Left, false), merge(x.Right, false)
		return &j
	case *TemporalJoin:
		j := *x
		j.Left, j.Right = merge(x.Left, false), merge(x.Right, false)
		return &j
	case *SemiJoin:
		j := *x
		j.Left, j.Right = merge(x.Left, false), merge(x.Right, false)
		return &j
	case *WindowJoin:
		j := *x
		j.Left, j.Right = merge(x.Left, false), merge(x.Right, false)
		return &j
	case *Union:
		u := *x
		u.Inputs = make([]Node, len(x.Inputs))
		for i, in := range x.Inputs {
			u.Inputs[i] = merge(in, false)
		}
		return foldValues(&u) // join.go
	}
	return n
}

// canMerge reports whether outer can be inlined over inner's input: it cannot when that
// would evaluate a non-deterministic projection of inner (PROCTIME(), RAND()) twice.
func canMerge(outer, inner *Calc) bool {
	refs := make([]int, len(inner.Projections))
	count := func(e Expr) {
		visit(e, func(x Expr) {
			if c, ok := x.(*ColumnRef); ok {
				refs[c.Index]++
			}
		})
	}
	for _, p := range outer.Projections {
		count(p)
	}
	count(outer.Filter)
	for i, p := range inner.Projections {
		if refs[i] > 1 && !isDeterministic(p) {
			return false
		}
	}
	return true
}

// isIdentity reports whether c passes its input through unchanged.
func isIdentity(c *Calc, keepNames bool) bool {
	in := c.Input.Schema()
	if c.Filter != nil || len(c.Projections) != len(in) {
		return false
	}
	for i, p := range c.Projections {
		r, ok := p.(*ColumnRef)
		if !ok || r.Index != i {
			return false
		}
		if keepNames && c.Out[i].Name != in[i].Name {
			return false
		}
		if c.Out[i].Type.TimeAttr != in[i].Type.TimeAttr {
			return false
		}
	}
	return true
}
