package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// LookupJoin is Flink's lookup join: each input row looks the dimension table up by
// key as of its processing time (FROM t JOIN dim FOR SYSTEM_TIME AS OF t.proc AS d ON
// d.id = t.k), through the dimension connector's connectors.LookupSource. It keeps no
// state: a change to the dimension reaches the rows looked up after it (after the
// lookup cache's expiry), not the rows joined before.
type LookupJoin struct {
	Input Node
	// Table is the dimension table; Info what its connector is told.
	Table     string
	Info      connectors.TableInfo
	Connector *connectors.Factory
	Type      JoinType // InnerJoin or LeftOuterJoin
	// Keys are the dimension columns looked up by; LeftKeys[i], over Input, is the value
	// Keys[i] must equal.
	Keys     []int
	LeftKeys []Expr
	// Where is the rest of the ON condition over the joined row (input columns, then the
	// dimension's), nil when there is none.
	Where Expr
	Out   types.Schema
}

var _ Node = (*LookupJoin)(nil)

func (n *LookupJoin) Children() []Node     { return []Node{n.Input} }
func (n *LookupJoin) Schema() types.Schema { return n.Out }

// Explain prints the join as Flink does: LookupJoin(table=[...], joinType=[...],
// lookup=[id=customer_id], [where=[...], ]select=[...]).
func (n *LookupJoin) Explain() string {
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = n.Info.Schema[k].Name + "=" + ExplainExpr(n.LeftKeys[i])
	}
	s := fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s]", n.Table, n.Type, strings.Join(keys, ", "))
	if n.Where != nil {
		s += ", where=[" + ExplainExpr(n.Where) + "]"
	}
	return s + ", select=[" + names(n.Out) + "])"
}

// planLookupJoin plans x as a lookup join when its right side dim is a table whose
// connector can look rows up (connectors.RegisterLookup); ok is false when it is not,
// and the join is another kind of temporal join.
func (p *planner) planLookupJoin(x *parser.Join, typ JoinType, dim *parser.TableName, env *cteEnv) (rel *relation, ok bool, err error) {
	name, err := objectName(dim.At, dim.Name)
	if err != nil {
		return nil, false, nil
	}
	t, found := p.cat.Table(name)
	if !found || t.Connector == nil {
		return nil, false, nil
	}
	if _, can := connectors.LookupOf(t.Connector.Name); !can {
		return nil, false, nil
	}
	if t, err = withHint(t, dim.Options); err != nil {
		return nil, true, err
	}
	if typ != InnerJoin && typ != LeftOuterJoin {
		return nil, true, errAt(x.At, ErrUnsupported, "unsupported: %s lookup join (a lookup join is INNER or LEFT)", typ)
	}
	if err := checkRequired(dim.At, t, true); err != nil {
		return nil, true, err
	}
	info := t.Info()
	if len(info.Schema) != len(t.Columns) {
		return nil, true, errAt(dim.At, ErrUnsupported, "unsupported: a lookup join against table '%s' with computed or metadata columns", t.Name)
	}
	left, err := p.planFrom(x.Left, env)
	if err != nil {
		return nil, true, err
	}
	if left.changelog != InsertOnly {
		return nil, true, errAt(x.Left.Pos(), ErrUnsupported, "unsupported: a lookup join over an updating input")
	}
	asOf, err := (&binder{scope: left.scope, clause: "FOR SYSTEM_TIME AS OF"}).bind(dim.AsOf)
	if err != nil {
		return nil, true, err
	}
	if ref, isRef := asOf.(*ColumnRef); !isRef || ref.T.TimeAttr != types.ProcTime {
		return nil, true, errAt(dim.AsOf.At, ErrUnsupported,
			"unsupported: a lookup join against '%s' is FOR SYSTEM_TIME AS OF a processing-time attribute of the left table (a column declared AS PROCTIME()); an event-time temporal join needs a versioned table", t.Name)
	}
	qual := dim.Alias
	if qual == "" {
		qual = name
	}
	lw := len(left.scope.cols)
	in := &scope{cols: append([]scopeCol(nil), left.scope.cols...)}
	for _, c := range info.Schema {
		in.cols = append(in.cols, scopeCol{name: c.Name, quals: []string{qual}, t: c.Type})
	}
	if x.On == nil {
		return nil, true, errAt(x.At, ErrUnsupported, "unsupported: a lookup join without ON (write ON d.key = t.col)")
	}
	cond, err := (&binder{scope: in, clause: "ON"}).bind(x.On)
	if err != nil {
		return nil, true, err
	}
	if err := checkBoolean(x.On.Pos(), cond, "the JOIN condition"); err != nil {
		return nil, true, err
	}
	j := &LookupJoin{Input: left.node, Table: t.Name, Info: info, Connector: t.Connector, Type: typ}
	keyed := map[int]bool{}
	for _, c := range splitAnd(cond) {
		if k, l, ok := lookupKey(c, lw); ok && !keyed[k] {
			keyed[k] = true
			j.Keys = append(j.Keys, k)
			j.LeftKeys = append(j.LeftKeys, l)
			continue
		}
		j.Where = and(j.Where, c)
	}
	if len(j.Keys) == 0 {
		return nil, true, errAt(x.On.Pos(), ErrUnsupported, "unsupported: a lookup join needs an equality between a column of '%s' and an expression of the left table", t.Name)
	}
	j.Out = joinSchema(left.node.Schema(), info.Schema, typ)
	out := &scope{}
	for i, c := range in.cols {
		j.Out[i].Name = c.name
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	return &relation{node: j, scope: out, changelog: InsertOnly}, true, nil
}

// lookupKey reads c as dim column = expression of the left side (either way round),
// with the types comparable.
func lookupKey(c Expr, lw int) (dimCol int, left Expr, ok bool) {
	call, isCall := c.(*Call)
	if !isCall || call.Func != "=" || len(call.Args) != 2 {
		return 0, nil, false
	}
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		d, isRef := call.Args[order[0]].(*ColumnRef)
		if !isRef || d.Index < lw {
			continue
		}
		l := call.Args[order[1]]
		leftOnly := true
		visit(l, func(x Expr) {
			if r, ok := x.(*ColumnRef); ok && r.Index >= lw {
				leftOnly = false
			}
		})
		if _, comparable := funcs.CommonType(d.T, l.Type()); leftOnly && comparable {
			return d.Index - lw, l, true
		}
	}
	return 0, nil, false
}

// pruneLookupJoin keeps the input columns the join and its consumers use; the
// dimension's columns are all looked up.
func (o *optimizer) pruneLookupJoin(x *LookupJoin, used []bool) (Node, []int, error) {
	w := len(x.Input.Schema())
	inUsed := append([]bool(nil), used[:w]...)
	for _, k := range x.LeftKeys {
		markUsed(k, inUsed)
	}
	if x.Where != nil {
		all := make([]bool, len(x.Out))
		markUsed(x.Where, all)
		for i := range w {
			inUsed[i] = inUsed[i] || all[i]
		}
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	nw := len(in.Schema())
	mapping := append([]int(nil), m...)
	for j := w; j < len(x.Out); j++ {
		mapping = append(mapping, nw+j-w)
	}
	l := *x
	l.Input = in
	l.LeftKeys = make([]Expr, len(x.LeftKeys))
	for i, k := range x.LeftKeys {
		l.LeftKeys[i] = remap(k, m)
	}
	if x.Where != nil {
		l.Where = remap(x.Where, mapping)
	}
	l.Out = make(types.Schema, nw, nw+len(x.Out)-w)
	for i := range w {
		if m[i] >= 0 {
			l.Out[m[i]] = x.Out[i]
		}
	}
	l.Out = append(l.Out, x.Out[w:]...)
	return &l, mapping, nil
}
