package planner

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// planner turns the queries of statements into logical plans: trees of the physical
// node types whose leaves are tableRefs (a whole table, expanded into scan, computed
// columns and watermark once the columns the plan needs are known; see optimize.go).
type planner struct {
	cat *Catalog
	// loc is table.local-time-zone, for window alignment.
	loc *time.Location
	// sourceIdle is table.exec.source.idle-timeout, the default of scan.watermark.idle-timeout.
	sourceIdle time.Duration
	// cdcDuplicate is table.exec.source.cdc-events-duplicate (changelog.go).
	cdcDuplicate bool
	// views are the views being expanded, innermost last, to refuse a view that reads itself.
	views []string
	// ttlHint is the STATE_TTL hint of the SELECT whose FROM is being planned (state_ttl.go).
	ttlHint *ttlHint
}

// relation is a planned FROM item or query: its logical plan and the columns it shows.
type relation struct {
	node      Node
	scope     *scope
	changelog Changelog
	// tvf is set when the relation is a window table function itself, so that a query
	// grouping by its window_start and window_end aggregates per window over its input.
	tvf *tvfRelation
}

type tvfRelation struct {
	input *relation
	win   *windowInfo
}

// cteEnv is the WITH queries visible at a point: a chain, innermost first.
type cteEnv struct {
	name  string
	query *parser.Query
	outer *cteEnv // what the query itself sees
}

func (e *cteEnv) lookup(name string) (*cteEnv, bool) {
	for c := e; c != nil; c = c.outer {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return nil, false
}

func (e *cteEnv) names() []string {
	var out []string
	for c := e; c != nil; c = c.outer {
		out = append(out, c.name)
	}
	return out
}

func (p *planner) planQuery(q *parser.Query, env *cteEnv) (*relation, error) {
	for _, nq := range q.With {
		env = &cteEnv{name: nq.Name, query: nq.Query, outer: env}
	}
	var rel *relation
	switch body := q.Body.(type) {
	case *parser.Select:
		r, err := p.planSelect(body, env)
		if err != nil {
			return nil, err
		}
		rel = r
	case *parser.SetOp:
		r, err := p.planSetOp(body, env) // join.go
		if err != nil {
			return nil, err
		}
		rel = r
	default:
		return nil, errAt(q.At, ErrUnsupported, "unsupported: query body %T", q.Body)
	}
	if len(q.OrderBy) > 0 {
		r, err := p.planOrderBy(q, rel, env) // sort.go
		if err != nil {
			return nil, err
		}
		rel = r
	}
	if q.Limit != nil && !isSortLimit(rel.node) {
		n, err := limitCount(q.Limit)
		if err != nil {
			return nil, err
		}
		if rel.changelog != InsertOnly {
			return nil, errAt(q.Limit.Pos(), ErrUnsupported, "unsupported: LIMIT over an updating input")
		}
		rel = &relation{node: &Limit{Input: rel.node, N: n}, scope: rel.scope, changelog: rel.changelog}
	}
	return rel, nil
}

// limitCount is the row count of LIMIT n.
func limitCount(limit parser.Expr) (int64, error) {
	lit, err := (&binder{scope: &scope{}, clause: "LIMIT"}).bind(limit)
	if err != nil {
		return 0, err
	}
	l, ok := lit.(*Literal)
	if !ok || !l.T.IsInteger() || l.Value.IsNull() || l.Value.Int() < 0 {
		return 0, errAt(limit.Pos(), ErrTypeMismatch, "LIMIT must be a non-negative integer constant")
	}
	return l.Value.Int(), nil
}

// isSortLimit reports whether n is the SortLimit that planOrderBy made of ORDER BY ...
// LIMIT (under the Calc that drops its hidden columns), which applies the LIMIT itself.
func isSortLimit(n Node) bool {
	if c, ok := n.(*Calc); ok {
		n = c.Input
	}
	r, ok := n.(*Rank)
	return ok && r.SortLimit
}

// selectItem is one output column of a select list after '*' is expanded.
type selectItem struct {
	expr parser.Expr
	name string
	pos  parser.Pos
}

func expandItems(items []parser.SelectItem, s *scope) ([]selectItem, error) {
	var out []selectItem
	for _, it := range items {
		star, ok := it.Expr.(*parser.Star)
		if !ok {
			out = append(out, selectItem{expr: it.Expr, name: it.Alias, pos: it.At})
			continue
		}
		n := 0
		for _, c := range s.cols {
			if star.Qualifier != "" && !hasQual(c, star.Qualifier) {
				continue
			}
			parts := []string{c.name}
			if star.Qualifier != "" {
				parts = []string{star.Qualifier, c.name}
			}
			out = append(out, selectItem{expr: &parser.Ident{At: star.At, Parts: parts}, name: c.name, pos: star.At})
			n++
		}
		if n == 0 && star.Qualifier != "" {
			return nil, errAt(star.At, ErrUnknownTable, "unknown table '%s' in '%s.*'%s", star.Qualifier, star.Qualifier, didYouMean(star.Qualifier, s.quals()))
		}
	}
	for i := range out {
		if out[i].name != "" {
			continue
		}
		if id, ok := out[i].expr.(*parser.Ident); ok {
			out[i].name = id.Parts[len(id.Parts)-1]
		} else {
			out[i].name = fmt.Sprintf("EXPR$%d", i)
		}
	}
	// Output names must be unique for the query to be used as a subquery; Flink renames
	// duplicates the same way (a, a0, a1).
	seen := map[string]bool{}
	for i := range out {
		name := out[i].name
		for n := 0; seen[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s%d", out[i].name, n)
		}
		seen[strings.ToLower(name)] = true
		out[i].name = name
	}
	return out, nil
}

func (p *planner) planSelect(sel *parser.Select, env *cteEnv) (*relation, error) {
	if err := resolveWindows(sel); err != nil { // over.go
		return nil, err
	}
	sel, err := p.withJoinWhere(sel, env) // cross_join.go
	if err != nil {
		return nil, err
	}
	if sel.Qualify != nil {
		return p.planQualify(sel, env) // over.go
	}
	if hasGroupingSets(sel.GroupBy) {
		return p.planGroupingSets(sel, env) // grouping.go
	}
	var from *relation
	whereAST := sel.Where
	topN, rest, err := p.planTopN(sel, env) // rank.go
	switch {
	case err != nil:
		return nil, err
	case len(sel.StateTTL) > 0 && topN != nil:
		return nil, errAt(sel.StateTTL[0].At, ErrUnsupported, "unsupported: a STATE_TTL hint on a Top-N query (pipesql applies it to regular joins)")
	case topN != nil:
		from, whereAST = topN, rest
	case sel.From == nil:
		from = &relation{node: &Values{Rows: [][]Expr{{}}}, scope: &scope{}}
	case sel.From == nil && len(sel.StateTTL) > 0:
		return nil, errAt(sel.StateTTL[0].At, ErrUnsupported, "unsupported: a STATE_TTL hint on a SELECT without FROM")
	default:
		r, err := p.planFromHinted(sel, env) // state_ttl.go
		if err != nil {
			return nil, err
		}
		from = r
	}
	if from, whereAST, err = p.planSubqueryFilters(from, whereAST, env); err != nil { // semi_join.go
		return nil, err
	}
	var where Expr
	if whereAST != nil {
		w, err := (&binder{scope: from.scope, clause: "WHERE"}).bind(whereAST)
		if err != nil {
			return nil, err
		}
		if err := checkBoolean(whereAST.Pos(), w, "the WHERE condition"); err != nil {
			return nil, err
		}
		where = w
	}
	items, err := expandItems(sel.Items, from.scope)
	if err != nil {
		return nil, err
	}
	aggregating := len(sel.GroupBy) > 0 || sel.Having != nil
	for _, it := range items {
		aggregating = aggregating || hasAggregate(it.expr)
	}
	if err := checkBareSession(sel, from, aggregating); err != nil { // session_window.go
		return nil, err
	}
	var rel *relation
	if calls := overCalls(items); len(calls) > 0 && !aggregating {
		rel, err = p.planOver(items, calls, from, where) // over.go
	} else if aggregating {
		rel, err = p.planAggregate(sel, items, from, where)
	} else {
		rel, err = p.planProjection(items, from, where)
	}
	if err != nil {
		return nil, err
	}
	if sel.Distinct {
		return distinct(sel.At, rel)
	}
	return rel, nil
}

// planProjection plans SELECT items FROM from WHERE where without aggregation.
func (p *planner) planProjection(items []selectItem, from *relation, where Expr) (*relation, error) {
	b := &binder{scope: from.scope, clause: "SELECT"}
	calc := &Calc{Input: from.node, Filter: where}
	out := &scope{}
	for _, it := range items {
		x, err := b.bind(it.expr)
		if err != nil {
			return nil, err
		}
		calc.Projections = append(calc.Projections, x)
		calc.Out = append(calc.Out, types.Column{Name: it.name, Type: x.Type()})
		col := scopeCol{name: it.name, t: x.Type()}
		if c, ok := x.(*ColumnRef); ok {
			src := from.scope.cols[c.Index]
			col.win, col.tvf = src.win, src.tvf
		}
		out.cols = append(out.cols, col)
	}
	return &relation{node: calc, scope: out, changelog: from.changelog}, nil
}

// distinct plans SELECT DISTINCT as a grouping by every column without aggregates.
func distinct(pos parser.Pos, rel *relation) (*relation, error) {
	in := rel.node.Schema()
	agg := &GroupAggregate{Input: rel.node, Retract: rel.changelog != InsertOnly}
	out := &scope{}
	for i, c := range in {
		agg.Keys = append(agg.Keys, i)
		t := c.Type.WithoutTimeAttr()
		agg.Out = append(agg.Out, types.Column{Name: c.Name, Type: t})
		out.cols = append(out.cols, scopeCol{name: rel.scope.cols[i].name, t: t})
	}
	// A group without aggregates never changes once emitted, but Flink plans every
	// GroupAggregate as updating, and so does pipesql: SELECT DISTINCT writes to a sink
	// that accepts updates (print, upsert-kafka, ...) and is refused by an append-only one
	// with Flink's message, rather than behaving differently from Flink.
	return &relation{node: agg, scope: out, changelog: Updating}, nil
}

// groupItem is one bound GROUP BY expression.
type groupItem struct {
	expr Expr
	prop winProp
	tvf  *windowInfo
	pos  parser.Pos
}

func (p *planner) planAggregate(sel *parser.Select, items []selectItem, from *relation, where Expr) (*relation, error) {
	ctx := newAggContext(from.scope)
	gb := &binder{scope: from.scope, clause: "GROUP BY"}
	var groups []groupItem
	for _, g := range sel.GroupBy {
		if fc, ok := g.(*parser.FuncCall); ok && legacyWindowFuncs[strings.ToUpper(fc.Name)] {
			if ctx.legacy != nil {
				return nil, errAt(fc.At, ErrUnsupported, "unsupported: more than one group window in GROUP BY")
			}
			w, err := p.legacyWindow(fc, from.scope)
			if err != nil {
				return nil, err
			}
			ctx.legacy = w
			continue
		}
		x, err := gb.bind(g)
		if err != nil {
			return nil, err
		}
		gi := groupItem{expr: x, pos: g.Pos()}
		if c, ok := x.(*ColumnRef); ok {
			gi.prop, gi.tvf = from.scope.cols[c.Index].win, from.scope.cols[c.Index].tvf
		}
		groups = append(groups, gi)
	}

	// GROUP BY window_start, window_end of a window TVF is a window aggregation.
	var tvfWin *windowInfo
	var tvfPos parser.Pos
	if ctx.legacy == nil {
		var hasStart, hasEnd bool
		for _, g := range groups {
			switch g.prop {
			case winStart:
				hasStart, tvfWin, tvfPos = true, g.tvf, g.pos
			case winEnd:
				hasEnd = true
			}
		}
		if !hasStart || !hasEnd {
			tvfWin = nil
		}
	}
	if from.changelog != InsertOnly && (ctx.legacy != nil || tvfWin != nil) {
		// As Flink: a window aggregate fires each window once and cannot take rows back.
		return nil, errAt(sel.At, ErrUpdatingInput, "unsupported: a window aggregation over an updating input (WindowAggregate doesn't support consuming update and delete changes which is produced by node %s)", updatingNode(from.node))
	}
	input := from
	switch {
	case ctx.legacy != nil:
		ctx.window = ctx.legacy
	case tvfWin != nil:
		if from.tvf == nil || from.tvf.win != tvfWin {
			return nil, errAt(tvfPos, ErrUnsupported, "unsupported: window aggregation over the window columns of a subquery or view; group by window_start, window_end in the SELECT whose FROM is the TABLE(%s(...)) itself", tvfWin.win.Kind)
		}
		ctx.window = tvfWin
		ctx.tvfProps = map[int]winProp{}
		input = from.tvf.input
	}
	for _, g := range groups {
		if tvfWin != nil && g.prop != noWinProp && g.tvf == tvfWin {
			ctx.tvfProps[g.expr.(*ColumnRef).Index] = g.prop
			continue
		}
		ctx.addKey(g.expr)
	}
	if err := checkSessionKeys(sel, ctx); err != nil { // session_window.go
		return nil, err
	}

	// The select list and HAVING, with aggregates collected.
	b := &binder{scope: from.scope, agg: ctx, clause: "SELECT"}
	bound := make([]Expr, len(items))
	aggNames := map[int]string{}
	for i, it := range items {
		x, err := b.bind(it.expr)
		if err != nil {
			return nil, err
		}
		bound[i] = x
		if s, ok := x.(*slotRef); ok && s.kind == aggSlot {
			if _, named := aggNames[s.i]; !named {
				aggNames[s.i] = it.name
			}
		}
	}
	var having Expr
	if sel.Having != nil {
		h, err := b.bind(sel.Having)
		if err != nil {
			return nil, err
		}
		if err := checkBoolean(sel.Having.Pos(), h, "the HAVING condition"); err != nil {
			return nil, err
		}
		having = h
	}

	// Below the aggregation: WHERE, then the keys, the aggregate arguments and the time column.
	inWidth := len(input.scope.cols)
	if input != from {
		used := make([]bool, len(from.scope.cols))
		for _, e := range append(append([]Expr{where}, ctx.keys...), ctx.args...) {
			if e != nil {
				markUsed(e, used)
			}
		}
		for i := inWidth; i < len(used); i++ {
			if used[i] {
				return nil, errAt(sel.At, ErrUnsupported, "unsupported: %s used in WHERE, GROUP BY keys or aggregate arguments of a window aggregation", from.scope.cols[i].name)
			}
		}
	}
	pre := &Calc{Input: input.node, Filter: where}
	addPre := func(e Expr, name string) {
		if c, ok := e.(*ColumnRef); ok {
			name = c.Name
		}
		pre.Projections = append(pre.Projections, e)
		pre.Out = append(pre.Out, types.Column{Name: name, Type: e.Type()})
	}
	for i, k := range ctx.keys {
		addPre(k, fmt.Sprintf("$f%d", i))
	}
	// argPos[i] is where aggregate argument i is below the aggregation: a key that is also
	// an argument (GROUP BY app ... COUNT(DISTINCT app)) is read once.
	argPos := make([]int, len(ctx.args))
	for i, a := range ctx.args {
		if j, isKey := ctx.keyIdx[a.String()]; isKey {
			argPos[i] = j
			continue
		}
		argPos[i] = len(pre.Projections)
		addPre(a, fmt.Sprintf("$f%d", len(pre.Projections)))
	}
	k, nAggs := len(ctx.keys), len(ctx.aggs)
	var out types.Schema
	for i := range ctx.keys {
		c := pre.Out[i]
		out = append(out, types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()})
	}
	aggs := make([]AggCall, nAggs)
	for i, it := range ctx.aggs {
		call := it.call
		if call.Arg >= 0 {
			call.Arg = argPos[call.Arg]
		}
		if call.Filter >= 0 {
			call.Filter = argPos[call.Filter]
		}
		call.Name = aggNames[i]
		if call.Name == "" {
			call.Name = fmt.Sprintf("$f%d", k+i)
		}
		aggs[i] = call
		out = append(out, types.Column{Name: call.Name, Type: call.T})
	}
	var aggNode Node
	changelog := InsertOnly
	if w := ctx.window; w != nil {
		timeRef := &ColumnRef{Index: w.win.TimeCol, Name: w.timeName, T: input.scope.cols[w.win.TimeCol].t}
		win := w.win
		win.TimeCol = -1
		for i, e := range pre.Projections {
			if e.String() == timeRef.String() {
				// MIN(ts) or GROUP BY ts already brings the time column: read it once.
				win.TimeCol = i
				pre.Out[i].Type = timeRef.T
			}
		}
		if win.TimeCol < 0 {
			pre.Projections = append(pre.Projections, timeRef)
			pre.Out = append(pre.Out, types.Column{Name: w.timeName, Type: timeRef.T})
			win.TimeCol = len(pre.Projections) - 1
		}
		out = append(out, w.columns()...)
		sessionStates(win, aggs) // session_window.go
		aggNode = &WindowAggregate{Input: pre, Window: win, Keys: seq(k), Aggs: aggs, Out: out}
	} else {
		g := &GroupAggregate{Input: pre, Keys: seq(k), Aggs: aggs, Out: out}
		if from.changelog != InsertOnly {
			retracting(g) // changelog.go
		}
		aggNode = g
		// Every GroupAggregate is updating, as in Flink (and as exec runs it), with or
		// without aggregates: see distinct.
		changelog = Updating
	}

	// Above: the select list and HAVING over the aggregation's output.
	resolve := func(e Expr) Expr {
		return rewrite(e, func(x Expr) Expr {
			s, ok := x.(*slotRef)
			if !ok {
				return x
			}
			idx := s.i
			switch s.kind {
			case aggSlot:
				idx += k
			case winSlot:
				idx += k + nAggs
			}
			return &ColumnRef{Index: idx, Name: out[idx].Name, T: out[idx].Type}
		})
	}
	post := &Calc{Input: aggNode}
	if having != nil {
		post.Filter = resolve(having)
	}
	res := &scope{}
	for i, it := range items {
		x := resolve(bound[i])
		post.Projections = append(post.Projections, x)
		post.Out = append(post.Out, types.Column{Name: it.name, Type: x.Type()})
		res.cols = append(res.cols, scopeCol{name: it.name, t: x.Type()})
	}
	return &relation{node: post, scope: res, changelog: changelog}, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// legacyWindow reads GROUP BY TUMBLE(ts, size) or HOP(ts, slide, size).
func (p *planner) legacyWindow(fc *parser.FuncCall, s *scope) (*windowInfo, error) {
	name := strings.ToUpper(fc.Name)
	var kind WindowKind
	switch name {
	case "SESSION":
		kind = SessionWindow
		if len(fc.Args) != 2 {
			return nil, errAt(fc.At, ErrTypeMismatch, "SESSION takes 2 arguments in GROUP BY: SESSION(time_attr, gap), got %d", len(fc.Args))
		}
	case "CUMULATE":
		return nil, errAt(fc.At, ErrUnsupported, "CUMULATE is only available as a window table function: FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size))")
	case "TUMBLE":
		kind = Tumble
		if len(fc.Args) != 2 {
			return nil, errAt(fc.At, ErrTypeMismatch, "TUMBLE takes 2 arguments in GROUP BY: TUMBLE(time_attr, size), got %d", len(fc.Args))
		}
	case "HOP":
		kind = Hop
		if len(fc.Args) != 3 {
			return nil, errAt(fc.At, ErrTypeMismatch, "HOP takes 3 arguments in GROUP BY: HOP(time_attr, slide, size), got %d", len(fc.Args))
		}
	}
	b := &binder{scope: s, clause: "a group window"}
	ts, err := b.bind(fc.Args[0])
	if err != nil {
		return nil, err
	}
	ref, ok := ts.(*ColumnRef)
	if !ok {
		return nil, errAt(fc.Args[0].Pos(), ErrTimeAttribute, "the first argument of %s must be a time attribute column", name)
	}
	w := &windowInfo{timeName: ref.Name, timeType: ref.T, legacyArgs: []string{ts.String()}}
	w.win = Window{Kind: kind, TimeCol: ref.Index, Location: p.loc}
	if err := checkTimeAttr(fc.Args[0].Pos(), ref.Name, ref.T); err != nil {
		return nil, err
	}
	w.win.ProcTime = ref.T.TimeAttr == types.ProcTime
	var durs []time.Duration
	for _, a := range fc.Args[1:] {
		d, lit, err := intervalArg(a, name)
		if err != nil {
			return nil, err
		}
		durs = append(durs, d)
		w.legacyArgs = append(w.legacyArgs, lit.String())
	}
	if kind == Tumble || kind == SessionWindow {
		w.win.Size, w.win.Slide = durs[0], durs[0]
	} else {
		w.win.Slide, w.win.Size = durs[0], durs[1]
	}
	if err := checkWindow(fc.At, &w.win); err != nil {
		return nil, err
	}
	args := make([]string, len(durs))
	for i, d := range durs {
		args[i] = formatInterval(d.Microseconds())
	}
	w.legacyText = fmt.Sprintf("%s(%s, %s)", name, ref.Name, strings.Join(args, ", "))
	return w, nil
}

func checkTimeAttr(pos parser.Pos, name string, t types.Type) error {
	if t.TimeAttr == types.NoTimeAttr {
		return errAt(pos, ErrTimeAttribute, "column '%s' is not a time attribute (it is %s): windows need a rowtime column (WATERMARK FOR %s AS ...) or a PROCTIME() column", name, t, name)
	}
	return nil
}

// intervalArg reads a window size, slide, step or offset: a constant day-time interval.
func intervalArg(e parser.Expr, fn string) (time.Duration, *Literal, error) {
	x, err := (&binder{scope: &scope{}, clause: "a window argument"}).bind(e)
	if err != nil {
		return 0, nil, err
	}
	lit, ok := x.(*Literal)
	if !ok || lit.T.Kind != types.IntervalDayTime || lit.Value.IsNull() {
		return 0, nil, errAt(e.Pos(), ErrTypeMismatch, "type mismatch: %s window sizes must be constant day-time intervals such as INTERVAL '1' DAY, got %s", fn, x.Type().Nullable())
	}
	if us := lit.Value.Int(); us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
		return 0, nil, errAt(e.Pos(), ErrTypeMismatch, "%s window interval %s is too large", fn, formatInterval(us))
	}
	return time.Duration(lit.Value.Int()) * time.Microsecond, lit, nil
}

func checkWindow(pos parser.Pos, w *Window) error {
	if w.Size <= 0 || w.Slide <= 0 {
		return errAt(pos, ErrTypeMismatch, "%s window sizes must be positive", w.Kind)
	}
	switch w.Kind {
	case Hop:
		if w.Size%w.Slide != 0 {
			return errAt(pos, ErrUnsupported, "unsupported: HOP window size %s is not an integral multiple of the slide %s", formatDuration(w.Size), formatDuration(w.Slide))
		}
	case Cumulate:
		if w.Size%w.Slide != 0 {
			return errAt(pos, ErrUnsupported, "unsupported: CUMULATE window size %s is not an integral multiple of the step %s", formatDuration(w.Size), formatDuration(w.Slide))
		}
	}
	return nil
}

func (p *planner) planFrom(te parser.TableExpr, env *cteEnv) (*relation, error) {
	switch x := te.(type) {
	case *parser.TableName:
		return p.planTableName(x, env)
	case *parser.SubqueryTable:
		rel, err := p.planQuery(x.Query, env)
		if err != nil {
			return nil, err
		}
		quals := []string{}
		if x.Alias != "" {
			quals = []string{x.Alias}
		}
		return &relation{node: rel.node, scope: rel.scope.requalify(quals...), changelog: rel.changelog, tvf: rel.tvf}, nil
	case *parser.WindowTVF:
		return p.planWindowTVF(x, env)
	case *parser.MatchRecognize:
		return p.planMatchRecognize(x, env) // match.go
	case *parser.Join:
		if u, ok := x.Right.(*parser.Unnest); ok {
			return p.planUnnest(x, u, env) // unnest.go
		}
		return p.planJoin(x, env) // join.go
	case *parser.Unnest:
		return nil, errAt(x.At, ErrUnsupported, "unsupported: UNNEST without the table it reads (write FROM t CROSS JOIN UNNEST(t.arr) AS u(x))")
	}
	return nil, errAt(te.Pos(), ErrUnsupported, "unsupported: FROM %T", te)
}

func (p *planner) planTableName(x *parser.TableName, env *cteEnv) (*relation, error) {
	if x.AsOf != nil {
		return nil, errAt(x.AsOf.At, ErrUnsupported, "unsupported: FOR SYSTEM_TIME AS OF outside a join (write FROM t JOIN dim FOR SYSTEM_TIME AS OF t.ts AS d ON ...)")
	}
	name, err := objectName(x.At, x.Name)
	if err != nil {
		return nil, err
	}
	qual := x.Alias
	if qual == "" {
		qual = name
	}
	if len(x.Name) == 1 {
		if cte, ok := env.lookup(name); ok {
			if len(x.Options) > 0 {
				return nil, errAt(x.Options[0].At, ErrUnsupported, "unsupported: OPTIONS hint on WITH query '%s': table options apply to tables only", name)
			}
			rel, err := p.planQuery(cte.query, cte.outer)
			if err != nil {
				return nil, err
			}
			return &relation{node: rel.node, scope: rel.scope.requalify(qual), changelog: rel.changelog}, nil
		}
	}
	if v, ok := p.cat.View(name); ok {
		if len(x.Options) > 0 {
			return nil, errAt(x.Options[0].At, ErrUnsupported, "unsupported: OPTIONS hint on view '%s': table options apply to tables only", name)
		}
		rel, err := p.planView(x.At, v)
		if err != nil {
			return nil, err
		}
		return &relation{node: rel.node, scope: rel.scope.requalify(qual), changelog: rel.changelog}, nil
	}
	t, ok := p.cat.Table(name)
	if !ok {
		return nil, errAt(x.At, ErrUnknownTable, "unknown table '%s'%s", name, didYouMean(name, append(p.cat.allNames(), env.names()...)))
	}
	if t, err = withHint(t, x.Options); err != nil {
		return nil, err
	}
	if t.Connector.NewSource == nil {
		return nil, errAt(x.At, ErrUnsupported, "table '%s' cannot be read: connector '%s' is a sink only", t.Name, t.Connector.Name)
	}
	if err := checkRequired(x.At, t, true); err != nil {
		return nil, err
	}
	ref := &tableRef{table: t, out: t.Schema()}
	s := &scope{}
	for _, c := range t.Columns {
		s.cols = append(s.cols, scopeCol{name: c.Name, quals: []string{qual}, t: c.Type})
	}
	changelog := readChangelog(t)
	if scanChangelog(t.Changelog()) == Upsert && len(t.PrimaryKey) == 0 {
		return nil, errAt(x.At, ErrUnsupported, "table '%s' is read as an upsert stream (connector '%s') and needs a PRIMARY KEY (...) NOT ENFORCED: the key of its updates and deletes", t.Name, t.Connector.Name)
	}
	return &relation{node: ref, scope: s, changelog: changelog}, nil
}

func (p *planner) planView(pos parser.Pos, v *View) (*relation, error) {
	for _, name := range p.views {
		if name == v.Name {
			return nil, errAt(pos, ErrUnsupported, "view '%s' refers to itself", v.Name)
		}
	}
	p.views = append(p.views, v.Name)
	defer func() { p.views = p.views[:len(p.views)-1] }()
	rel, err := p.planQuery(v.Query, nil)
	if err != nil {
		return nil, err
	}
	if v.Columns != nil {
		if len(v.Columns) != len(rel.scope.cols) {
			return nil, errAt(pos, ErrTypeMismatch, "view '%s' lists %d columns but its query gives %d", v.Name, len(v.Columns), len(rel.scope.cols))
		}
		s := &scope{cols: append([]scopeCol(nil), rel.scope.cols...)}
		for i := range s.cols {
			s.cols[i].name = v.Columns[i]
		}
		rel = &relation{node: rel.node, scope: s, changelog: rel.changelog}
	}
	return rel, nil
}

func (p *planner) planWindowTVF(w *parser.WindowTVF, env *cteEnv) (*relation, error) {
	fn := strings.ToUpper(w.Func)
	var kind WindowKind
	var nargs int
	switch fn {
	case "TUMBLE":
		kind, nargs = Tumble, 1
	case "HOP":
		kind, nargs = Hop, 2
	case "CUMULATE":
		kind, nargs = Cumulate, 2
	case "SESSION":
		kind, nargs = SessionWindow, 1
	default:
		return nil, errAt(w.At, ErrUnsupported, "unsupported: window table function %s", fn)
	}
	if kind != SessionWindow && len(w.PartitionBy) > 0 {
		return nil, errAt(w.At, ErrUnsupported, "unsupported: PARTITION BY in %s: only SESSION takes it", fn)
	}
	in, err := p.planFrom(w.Input, env)
	if err != nil {
		return nil, err
	}
	if in.changelog != InsertOnly {
		return nil, errAt(w.At, ErrUnsupported, "unsupported: window table function over an updating input")
	}
	idx, err := in.scope.resolve(&parser.Ident{At: w.At, Parts: []string{w.TimeCol}})
	if err != nil {
		return nil, err
	}
	tc := in.scope.cols[idx]
	if err := checkTimeAttr(w.At, tc.name, tc.t); err != nil {
		return nil, err
	}
	if len(w.Args) != nargs && len(w.Args) != nargs+1 {
		usage := map[WindowKind]string{Tumble: "TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset])", Hop: "HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset])", Cumulate: "CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset])"}
		return nil, errAt(w.At, ErrTypeMismatch, "%s takes %d or %d interval arguments, got %d; usage: %s", fn, nargs, nargs+1, len(w.Args), usage[kind])
	}
	var durs []time.Duration
	for _, a := range w.Args {
		d, _, err := intervalArg(a, fn)
		if err != nil {
			return nil, err
		}
		durs = append(durs, d)
	}
	win := Window{Kind: kind, TimeCol: idx, ProcTime: tc.t.TimeAttr == types.ProcTime, Location: p.loc}
	if kind == SessionWindow && len(durs) > 1 {
		return nil, errAt(w.Args[1].Pos(), ErrTypeMismatch, "SESSION takes one interval argument, the gap: SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap)")
	}
	if kind == Tumble || kind == SessionWindow {
		win.Size, win.Slide = durs[0], durs[0]
	} else {
		win.Slide, win.Size = durs[0], durs[1]
	}
	if len(durs) > nargs {
		win.Offset = durs[nargs]
	}
	if err := checkWindow(w.At, &win); err != nil {
		return nil, err
	}
	info := &windowInfo{win: win, timeName: tc.name, timeType: tc.t}
	if info.partition, err = sessionPartition(w, in.scope); err != nil { // session_window.go
		return nil, err
	}
	quals := in.scope.quals()
	if w.Alias != "" {
		quals = []string{w.Alias}
	}
	out := &scope{}
	for i, c := range in.scope.cols {
		c.quals, c.win, c.tvf = quals, noWinProp, nil
		if i == idx {
			// The time attribute moves to window_time; the original column is a plain timestamp.
			c.t = c.t.WithoutTimeAttr()
		}
		out.cols = append(out.cols, c)
	}
	for i, c := range info.columns() {
		out.cols = append(out.cols, scopeCol{name: c.Name, quals: quals, t: c.Type, win: winProp(i + 1), tvf: info})
	}
	node := &WindowTableFunction{Input: in.node, Window: win, Out: out.schema()}
	return &relation{node: node, scope: out, changelog: InsertOnly, tvf: &tvfRelation{input: in, win: info}}, nil
}
