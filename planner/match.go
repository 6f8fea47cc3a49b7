package planner

// MATCH_RECOGNIZE (SQL:2016 row pattern recognition, as Flink documents it): the
// parser's MatchRecognize becomes a Match node over its input table. DEFINE conditions
// and MEASURES are bound over the input row followed by navigation slots: every
// reference that is not the current row (A.price: the last row mapped to A,
// PREV(A.price, 1), FIRST/LAST(A.price, n), SUM(A.price), MATCH_ROWTIME()) becomes a
// MatchNav that exec computes from the rows of the match so far and appends to the row
// before it evaluates the expression.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// NavKind says what a MatchNav reads.
type NavKind int

const (
	NavLast    NavKind = iota // the Offset-th last row mapped to Var (all rows when Var is "")
	NavFirst                  // the Offset-th first row mapped to Var
	NavPrev                   // the row Offset rows before the last row mapped to Var, in partition order
	NavAgg                    // Agg over Col of the rows mapped to Var
	NavRowtime                // MATCH_ROWTIME(): the time of the match's last row
)

// MatchNav is a value computed from the rows of a (partial) match.
type MatchNav struct {
	Kind   NavKind
	Var    string // "" for every row of the match (the universal pattern variable)
	Col    int    // the input column; -1 for COUNT(*), MATCH_ROWTIME() and an Arg
	Offset int
	Agg    AggFunc
	T      types.Type
	// Arg is the argument of an aggregate over an expression of one variable's row
	// (AVG(TIMESTAMPDIFF(DAY, A.start_date, A.end_date))), bound over the input row;
	// ArgText is it as written.
	Arg     Expr
	ArgText string
}

// MatchDefine is the condition of one pattern variable, over the input row (the
// candidate row, tentatively mapped to Var) followed by Navs.
type MatchDefine struct {
	Var  string
	Cond Expr
	Text string // as written, for EXPLAIN
}

// Match runs a row pattern per partition over rows sorted by OrderBy, emitting one row
// per match: the partition keys, then the measures.
type Match struct {
	At          parser.Pos // the MATCH_RECOGNIZE keyword
	Input       Node
	PartitionBy []int
	OrderBy     []SortKey // the first key is the event-time attribute, ascending
	Measures    []Expr    // over the input row (the match's last row) followed by Navs
	MeasureText []string  // as written, for EXPLAIN
	Navs        []MatchNav
	Pattern     *parser.Pattern
	After       parser.AfterMatch
	Within      time.Duration // 0 without WITHIN
	ProcTime    bool          // ordered by a processing-time attribute: rows match in arrival order, without waiting
	Define      []MatchDefine // every variable of the pattern, in order of first appearance; a missing DEFINE is TRUE
	Out         types.Schema
}

var _ Node = (*Match)(nil)

func (n *Match) Children() []Node     { return []Node{n.Input} }
func (n *Match) Schema() types.Schema { return n.Out }
func (n *Match) Changelog() Changelog { return InsertOnly }

func (n *Match) Explain() string {
	in := n.Input.Schema()
	var b strings.Builder
	b.WriteString("Match(")
	if len(n.PartitionBy) > 0 {
		names := make([]string, len(n.PartitionBy))
		for i, c := range n.PartitionBy {
			names[i] = in[c].Name
		}
		b.WriteString("partitionBy=[" + strings.Join(names, ", ") + "], ")
	}
	b.WriteString("orderBy=[" + sortKeysString(in, n.OrderBy) + "], ")
	ms := make([]string, len(n.MeasureText))
	for i, t := range n.MeasureText {
		ms[i] = t + " AS " + n.Out[len(n.PartitionBy)+i].Name
	}
	b.WriteString("measures=[" + strings.Join(ms, ", ") + "], rowsPerMatch=[ONE ROW PER MATCH], ")
	b.WriteString("after=[SKIP " + n.After.String() + "], pattern=[" + n.Pattern.String() + "]")
	if n.Within > 0 {
		b.WriteString(", within=[" + formatDuration(n.Within) + "]")
	}
	var ds []string
	for _, d := range n.Define {
		if d.Cond != nil {
			ds = append(ds, parser.QuoteIdent(d.Var)+" AS "+d.Text)
		}
	}
	b.WriteString(", define=[" + strings.Join(ds, ", ") + "])")
	return b.String()
}

// DefinesReadMapping reports whether a DEFINE condition reads which earlier rows of the
// match were mapped to which variable: another variable's rows, FIRST or LAST(v.col, n>0)
// of its own, or an aggregate over a variable. Without such a condition two partial
// matches from the same start at the same place in the pattern have the same future,
// whatever their mapping: the candidate row, the rows before it and the match's rows
// are the same for both.
func (n *Match) DefinesReadMapping() bool {
	width := len(n.Input.Schema())
	for _, d := range n.Define {
		if d.Cond == nil {
			continue
		}
		used := make([]bool, width+len(n.Navs))
		markUsed(d.Cond, used)
		for i, nav := range n.Navs {
			if !used[width+i] || nav.Var == "" {
				continue
			}
			own := nav.Var == d.Var && (nav.Kind == NavPrev || nav.Kind == NavLast && nav.Offset == 0)
			if !own {
				return true
			}
		}
	}
	return false
}

// NavsRead lists the Navs that e, a DEFINE condition or a measure, reads.
func (n *Match) NavsRead(e Expr) []int {
	width := len(n.Input.Schema())
	used := make([]bool, width+len(n.Navs))
	markUsed(e, used)
	var out []int
	for i := range n.Navs {
		if used[width+i] {
			out = append(out, i)
		}
	}
	return out
}

// describeState describes what shapes a Match's state, for state.Meta.CheckPlan.
func (n *Match) describeState() string {
	return "match " + n.Explain() + "\n"
}

// patternVars lists the variables of p in order of first appearance.
func patternVars(p *parser.Pattern, out []string) []string {
	if p.Kind == parser.PatVar {
		if !slices.Contains(out, p.Var) {
			out = append(out, p.Var)
		}
		return out
	}
	for _, it := range p.Items {
		out = patternVars(it, out)
	}
	return out
}

func (p *planner) planMatchRecognize(x *parser.MatchRecognize, env *cteEnv) (*relation, error) {
	in, err := p.planFrom(x.Input, env)
	if err != nil {
		return nil, err
	}
	if in.changelog != InsertOnly {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: MATCH_RECOGNIZE over an updating input: it needs an insert-only (append) input")
	}
	if x.AllRows {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: ALL ROWS PER MATCH is not supported (Flink does not support it either): write ONE ROW PER MATCH")
	}
	width := len(in.scope.cols)
	m := &Match{At: x.At, Input: in.node, Pattern: x.Pattern, After: x.After}
	vars := patternVars(x.Pattern, nil)
	isVar := func(s string) (string, bool) {
		for _, v := range vars {
			if v == s {
				return v, true
			}
		}
		for _, v := range vars {
			if strings.EqualFold(v, s) {
				return v, true
			}
		}
		return "", false
	}
	if x.After.Var != "" {
		v, ok := isVar(x.After.Var)
		if !ok {
			return nil, errAt(x.After.At, ErrUnknownColumn, "AFTER MATCH SKIP %s: %s is not a variable of the pattern", x.After.Kind, x.After.Var)
		}
		m.After.Var = v
	}
	plain := in.scope.requalify()
	colOf := func(e parser.Expr) (int, error) {
		id, ok := e.(*parser.Ident)
		if !ok || len(id.Parts) != 1 {
			return 0, errAt(e.Pos(), ErrUnsupported, "unsupported: %s: expected a column of the input", parser.Format(e))
		}
		return plain.resolve(id)
	}
	// PARTITION BY and ORDER BY.
	for _, e := range x.PartitionBy {
		c, err := colOf(e)
		if err != nil {
			return nil, err
		}
		m.PartitionBy = append(m.PartitionBy, c)
	}
	if len(x.OrderBy) == 0 {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: MATCH_RECOGNIZE without ORDER BY: order by an event-time attribute")
	}
	for i, o := range x.OrderBy {
		c, err := colOf(o.Expr)
		if err != nil {
			return nil, err
		}
		t := in.scope.cols[c].t
		if i == 0 {
			switch {
			case t.TimeAttr == types.ProcTime && !o.Desc:
				m.ProcTime = true
			case t.TimeAttr != types.RowTime || o.Desc:
				return nil, errAt(o.At, ErrUnsupported, "unsupported: MATCH_RECOGNIZE must be ordered first by an ascending event-time attribute, and %s is %s", parser.Format(o.Expr), orderDesc(t, o.Desc))
			}
		}
		if i > 0 && m.ProcTime {
			return nil, errAt(o.At, ErrUnsupported, "unsupported: MATCH_RECOGNIZE ordered by processing time takes rows in arrival order: further ORDER BY keys are not supported")
		}
		m.OrderBy = append(m.OrderBy, SortKey{Col: c, Desc: o.Desc, Nulls: o.Nulls})
	}
	if x.Within != nil && m.ProcTime {
		return nil, errAt(x.Within.Pos(), ErrUnsupported, "unsupported: WITHIN on a processing-time MATCH_RECOGNIZE is not supported yet")
	}
	if x.Within != nil {
		d, _, err := intervalArg(x.Within, "WITHIN")
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, errAt(x.Within.Pos(), ErrTypeMismatch, "WITHIN takes a positive interval")
		}
		m.Within = d
	}
	nb := &navBinder{m: m, in: plain, width: width, isVar: isVar, timeCol: m.OrderBy[0].Col}
	// DEFINE.
	defs := map[string]parser.Define{}
	for _, d := range x.Define {
		v, ok := isVar(d.Var)
		if !ok {
			return nil, errAt(d.At, ErrUnknownColumn, "DEFINE %s: %s is not a variable of the pattern (%s)", d.Var, d.Var, strings.Join(vars, ", "))
		}
		defs[v] = d
	}
	type pending struct {
		v    string
		e    parser.Expr
		text string
	}
	var conds []pending
	for _, v := range vars {
		d, ok := defs[v]
		if !ok {
			m.Define = append(m.Define, MatchDefine{Var: v})
			continue
		}
		e, err := nb.rewrite(d.Cond, true)
		if err != nil {
			return nil, err
		}
		conds = append(conds, pending{v, e, parser.Format(d.Cond)})
	}
	var measures []pending
	names := map[string]bool{}
	for _, c := range m.PartitionBy {
		names[strings.ToLower(in.scope.cols[c].name)] = true
	}
	for _, ms := range x.Measures {
		if names[strings.ToLower(ms.Alias)] {
			return nil, errAt(ms.At, ErrAmbiguousColumn, "MEASURES: the output already has a column named %s", ms.Alias)
		}
		names[strings.ToLower(ms.Alias)] = true
		e, err := nb.rewrite(ms.Expr, false)
		if err != nil {
			return nil, err
		}
		measures = append(measures, pending{ms.Alias, e, parser.Format(ms.Expr)})
	}
	// Bind over the input row and the navigation slots.
	sc := &scope{cols: slices.Clone(plain.cols)}
	for i, n := range m.Navs {
		sc.cols = append(sc.cols, scopeCol{name: navName(i), t: n.T})
	}
	for _, c := range conds {
		b := &binder{scope: sc, clause: "DEFINE"}
		e, err := b.bind(c.e)
		if err != nil {
			return nil, err
		}
		if t := e.Type(); t.Kind != types.Boolean && t.Kind != types.Null {
			return nil, errAt(c.e.Pos(), ErrTypeMismatch, "type mismatch: DEFINE %s takes a BOOLEAN condition, got %s", c.v, t)
		}
		m.Define = append(m.Define, MatchDefine{Var: c.v, Cond: e, Text: c.text})
	}
	// Keep Define in pattern order.
	slices.SortStableFunc(m.Define, func(a, b MatchDefine) int {
		return slices.Index(vars, a.Var) - slices.Index(vars, b.Var)
	})
	for _, c := range m.PartitionBy {
		col := in.scope.cols[c]
		m.Out = append(m.Out, types.Column{Name: col.name, Type: col.t.WithoutTimeAttr()})
	}
	for _, ms := range measures {
		b := &binder{scope: sc, clause: "MEASURES"}
		e, err := b.bind(ms.e)
		if err != nil {
			return nil, err
		}
		m.Measures = append(m.Measures, e)
		m.MeasureText = append(m.MeasureText, ms.text)
		m.Out = append(m.Out, types.Column{Name: ms.v, Type: e.Type()})
	}
	if len(m.Measures) == 0 && len(m.PartitionBy) == 0 {
		return nil, errAt(x.At, ErrUnsupported, "unsupported: MATCH_RECOGNIZE without MEASURES or PARTITION BY has no output columns")
	}
	quals := []string{}
	if x.Alias != "" {
		quals = []string{x.Alias}
	}
	out := &scope{}
	for _, c := range m.Out {
		out.cols = append(out.cols, scopeCol{name: c.Name, quals: quals, t: c.Type})
	}
	return &relation{node: m, scope: out, changelog: InsertOnly}, nil
}

func navName(i int) string { return fmt.Sprintf("$match_nav%d", i) }

// aggOverExpr binds an aggregate whose argument is an expression over the columns of
// one pattern variable (or of every row, when no column names a variable), as Flink
// allows: SUM(A.price * A.tax), not SUM(A.price * B.tax).
func (nb *navBinder) aggOverExpr(x *parser.FuncCall, fn AggFunc) (parser.Expr, error) {
	v, e, err := nb.oneVarExpr(x)
	if err != nil {
		return nil, err
	}
	t, err := aggResultType(fn, e.Type())
	if err != nil {
		return nil, errAt(x.At, ErrTypeMismatch, "type mismatch: %s takes %s, got %s", x.Name, err, e.Type())
	}
	return nb.slot(MatchNav{Kind: NavAgg, Var: v, Col: -1, Agg: fn, T: t, Arg: e, ArgText: parser.Format(x.Args[0])}, x.Pos()), nil
}

// oneVarExpr binds the first argument of x, an expression over the columns of one
// pattern variable (or of every row), over the input row; it returns the variable.
func (nb *navBinder) oneVarExpr(x *parser.FuncCall) (string, Expr, error) {
	arg := x.Args[0]
	v, seen := "", false
	var bad error
	walkAST(arg, func(e parser.Expr) bool {
		if bad != nil {
			return false
		}
		switch y := e.(type) {
		case *parser.FuncCall:
			if matchNavigation[y.Name] || y.Name == "PREV" || y.Name == "NEXT" || y.Name == "MATCH_ROWTIME" || y.Name == "FINAL" || y.Name == "RUNNING" {
				bad = errAt(y.At, ErrUnsupported, "unsupported: %s inside the argument of %s in MATCH_RECOGNIZE", y.Name, x.Name)
			}
		case *parser.Ident:
			w := ""
			if len(y.Parts) == 2 {
				var ok bool
				if w, ok = nb.isVar(y.Parts[0]); !ok {
					bad = errAt(y.At, ErrUnknownColumn, "%s: %s is not a pattern variable", parser.Format(y), y.Parts[0])
					return false
				}
			}
			if seen && w != v {
				bad = errAt(y.At, ErrUnsupported, "unsupported: the argument of %s in MATCH_RECOGNIZE reads columns of one pattern variable (Flink's rule), not of %s and %s", x.Name, varOrAll(v), varOrAll(w))
				return false
			}
			v, seen = w, true
		}
		return true
	})
	if bad != nil {
		return "", nil, bad
	}
	// The input row's columns, also qualified by the variable.
	sc := &scope{cols: slices.Clone(nb.in.cols)}
	if v != "" {
		for i := range sc.cols {
			sc.cols[i].quals = append(slices.Clip(sc.cols[i].quals), v)
		}
	}
	b := &binder{scope: sc, clause: "MATCH_RECOGNIZE"}
	e, err := b.bind(arg)
	if err != nil {
		return "", nil, err
	}
	return v, e, nil
}

func varOrAll(v string) string {
	if v == "" {
		return "every row"
	}
	return v
}

// matchNavigation are the calls FINAL applies to.
var matchNavigation = map[string]bool{"FIRST": true, "LAST": true, "COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true}

// navBinder rewrites DEFINE and MEASURES expressions: navigation becomes identifiers of
// the slots it adds to the Match.
type navBinder struct {
	m       *Match
	in      *scope
	width   int
	isVar   func(string) (string, bool)
	timeCol int
}

func (nb *navBinder) slot(n MatchNav, at parser.Pos) parser.Expr {
	for i, x := range nb.m.Navs {
		if x.Kind == n.Kind && x.Var == n.Var && x.Col == n.Col && x.Offset == n.Offset && x.Agg == n.Agg && x.ArgText == n.ArgText {
			return &parser.Ident{At: at, Parts: []string{navName(i)}}
		}
	}
	nb.m.Navs = append(nb.m.Navs, n)
	return &parser.Ident{At: at, Parts: []string{navName(len(nb.m.Navs) - 1)}}
}

// varCol reads v.col or col: the variable ("" for none) and the input column.
func (nb *navBinder) varCol(e parser.Expr, what string) (string, int, error) {
	id, ok := e.(*parser.Ident)
	if !ok {
		return "", 0, errAt(e.Pos(), ErrUnsupported, "unsupported: %s takes a column of a pattern variable (A.price), not %s", what, parser.Format(e))
	}
	switch len(id.Parts) {
	case 1:
		c, err := nb.in.resolve(id)
		return "", c, err
	case 2:
		v, ok := nb.isVar(id.Parts[0])
		if !ok {
			return "", 0, errAt(id.At, ErrUnknownColumn, "%s: %s is not a pattern variable", parser.Format(id), id.Parts[0])
		}
		c, err := nb.in.resolve(&parser.Ident{At: id.At, Parts: id.Parts[1:]})
		return v, c, err
	}
	return "", 0, errAt(id.At, ErrUnsupported, "unsupported: %s in MATCH_RECOGNIZE: write var.column", parser.Format(id))
}

func (nb *navBinder) offset(args []parser.Expr, fn string) (int, error) {
	if len(args) < 2 {
		if fn == "PREV" {
			return 1, nil
		}
		return 0, nil
	}
	lit, ok := args[1].(*parser.Literal)
	if ok {
		if l, err := bindLiteral(lit); err == nil && l.T.IsInteger() && !l.Value.IsNull() && l.Value.Int() >= 0 && l.Value.Int() < math.MaxInt32 {
			return int(l.Value.Int()), nil
		}
	}
	return 0, errAt(args[1].Pos(), ErrTypeMismatch, "%s takes a non-negative integer constant as its offset", fn)
}

// rewrite returns e with navigation replaced by slot identifiers. In DEFINE a bare
// column is the candidate row; in MEASURES it is the match's last row.
func (nb *navBinder) rewrite(e parser.Expr, define bool) (parser.Expr, error) {
	rw := func(x parser.Expr) (parser.Expr, error) {
		if x == nil {
			return nil, nil
		}
		return nb.rewrite(x, define)
	}
	switch x := e.(type) {
	case nil:
		return nil, nil
	case *parser.Ident:
		if len(x.Parts) == 1 && define {
			return x, nil
		}
		v, c, err := nb.varCol(x, "a column reference")
		if err != nil {
			return nil, err
		}
		t := nb.in.cols[c].t.Nullable().WithoutTimeAttr()
		return nb.slot(MatchNav{Kind: NavLast, Var: v, Col: c, T: t}, x.Pos()), nil
	case *parser.FuncCall:
		if x.Over != nil || x.Filter != nil {
			return nil, errAt(x.At, ErrUnsupported, "unsupported: %s with OVER or FILTER in MATCH_RECOGNIZE", x.Name)
		}
		switch x.Name {
		case "PREV", "FIRST", "LAST":
			if len(x.Args) < 1 || len(x.Args) > 2 {
				return nil, errAt(x.At, ErrUnsupported, "%s takes a column and an optional offset", x.Name)
			}
			kind := map[string]NavKind{"PREV": NavPrev, "FIRST": NavFirst, "LAST": NavLast}[x.Name]
			if _, ok := x.Args[0].(*parser.Ident); !ok && kind != NavPrev {
				// LAST(A.price * A.tax): the expression over the row LAST(A.*) reads.
				off, err := nb.offset(x.Args, x.Name)
				if err != nil {
					return nil, err
				}
				v, e, err := nb.oneVarExpr(x)
				if err != nil {
					return nil, err
				}
				return nb.slot(MatchNav{Kind: kind, Var: v, Col: -1, Offset: off, T: e.Type().Nullable().WithoutTimeAttr(), Arg: e, ArgText: parser.Format(x.Args[0])}, x.Pos()), nil
			}
			v, c, err := nb.varCol(x.Args[0], x.Name)
			if err != nil {
				return nil, err
			}
			off, err := nb.offset(x.Args, x.Name)
			if err != nil {
				return nil, err
			}
			if kind == NavPrev && v == "" && !define {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: PREV in MEASURES takes a column of a pattern variable (PREV(A.price))")
			}
			t := nb.in.cols[c].t.Nullable().WithoutTimeAttr()
			return nb.slot(MatchNav{Kind: kind, Var: v, Col: c, Offset: off, T: t}, x.Pos()), nil
		case "NEXT":
			return nil, errAt(x.At, ErrUnsupported, "unsupported: NEXT in MATCH_RECOGNIZE is not supported (Flink does not support it either; PREV is)")
		case "CLASSIFIER", "MATCH_NUMBER":
			return nil, errAt(x.At, ErrUnsupported, "unsupported: %s() in MATCH_RECOGNIZE is not supported (Flink does not support it either)", x.Name)
		case "RUNNING":
			return nil, errAt(x.At, ErrUnsupported, "unsupported: RUNNING in MATCH_RECOGNIZE is not supported (Flink does not support it either: its measures have FINAL semantics)")
		case "FINAL":
			// ONE ROW PER MATCH computes the measures over the whole match: FINAL is what
			// they mean already (Flink drops it the same way).
			if define {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: FINAL in DEFINE: a condition sees the match so far (FINAL is for MEASURES)")
			}
			if len(x.Args) != 1 {
				return nil, errAt(x.At, ErrUnsupported, "FINAL takes one navigation or aggregate (FINAL LAST(A.price))")
			}
			if f, ok := x.Args[0].(*parser.FuncCall); !ok || !matchNavigation[f.Name] {
				return nil, errAt(x.At, ErrUnsupported, "FINAL applies to FIRST, LAST or an aggregate (FINAL LAST(A.price)), not %s", parser.Format(x.Args[0]))
			}
			return rw(x.Args[0])
		case "MATCH_PROCTIME":
			// A processing-time attribute, the time the match is emitted at: PROCTIME()
			// evaluated with the measures.
			if define {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: MATCH_PROCTIME() in DEFINE: it is a measure")
			}
			if len(x.Args) > 0 {
				return nil, errAt(x.At, ErrUnsupported, "MATCH_PROCTIME takes no arguments")
			}
			return &parser.FuncCall{At: x.At, Name: "PROCTIME"}, nil
		case "MATCH_ROWTIME":
			if define {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: MATCH_ROWTIME() in DEFINE: it is a measure")
			}
			if nb.m.ProcTime {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: MATCH_ROWTIME() in a MATCH_RECOGNIZE ordered by processing time: write MATCH_PROCTIME()")
			}
			if len(x.Args) > 1 {
				return nil, errAt(x.At, ErrUnsupported, "MATCH_ROWTIME takes no argument or the event-time attribute")
			}
			if len(x.Args) == 1 {
				// Flink's MATCH_ROWTIME(rowtime_field): the time attribute the match is
				// ordered by, typed as it.
				id, ok := x.Args[0].(*parser.Ident)
				var c int
				var err error
				if ok && len(id.Parts) == 1 {
					c, err = nb.in.resolve(id)
				}
				if !ok || len(id.Parts) != 1 || err != nil || c != nb.timeCol {
					return nil, errAt(x.Args[0].Pos(), ErrUnsupported, "unsupported: MATCH_ROWTIME takes the event-time attribute the match is ordered by (%s), not %s", nb.in.cols[nb.timeCol].name, parser.Format(x.Args[0]))
				}
			}
			t := nb.in.cols[nb.timeCol].t
			return nb.slot(MatchNav{Kind: NavRowtime, Col: -1, T: t}, x.Pos()), nil
		case "COUNT", "SUM", "AVG", "MIN", "MAX":
			if x.Distinct {
				return nil, errAt(x.At, ErrUnsupported, "unsupported: %s(DISTINCT ...) in MATCH_RECOGNIZE is not supported (Flink does not support DISTINCT aggregates there either)", x.Name)
			}
			fn := AggFunc(x.Name)
			if x.Star || len(x.Args) == 0 {
				if fn != AggCount {
					return nil, errAt(x.At, ErrUnsupported, "%s takes one argument", x.Name)
				}
				return nb.slot(MatchNav{Kind: NavAgg, Col: -1, Agg: fn, T: types.TypeBigInt.WithNotNull(true)}, x.Pos()), nil
			}
			if len(x.Args) != 1 {
				return nil, errAt(x.At, ErrUnsupported, "%s takes one argument", x.Name)
			}
			if st, ok := x.Args[0].(*parser.Star); ok && fn == AggCount {
				v := ""
				if st.Qualifier != "" {
					var ok bool
					if v, ok = nb.isVar(st.Qualifier); !ok {
						return nil, errAt(st.At, ErrUnknownColumn, "%s.*: %s is not a pattern variable", st.Qualifier, st.Qualifier)
					}
				}
				return nb.slot(MatchNav{Kind: NavAgg, Var: v, Col: -1, Agg: fn, T: types.TypeBigInt.WithNotNull(true)}, x.Pos()), nil
			}
			if _, ok := x.Args[0].(*parser.Ident); !ok {
				return nb.aggOverExpr(x, fn)
			}
			v, c, err := nb.varCol(x.Args[0], x.Name)
			if err != nil {
				return nil, err
			}
			t, err := aggResultType(fn, nb.in.cols[c].t)
			if err != nil {
				return nil, errAt(x.At, ErrTypeMismatch, "type mismatch: %s takes %s, got %s", x.Name, err, nb.in.cols[c].t)
			}
			return nb.slot(MatchNav{Kind: NavAgg, Var: v, Col: c, Agg: fn, T: t}, x.Pos()), nil
		}
		c := *x
		c.Args = make([]parser.Expr, len(x.Args))
		for i, a := range x.Args {
			var err error
			if c.Args[i], err = rw(a); err != nil {
				return nil, err
			}
		}
		return &c, nil
	case *parser.BinaryExpr:
		l, err := rw(x.L)
		if err != nil {
			return nil, err
		}
		r, err := rw(x.R)
		if err != nil {
			return nil, err
		}
		c := *x
		c.L, c.R = l, r
		return &c, nil
	case *parser.UnaryExpr:
		y, err := rw(x.X)
		if err != nil {
			return nil, err
		}
		c := *x
		c.X = y
		return &c, nil
	case *parser.Cast:
		y, err := rw(x.X)
		if err != nil {
			return nil, err
		}
		c := *x
		c.X = y
		return &c, nil
	case *parser.IsExpr:
		y, err := rw(x.X)
		if err != nil {
			return nil, err
		}
		c := *x
		c.X = y
		return &c, nil
	case *parser.Case:
		c := *x
		var err error
		if c.Operand, err = rw(x.Operand); err != nil {
			return nil, err
		}
		if c.Else, err = rw(x.Else); err != nil {
			return nil, err
		}
		c.Whens = make([]parser.When, len(x.Whens))
		for i, w := range x.Whens {
			if c.Whens[i].Cond, err = rw(w.Cond); err != nil {
				return nil, err
			}
			if c.Whens[i].Result, err = rw(w.Result); err != nil {
				return nil, err
			}
		}
		return &c, nil
	case *parser.BetweenExpr:
		c := *x
		var err error
		if c.X, err = rw(x.X); err != nil {
			return nil, err
		}
		if c.Lo, err = rw(x.Lo); err != nil {
			return nil, err
		}
		if c.Hi, err = rw(x.Hi); err != nil {
			return nil, err
		}
		return &c, nil
	case *parser.InExpr:
		if x.Subquery != nil {
			return nil, errAt(x.At, ErrUnsupported, "unsupported: a subquery in MATCH_RECOGNIZE")
		}
		c := *x
		var err error
		if c.X, err = rw(x.X); err != nil {
			return nil, err
		}
		c.List = make([]parser.Expr, len(x.List))
		for i, a := range x.List {
			if c.List[i], err = rw(a); err != nil {
				return nil, err
			}
		}
		return &c, nil
	case *parser.LikeExpr:
		c := *x
		var err error
		if c.X, err = rw(x.X); err != nil {
			return nil, err
		}
		if c.Pattern, err = rw(x.Pattern); err != nil {
			return nil, err
		}
		if c.Escape, err = rw(x.Escape); err != nil {
			return nil, err
		}
		return &c, nil
	case *parser.Literal, *parser.IntervalLit, *parser.TimeUnit:
		return x, nil
	}
	return nil, errAt(e.Pos(), ErrUnsupported, "unsupported: %s in MATCH_RECOGNIZE is not supported yet", parser.Format(e))
}

// pruneMatch keeps the input columns that PARTITION BY, ORDER BY, DEFINE and MEASURES
// read; the output keeps every column (the Calc above drops unused measures).
func (o *optimizer) pruneMatch(x *Match, _ []bool) (Node, []int, error) {
	w := len(x.Input.Schema())
	used := make([]bool, w+len(x.Navs))
	for _, c := range x.PartitionBy {
		used[c] = true
	}
	for _, k := range x.OrderBy {
		used[k.Col] = true
	}
	for _, n := range x.Navs {
		if n.Col >= 0 {
			used[n.Col] = true
		}
		if n.Arg != nil {
			markUsed(n.Arg, used)
		}
	}
	for _, d := range x.Define {
		if d.Cond != nil {
			markUsed(d.Cond, used)
		}
	}
	for _, e := range x.Measures {
		markUsed(e, used)
	}
	in, m, err := o.prune(x.Input, used[:w])
	if err != nil {
		return nil, nil, err
	}
	n := *x
	n.Input = in
	n.PartitionBy = remapInts(x.PartitionBy, m)
	n.OrderBy = slices.Clone(x.OrderBy)
	for i := range n.OrderBy {
		n.OrderBy[i].Col = m[x.OrderBy[i].Col]
	}
	ext := slices.Clone(m[:w])
	for i := range x.Navs {
		ext = append(ext, len(in.Schema())+i)
	}
	n.Navs = slices.Clone(x.Navs)
	for i := range n.Navs {
		if n.Navs[i].Col >= 0 {
			n.Navs[i].Col = m[n.Navs[i].Col]
		}
		if n.Navs[i].Arg != nil {
			n.Navs[i].Arg = remap(n.Navs[i].Arg, m)
		}
	}
	n.Define = slices.Clone(x.Define)
	for i := range n.Define {
		if n.Define[i].Cond != nil {
			n.Define[i].Cond = remap(n.Define[i].Cond, ext)
		}
	}
	n.Measures = make([]Expr, len(x.Measures))
	for i, e := range x.Measures {
		n.Measures[i] = remap(e, ext)
	}
	return &n, seq(len(x.Out)), nil
}
