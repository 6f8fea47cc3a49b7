package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Correlate joins each row of its input with the rows UNNEST makes of a collection in it,
// as Flink plans FROM t CROSS JOIN UNNEST(t.tags) AS u(tag): the input's columns, then
// the element's (an ARRAY's element, or each field of a ROW element; a MAP's key and
// value), then the position from 1 WITH ORDINALITY. An empty or NULL collection gives no
// row, or with Left (LEFT JOIN UNNEST(...) ON TRUE) one row with NULLs. It is stateless
// and keeps its input's changelog: each change of an input row is a change of each row
// made of it.
type Correlate struct {
	Input      Node
	Arg        Expr // the ARRAY or MAP, over Input; with Replicate, the BIGINT count
	Ordinality bool
	Left       bool
	// Replicate is Flink's $REPLICATE_ROWS$1 of INTERSECT ALL and EXCEPT ALL
	// (set_ops.go): each input row is emitted Arg times, with no columns added.
	Replicate bool
	Out       types.Schema
}

func (n *Correlate) Children() []Node     { return []Node{n.Input} }
func (n *Correlate) Schema() types.Schema { return n.Out }

// Width is the number of columns the collection adds after the input's.
func (n *Correlate) Width() int { return len(n.Out) - len(n.Input.Schema()) }

// Explain prints the node as Flink does, but for the generated function's name.
func (n *Correlate) Explain() string {
	if n.Replicate {
		args := []string{ExplainExpr(n.Arg)}
		args = append(args, n.Input.Schema().Names()...)
		return fmt.Sprintf("Correlate(invocation=[$REPLICATE_ROWS$1(%s)], select=[%s], joinType=[INNER])", strings.Join(args, ", "), strings.Join(n.Out.Names(), ", "))
	}
	inv := "UNNEST(" + ExplainExpr(n.Arg) + ")"
	if n.Ordinality {
		inv += " WITH ORDINALITY"
	}
	join := "INNER"
	if n.Left {
		join = "LEFT"
	}
	return fmt.Sprintf("Correlate(invocation=[%s], select=[%s], joinType=[%s])", inv, strings.Join(n.Out.Names(), ", "), join)
}

var _ Node = (*Correlate)(nil)

// unnestColumns are the columns UNNEST makes of a collection of type t.
func unnestColumns(t types.Type) ([]types.Column, bool) {
	switch t.Kind {
	case types.Array:
		elem := *t.Elem
		if elem.Kind == types.Struct {
			cols := make([]types.Column, len(elem.Fields))
			for i, f := range elem.Fields {
				cols[i] = types.Column{Name: f.Name, Type: fieldOfElement(elem, i)}
			}
			return cols, true
		}
		return []types.Column{{Name: "f0", Type: elem.WithoutTimeAttr()}}, true
	case types.Map:
		if t.Multiset { // each element as often as it is in the multiset
			return unnestColumns(types.Type{Kind: types.Array, Elem: t.Key})
		}
		return []types.Column{{Name: "f0", Type: t.Key.WithoutTimeAttr()}, {Name: "f1", Type: t.Elem.WithoutTimeAttr()}}, true
	}
	return nil, false
}

// fieldOfElement is the type of field i of a ROW element: nullable when the element is.
func fieldOfElement(elem types.Type, i int) types.Type {
	f := elem.Fields[i].Type.WithoutTimeAttr()
	if !elem.NotNull {
		f = f.Nullable()
	}
	return f
}

// planUnnest plans left JOIN UNNEST(...): x.Right is the *parser.Unnest.
func (p *planner) planUnnest(x *parser.Join, u *parser.Unnest, env *cteEnv) (*relation, error) {
	outer := false
	switch strings.ToUpper(x.Kind) {
	case "CROSS":
	case "INNER", "LEFT":
		if l, ok := x.On.(*parser.Literal); !ok || l.Kind != parser.BoolLit || !strings.EqualFold(l.Text, "TRUE") {
			return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: a JOIN with UNNEST on a condition other than ON TRUE (filter in WHERE instead)")
		}
		outer = strings.EqualFold(x.Kind, "LEFT")
	default:
		return nil, errAt(u.At, ErrUnsupported, "unsupported: %s JOIN UNNEST (pipesql has CROSS JOIN, JOIN ... ON TRUE and LEFT JOIN ... ON TRUE)", x.Kind)
	}
	left, err := p.planFrom(x.Left, env)
	if err != nil {
		return nil, err
	}
	if left.tvf != nil {
		return nil, errAt(u.At, ErrUnsupported, "unsupported: UNNEST after a window table function (unnest in a subquery of its input)")
	}
	if len(u.Args) != 1 {
		return nil, errAt(u.Args[1].Pos(), ErrUnsupported, "unsupported: UNNEST of more than one collection")
	}
	arg, err := (&binder{scope: left.scope, clause: "UNNEST"}).bind(u.Args[0])
	if err != nil {
		return nil, err
	}
	cols, ok := unnestColumns(arg.Type())
	if !ok {
		return nil, errAt(u.Args[0].Pos(), ErrTypeMismatch, "type mismatch: UNNEST expects an ARRAY or a MAP, got %s", arg.Type().Nullable())
	}
	if u.Ordinality && arg.Type().Multiset {
		return nil, errAt(u.At, ErrUnsupported, "unsupported: UNNEST of a MULTISET WITH ORDINALITY: a multiset's elements have no order")
	}
	if u.Ordinality {
		cols = append(cols, types.Column{Name: "ORDINALITY", Type: types.TypeInt.WithNotNull(true)})
	}
	if u.Columns != nil {
		if len(u.Columns) != len(cols) {
			return nil, errAt(u.At, ErrTypeMismatch, "UNNEST(%s) gives %s (%s), but its alias names %d", parser.Format(u.Args[0]), plural(len(cols), "column"), strings.Join(types.Schema(cols).Names(), ", "), len(u.Columns))
		}
		for i := range cols {
			cols[i].Name = u.Columns[i]
		}
	}
	if outer {
		for i := range cols {
			cols[i].Type = cols[i].Type.Nullable()
		}
	}
	n := &Correlate{Input: left.node, Arg: arg, Ordinality: u.Ordinality, Left: outer}
	n.Out = append(append(n.Out, left.node.Schema()...), cols...)
	sc := &scope{cols: append([]scopeCol(nil), left.scope.cols...)}
	var quals []string
	if u.Alias != "" {
		quals = []string{u.Alias}
	}
	for _, c := range cols {
		sc.cols = append(sc.cols, scopeCol{name: c.Name, quals: quals, t: c.Type})
	}
	return &relation{node: n, scope: sc, changelog: left.changelog}, nil
}

// pruneCorrelate keeps the input columns used above and those the collection is read
// from; the collection's own columns are always made.
func (o *optimizer) pruneCorrelate(x *Correlate, used []bool) (Node, []int, error) {
	w := len(x.Input.Schema())
	inUsed := append([]bool(nil), used[:w]...)
	markUsed(x.Arg, inUsed)
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	c := &Correlate{Input: in, Arg: remap(x.Arg, m), Ordinality: x.Ordinality, Left: x.Left, Replicate: x.Replicate}
	c.Out = append(append(c.Out, in.Schema()...), x.Out[w:]...)
	mapping := append([]int(nil), m...)
	for j := w; j < len(x.Out); j++ {
		mapping = append(mapping, len(in.Schema())+j-w)
	}
	return c, mapping, nil
}
