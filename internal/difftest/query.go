package difftest

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// Query is one generated query in both dialects.
type Query struct {
	Flink, Duck string
	Shape       string // what the generator built, for the failure report
	Cols        []Column
	Updating    bool // its result is an updating stream (it aggregates, or reads one that does)
}

// source is what a query reads: a table or view by name, or a subquery.
type source struct {
	F, D   string   // the FROM item
	name   string   // a table or view name, for a window table function
	cols   []Column // what it provides
	window bool     // it has an event-time column ts that windows can use
	update bool     // it is an updating stream (an aggregate)
}

// Generator makes random queries over one table.
type Generator struct {
	g *gen
}

// NewGenerator returns a generator of queries with the constructs feat switches on.
func NewGenerator(rng *rand.Rand, feat Features) *Generator {
	return &Generator{g: &gen{rng: rng, feat: feat}}
}

// Query generates a query over t.
func (gn *Generator) Query(t *Table) Query {
	g := gn.g
	g.seq = 0
	g.zone = t.ZoneOffset
	base := source{F: t.Name, D: t.Name, name: t.Name, window: true}
	for _, c := range t.Columns {
		base.cols = append(base.cols, c)
	}
	roll := g.n(20)
	switch {
	case roll < 4:
		return g.project(base, "project")
	case roll < 8:
		return g.group(base, 1+g.n(2), "group")
	case roll < 9:
		return g.group(base, 0, "global aggregate")
	case roll < 10 && g.feat.SelectDistinct:
		return g.distinct(base, "distinct")
	case roll < 14:
		return g.window(base, "window")
	case roll < 15 && g.feat.WindowOverView:
		return g.windowOverView(base)
	case roll < 16 && g.feat.WindowProjection:
		return g.windowRows(base)
	case g.feat.Subqueries:
		return g.nested(base, 0)
	}
	return g.project(base, "project")
}

func (g *gen) fresh(p string) string {
	g.seq++
	return fmt.Sprintf("%s%d", p, g.seq)
}

// nested is a query over a subquery in FROM or a WITH.
func (g *gen) nested(base source, depth int) Query {
	var inner Query
	switch g.n(6) {
	case 5:
		if depth < 2 && g.feat.NestedSubqueries {
			inner = g.nested(base, depth+1)
			break
		}
		fallthrough
	case 0, 1:
		inner = g.project(base, "project")
	case 2:
		inner = g.group(base, g.n(3), "group")
	case 3:
		inner = g.window(base, "window")
	default:
		if g.feat.SelectDistinct {
			inner = g.distinct(base, "distinct")
		} else {
			inner = g.project(base, "project")
		}
	}
	updating := inner.Updating
	alias := g.fresh("q")
	src := source{cols: inner.Cols, update: updating}
	with := g.chance(0.5)
	if with {
		src.F, src.D = alias, alias
	} else {
		src.F, src.D = "("+inner.Flink+") AS "+alias, "("+inner.Duck+") AS "+alias
	}
	var outer Query
	switch {
	case updating && !g.feat.UpdatingInput, g.chance(0.4):
		outer = g.project(src, "project")
	case g.chance(0.7):
		outer = g.group(src, g.n(3), "group")
	case g.feat.SelectDistinct:
		outer = g.distinct(src, "distinct")
	default:
		outer = g.project(src, "project")
	}
	if with {
		outer.Flink = "WITH " + alias + " AS (" + inner.Flink + ") " + outer.Flink
		outer.Duck = "WITH " + alias + " AS (" + inner.Duck + ") " + outer.Duck
	}
	outer.Shape += " over " + inner.Shape
	outer.Updating = outer.Updating || updating
	return outer
}

type item struct {
	e    Expr
	name string
}

func selectList(items []item) (string, string) {
	f, d := make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		f[i] = it.e.F + " AS " + it.name
		d[i] = it.e.D + " AS " + it.name
	}
	return strings.Join(f, ", "), strings.Join(d, ", ")
}

func colsOf(items []item) []Column {
	cs := make([]Column, len(items))
	for i, it := range items {
		cs[i] = Column{Name: it.name, Type: it.e.T}
	}
	return cs
}

// project is SELECT exprs FROM src [WHERE p].
func (g *gen) project(src source, shape string) Query {
	var items []item
	for range 1 + g.n(4) {
		var e Expr
		if ts, ok := g.timeCol(src.cols); ok && g.chance(0.1) {
			e = both(ts.Name, ts.Type)
		} else {
			e = g.expr(src.cols, g.anyType(), 2)
		}
		items = append(items, item{e, g.fresh("c")})
	}
	if g.feat.ShadowingAliases && g.chance(0.2) {
		// name the outputs after input columns, shuffled: the WHERE still reads the
		// input's columns, a query over this one the outputs
		perm := g.rng.Perm(len(src.cols))
		for i := range items {
			if i < len(perm) {
				items[i].name = src.cols[perm[i]].Name
			}
		}
	}
	f, d := selectList(items)
	q := Query{Flink: "SELECT " + f + " FROM " + src.F, Duck: "SELECT " + d + " FROM " + src.D, Shape: shape, Cols: colsOf(items), Updating: src.update}
	g.where(&q, src)
	return q
}

// timeCol picks a TIMESTAMP or TIMESTAMP_LTZ column.
func (g *gen) timeCol(sc []Column) (Column, bool) {
	var cs []Column
	for _, c := range sc {
		if c.Type == TTimestamp || c.Type == TLtz {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return Column{}, false
	}
	return cs[g.n(len(cs))], true
}

// tsType is the type of the event time column ts of sc.
func tsType(sc []Column) Type {
	for _, c := range sc {
		if c.Name == "ts" {
			return c.Type
		}
	}
	return TTimestamp
}

func (g *gen) where(q *Query, src source) {
	if g.chance(0.6) {
		p := g.pred(src.cols, 2)
		q.Flink += " WHERE " + p.F
		q.Duck += " WHERE " + p.D
	}
}

// distinct is SELECT DISTINCT exprs FROM src [WHERE p].
func (g *gen) distinct(src source, shape string) Query {
	var items []item
	for range 1 + g.n(3) {
		t := []Type{TInt, TString, TBool, TBigInt}[g.n(4)]
		var e Expr
		if g.chance(0.6) {
			e = g.col(src.cols, t)
		} else {
			e = g.expr(src.cols, t, 1)
		}
		items = append(items, item{e, g.fresh("c")})
	}
	f, d := selectList(items)
	q := Query{Flink: "SELECT DISTINCT " + f + " FROM " + src.F, Duck: "SELECT DISTINCT " + d + " FROM " + src.D, Shape: shape, Cols: colsOf(items), Updating: true}
	g.where(&q, src)
	return q
}

// keys picks n grouping keys over sc.
func (g *gen) keys(sc []Column, n int) []Expr {
	var ks []Expr
	for range n {
		t := []Type{TInt, TString, TString, TBool, TBigInt, TDecimal}[g.n(6)]
		if t == TDecimal && !g.feat.Decimal {
			t = TInt
		}
		exprT := t
		if g.feat.TimeFuncs && g.chance(0.2) {
			exprT = TTimestamp // FLOOR(ts TO HOUR), ts + INTERVAL ...
			if g.feat.Dates && g.chance(0.3) {
				exprT = TDate // CAST(ts AS DATE)
			}
		}
		if e := g.expr(sc, exprT, 1); g.feat.GroupByExpr && g.chance(0.25) && mentions(e, sc) {
			ks = append(ks, e)
		} else {
			if k, ok := g.keyCol(sc, t); ok {
				ks = append(ks, k)
			}
		}
	}
	return ks
}

// mentions reports whether e reads a column of sc.
func mentions(e Expr, sc []Column) bool {
	for _, c := range sc {
		if regexp.MustCompile(`\b` + c.Name + `\b`).MatchString(e.F) {
			return true
		}
	}
	return false
}

// keyCol picks a column of type t, else any column other than the event time: a
// literal key would be a position in DuckDB's GROUP BY.
func (g *gen) keyCol(sc []Column, t Type) (Expr, bool) {
	var same, other []Column
	for _, c := range sc {
		switch {
		case c.Type == t:
			same = append(same, c)
		case c.Type != TTimestamp && c.Type != TLtz && c.Type != TDate:
			other = append(other, c)
		}
	}
	if len(same) == 0 {
		same = other
	}
	if len(same) == 0 {
		return Expr{}, false
	}
	c := same[g.n(len(same))]
	return both(c.Name, c.Type), true
}

// group is SELECT keys, aggregates FROM src [WHERE p] GROUP BY keys [HAVING p].
func (g *gen) group(src source, nkeys int, shape string) Query {
	if nkeys == 0 {
		shape = "global aggregate"
	}
	keys := g.keys(src.cols, nkeys)
	var items []item
	for _, k := range keys {
		items = append(items, item{k, g.fresh("c")})
	}
	for range 1 + g.n(3) {
		items = append(items, item{g.aggItem(src.cols, keys), g.fresh("c")})
	}
	f, d := selectList(items)
	q := Query{Flink: "SELECT " + f + " FROM " + src.F, Duck: "SELECT " + d + " FROM " + src.D, Shape: shape, Cols: colsOf(items), Updating: true}
	g.where(&q, src)
	if len(keys) > 0 {
		fk, dk := make([]string, len(keys)), make([]string, len(keys))
		for i, k := range keys {
			fk[i], dk[i] = k.F, k.D
		}
		q.Flink += " GROUP BY " + strings.Join(fk, ", ")
		q.Duck += " GROUP BY " + strings.Join(dk, ", ")
	}
	g.having(&q, src.cols, len(keys) == 0)
	return q
}

// having adds a HAVING clause, and for a global aggregate the rule that a streaming
// aggregate over no rows emits nothing (a batch engine's gives one row).
func (g *gen) having(q *Query, sc []Column, global bool) {
	var p *Expr
	if g.feat.Having && g.chance(0.35) {
		e := g.havingPred(sc, 1)
		p = &e
	}
	if p != nil {
		q.Flink += " HAVING " + p.F
	}
	switch {
	case global && p != nil:
		q.Duck += " HAVING count(*) > 0 AND " + p.D
	case global:
		q.Duck += " HAVING count(*) > 0"
	case p != nil:
		q.Duck += " HAVING " + p.D
	}
}

func (g *gen) havingPred(sc []Column, depth int) Expr {
	if depth > 0 {
		switch g.n(4) {
		case 0:
			return wrap(TBool, "(%s AND %s)", g.havingPred(sc, depth-1), g.havingPred(sc, depth-1))
		case 1:
			return wrap(TBool, "(%s OR %s)", g.havingPred(sc, depth-1), g.havingPred(sc, depth-1))
		}
	}
	for {
		a := g.agg(sc)
		if a.T == TString || a.T == TBool || a.T == TTimestamp || a.T == TLtz || a.T == TDate {
			continue
		}
		lit := intLit(g.n(12) - 2)
		if a.T == TDouble || a.T == TDecimal {
			lit = g.lit(a.T)
		}
		return wrap(TBool, "(%s "+cmpOps[g.n(len(cmpOps))]+" %s)", a, lit)
	}
}

// aggItem is an aggregate, or an expression over aggregates and grouping keys.
func (g *gen) aggItem(sc []Column, keys []Expr) Expr {
	a := g.agg(sc)
	if !g.feat.AggExprs || !g.chance(0.25) {
		return a
	}
	switch {
	case a.T == TInt || a.T == TBigInt:
		switch g.n(3) {
		case 0:
			return wrap(a.T, "(%s + %s)", a, intLit(g.n(5)))
		case 1:
			return wrap(a.T, "COALESCE(%s, %s)", a, intLit(g.n(5)))
		}
		return wrap(TString, "CASE WHEN %s > %s THEN 'many' ELSE 'few' END", a, intLit(g.n(5)))
	case a.T == TDouble:
		return wrap(TDouble, "(%s * CAST(2 AS DOUBLE))", a)
	case len(keys) > 0 && keys[0].T == TString && a.T == TString:
		return wrap2(TString, "(%s || %s)", duckConcat, keys[0], a)
	}
	return wrap(TBool, "(%s IS NULL)", a)
}

func (g *gen) numTypes() []Type {
	if g.feat.Decimal {
		return []Type{TInt, TBigInt, TDouble, TDecimal}
	}
	return []Type{TInt, TBigInt, TDouble}
}

// agg generates an aggregate call over sc.
func (g *gen) agg(sc []Column) Expr {
	var filterF, filterD string
	if g.feat.AggFilter && g.chance(0.25) {
		p := g.pred(sc, 1)
		filterF, filterD = " FILTER (WHERE "+p.F+")", " FILTER (WHERE "+p.D+")"
	}
	distinct := ""
	if g.feat.AggDistinct && g.chance(0.25) {
		distinct = "DISTINCT "
	}
	arg := func(ts ...Type) Expr {
		t := ts[g.n(len(ts))]
		if g.feat.AggOfExpr && g.chance(0.25) {
			return g.expr(sc, t, 1)
		}
		return g.col(sc, t)
	}
	mk := func(name string, t Type, a Expr) Expr {
		return Expr{F: name + "(" + distinct + a.F + ")" + filterF, D: name + "(" + distinct + a.D + ")" + filterD, T: t, Agg: true}
	}
	switch g.n(7) {
	case 0:
		return Expr{F: "COUNT(*)" + filterF, D: "count(*)" + filterD, T: TBigInt, Agg: true}
	case 1:
		return mk("COUNT", TBigInt, arg(TInt, TBigInt, TDouble, TString, TBool))
	case 2:
		a := arg(g.numTypes()...)
		return mk("SUM", a.T, a)
	case 3, 4:
		ts := append(g.numTypes(), TString)
		if g.feat.TimeFuncs {
			ts = append(ts, TTimestamp)
		}
		if g.feat.Dates && g.feat.TimeFuncs {
			ts = append(ts, TDate)
		}
		if g.feat.MinMaxBool {
			ts = append(ts, TBool)
		}
		var a Expr
		if t, ok := g.timeCol(sc); ok && g.feat.MinMaxTime && g.chance(0.1) {
			a = both(t.Name, t.Type)
		} else {
			a = arg(ts...)
		}
		if g.chance(0.5) {
			return mk("MIN", a.T, a)
		}
		return mk("MAX", a.T, a)
	default:
		a := arg(g.numTypes()...)
		e := mk("AVG", a.T, a)
		switch a.T {
		case TInt, TBigInt:
			// Flink's AVG of integers is an integer, the quotient truncated.
			e.D = "CAST(trunc(" + e.D + ") AS " + a.T.Duck() + ")"
		case TDecimal:
			// Flink's AVG of a DECIMAL with scale at most 6 is a DECIMAL(38, 6), the
			// quotient rounded half up; DuckDB's is a DOUBLE. sum * 10^6 / count is never
			// within a rounding error of a half unless it is exactly one, which a double holds.
			// The result is cast to DOUBLE in both: arithmetic on a DECIMAL(38, 6) rounds
			// to Flink's adjusted scale (AVG(m) * AVG(m) is a DECIMAL(38, 6) again), which
			// DuckDB's DOUBLE does not.
			sum := Expr{D: "sum(" + distinct + a.D + ")" + filterD}
			cnt := Expr{D: "count(" + distinct + a.D + ")" + filterD}
			e.F = "CAST(" + e.F + " AS DOUBLE)"
			e.D = "(round(" + sum.D + " * 1000000 / " + cnt.D + ") / 1000000)"
			e.T = TDouble
		}
		return e
	}
}

// windowSpec is a window table function over a table or view, in Flink, and the DuckDB
// subquery that gives each of its rows once per window it belongs to, with window_start
// and window_end.
type windowSpec struct {
	tvf, duck, kind string
	// The legacy group window of the same windows (GROUP BY TUMBLE(ts, size) with
	// TUMBLE_START and TUMBLE_END), "" for CUMULATE, which has none.
	group, start, end string
}

func (g *gen) windowTVF(name string) windowSpec {
	// sizes in seconds; Flink aligns windows to the epoch plus the offset
	iv := func(sec int) string {
		switch {
		case sec%3600 == 0:
			return fmt.Sprintf("INTERVAL '%d' HOUR", sec/3600)
		case sec%60 == 0:
			return fmt.Sprintf("INTERVAL '%d' MINUTE", sec/60)
		}
		return fmt.Sprintf("INTERVAL '%d' SECOND", sec)
	}
	steps := []int{30, 60, 120, 300, 600}
	offset := 0
	offsetArg := func(size int) string {
		if !g.feat.WindowOffset || !g.chance(0.25) {
			return ""
		}
		offset = (g.n(2*size/60) - size/60) * 60 // whole minutes, negative too
		if offset == 0 {
			return ""
		}
		return ", " + iv(abs(offset))
	}
	// A window of a TIMESTAMP_LTZ is aligned in local time: its start is
	// ((epoch_ms(ts) - shift) // size) * size + shift, shift = offset - zone offset.
	shift := func() int { return offset*1000 - int(g.zone.Milliseconds()) }
	origin := func() string { return fmt.Sprintf("(epoch_ms(ts) - (%d))", shift()) }
	// window_start and window_end are TIMESTAMP(3), the wall clock in the zone, also
	// over a TIMESTAMP_LTZ; window_time is the instant.
	local := fmt.Sprintf("(%d)", g.zone.Milliseconds())
	switch k := g.n(3); {
	case k == 1 && g.feat.Hop:
		slide := steps[g.n(len(steps))]
		size := slide * (2 + g.n(3))
		if g.feat.HopUneven && g.chance(0.3) {
			size = slide*(1+g.n(3)) + 60*(1+g.n(slide/60+1))
		}
		n := (size + slide - 1) / slide
		off := offsetArg(size)
		args := fmt.Sprintf("ts, %s, %s", iv(slide), iv(size))
		w := windowSpec{
			tvf: fmt.Sprintf("TABLE(HOP(TABLE %s, DESCRIPTOR(ts), %s, %s%s))", name, iv(slide), iv(size), negate(off, offset)),
			duck: fmt.Sprintf("(SELECT *, epoch_ms(dt_ws + "+local+") AS window_start, epoch_ms(dt_ws + %d + "+local+") AS window_end FROM "+
				"(SELECT *, (%s // %d) * %d + (%d) - dt_k * %d AS dt_ws FROM %s CROSS JOIN range(0, %d) r(dt_k)) WHERE epoch_ms(ts) < dt_ws + %d)",
				size*1000, origin(), slide*1000, slide*1000, shift(), slide*1000, name, n, size*1000),
			kind:  fmt.Sprintf("hop %d/%d s offset %d s", slide, size, offset),
			group: "HOP(" + args + ")", start: "HOP_START(" + args + ")", end: "HOP_END(" + args + ")",
		}
		if offset != 0 {
			w.group = "" // the legacy group windows have no offset
		}
		return w
	case k == 2 && g.feat.Cumulate:
		step := steps[g.n(len(steps))]
		size := step * (1 + g.n(4))
		off := offsetArg(size)
		return windowSpec{
			tvf: fmt.Sprintf("TABLE(CUMULATE(TABLE %s, DESCRIPTOR(ts), %s, %s%s))", name, iv(step), iv(size), negate(off, offset)),
			duck: fmt.Sprintf("(SELECT *, epoch_ms(dt_ws + "+local+") AS window_start, epoch_ms(dt_ws + dt_j * %d + "+local+") AS window_end FROM "+
				"(SELECT *, (%s // %d) * %d + (%d) AS dt_ws FROM %s CROSS JOIN range(1, %d) r(dt_j)) WHERE dt_ws + dt_j * %d > epoch_ms(ts))",
				step*1000, origin(), size*1000, size*1000, shift(), name, size/step+1, step*1000),
			kind: fmt.Sprintf("cumulate %d/%d s offset %d s", step, size, offset),
		}
	default:
		sizes := []int{30, 60, 120, 300, 420, 600, 780, 900, 1800, 3600, 7200}
		size := sizes[g.n(len(sizes))]
		off := offsetArg(size)
		args := fmt.Sprintf("ts, %s", iv(size))
		w := windowSpec{
			tvf: fmt.Sprintf("TABLE(TUMBLE(TABLE %s, DESCRIPTOR(ts), %s%s))", name, iv(size), negate(off, offset)),
			duck: fmt.Sprintf("(SELECT *, epoch_ms((%[1]s // %[2]d) * %[2]d + (%[3]d) + "+local+") AS window_start, epoch_ms((%[1]s // %[2]d) * %[2]d + (%[3]d) + %[2]d + "+local+") AS window_end FROM %[4]s)",
				origin(), size*1000, shift(), name),
			kind:  fmt.Sprintf("tumble %d s offset %d s", size, offset),
			group: "TUMBLE(" + args + ")", start: "TUMBLE_START(" + args + ")", end: "TUMBLE_END(" + args + ")",
		}
		if offset != 0 {
			w.group = ""
		}
		return w
	}
}

// negate writes a negative offset as INTERVAL '-n' UNIT.
func negate(arg string, offset int) string {
	if offset < 0 {
		return strings.Replace(arg, "'", "'-", 1)
	}
	return arg
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// window is a window aggregate over src (a table or view with ts): by a window table
// function, or by a legacy group window.
func (g *gen) window(src source, shape string) Query {
	w := g.windowTVF(src.name)
	legacy := g.feat.LegacyWindows && w.group != "" && g.chance(0.3)
	alias := g.fresh("w")
	var keys []Expr
	for _, k := range g.keys(src.cols, g.n(3)) {
		if !g.feat.WindowKeyExprs && strings.ContainsAny(k.F, "( ") {
			continue
		}
		keys = append(keys, k)
	}
	var items []item
	ws, we := both("window_start", TTimestamp), both("window_end", TTimestamp)
	if legacy {
		ws.F, we.F = w.start, w.end
	}
	switch {
	case g.feat.WindowKeysSubset && g.chance(0.1):
		items = append(items, item{ws, g.fresh("c")})
	case g.feat.WindowKeysSubset && g.chance(0.1):
		items = append(items, item{we, g.fresh("c")})
	default:
		items = append(items, item{ws, g.fresh("c")}, item{we, g.fresh("c")})
	}
	for _, k := range keys {
		items = append(items, item{k, g.fresh("c")})
	}
	for range 1 + g.n(3) {
		items = append(items, item{g.aggItem(src.cols, keys), g.fresh("c")})
	}
	fs, ds := selectList(items)
	from := w.tvf
	if legacy {
		from = src.F
		w.kind = "legacy " + w.kind
	}
	q := Query{
		Flink: "SELECT " + fs + " FROM " + from,
		Duck:  "SELECT " + ds + " FROM " + w.duck + " AS " + alias,
		Shape: shape + " (" + w.kind + ")", Cols: colsOf(items),
	}
	g.where(&q, source{cols: src.cols})
	fk, dk := []string{"window_start", "window_end"}, []string{"window_start", "window_end"}
	if legacy {
		fk = []string{w.group}
	}
	for _, k := range keys {
		fk, dk = append(fk, k.F), append(dk, k.D)
	}
	q.Flink += " GROUP BY " + strings.Join(fk, ", ")
	q.Duck += " GROUP BY " + strings.Join(dk, ", ")
	// Aggregates in HAVING read the table's columns: pipesql rejects window_start and
	// window_end there ("unsupported: window_start used in WHERE, GROUP BY keys or
	// aggregate arguments of a window aggregation").
	g.having(&q, src.cols, false)
	return q
}

// windowRows is a window table function without aggregation: each row once per window,
// with window_start, window_end and window_time.
func (g *gen) windowRows(src source) Query {
	w := g.windowTVF(src.name)
	alias := g.fresh("w")
	items := []item{
		{both("window_start", TTimestamp), g.fresh("c")},
		{both("window_end", TTimestamp), g.fresh("c")},
	}
	if g.chance(0.5) {
		d := fmt.Sprintf("epoch_ms(epoch_ms(window_end) - (%d) - 1)", g.zone.Milliseconds())
		items = append(items, item{Expr{F: "window_time", D: d, T: tsType(src.cols)}, g.fresh("c")})
	}
	for range 1 + g.n(3) {
		items = append(items, item{g.expr(src.cols, g.anyType(), 2), g.fresh("c")})
	}
	fs, ds := selectList(items)
	q := Query{
		Flink: "SELECT " + fs + " FROM " + w.tvf,
		Duck:  "SELECT " + ds + " FROM " + w.duck + " AS " + alias,
		Shape: "window rows (" + w.kind + ")", Cols: colsOf(items),
	}
	g.where(&q, source{cols: src.cols})
	return q
}

// windowOverView is a window aggregate over a WITH view that filters and projects the
// table, keeping its event time.
func (g *gen) windowOverView(base source) Query {
	items := []item{{both("ts", tsType(base.cols)), "ts"}}
	for range 1 + g.n(3) {
		t := []Type{TInt, TString, TBool, TBigInt, TDouble}[g.n(5)]
		items = append(items, item{g.expr(base.cols, t, 1), g.fresh("v")})
	}
	f, d := selectList(items)
	inner := Query{Flink: "SELECT " + f + " FROM " + base.F, Duck: "SELECT " + d + " FROM " + base.D}
	g.where(&inner, base)
	name := g.fresh("v")
	q := g.window(source{F: name, D: name, name: name, cols: colsOf(items), window: true}, "window over view")
	q.Flink = "WITH " + name + " AS (" + inner.Flink + ") " + q.Flink
	q.Duck = "WITH " + name + " AS (" + inner.Duck + ") " + q.Duck
	return q
}
