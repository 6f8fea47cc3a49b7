package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Window joins
//
// A join of two window table functions over the same window whose ON condition equates
// both window_start and window_end columns is Flink's window join: the rows of each
// window are joined when the window is complete (the watermark passed its end), then
// forgotten, so the state holds the open windows only and the output is append-only,
// also for outer joins (a row without a match in its window is emitted null-padded when
// the window fires). Further equalities are keys; the rest of ON is evaluated on each
// pair. Windows must be event-time windows over TIMESTAMP attributes for now.

// WindowJoin joins the rows of Left and Right (window table functions) window by window.
type WindowJoin struct {
	Left, Right             Node
	Type                    JoinType
	LeftWindow, RightWindow Window
	// The window_start and window_end columns of each input.
	LeftStart, LeftEnd, RightStart, RightEnd int
	// LeftKeys[i] = RightKeys[i] are the further equalities (none is fine).
	LeftKeys, RightKeys []int
	KeyTypes            []types.Type
	Where, Condition    Expr
	// NullAware is NOT IN's anti join (one key, no Where): a NULL key on either side
	// counts, as in semi_join.go, within each window.
	NullAware bool
	Out       types.Schema
}

func (n *WindowJoin) Children() []Node     { return []Node{n.Left, n.Right} }
func (n *WindowJoin) Schema() types.Schema { return n.Out }

// Changelog says a window join is append-only: each window is joined once.
func (n *WindowJoin) Changelog() Changelog { return InsertOnly }

func explainJoinWindow(w Window, start, end string) string {
	parts := []string{fmt.Sprintf("win_start=[%s]", start), fmt.Sprintf("win_end=[%s]", end)}
	switch w.Kind {
	case Hop:
		parts = append(parts, "slide=["+formatDuration(w.Slide)+"]")
	case Cumulate:
		parts = append(parts, "step=["+formatDuration(w.Slide)+"]")
	}
	parts = append(parts, "size=["+formatDuration(w.Size)+"]")
	if w.Offset != 0 {
		parts = append(parts, "offset=["+formatDuration(w.Offset)+"]")
	}
	return fmt.Sprintf("%s(%s)", w.Kind, strings.Join(parts, ", "))
}

func (n *WindowJoin) Explain() string {
	l, r := n.Left.Schema(), n.Right.Schema()
	return fmt.Sprintf("WindowJoin(leftWindow=[%s], rightWindow=[%s], joinType=[%s], where=[%s], select=[%s])",
		explainJoinWindow(n.LeftWindow, l[n.LeftStart].Name, l[n.LeftEnd].Name),
		explainJoinWindow(n.RightWindow, r[n.RightStart].Name, r[n.RightEnd].Name),
		n.Type, ExplainExpr(n.Condition), names(n.Out))
}

func sameWindow(a, b Window) bool {
	return a.Kind == b.Kind && a.Size == b.Size && a.Slide == b.Slide && a.Offset == b.Offset && a.ProcTime == b.ProcTime
}

// planWindowJoin plans a join of two window table functions.
func (p *planner) planWindowJoin(x *parser.Join, typ JoinType, left, right *relation) (*relation, error) {
	lw, rw := left.tvf.win, right.tvf.win
	if !sameWindow(lw.win, rw.win) {
		return nil, errAt(x.Right.Pos(), ErrUnsupported, "unsupported: window join of different windows (%s and %s): both sides need the same window", explainJoinWindow(lw.win, "window_start", "window_end"), explainJoinWindow(rw.win, "window_start", "window_end"))
	}
	if lw.win.ProcTime || lw.timeType.Kind == types.TimestampLTZ || rw.timeType.Kind == types.TimestampLTZ {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: window join over processing-time or TIMESTAMP_LTZ windows (pipesql joins event-time TIMESTAMP windows)")
	}
	n := len(left.scope.cols)
	in := &scope{cols: append(append([]scopeCol(nil), left.scope.cols...), right.scope.cols...)}
	cond, err := (&binder{scope: in, clause: "ON"}).bind(x.On)
	if err != nil {
		return nil, err
	}
	if err := checkBoolean(x.On.Pos(), cond, "the JOIN condition"); err != nil {
		return nil, err
	}
	j := &WindowJoin{Type: typ, Condition: cond, LeftWindow: lw.win, RightWindow: rw.win, LeftStart: -1, LeftEnd: -1, RightStart: -1, RightEnd: -1}
	var rest Expr
	for _, c := range splitAnd(cond) {
		l, r, t, ok := equiKey(c, n)
		if !ok {
			rest = and(rest, c)
			continue
		}
		lp, rp := in.cols[l].win, in.cols[n+r].win
		switch {
		case lp == winStart && rp == winStart && in.cols[l].tvf == lw && in.cols[n+r].tvf == rw:
			j.LeftStart, j.RightStart = l, r
		case lp == winEnd && rp == winEnd && in.cols[l].tvf == lw && in.cols[n+r].tvf == rw:
			j.LeftEnd, j.RightEnd = l, r
		default:
			j.LeftKeys, j.RightKeys, j.KeyTypes = append(j.LeftKeys, l), append(j.RightKeys, r), append(j.KeyTypes, t)
		}
	}
	switch {
	case j.LeftStart < 0:
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: window join without L.window_start = R.window_start in its ON condition (a join of window table functions must equate both window_start and window_end)")
	case j.LeftEnd < 0:
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: window join without L.window_end = R.window_end in its ON condition (a join of window table functions must equate both window_start and window_end)")
	}
	j.Where = rest
	j.Left, j.Right = left.node, right.node
	j.Out = joinSchema(left.node.Schema(), right.node.Schema(), typ)
	for i, c := range in.cols {
		j.Out[i].Name = c.name
	}
	out := &scope{}
	for i, c := range in.cols {
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	return &relation{node: j, scope: out, changelog: InsertOnly}, nil
}

// pruneWindowJoin prunes both inputs to the used columns, the window columns, the keys
// and the condition's.
func (o *optimizer) pruneWindowJoin(x *WindowJoin, used []bool) (Node, []int, error) {
	lw := len(x.Left.Schema())
	width := lw + len(x.Right.Schema())
	all := make([]bool, width) // a semi join's parent uses left columns only
	copy(all, used)
	markUsed(x.Condition, all)
	for i := range x.LeftKeys {
		all[x.LeftKeys[i]] = true
		all[lw+x.RightKeys[i]] = true
	}
	for _, c := range []int{x.LeftStart, x.LeftEnd, lw + x.RightStart, lw + x.RightEnd} {
		all[c] = true
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
	j.LeftStart, j.LeftEnd, j.RightStart, j.RightEnd = ml[x.LeftStart], ml[x.LeftEnd], mr[x.RightStart], mr[x.RightEnd]
	j.Condition = remap(x.Condition, m)
	if x.Where != nil {
		j.Where = remap(x.Where, m)
	}
	j.Out = windowJoinSchema(left.Schema(), right.Schema(), x.Type)
	for i, to := range m[:len(x.Out)] {
		if to >= 0 {
			j.Out[to].Name = x.Out[i].Name
		}
	}
	return &j, m[:len(x.Out)], nil
}

// windowJoinSchema is a window join's output: a regular join's, or the left columns
// (without time attributes) of a semi or anti join.
func windowJoinSchema(left, right types.Schema, typ JoinType) types.Schema {
	if !typ.Semi() {
		return joinSchema(left, right, typ)
	}
	var out types.Schema
	for _, c := range left {
		out = append(out, types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()})
	}
	return out
}

// describeWindowJoin writes what shapes a window join's state, for the fingerprint.
func describeWindowJoin(b *strings.Builder, x *WindowJoin) {
	w := x.LeftWindow
	fmt.Fprintf(b, "window-join %s %s size=%d slide=%d offset=%d", x.Type, w.Kind, w.Size, w.Slide, w.Offset)
	if x.NullAware {
		b.WriteString(" null-aware")
	}
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
