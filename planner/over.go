package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// OVER aggregates
//
// SELECT ..., agg(x) OVER (PARTITION BY k ORDER BY rowtime ROWS|RANGE BETWEEN ...
// PRECEDING AND CURRENT ROW) FROM t plans as Flink plans it: a Calc below (the input's
// columns, then the partition keys and arguments that are not columns), an
// OverAggregate that appends one column per call to every input row, and a Calc above
// that computes the select list. Flink's streaming restrictions apply and are errors
// with Flink's reasons: one ascending time attribute in ORDER BY, frames that end at
// CURRENT ROW, every OVER of a select list the same window, an insert-only input, no LEAD.

// OverCall is one function of an OverAggregate.
type OverCall struct {
	Func string // COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE, LAG
	Arg  int    // input column of the argument, -1 for COUNT(*)
	// Agg is the aggregate call for COUNT, SUM, AVG, MIN and MAX (Arg the same column).
	Agg AggCall
	// LAG(x, Offset, default): Default is the input column of the default, -1 when none.
	Offset  int64
	Default int
	// Distinct is COUNT(DISTINCT x) OVER ...: Agg is distinct too but for MIN and MAX,
	// where it changes nothing.
	Distinct bool
	T        types.Type
	Name     string // w0$o0, ... as Flink names them
}

// OverAggregate appends to each row of its insert-only input the results of Calls over
// the row's frame: the rows of its partition (PartitionBy) ordered by the time attribute
// OrderCol, from Preceding rows (Rows) or microseconds (RANGE) before it, or from the
// partition's first row (Preceding < 0), to the row itself; a RANGE frame includes the
// rows with the same time (peers). With RowTime, rows are buffered until the watermark
// passes their time and processed in time order, and a row at or behind the watermark is
// late: dropped and counted. Its output is insert-only and keeps the time attribute.
type OverAggregate struct {
	Input       Node
	PartitionBy []int
	OrderCol    int
	RowTime     bool
	Rows        bool
	Preceding   int64 // rows or microseconds; -1: UNBOUNDED PRECEDING
	Calls       []OverCall
	Out         types.Schema // the input columns, then one per call
}

var _ Node = (*OverAggregate)(nil)

func (n *OverAggregate) Children() []Node     { return []Node{n.Input} }
func (n *OverAggregate) Schema() types.Schema { return n.Out }

// Frame is the frame as Flink's EXPLAIN writes it.
func (n *OverAggregate) Frame() string {
	kind := "RANGE"
	if n.Rows {
		kind = "ROWS"
	}
	start := "UNBOUNDED PRECEDING"
	switch {
	case n.Preceding == 0:
		start = "CURRENT ROW"
	case n.Preceding > 0 && n.Rows:
		start = fmt.Sprintf("%d PRECEDING", n.Preceding)
	case n.Preceding > 0:
		start = fmt.Sprintf("%d PRECEDING", n.Preceding/1000) // milliseconds, as Flink prints them
	}
	return kind + " BETWEEN " + start + " AND CURRENT ROW"
}

func (n *OverAggregate) Explain() string {
	in := n.Input.Schema()
	part := make([]string, len(n.PartitionBy))
	for i, k := range n.PartitionBy {
		part[i] = in[k].Name
	}
	sel := in.Names()
	for _, c := range n.Calls {
		arg := ""
		if c.Arg >= 0 {
			arg = in[c.Arg].Name
		}
		switch {
		case c.Func == "LAG" && c.Default >= 0:
			arg += fmt.Sprintf(", %d, %s", c.Offset, in[c.Default].Name)
		case c.Func == "LAG":
			arg += fmt.Sprintf(", %d", c.Offset)
		}
		if c.Func == "COUNT" && c.Arg < 0 {
			arg = "*"
		}
		if c.Distinct {
			arg = "DISTINCT " + arg
		}
		sel = append(sel, fmt.Sprintf("%s(%s) AS %s", c.Func, arg, c.Name))
	}
	return fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s])",
		strings.Join(part, ", "), in[n.OrderCol].Name, n.Frame(), strings.Join(sel, ", "))
}

// overFuncs are the functions an OverAggregate computes.
var overFuncs = map[string]bool{
	"COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true,
	"FIRST_VALUE": true, "LAST_VALUE": true, "LAG": true,
}

// resolveWindows replaces each OVER w of sel's select list and QUALIFY by the window
// its WINDOW clause defines.
func resolveWindows(sel *parser.Select) error {
	var err error
	visit := func(e parser.Expr) {
		walkAST(e, func(x parser.Expr) bool {
			c, ok := x.(*parser.FuncCall)
			if !ok || c.Over == nil || c.Over.Name == "" || err != nil {
				return err == nil
			}
			for _, w := range sel.Windows {
				if strings.EqualFold(w.Name, c.Over.Name) {
					spec := *w.Spec
					spec.At = c.Over.At
					c.Over = &spec
					return true
				}
			}
			names := make([]string, len(sel.Windows))
			for i, w := range sel.Windows {
				names[i] = w.Name
			}
			err = errAt(c.Over.At, ErrUnknownColumn, "unknown window '%s'%s", c.Over.Name, didYouMean(c.Over.Name, names))
			return false
		})
	}
	for _, it := range sel.Items {
		visit(it.Expr)
	}
	visit(sel.Qualify)
	return err
}

// overCalls returns the OVER calls of the select list, outermost first.
func overCalls(items []selectItem) []*parser.FuncCall {
	var out []*parser.FuncCall
	for _, it := range items {
		walkAST(it.expr, func(x parser.Expr) bool {
			if c, ok := x.(*parser.FuncCall); ok && c.Over != nil {
				out = append(out, c)
				return false
			}
			return true
		})
	}
	return out
}

// overWindow is a bound window specification.
type overWindow struct {
	part      []Expr
	order     Expr
	rows      bool
	preceding int64
	sig       string
}

func (p *planner) bindOverWindow(o *parser.Over, s *scope) (*overWindow, error) {
	b := &binder{scope: s, clause: "OVER"}
	w := &overWindow{preceding: -1}
	var sig strings.Builder
	for _, e := range o.PartitionBy {
		x, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		w.part = append(w.part, x)
		sig.WriteString(x.String() + ",")
	}
	if len(o.OrderBy) == 0 {
		return nil, errAt(o.At, ErrUnsupported, "unsupported: OVER without ORDER BY: in streaming, OVER windows must be ordered by a time attribute")
	}
	if len(o.OrderBy) > 1 {
		return nil, errAt(o.OrderBy[1].At, ErrUnsupported, "unsupported: OVER ordered by more than one expression: in streaming, OVER windows are ordered by one ascending time attribute")
	}
	ord := o.OrderBy[0]
	x, err := b.bind(ord.Expr)
	if err != nil {
		return nil, err
	}
	if x.Type().TimeAttr == types.NoTimeAttr {
		return nil, errAt(ord.At, ErrTimeAttribute, "OVER windows' ordering in stream mode must be defined on a time attribute, but %s is %s", parser.Format(ord.Expr), x.Type())
	}
	if ord.Desc {
		return nil, errAt(ord.At, ErrUnsupported, "unsupported: OVER ordered descending: in streaming, OVER windows are ordered by an ascending time attribute")
	}
	w.order = x
	if f := o.Frame; f != nil {
		w.rows = f.Rows
		kind := "RANGE"
		if f.Rows {
			kind = "ROW"
		}
		switch f.End.Kind {
		case parser.CurrentRow:
		case parser.Following, parser.UnboundedFollowing:
			return nil, errAt(f.End.At, ErrUnsupported, "OVER %s FOLLOWING windows are not supported yet", kind)
		default:
			return nil, errAt(f.End.At, ErrUnsupported, "unsupported: an OVER frame ending at %s: frames end at CURRENT ROW", f.End.Kind)
		}
		switch f.Start.Kind {
		case parser.UnboundedPreceding:
		case parser.CurrentRow:
			w.preceding = 0
		case parser.Preceding:
			n, err := frameOffset(f.Start.Offset, f.Rows)
			if err != nil {
				return nil, err
			}
			w.preceding = n
		default:
			return nil, errAt(f.Start.At, ErrUnsupported, "OVER %s FOLLOWING windows are not supported yet", kind)
		}
	}
	fmt.Fprintf(&sig, "|%s|%v|%d", x, w.rows, w.preceding)
	w.sig = sig.String()
	return w, nil
}

// frameOffset is n of ROWS n PRECEDING (a non-negative integer) or the microseconds of
// RANGE INTERVAL '..' PRECEDING.
func frameOffset(e parser.Expr, rows bool) (int64, error) {
	x, err := (&binder{scope: &scope{}, clause: "a window frame"}).bind(e)
	if err != nil {
		return 0, err
	}
	lit, ok := x.(*Literal)
	switch {
	case rows && (!ok || !lit.T.IsInteger() || lit.Value.IsNull() || lit.Value.Int() < 0):
		return 0, errAt(e.Pos(), ErrTypeMismatch, "ROWS n PRECEDING takes a non-negative integer constant, got %s", parser.Format(e))
	case rows:
		return lit.Value.Int(), nil
	case !ok || lit.T.Kind != types.IntervalDayTime || lit.Value.IsNull() || lit.Value.Int() < 0:
		return 0, errAt(e.Pos(), ErrTypeMismatch, "RANGE ... PRECEDING over a time attribute takes a day-time interval such as INTERVAL '1' HOUR, got %s", parser.Format(e))
	}
	return lit.Value.Int(), nil
}

// planOver plans a select list with OVER aggregates over from, filtered by where.
func (p *planner) planOver(items []selectItem, calls []*parser.FuncCall, from *relation, where Expr) (*relation, error) {
	first := calls[0]
	if from.changelog != InsertOnly {
		return nil, errAt(first.Over.At, ErrUnsupported, "unsupported: OVER aggregation over an updating input: Flink's OverAggregate consumes only insert-only input")
	}
	for _, c := range calls {
		if name := strings.ToUpper(c.Name); isRankFunc(name) || name == "LEAD" {
			_, _, err := p.overCall(c, nil, nil) // its error
			return nil, err
		}
	}
	win, err := p.bindOverWindow(first.Over, from.scope)
	if err != nil {
		return nil, err
	}
	for _, c := range calls[1:] {
		w, err := p.bindOverWindow(c.Over, from.scope)
		if err != nil {
			return nil, err
		}
		if w.sig != win.sig {
			return nil, errAt(c.Over.At, ErrUnsupported, "unsupported: OVER windows that differ in one select list: in streaming, all aggregates must be computed on the same window")
		}
	}
	// Below: the input's columns, then keys and arguments that are not columns.
	in := from.node.Schema()
	pre := &Calc{Input: from.node, Filter: where}
	cols := map[string]int{}
	for i, c := range in {
		ref := &ColumnRef{Index: i, Name: c.Name, T: c.Type}
		cols[ref.String()] = i
		pre.Projections = append(pre.Projections, ref)
		pre.Out = append(pre.Out, c)
	}
	add := func(x Expr, name string) int {
		if i, ok := cols[x.String()]; ok {
			return i
		}
		cols[x.String()] = len(pre.Projections)
		pre.Projections = append(pre.Projections, x)
		pre.Out = append(pre.Out, types.Column{Name: name, Type: x.Type()})
		return len(pre.Projections) - 1
	}
	node := &OverAggregate{Input: pre, Rows: win.rows, Preceding: win.preceding, RowTime: win.order.Type().TimeAttr == types.RowTime}
	for i, x := range win.part {
		node.PartitionBy = append(node.PartitionBy, add(x, fmt.Sprintf("$p%d", i)))
	}
	node.OrderCol = add(win.order, "$o0")
	b := &binder{scope: from.scope, clause: "an OVER aggregate argument"}
	refs := map[*parser.FuncCall]int{}
	keys := map[string]int{}
	for _, c := range calls {
		call, key, err := p.overCall(c, b, add)
		if err != nil {
			return nil, err
		}
		if k, ok := keys[key]; ok {
			refs[c] = k
			continue
		}
		call.Name = fmt.Sprintf("w0$o%d", len(node.Calls))
		keys[key] = len(node.Calls)
		refs[c] = len(node.Calls)
		node.Calls = append(node.Calls, call)
	}
	node.Out = append(types.Schema(nil), pre.Out...)
	width := len(node.Out)
	for _, c := range node.Calls {
		node.Out = append(node.Out, types.Column{Name: c.Name, Type: c.T})
	}
	// Above: the select list, an OVER call read from its column.
	over := map[*parser.FuncCall]Expr{}
	for c, k := range refs {
		over[c] = &ColumnRef{Index: width + k, Name: node.Calls[k].Name, T: node.Calls[k].T}
	}
	post := &Calc{Input: node}
	sb := &binder{scope: from.scope, clause: "SELECT", over: over}
	out := &scope{}
	for _, it := range items {
		x, err := sb.bind(it.expr)
		if err != nil {
			return nil, err
		}
		post.Projections = append(post.Projections, x)
		post.Out = append(post.Out, types.Column{Name: it.name, Type: x.Type()})
		col := scopeCol{name: it.name, t: x.Type()}
		if c, ok := x.(*ColumnRef); ok && c.Index < len(from.scope.cols) {
			src := from.scope.cols[c.Index]
			col.win, col.tvf = src.win, src.tvf
		}
		out.cols = append(out.cols, col)
	}
	return &relation{node: post, scope: out, changelog: InsertOnly}, nil
}

// overCall binds one function of an OverAggregate; key identifies equal calls.
func (p *planner) overCall(c *parser.FuncCall, b *binder, add func(Expr, string) int) (OverCall, string, error) {
	name := strings.ToUpper(c.Name)
	call := OverCall{Func: name, Arg: -1, Default: -1}
	switch {
	case name == "LEAD":
		return call, "", errAt(c.At, ErrUnsupported, "LEAD Function is not supported in stream mode (Flink runs LEAD only in batch mode)")
	case isRankFunc(name):
		return call, "", errAt(c.Over.At, ErrUnsupported, "unsupported: %s() OVER outside Top-N: pipesql runs ROW_NUMBER, RANK and DENSE_RANK as Top-N or deduplication: SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM t) WHERE rn <= N, or ... QUALIFY rn <= N", name)
	case !overFuncs[name]:
		return call, "", errAt(c.At, ErrUnsupported, "unsupported: %s in an OVER window (pipesql runs COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE and LAG over a window)", name)
	case c.Distinct && (c.Star || aggFuncs[name] == "" || orderedAggs[aggFuncs[name]]):
		return call, "", errAt(c.At, ErrUnsupported, "unsupported: DISTINCT in %s OVER (DISTINCT is for COUNT, SUM, AVG, MIN and MAX over a window)", name)
	case c.Filter != nil:
		// Calcite's validator refuses it in Flink ("OVER must be applied to aggregate function").
		return call, "", errAt(c.Filter.Pos(), ErrUnsupported, "unsupported: FILTER (WHERE ...) with OVER, as in Flink (OVER must be applied to aggregate function); filter inside the aggregate instead: %s(CASE WHEN condition THEN x END) OVER (...)", name)
	}
	call.Distinct = c.Distinct
	if c.Star {
		if name != "COUNT" {
			return call, "", errAt(c.At, ErrTypeMismatch, "%s(*) is not allowed: only COUNT(*) takes '*'", name)
		}
		call.T = types.TypeBigInt.WithNotNull(true)
		call.Agg = AggCall{Func: AggCount, Arg: -1, Filter: -1, T: call.T, State: StateCounter}
		return call, "COUNT(*)", nil
	}
	want := 1
	if name == "LAG" {
		want = 3
	}
	if len(c.Args) < 1 || len(c.Args) > want {
		return call, "", errAt(c.At, ErrTypeMismatch, "%s takes %s, got %d arguments", name, map[int]string{1: "1 argument", 3: "1 to 3 arguments"}[want], len(c.Args))
	}
	x, err := b.bind(c.Args[0])
	if err != nil {
		return call, "", err
	}
	if name == "COUNT" {
		if lit, ok := x.(*Literal); ok && !lit.Value.IsNull() {
			call.T = types.TypeBigInt.WithNotNull(true)
			call.Agg = AggCall{Func: AggCount, Arg: -1, Filter: -1, T: call.T, State: StateCounter}
			return call, "COUNT(*)", nil
		}
	}
	call.Arg = add(x, fmt.Sprintf("$a%d", 0))
	key := name + "(" + x.String()
	if call.Distinct {
		key = name + "(DISTINCT " + x.String()
	}
	switch name {
	case "FIRST_VALUE", "LAST_VALUE":
		call.T = x.Type().Nullable().WithoutTimeAttr()
	case "LAG":
		call.T = x.Type().Nullable().WithoutTimeAttr()
		call.Offset = 1
		if len(c.Args) > 1 {
			lit, ok := c.Args[1].(*parser.Literal)
			n, perr := int64(0), error(nil)
			if ok && lit.Kind == parser.NumberLit {
				n, perr = strconv.ParseInt(lit.Text, 10, 64)
			}
			if !ok || lit.Kind != parser.NumberLit || perr != nil || n < 0 {
				return call, "", errAt(c.Args[1].Pos(), ErrTypeMismatch, "LAG's offset must be a non-negative integer constant")
			}
			call.Offset = n
		}
		if len(c.Args) > 2 {
			d, err := b.bind(c.Args[2])
			if err != nil {
				return call, "", err
			}
			if d.Type().Kind != call.T.Kind && d.Type().Kind != types.Null {
				if !funcs.CanCast(d.Type(), call.T) {
					return call, "", errAt(c.Args[2].Pos(), ErrTypeMismatch, "type mismatch: LAG's default must have the type of its argument (%s), got %s", call.T, d.Type().Nullable())
				}
			}
			if !d.Type().Nullable().Equal(call.T) {
				d = &Cast{X: d, T: call.T}
			}
			call.Default = add(d, "$d0")
			key += "," + d.String()
		}
		key += fmt.Sprintf(",%d", call.Offset)
	default:
		fn := aggFuncs[name]
		t, err := aggResultType(fn, x.Type())
		if err != nil {
			return call, "", errAt(c.Args[0].Pos(), ErrTypeMismatch, "type mismatch: %s expects %s, got %s", name, err.Error(), x.Type().Nullable())
		}
		call.T = t
		call.Agg = AggCall{Func: fn, Arg: call.Arg, Filter: -1, T: t, State: stateKind(fn, false, x.Type())}
		if call.Distinct && fn != AggMin && fn != AggMax {
			// A frame's distinct values are a set that rows enter and leave: the value set
			// holds any type, unlike a bitmap with its dictionary.
			call.Agg.Distinct, call.Agg.State = true, StateDistinctValues
		}
	}
	return call, key + ")", nil
}

// pruneOver keeps the columns the parent uses, the keys, the time attribute and the
// arguments.
func (o *optimizer) pruneOver(x *OverAggregate, used []bool) (Node, []int, error) {
	width := len(x.Input.Schema())
	inUsed := append([]bool(nil), used[:width]...)
	for _, k := range x.PartitionBy {
		inUsed[k] = true
	}
	inUsed[x.OrderCol] = true
	for _, c := range x.Calls {
		if c.Arg >= 0 {
			inUsed[c.Arg] = true
		}
		if c.Default >= 0 {
			inUsed[c.Default] = true
		}
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	n := *x
	n.Input, n.PartitionBy, n.OrderCol, n.Calls = in, remapInts(x.PartitionBy, m), m[x.OrderCol], nil
	for _, c := range x.Calls {
		if c.Arg >= 0 {
			c.Arg = m[c.Arg]
			c.Agg.Arg = c.Arg
		}
		if c.Default >= 0 {
			c.Default = m[c.Default]
		}
		n.Calls = append(n.Calls, c)
	}
	n.Out = append(types.Schema(nil), in.Schema()...)
	mapping := append([]int(nil), m...)
	for j := width; j < len(x.Out); j++ {
		mapping = append(mapping, len(n.Out))
		n.Out = append(n.Out, x.Out[j])
	}
	return &n, mapping, nil
}

// describeOver adds an OverAggregate to the plan's fingerprint.
func describeOver(b *strings.Builder, x *OverAggregate) {
	fmt.Fprintf(b, "over-aggregate rowtime=%v %s time=%s", x.RowTime, x.Frame(), lineage(x.Input, x.OrderCol))
	s := x.Input.Schema()
	for _, k := range x.PartitionBy {
		fmt.Fprintf(b, " key=%s:%s", lineage(x.Input, k), s[k].Type.WithoutTimeAttr())
	}
	for _, c := range x.Calls {
		arg := "*"
		if c.Arg >= 0 {
			arg = lineage(x.Input, c.Arg)
		}
		fmt.Fprintf(b, " call=%s(%s,%d)->%s", c.Func, arg, c.Offset, c.T)
	}
	b.WriteByte('\n')
}

func isRankFunc(name string) bool {
	_, ok := rankTypes[name]
	return ok
}

// planQualify plans SELECT items FROM ... QUALIFY cond as Flink 2 does: as the query
// without QUALIFY in a subquery, filtered by cond, so that a Top-N or deduplication
// written with QUALIFY is planned as one written with a subquery. An OVER call in cond
// becomes a column of the subquery ($q0, ...) that the filter reads and the result drops.
func (p *planner) planQualify(sel *parser.Select, env *cteEnv) (*relation, error) {
	inner := *sel
	inner.Qualify, inner.Distinct = nil, false
	inner.Items = append([]parser.SelectItem(nil), sel.Items...)
	var rewrite func(e parser.Expr) (parser.Expr, error)
	rewrite = func(e parser.Expr) (parser.Expr, error) {
		switch x := e.(type) {
		case *parser.FuncCall:
			if x.Over == nil {
				break
			}
			name := fmt.Sprintf("$q%d", len(inner.Items)-len(sel.Items))
			inner.Items = append(inner.Items, parser.SelectItem{At: x.At, Expr: x, Alias: name})
			return &parser.Ident{At: x.At, Parts: []string{name}}, nil
		case *parser.BinaryExpr:
			l, err := rewrite(x.L)
			if err != nil {
				return nil, err
			}
			r, err := rewrite(x.R)
			if err != nil {
				return nil, err
			}
			c := *x
			c.L, c.R = l, r
			return &c, nil
		case *parser.UnaryExpr:
			y, err := rewrite(x.X)
			if err != nil {
				return nil, err
			}
			c := *x
			c.X = y
			return &c, nil
		case *parser.BetweenExpr:
			c := *x
			var err error
			if c.X, err = rewrite(x.X); err != nil {
				return nil, err
			}
			if c.Lo, err = rewrite(x.Lo); err != nil {
				return nil, err
			}
			if c.Hi, err = rewrite(x.Hi); err != nil {
				return nil, err
			}
			return &c, nil
		}
		if hasOver(e) {
			return nil, errAt(e.Pos(), ErrUnsupported, "unsupported: an OVER call inside this expression of QUALIFY: select it with an alias and name the alias in QUALIFY")
		}
		return e, nil
	}
	cond, err := rewrite(sel.Qualify)
	if err != nil {
		return nil, err
	}
	// The names of the select list's columns, which the outer query selects.
	fromScope := &scope{}
	if sel.From != nil {
		from, err := p.planFrom(sel.From, env)
		if err != nil {
			return nil, err
		}
		fromScope = from.scope
	}
	items, err := expandItems(sel.Items, fromScope)
	if err != nil {
		return nil, err
	}
	outer := &parser.Select{At: sel.At, Distinct: sel.Distinct, Where: cond,
		From: &parser.SubqueryTable{At: sel.At, Query: &parser.Query{At: sel.At, Body: &inner}}}
	for _, it := range items {
		outer.Items = append(outer.Items, parser.SelectItem{At: it.pos, Expr: &parser.Ident{At: it.pos, Parts: []string{it.name}}, Alias: it.name})
	}
	return p.planSelect(outer, env)
}
