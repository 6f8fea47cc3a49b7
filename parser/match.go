package parser

import (
	"strconv"
	"strings"
)

// MatchRecognize is t MATCH_RECOGNIZE (...) [[AS] alias] in FROM: SQL:2016 row pattern
// recognition as Flink documents it.
//
//	[PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...] [MEASURES e AS name, ...]
//	[ONE ROW PER MATCH | ALL ROWS PER MATCH] [AFTER MATCH SKIP ...]
//	PATTERN (pattern) [WITHIN interval] DEFINE var AS cond, ...
type MatchRecognize struct {
	At          Pos
	Input       TableExpr // the table read (a *TableName)
	PartitionBy []Expr
	OrderBy     []OrderItem
	Measures    []Measure
	AllRows     bool // ALL ROWS PER MATCH (the planner refuses it); false: ONE ROW PER MATCH
	After       AfterMatch
	Pattern     *Pattern
	Within      Expr // an *IntervalLit, nil without WITHIN
	Define      []Define
	Alias       string
}

// Measure is one expr AS name of MEASURES.
type Measure struct {
	At    Pos
	Expr  Expr
	Alias string
}

// Define is one var AS cond of DEFINE.
type Define struct {
	At   Pos
	Var  string
	Cond Expr
}

// AfterMatch is the AFTER MATCH SKIP strategy.
type AfterMatch struct {
	At   Pos    // zero when the clause is absent (the default is SKIP PAST LAST ROW)
	Kind string // "PAST LAST ROW", "TO NEXT ROW", "TO FIRST", "TO LAST"
	Var  string // the variable of TO FIRST / TO LAST
}

// String is the strategy as written after AFTER MATCH SKIP.
func (a AfterMatch) String() string {
	if a.Kind == "" {
		return "PAST LAST ROW"
	}
	if a.Var != "" {
		return a.Kind + " " + QuoteIdent(a.Var)
	}
	return a.Kind
}

// PatternKind says what a Pattern node is.
type PatternKind int

const (
	PatVar    PatternKind = iota // a pattern variable
	PatConcat                    // Items one after the other
	PatAlt                       // one of Items (|), the first that matches preferred
)

// Pattern is a row pattern: a variable, a concatenation or an alternation, each with
// a quantifier {Min, Max} (Max -1: unbounded; {1,1} without one).
type Pattern struct {
	At        Pos
	Kind      PatternKind
	Var       string
	Items     []*Pattern
	Min, Max  int
	Reluctant bool // the quantifier is followed by ?: as few rows as possible
	Group     bool // written in parentheses
}

func (n *MatchRecognize) Pos() Pos    { return n.At }
func (*MatchRecognize) tableExpr()    {}
func (n *Pattern) Pos() Pos           { return n.At }
func (n *Pattern) quantified() bool   { return n.Min != 1 || n.Max != 1 }
func (n *Pattern) Quantifier() string { return n.quantifier() }

// String formats the pattern as written inside PATTERN ( ).
func (n *Pattern) String() string {
	var b strings.Builder
	n.format(&b, false)
	return b.String()
}

func (n *Pattern) format(b *strings.Builder, inner bool) {
	switch n.Kind {
	case PatVar:
		b.WriteString(QuoteIdent(n.Var))
	case PatConcat, PatAlt:
		paren := inner && (n.Group || n.quantified() || n.Kind == PatAlt)
		if paren {
			b.WriteString("(")
		}
		sep := " "
		if n.Kind == PatAlt {
			sep = " | "
		}
		for i, it := range n.Items {
			if i > 0 {
				b.WriteString(sep)
			}
			it.format(b, true)
		}
		if paren {
			b.WriteString(")")
		}
	}
	b.WriteString(n.quantifier())
}

func (n *Pattern) quantifier() string {
	var q string
	switch {
	case n.Min == 1 && n.Max == 1:
		return ""
	case n.Min == 0 && n.Max == -1:
		q = "*"
	case n.Min == 1 && n.Max == -1:
		q = "+"
	case n.Min == 0 && n.Max == 1:
		q = "?"
	case n.Max == -1:
		q = "{" + strconv.Itoa(n.Min) + ",}"
	case n.Min == n.Max:
		q = "{" + strconv.Itoa(n.Min) + "}"
	default:
		q = "{" + strconv.Itoa(n.Min) + "," + strconv.Itoa(n.Max) + "}"
	}
	if n.Reluctant {
		q += "?"
	}
	return q
}

// matchClauseWords start the subclauses of MATCH_RECOGNIZE.
var matchClauseWords = setOf("PARTITION", "ORDER", "MEASURES", "ONE", "ALL", "AFTER", "PATTERN", "WITHIN", "SUBSET", "DEFINE")

// emitMatchRecognize parses MATCH_RECOGNIZE (...) right after a table name of a FROM
// clause; the table's placeholder becomes the MatchRecognize, whose alias sqlparser
// reads as the table's.
func (l *lowering) emitMatchRecognize(i, hi int) (int, error) {
	p := l.p
	t := p.toks[i]
	n := len(l.toks)
	if sub := l.subqueryBefore(i); sub >= 0 {
		// FROM (SELECT ...) MATCH_RECOGNIZE (...): the subquery, lowered already, is
		// parsed again on its own and becomes the input.
		open := l.toks[sub].src
		q, err := p.lowerQuery(open+1, i-1, []string{"')'"})
		if err != nil {
			return 0, err
		}
		m, err := l.group(i+1, hi)
		if err != nil {
			return 0, err
		}
		mr := &MatchRecognize{At: t.pos, Input: &SubqueryTable{At: p.toks[open].pos, Query: q}}
		if err := p.parseMatchBody(mr, i+2, m); err != nil {
			return 0, err
		}
		kept := l.buf.String()[:l.toks[sub].start-1] // without the space before it
		l.buf.Reset()
		l.buf.WriteString(kept)
		l.toks = l.toks[:sub]
		l.emitLeaf(open, &leaf{kind: leafTable, pos: p.toks[open].pos, table: mr})
		return m + 1, nil
	}
	if n == 0 || l.toks[n-1].leaf == nil || l.toks[n-1].leaf.kind != leafIdent || !l.tableStartsAt(n-1) {
		if n > 0 && l.toks[n-1].leaf != nil && l.tableStartsAt(n-1) {
			return 0, unsupportedErr(t.pos, "MATCH_RECOGNIZE over a table function is not supported yet: name the input with WITH or a view")
		}
		return 0, syntaxErr(t.pos, "MATCH_RECOGNIZE must follow the name of a table or a (query) in FROM, before its alias (FROM t MATCH_RECOGNIZE (...) AS m)")
	}
	lf := l.toks[n-1].leaf
	if lf.asOf != nil {
		return 0, unsupportedErr(t.pos, "MATCH_RECOGNIZE over FOR SYSTEM_TIME AS OF is not supported")
	}
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	mr := &MatchRecognize{At: t.pos, Input: &TableName{At: lf.pos, Name: ObjectName(lf.parts), Options: lf.options}}
	if err := p.parseMatchBody(mr, i+2, m); err != nil {
		return 0, err
	}
	l.toks[n-1].leaf = &leaf{kind: leafTable, pos: lf.pos, table: mr}
	return m + 1, nil
}

// emitMatchSemantics lowers FINAL nav(...) or RUNNING nav(...) (MEASURES and DEFINE
// of MATCH_RECOGNIZE) to the call FINAL(nav(...)): the planner says what it means.
func (l *lowering) emitMatchSemantics(i, hi int, w string) (int, error) {
	p := l.p
	t := p.toks[i]
	m, err := l.group(i+2, hi)
	if err != nil {
		return 0, err
	}
	e, err := p.lowerExpr(i+1, m+1, []string{"')'"})
	if err != nil {
		return 0, err
	}
	l.emitLeaf(i, &leaf{kind: leafExpr, pos: t.pos, expr: &FuncCall{At: t.pos, Name: w, Args: []Expr{e}}})
	return m + 1, nil
}

// formatMatchSemantics formats what emitMatchSemantics parses.
func (f *formatter) formatMatchSemantics(e *FuncCall) bool {
	if e.Name != "FINAL" && e.Name != "RUNNING" || len(e.Args) != 1 || e.Distinct || e.Star || e.Filter != nil || e.Over != nil {
		return false
	}
	if _, ok := e.Args[0].(*FuncCall); !ok {
		return false
	}
	f.WriteString(e.Name + " ")
	f.expr(e.Args[0])
	return true
}

// subqueryBefore returns the index in l.toks of the '(' that opens a (query) in a
// table position ending right before source token i, or -1.
func (l *lowering) subqueryBefore(i int) int {
	p := l.p
	if i == 0 || !p.toks[i-1].isOp(")") {
		return -1
	}
	open := p.match[i-1]
	if open < 0 || open+1 >= i-1 || !(p.toks[open+1].is("SELECT") || p.toks[open+1].is("WITH") || p.toks[open+1].isOp("(")) {
		return -1
	}
	for k := len(l.toks) - 1; k >= 0; k-- {
		if l.toks[k].src == open && l.toks[k].text == "(" {
			if l.tableStartsAt(k) {
				return k
			}
			return -1
		}
		if l.toks[k].src < open {
			break
		}
	}
	return -1
}

// matchEnd returns the first top-level clause word in toks[lo:hi], or hi.
func (p *parser) matchEnd(lo, hi int) int {
	for k := lo; k < hi; k++ {
		t := p.toks[k]
		if t.isOp("(") && p.match[k] > k {
			k = p.match[k]
			continue
		}
		if t.kind == tokWord && matchClauseWords[t.val] {
			// ORDER BY / PARTITION BY inside an expression sit in parentheses; a bare
			// ALL or ONE only starts the rows-per-match clause.
			return k
		}
	}
	return hi
}

// splitTop splits toks[lo:hi] at top-level commas.
func (p *parser) splitTop(lo, hi int) [][2]int {
	var out [][2]int
	start := lo
	for k := lo; k < hi; k++ {
		t := p.toks[k]
		if t.isOp("(") && p.match[k] > k {
			k = p.match[k]
			continue
		}
		if t.isOp(",") {
			out = append(out, [2]int{start, k})
			start = k + 1
		}
	}
	return append(out, [2]int{start, hi})
}

// lastTopAs returns the last top-level AS in toks[lo:hi], or -1.
func (p *parser) lastTopAs(lo, hi int) int {
	found := -1
	for k := lo; k < hi; k++ {
		t := p.toks[k]
		if t.isOp("(") && p.match[k] > k {
			k = p.match[k]
			continue
		}
		if t.is("AS") {
			found = k
		}
	}
	return found
}

var matchEnds = []string{"','", "')'"}

func (p *parser) parseMatchBody(mr *MatchRecognize, lo, hi int) error {
	k := lo
	word := func(ws ...string) bool {
		for j, w := range ws {
			if k+j >= hi || !p.toks[k+j].is(w) {
				return false
			}
		}
		return true
	}
	expect := func(ws ...string) error {
		for _, w := range ws {
			if k >= hi || !p.toks[k].is(w) {
				return p.errExpectedAt(p.toks[k], w)
			}
			k++
		}
		return nil
	}
	exprs := func(what string) ([][2]int, error) {
		end := p.matchEnd(k, hi)
		if end == k {
			return nil, p.errExpectedAt(p.toks[k], what)
		}
		items := p.splitTop(k, end)
		k = end
		for _, it := range items {
			if it[0] >= it[1] {
				return nil, p.errExpectedAt(p.toks[it[1]], what)
			}
		}
		return items, nil
	}
	if word("PARTITION") {
		if err := expect("PARTITION", "BY"); err != nil {
			return err
		}
		items, err := exprs("a partition expression")
		if err != nil {
			return err
		}
		for _, it := range items {
			e, err := p.lowerExpr(it[0], it[1], matchEnds)
			if err != nil {
				return err
			}
			mr.PartitionBy = append(mr.PartitionBy, e)
		}
	}
	if word("ORDER") {
		if err := expect("ORDER", "BY"); err != nil {
			return err
		}
		items, err := exprs("an ORDER BY expression")
		if err != nil {
			return err
		}
		for _, it := range items {
			o := OrderItem{At: p.toks[it[0]].pos}
			end := it[1]
			if o.Nulls = nullsAt(p.toks, it[0], end); o.Nulls != NullsDefault {
				end -= 2
			}
			if last := p.toks[end-1]; last.is("DESC") || last.is("ASC") {
				o.Desc = last.is("DESC")
				end--
			}
			if o.Expr, err = p.lowerExpr(it[0], end, matchEnds); err != nil {
				return err
			}
			mr.OrderBy = append(mr.OrderBy, o)
		}
	}
	if word("MEASURES") {
		k++
		items, err := exprs("a measure (expr AS name)")
		if err != nil {
			return err
		}
		for _, it := range items {
			as := p.lastTopAs(it[0], it[1])
			if as < 0 || as+2 != it[1] {
				at := p.toks[it[1]]
				if as >= 0 {
					at = p.toks[as+1]
				}
				return syntaxErr(at.pos, "syntax error at %s: a measure is expr AS name", at.describe())
			}
			name := p.toks[as+1]
			if name.kind != tokWord && name.kind != tokQuoted {
				return p.errExpectedAt(name, "a measure name")
			}
			e, err := p.lowerExpr(it[0], as, []string{"AS"})
			if err != nil {
				return err
			}
			mr.Measures = append(mr.Measures, Measure{At: p.toks[it[0]].pos, Expr: e, Alias: identPart(name)})
		}
	}
	switch {
	case word("ONE"):
		if err := expect("ONE", "ROW", "PER", "MATCH"); err != nil {
			return err
		}
	case word("ALL"):
		if err := expect("ALL", "ROWS", "PER", "MATCH"); err != nil {
			return err
		}
		mr.AllRows = true
	}
	mr.After.Kind = "PAST LAST ROW"
	if word("AFTER") {
		mr.After.At = p.toks[k].pos
		if err := expect("AFTER", "MATCH", "SKIP"); err != nil {
			return err
		}
		switch {
		case word("PAST"):
			if err := expect("PAST", "LAST", "ROW"); err != nil {
				return err
			}
			mr.After.Kind = "PAST LAST ROW"
		case word("TO", "NEXT"):
			if err := expect("TO", "NEXT", "ROW"); err != nil {
				return err
			}
			mr.After.Kind = "TO NEXT ROW"
		case word("TO"):
			k++
			mr.After.Kind = "TO LAST"
			if word("FIRST") || word("LAST") {
				mr.After.Kind = "TO " + p.toks[k].val
				k++
			}
			v := p.toks[k]
			if k >= hi || v.kind != tokWord && v.kind != tokQuoted || matchClauseWords[v.val] && v.kind == tokWord {
				return p.errExpectedAt(v, "a pattern variable")
			}
			mr.After.Var = identPart(v)
			k++
		default:
			return p.errExpectedAt(p.toks[k], "PAST LAST ROW", "TO NEXT ROW", "TO FIRST var", "TO LAST var")
		}
	}
	if !word("PATTERN") {
		return p.errExpectedAt(p.toks[k], "PATTERN")
	}
	k++
	if k >= hi || !p.toks[k].isOp("(") || p.match[k] < 0 || p.match[k] >= hi {
		return p.errExpectedAt(p.toks[k], "'(' after PATTERN")
	}
	pm := p.match[k]
	pp := &patternParser{p: p, k: k + 1, hi: pm}
	pat, err := pp.alt()
	if err != nil {
		return err
	}
	if pp.k < pm {
		return p.errExpectedAt(p.toks[pp.k], "a pattern variable", "'|'", "')'")
	}
	mr.Pattern = pat
	k = pm + 1
	if word("WITHIN") {
		k++
		end := p.matchEnd(k, hi)
		e, err := p.lowerExpr(k, end, []string{"DEFINE"})
		if err != nil {
			return err
		}
		if _, ok := e.(*IntervalLit); !ok {
			return syntaxErr(e.Pos(), "WITHIN takes an interval literal (WITHIN INTERVAL '10' MINUTE)")
		}
		mr.Within = e
		k = end
	}
	if word("SUBSET") {
		return unsupportedErr(p.toks[k].pos, "SUBSET is not supported (Flink does not support it either)")
	}
	if !word("DEFINE") {
		return p.errExpectedAt(p.toks[k], "DEFINE")
	}
	k++
	items, err := exprs("a definition (var AS condition)")
	if err != nil {
		return err
	}
	for _, it := range items {
		v := p.toks[it[0]]
		if v.kind != tokWord && v.kind != tokQuoted || it[0]+2 >= it[1] || !p.toks[it[0]+1].is("AS") {
			return syntaxErr(v.pos, "syntax error at %s: a definition is var AS condition", v.describe())
		}
		e, err := p.lowerExpr(it[0]+2, it[1], matchEnds)
		if err != nil {
			return err
		}
		for _, d := range mr.Define {
			if d.Var == identPart(v) {
				return syntaxErr(v.pos, "pattern variable %s is defined twice", identPart(v))
			}
		}
		mr.Define = append(mr.Define, Define{At: v.pos, Var: identPart(v), Cond: e})
	}
	if k < hi {
		return p.errExpectedAt(p.toks[k], "','", "')'")
	}
	return nil
}

// patternParser parses the row pattern inside PATTERN ( ).
type patternParser struct {
	p     *parser
	k, hi int
}

func (pp *patternParser) tok() token { return pp.p.toks[pp.k] }

func (pp *patternParser) isOp(s string) bool {
	t := pp.tok()
	return pp.k < pp.hi && (t.kind == tokOp || t.kind == tokIllegal) && t.text == s
}

func (pp *patternParser) alt() (*Pattern, error) {
	at := pp.tok().pos
	first, err := pp.seq()
	if err != nil {
		return nil, err
	}
	if !pp.isOp("|") {
		return first, nil
	}
	a := &Pattern{At: at, Kind: PatAlt, Items: []*Pattern{first}, Min: 1, Max: 1}
	for pp.isOp("|") {
		pp.k++
		s, err := pp.seq()
		if err != nil {
			return nil, err
		}
		a.Items = append(a.Items, s)
	}
	return a, nil
}

func (pp *patternParser) seq() (*Pattern, error) {
	at := pp.tok().pos
	var items []*Pattern
	for pp.k < pp.hi && !pp.isOp("|") {
		it, err := pp.quantified()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, pp.p.errExpectedAt(pp.tok(), "a pattern variable")
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return &Pattern{At: at, Kind: PatConcat, Items: items, Min: 1, Max: 1}, nil
}

func (pp *patternParser) quantified() (*Pattern, error) {
	t := pp.tok()
	var n *Pattern
	switch {
	case t.isOp("("):
		m := pp.p.match[pp.k]
		inner := &patternParser{p: pp.p, k: pp.k + 1, hi: m}
		g, err := inner.alt()
		if err != nil {
			return nil, err
		}
		if inner.k < m {
			return nil, pp.p.errExpectedAt(pp.p.toks[inner.k], "a pattern variable", "'|'", "')'")
		}
		pp.k = m + 1
		if g.Kind == PatVar || g.quantified() {
			// (A) or (A+)*: keep the parentheses as a one-item group.
			g = &Pattern{At: t.pos, Kind: PatConcat, Items: []*Pattern{g}, Min: 1, Max: 1}
		}
		g.Group = true
		n = g
	case t.kind == tokWord || t.kind == tokQuoted:
		n = &Pattern{At: t.pos, Kind: PatVar, Var: identPart(t), Min: 1, Max: 1}
		pp.k++
	case t.text == "^" || t.text == "$":
		return nil, unsupportedErr(t.pos, "pattern anchors ^ and $ are not supported (Flink does not support them either)")
	case t.text == "{" && pp.p.toks[pp.k+1].text == "-":
		return nil, unsupportedErr(t.pos, "pattern exclusion {- -} is not supported (Flink does not support it either)")
	default:
		return nil, pp.p.errExpectedAt(t, "a pattern variable", "'('")
	}
	q := pp.tok()
	switch {
	case pp.isOp("*"):
		n.Min, n.Max = 0, -1
	case pp.isOp("+"):
		n.Min, n.Max = 1, -1
	case pp.isOp("?"):
		n.Min, n.Max = 0, 1
	case pp.isOp("{"):
		pp.k++
		lo, err := pp.number()
		if err != nil {
			return nil, err
		}
		n.Min, n.Max = lo, lo
		if pp.isOp(",") {
			pp.k++
			n.Max = -1
			if pp.tok().kind == tokNumber && pp.k < pp.hi {
				if n.Max, err = pp.number(); err != nil {
					return nil, err
				}
				if n.Max < n.Min {
					return nil, syntaxErr(q.pos, "quantifier {%d,%d}: the maximum is below the minimum", n.Min, n.Max)
				}
			}
		}
		if !pp.isOp("}") {
			return nil, pp.p.errExpectedAt(pp.tok(), "'}'")
		}
		if n.Max == 0 {
			return nil, syntaxErr(q.pos, "quantifier {0} matches nothing")
		}
	default:
		return n, nil
	}
	pp.k++
	if pp.isOp("?") {
		n.Reluctant = true
		pp.k++
	}
	return n, nil
}

func (pp *patternParser) number() (int, error) {
	t := pp.tok()
	if pp.k >= pp.hi || t.kind != tokNumber {
		return 0, pp.p.errExpectedAt(t, "a number")
	}
	v, err := strconv.Atoi(t.text)
	if err != nil || v < 0 || v > 1<<20 {
		return 0, syntaxErr(t.pos, "quantifier bound %s is not a small whole number", t.text)
	}
	pp.k++
	return v, nil
}

// matchRecognize formats t MATCH_RECOGNIZE (...).
func (f *formatter) matchRecognize(t *MatchRecognize) {
	f.table(t.Input)
	f.WriteString(" MATCH_RECOGNIZE (")
	sep := ""
	clause := func(s string) {
		f.WriteString(sep + s)
		sep = " "
	}
	if len(t.PartitionBy) > 0 {
		clause("PARTITION BY ")
		f.exprList(t.PartitionBy)
	}
	if len(t.OrderBy) > 0 {
		clause("ORDER BY ")
		for i, o := range t.OrderBy {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(o.Expr)
			f.WriteString(o.suffix())
		}
	}
	if len(t.Measures) > 0 {
		clause("MEASURES ")
		for i, m := range t.Measures {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(m.Expr)
			f.WriteString(" AS " + QuoteIdent(m.Alias))
		}
	}
	if t.AllRows {
		clause("ALL ROWS PER MATCH")
	} else {
		clause("ONE ROW PER MATCH")
	}
	clause("AFTER MATCH SKIP " + t.After.String())
	clause("PATTERN (" + t.Pattern.String() + ")")
	if t.Within != nil {
		clause("WITHIN ")
		f.expr(t.Within)
	}
	clause("DEFINE ")
	for i, d := range t.Define {
		if i > 0 {
			f.WriteString(", ")
		}
		f.WriteString(QuoteIdent(d.Var) + " AS ")
		f.expr(d.Cond)
	}
	f.WriteString(")")
	f.alias(t.Alias)
}
