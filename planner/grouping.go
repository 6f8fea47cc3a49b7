package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// GROUPING SETS, ROLLUP and CUBE
//
// GROUP BY GROUPING SETS ((a, b), (a), ()), ROLLUP(a, b) and CUBE(a, b) (alone or beside
// plain keys, which join every set) plan as Flink plans them: an Expand that emits each
// input row once per grouping set, the keys outside the set NULL, with the set's
// grouping id $e, below one GroupAggregate keyed by every key and $e. Bit n-1-i of $e is
// set when key i is not in the set, so GROUPING(k) is that bit and GROUPING_ID(k1, ...)
// the bits of its arguments in order.

// Expand emits each input row once per set of Sets: the input's columns with the key
// columns Keys outside the set NULL, then the set's grouping id.
type Expand struct {
	Input Node
	Keys  []int    // input columns
	Sets  [][]bool // per set, whether each key is in it
	Out   types.Schema
}

var _ Node = (*Expand)(nil)

func (n *Expand) Children() []Node     { return []Node{n.Input} }
func (n *Expand) Schema() types.Schema { return n.Out }

// GroupingID is the $e of set s.
func (n *Expand) GroupingID(s int) int64 {
	var id int64
	for i, in := range n.Sets[s] {
		if !in {
			id |= 1 << (len(n.Keys) - 1 - i)
		}
	}
	return id
}

func (n *Expand) Explain() string {
	in := n.Input.Schema()
	key := map[int]int{}
	for i, k := range n.Keys {
		key[k] = i
	}
	projects := make([]string, len(n.Sets))
	for s, set := range n.Sets {
		cols := make([]string, 0, len(in)+1)
		for c, col := range in {
			if i, ok := key[c]; ok && !set[i] {
				cols = append(cols, "null AS "+col.Name)
				continue
			}
			cols = append(cols, col.Name)
		}
		cols = append(cols, fmt.Sprintf("%d AS $e", n.GroupingID(s)))
		projects[s] = "{" + strings.Join(cols, ", ") + "}"
	}
	return fmt.Sprintf("Expand(projects=[%s])", strings.Join(projects, ", "))
}

// hasGroupingSets reports whether GROUP BY holds GROUPING SETS, ROLLUP or CUBE.
func hasGroupingSets(groupBy []parser.Expr) bool {
	for _, g := range groupBy {
		if c, ok := g.(*parser.FuncCall); ok && c.Over == nil && groupingSetFuncs[strings.ToUpper(c.Name)] {
			return true
		}
	}
	return false
}

var groupingSetFuncs = map[string]bool{"GROUPING_SETS": true, "ROLLUP": true, "CUBE": true}

// groupingSets lists the grouping sets of a GROUP BY, each as its expressions.
func groupingSets(groupBy []parser.Expr) ([][]parser.Expr, error) {
	sets := [][]parser.Expr{{}}
	for _, g := range groupBy {
		var these [][]parser.Expr
		c, ok := g.(*parser.FuncCall)
		name := ""
		if ok && c.Over == nil {
			name = strings.ToUpper(c.Name)
		}
		switch name {
		case "ROLLUP":
			for n := len(c.Args); n >= 0; n-- {
				these = append(these, c.Args[:n:n])
			}
		case "CUBE":
			if len(c.Args) > 12 {
				return nil, errAt(c.At, ErrUnsupported, "unsupported: CUBE of more than 12 expressions")
			}
			for mask := (1 << len(c.Args)) - 1; mask >= 0; mask-- {
				var set []parser.Expr
				for i, a := range c.Args {
					if mask&(1<<(len(c.Args)-1-i)) != 0 {
						set = append(set, a)
					}
				}
				these = append(these, set)
			}
		case "GROUPING_SETS":
			for _, a := range c.Args {
				if r, ok := a.(*parser.FuncCall); ok && strings.EqualFold(r.Name, "ROW") && r.Over == nil {
					these = append(these, r.Args)
					continue
				}
				if hasGroupingSets([]parser.Expr{a}) {
					return nil, errAt(a.Pos(), ErrUnsupported, "unsupported: ROLLUP, CUBE or GROUPING SETS inside GROUPING SETS")
				}
				these = append(these, []parser.Expr{a})
			}
		default:
			these = [][]parser.Expr{{g}}
		}
		var next [][]parser.Expr
		for _, s := range sets {
			for _, t := range these {
				next = append(next, append(append([]parser.Expr(nil), s...), t...))
			}
		}
		sets = next
	}
	return sets, nil
}

// planGroupingSets plans a query whose GROUP BY has grouping sets. Over a window table
// function grouped by window_start, window_end (in every set, as Flink requires), the
// Expand reads the window function's input and a WindowAggregate keyed by the keys and
// $e runs over it, so each window emits one row per group of each set, once.
func (p *planner) planGroupingSets(sel *parser.Select, env *cteEnv) (*relation, error) {
	if sel.From == nil {
		return nil, errAt(sel.At, ErrUnsupported, "unsupported: GROUPING SETS without FROM")
	}
	for _, g := range sel.GroupBy {
		if c, ok := g.(*parser.FuncCall); ok && strings.EqualFold(c.Name, "SESSION") {
			return nil, errAt(c.At, ErrUnsupported, "unsupported: GROUPING SETS, ROLLUP and CUBE on SESSION window aggregates")
		}
		if c, ok := g.(*parser.FuncCall); ok && legacyWindowFuncs[strings.ToUpper(c.Name)] {
			// Flink's group window aggregate refuses them too.
			return nil, errAt(c.At, ErrUnsupported, "unsupported: GROUPING SETS, ROLLUP and CUBE with the group window %s(...) in GROUP BY: use the window table function, FROM TABLE(%s(TABLE t, DESCRIPTOR(ts), ...)) GROUP BY window_start, window_end, ROLLUP(...)", strings.ToUpper(c.Name), strings.ToUpper(c.Name))
		}
	}
	from, err := p.planFrom(sel.From, env)
	if err != nil {
		return nil, err
	}
	var where Expr
	if sel.Where != nil {
		if where, err = (&binder{scope: from.scope, clause: "WHERE"}).bind(sel.Where); err != nil {
			return nil, err
		}
		if err := checkBoolean(sel.Where.Pos(), where, "the WHERE condition"); err != nil {
			return nil, err
		}
	}
	sets, err := groupingSets(sel.GroupBy)
	if err != nil {
		return nil, err
	}
	// The keys: every expression of a set, once, by its text; the window columns of a
	// window table function apart.
	gb := &binder{scope: from.scope, clause: "GROUP BY"}
	var keys []Expr
	keyIdx := map[string]int{}
	setWin := make([][]parser.Expr, len(sets)) // per set, its window columns
	for s, set := range sets {
		for _, e := range set {
			if hasGroupingSets([]parser.Expr{e}) {
				return nil, errAt(e.Pos(), ErrUnsupported, "unsupported: ROLLUP, CUBE or GROUPING SETS inside another")
			}
			x, err := gb.bind(e)
			if err != nil {
				return nil, err
			}
			if c, ok := x.(*ColumnRef); ok && from.tvf != nil && from.scope.cols[c.Index].tvf == from.tvf.win {
				setWin[s] = append(setWin[s], e)
				continue
			}
			if _, ok := keyIdx[parser.Format(e)]; !ok {
				keyIdx[parser.Format(e)] = len(keys)
				keys = append(keys, x)
			}
		}
	}
	if len(keys) > 62 {
		return nil, errAt(sel.GroupBy[0].Pos(), ErrUnsupported, "unsupported: more than 62 grouping keys")
	}
	win, err := groupingSetsWindow(sel, from, sets, setWin)
	if err != nil {
		return nil, err
	}
	base := from // what the Expand reads
	if win != nil {
		base = from.tvf.input
		used := make([]bool, len(from.scope.cols))
		for _, e := range append([]Expr{where}, keys...) {
			if e != nil {
				markUsed(e, used)
			}
		}
		for i := len(base.scope.cols); i < len(used); i++ {
			if used[i] {
				return nil, errAt(sel.At, ErrUnsupported, "unsupported: %s used in WHERE or the grouping keys of a window aggregation", from.scope.cols[i].name)
			}
		}
	}
	items, err := expandItems(sel.Items, from.scope)
	if err != nil {
		return nil, err
	}
	// Below: the input's columns, then the keys; the Expand adds $e.
	in := base.node.Schema()
	pre := &Calc{Input: base.node, Filter: where}
	for i, c := range in {
		pre.Projections = append(pre.Projections, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
		pre.Out = append(pre.Out, c)
	}
	exp := &Expand{Input: pre}
	for i, k := range keys {
		exp.Keys = append(exp.Keys, len(pre.Projections))
		pre.Projections = append(pre.Projections, k)
		pre.Out = append(pre.Out, types.Column{Name: fmt.Sprintf("$g%d", i), Type: k.Type()})
	}
	seen := map[int64]bool{}
	for _, set := range sets {
		in := make([]bool, len(keys))
		for _, e := range set {
			if i, ok := keyIdx[parser.Format(e)]; ok {
				in[i] = true
			}
		}
		exp.Sets = append(exp.Sets, in)
		if id := exp.GroupingID(len(exp.Sets) - 1); seen[id] {
			exp.Sets = exp.Sets[:len(exp.Sets)-1] // a repeated set counts once here (Flink repeats it)
		} else {
			seen[id] = true
		}
	}
	// sc is the scope of the Expand's output. Over a window the input's time attribute
	// passes through it to the WindowAggregate; otherwise the GroupAggregate above ends it.
	sc := &scope{cols: append([]scopeCol(nil), base.scope.cols...)}
	for i, c := range pre.Out {
		if i < len(in) {
			if win == nil {
				c.Type = c.Type.WithoutTimeAttr()
			}
			exp.Out = append(exp.Out, c)
			continue
		}
		c.Type = c.Type.Nullable().WithoutTimeAttr()
		exp.Out = append(exp.Out, c)
		sc.cols = append(sc.cols, scopeCol{name: c.Name, t: c.Type})
	}
	for i := range sc.cols[:len(in)] {
		if win == nil {
			sc.cols[i].t = sc.cols[i].t.WithoutTimeAttr()
		}
		sc.cols[i].win, sc.cols[i].tvf = noWinProp, nil
	}
	exp.Out = append(exp.Out, types.Column{Name: "$e", Type: types.TypeBigInt.WithNotNull(true)})
	sc.cols = append(sc.cols, scopeCol{name: "$e", t: types.TypeBigInt.WithNotNull(true)})
	over := &relation{node: exp, scope: sc, changelog: from.changelog}
	if win != nil {
		// The window function's view of the Expand: its columns as the user sees them
		// (the time column a plain timestamp), then the window's columns.
		vs := &scope{cols: append([]scopeCol(nil), from.scope.cols[:len(in)]...)}
		vs.cols = append(vs.cols, sc.cols[len(in):]...)
		vs.cols = append(vs.cols, from.scope.cols[len(in):]...)
		over = &relation{node: from.node, scope: vs, changelog: InsertOnly, tvf: &tvfRelation{input: over, win: win}}
	}

	// The query over the Expand: grouped by the keys and $e (and the window), each key
	// expression read from its column, GROUPING() from $e.
	rw := &groupingRewriter{keyIdx: keyIdx, n: len(keys)}
	sel2 := *sel
	sel2.Where, sel2.GroupBy = nil, nil
	if win != nil {
		sel2.GroupBy = append(sel2.GroupBy, setWin[0]...)
	}
	for i := range keys {
		sel2.GroupBy = append(sel2.GroupBy, &parser.Ident{At: sel.At, Parts: []string{fmt.Sprintf("$g%d", i)}})
	}
	sel2.GroupBy = append(sel2.GroupBy, &parser.Ident{At: sel.At, Parts: []string{"$e"}})
	for i := range items {
		if items[i].expr, err = rw.rewrite(items[i].expr); err != nil {
			return nil, err
		}
	}
	if sel.Having != nil {
		if sel2.Having, err = rw.rewrite(sel.Having); err != nil {
			return nil, err
		}
	}
	rel, err := p.planAggregate(&sel2, items, over, nil)
	if err != nil {
		return nil, err
	}
	if sel.Distinct {
		return distinct(sel.At, rel)
	}
	return rel, nil
}

// groupingSetsWindow returns the window of grouping sets over a window table function,
// nil when no set names its columns (a plain aggregation over the function's rows). As
// in Flink, window_start and window_end must then be in every set: GROUP BY
// window_start, window_end, GROUPING SETS (...).
func groupingSetsWindow(sel *parser.Select, from *relation, sets, setWin [][]parser.Expr) (*windowInfo, error) {
	any := false
	for _, w := range setWin {
		any = any || len(w) > 0
	}
	if !any {
		return nil, nil
	}
	props := func(s int) (have [len(winPropNames)]bool) {
		for _, e := range setWin[s] {
			x, _ := (&binder{scope: from.scope, clause: "GROUP BY"}).bind(e)
			have[from.scope.cols[x.(*ColumnRef).Index].win] = true
		}
		return have
	}
	first := props(0)
	for s := range sets {
		if p := props(s); p != first || !p[winStart] || !p[winEnd] {
			return nil, errAt(sel.GroupBy[0].Pos(), ErrUnsupported, "unsupported: a window aggregation with grouping sets needs window_start and window_end in every grouping set: GROUP BY window_start, window_end, GROUPING SETS (...), as in Flink")
		}
	}
	if from.tvf.win.win.Kind == SessionWindow {
		return nil, errAt(sel.GroupBy[0].Pos(), ErrUnsupported, "unsupported: GROUPING SETS, ROLLUP and CUBE on SESSION window aggregates")
	}
	return from.tvf.win, nil
}

// groupingRewriter replaces grouping keys by their columns and GROUPING calls by
// arithmetic on $e.
type groupingRewriter struct {
	keyIdx map[string]int
	n      int
}

func (r *groupingRewriter) bit(e parser.Expr) (parser.Expr, error) {
	i, ok := r.keyIdx[parser.Format(e)]
	if !ok {
		return nil, errAt(e.Pos(), ErrTypeMismatch, "the argument of GROUPING must be a grouping key: %s is not", parser.Format(e))
	}
	at := e.Pos()
	lit := func(v int64) parser.Expr { return &parser.Literal{At: at, Kind: parser.NumberLit, Text: fmt.Sprint(v)} }
	div := &parser.BinaryExpr{At: at, Op: "/", L: &parser.Ident{At: at, Parts: []string{"$e"}}, R: lit(1 << (r.n - 1 - i))}
	return &parser.BinaryExpr{At: at, Op: "%", L: div, R: lit(2)}, nil
}

func (r *groupingRewriter) rewrite(e parser.Expr) (parser.Expr, error) {
	if e == nil {
		return nil, nil
	}
	if _, star := e.(*parser.Star); !star {
		if i, ok := r.keyIdx[parser.Format(e)]; ok {
			return &parser.Ident{At: e.Pos(), Parts: []string{fmt.Sprintf("$g%d", i)}}, nil
		}
	}
	var err error
	all := func(list []parser.Expr) []parser.Expr {
		out := make([]parser.Expr, len(list))
		for i, x := range list {
			if err == nil {
				out[i], err = r.rewrite(x)
			}
		}
		return out
	}
	one := func(x parser.Expr) parser.Expr {
		if err != nil {
			return nil
		}
		var y parser.Expr
		y, err = r.rewrite(x)
		return y
	}
	switch x := e.(type) {
	case *parser.FuncCall:
		name := strings.ToUpper(x.Name)
		if (name == "GROUPING" || name == "GROUPING_ID") && x.Over == nil {
			if len(x.Args) == 0 {
				return nil, errAt(x.At, ErrTypeMismatch, "%s takes at least one grouping key", name)
			}
			var sum parser.Expr
			for j, a := range x.Args {
				b, err := r.bit(a)
				if err != nil {
					return nil, err
				}
				if k := len(x.Args) - 1 - j; k > 0 {
					b = &parser.BinaryExpr{At: x.At, Op: "*", L: b, R: &parser.Literal{At: x.At, Kind: parser.NumberLit, Text: fmt.Sprint(int64(1) << k)}}
				}
				if sum == nil {
					sum = b
				} else {
					sum = &parser.BinaryExpr{At: x.At, Op: "+", L: sum, R: b}
				}
			}
			return sum, nil
		}
		if funcs.IsAggregate(name) && x.Over == nil {
			return x, nil // an aggregate reads the input's columns, not the nulled keys
		}
		c := *x
		c.Args = all(x.Args)
		c.Filter = one(x.Filter)
		return &c, err
	case *parser.BinaryExpr:
		c := *x
		c.L, c.R = one(x.L), one(x.R)
		return &c, err
	case *parser.UnaryExpr:
		c := *x
		c.X = one(x.X)
		return &c, err
	case *parser.Cast:
		c := *x
		c.X = one(x.X)
		return &c, err
	case *parser.Case:
		c := *x
		c.Operand, c.Else = one(x.Operand), one(x.Else)
		c.Whens = make([]parser.When, len(x.Whens))
		for i, w := range x.Whens {
			c.Whens[i] = parser.When{Cond: one(w.Cond), Result: one(w.Result)}
		}
		return &c, err
	case *parser.InExpr:
		c := *x
		c.X, c.List = one(x.X), all(x.List)
		return &c, err
	case *parser.LikeExpr:
		c := *x
		c.X, c.Pattern, c.Escape = one(x.X), one(x.Pattern), one(x.Escape)
		return &c, err
	case *parser.IsExpr:
		c := *x
		c.X = one(x.X)
		return &c, err
	case *parser.BetweenExpr:
		c := *x
		c.X, c.Lo, c.Hi = one(x.X), one(x.Lo), one(x.Hi)
		return &c, err
	}
	return e, nil
}

// pruneExpand keeps the columns the parent uses and the keys.
func (o *optimizer) pruneExpand(x *Expand, used []bool) (Node, []int, error) {
	width := len(x.Input.Schema())
	inUsed := append([]bool(nil), used[:width]...)
	for _, k := range x.Keys {
		inUsed[k] = true
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	e := *x
	e.Input, e.Keys, e.Out = in, remapInts(x.Keys, m), nil
	timeAttr := map[int]bool{} // the columns whose time attribute passes through (over a window)
	for i, j := range m[:width] {
		if j >= 0 && x.Out[i].Type.TimeAttr != types.NoTimeAttr {
			timeAttr[j] = true
		}
	}
	for i, c := range in.Schema() {
		isKey := false
		for _, k := range e.Keys {
			isKey = isKey || k == i
		}
		if !timeAttr[i] {
			c.Type = c.Type.WithoutTimeAttr()
		}
		if isKey {
			c.Type = c.Type.Nullable()
		}
		e.Out = append(e.Out, c)
	}
	mapping := append([]int(nil), m...)
	mapping = append(mapping, len(e.Out))
	e.Out = append(e.Out, x.Out[width])
	return &e, mapping, nil
}
