package parser

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// Lowering a Flink query onto sqlparser
//
// The tokens of a query are re-emitted as text that sqlparser's MySQL grammar accepts:
//
//   - every identifier (dotted chains included) becomes a placeholder `pN`, every
//     literal a bind variable :vN, where N indexes the emitted token, so that each leaf
//     of sqlparser's tree leads back to the original token, its spelling and position;
//   - each SELECT is followed by a comment /*N*/ that sqlparser keeps, so that a Select
//     node finds its SELECT keyword and the start of each of its items;
//   - Flink-only syntax is parsed here and replaced: INTERVAL '1' DAY and typed literals
//     become bind variables for prebuilt nodes, CAST(x AS <Flink type>) a call of a
//     placeholder function, agg(x) FILTER (WHERE c) a wrapper call, TABLE(TUMBLE(...)) a
//     placeholder table, || the DIV operator (sqlparser reads || as OR, and DIV has the
//     precedence Flink gives ||), FULL JOIN STRAIGHT_JOIN;
//   - the emitted text ends with a ';' sentinel, so every syntax error sqlparser reports
//     is at an emitted token, which maps back to a source token.
//
// When sqlparser rejects the text, the tokens that could have come at the failing point
// are found by asking sqlparser again with each candidate in its place.

// etok is one token of the lowered text.
type etok struct {
	text       string
	start, end int // byte range in the lowered text
	src        int // index of the source token it stands for
	leaf       *leaf
	sel        *selectInfo
}

type leafKind uint8

const (
	leafIdent leafKind = iota // an identifier chain: parts
	leafExpr                  // a prebuilt expression: literal, interval, time unit
	leafFunc                  // a function name with its shape
	leafTable                 // a prebuilt table expression (window TVF)
	leafQuery                 // a prebuilt query: (WITH ...) inside a query
)

type leaf struct {
	kind  leafKind
	pos   Pos
	parts []string
	expr  Expr
	table TableExpr
	query *Query
	fn    funcShape
	// options are the OPTIONS hints after a table name in FROM.
	options []Option
	// asOf is FOR SYSTEM_TIME AS OF attr after a table name in FROM.
	asOf *Ident
}

// funcShape says how a placeholder function call maps back.
type funcShape struct {
	name    string
	cast    *DataType // CAST / TRY_CAST
	try     bool
	filter  bool // the wrapper of agg(...) FILTER (WHERE cond)
	niladic bool
	over    *overShape
}

// overShape is the OVER clause of a call: its partition and order expressions are
// emitted as the call's last arguments, partition keys first.
type overShape struct {
	at    Pos
	star  bool // COUNT(*) OVER: the '*' is not emitted
	nPart int
	order []OrderItem // Expr filled in by convert
	frame *Frame
	name  string // OVER w
}

// selectInfo is where a SELECT and each of its items start.
type selectInfo struct {
	pos   Pos
	items []Pos
	// the WINDOW and QUALIFY clauses (over.go)
	windows []NamedWindow
	qualify Expr
	// the STATE_TTL query hint
	stateTTL []Option
}

// lowering is the state of lowering one token range.
type lowering struct {
	p        *parser
	toks     []etok
	buf      strings.Builder
	exprMode bool
	ends     []string // what may follow the range, for error messages
	hi       int      // the source token just after the range
	// skip maps the first token of a clause parsed on the side (WINDOW, QUALIFY) to
	// the token after it.
	skip map[int]int
	// reserved is the first reserved word emitted as a name. It is reported once the
	// rest is known to be no earlier error, so that the first mistake is the one shown.
	reserved *Error
	// nulls are the NULLS FIRST|LAST of ORDER BY items, orders the converted items
	// they go to (nulls.go).
	nulls  []nullsMark
	orders []orderRef
}

func (p *parser) newLowering(hi int, ends []string, exprMode bool) *lowering {
	return &lowering{p: p, hi: hi, ends: ends, exprMode: exprMode}
}

func (l *lowering) emit(text string, src int) *etok {
	l.buf.WriteByte(' ')
	start := l.buf.Len()
	l.buf.WriteString(text)
	l.toks = append(l.toks, etok{text: text, start: start, end: l.buf.Len(), src: src})
	return &l.toks[len(l.toks)-1]
}

// emitLeaf emits a placeholder: a bind variable for prebuilt expressions, a backquoted
// name for everything else.
func (l *lowering) emitLeaf(src int, lf *leaf) {
	n := strconv.Itoa(len(l.toks))
	text := "`p" + n + "`"
	if lf.kind == leafExpr {
		text = ":v" + n
	}
	l.emit(text, src).leaf = lf
}

// tok returns the source token k, or the range terminator when k is past hi.
func (l *lowering) tok(k, hi int) token {
	if k >= hi {
		return l.p.toks[hi]
	}
	return l.p.toks[k]
}

// group returns the index of the ')' closing the '(' at i, which must lie before hi.
func (l *lowering) group(i, hi int) (int, error) {
	m := l.p.match[i]
	if m < 0 || m >= hi {
		return 0, syntaxErr(l.p.toks[i].pos, "unclosed '(': expected ')'")
	}
	return m, nil
}

// topLevel returns the index of the first bare word w in toks[lo:hi] outside
// parentheses, CASE ... END and INTERVAL literals, or -1.
func (l *lowering) topLevel(lo, hi int, w string) int {
	found := -1
	l.scanTopLevel(lo, hi, func(k int) bool {
		if l.p.toks[k].is(w) {
			found = k
			return false
		}
		return true
	})
	return found
}

// lastTopLevel is topLevel searching for the last occurrence.
func (l *lowering) lastTopLevel(lo, hi int, w string) int {
	found := -1
	l.scanTopLevel(lo, hi, func(k int) bool {
		if l.p.toks[k].is(w) {
			found = k
		}
		return true
	})
	return found
}

// scanTopLevel calls visit for each token of toks[lo:hi] that is not inside
// parentheses, a CASE ... END or an INTERVAL literal, until visit returns false.
// The special forms use FROM, TO, IN and AS as separators, and those words must not
// be taken from a nested expression.
func (l *lowering) scanTopLevel(lo, hi int, visit func(int) bool) {
	caseDepth := 0
	for k := lo; k < hi; k++ {
		t := l.p.toks[k]
		switch {
		case t.isOp("("):
			if m := l.p.match[k]; m > k && m < hi {
				k = m
			}
			continue
		case t.is("CASE"):
			caseDepth++
			continue
		case t.is("END") && caseDepth > 0:
			caseDepth--
			continue
		case t.is("INTERVAL"):
			// INTERVAL [sign] 'v' unit [TO unit]
			j := k + 1
			if l.tok(j, hi).isOp("-") || l.tok(j, hi).isOp("+") {
				j++
			}
			if l.tok(j, hi).kind == tokString && l.tok(j+2, hi).is("TO") {
				k = j + 3
			}
			continue
		}
		if caseDepth == 0 && !visit(k) {
			return
		}
	}
}

// lowerQuery parses the query in toks[lo:hi]; ends names what may follow it.
func (p *parser) lowerQuery(lo, hi int, ends []string) (*Query, error) {
	if err := p.enterAt(p.toks[lo]); err != nil {
		return nil, err
	}
	defer p.leave()
	for lo < hi && p.toks[lo].isOp("(") && p.match[lo] == hi-1 {
		lo, hi = lo+1, hi-1
		ends = []string{"')'"}
	}
	if lo >= hi {
		return nil, p.errExpectedAt(p.toks[hi], "SELECT", "WITH")
	}
	at := p.toks[lo].pos
	var with []NamedQuery
	if p.toks[lo].is("WITH") {
		var err error
		if with, lo, err = p.parseWith(lo, hi); err != nil {
			return nil, err
		}
	}
	if q, ok, err := p.lowerSetOps(lo, hi, ends); ok || err != nil { // setop.go
		if err != nil {
			return nil, err
		}
		q.At, q.With = at, with
		return q, nil
	}
	l := p.newLowering(hi, ends, false)
	if t := p.toks[lo]; !t.is("SELECT") && !t.isOp("(") {
		if msg, ok := unsupportedWords[t.val]; ok && t.kind == tokWord {
			return nil, unsupportedErr(t.pos, "%s", msg)
		}
		return nil, p.errExpectedAt(t, "SELECT", "'('")
	}
	if err := l.emitRange(lo, hi, 0); err != nil {
		return nil, l.earliest(err)
	}
	st, err := l.parse()
	if err != nil {
		return nil, err
	}
	sel, ok := st.(sqlparser.SelectStatement)
	if !ok {
		return nil, syntaxErr(at, "expected a query")
	}
	q, _, err := l.convQuery(sel)
	if err != nil {
		return nil, err
	}
	if err := l.resolveNulls(); err != nil {
		return nil, err
	}
	q.At = at
	q.With = with
	return q, nil
}

// parseWith parses WITH name AS (query) [, ...] and returns where the body starts.
func (p *parser) parseWith(lo, hi int) ([]NamedQuery, int, error) {
	savedI, savedHi := p.i, p.hi
	defer func() { p.i, p.hi = savedI, savedHi }()
	p.i, p.hi = lo+1, hi
	var with []NamedQuery
	for {
		name, at, err := p.parseIdent("name of a WITH query")
		if err != nil {
			return nil, 0, err
		}
		if p.peek().isOp("(") {
			return nil, 0, unsupportedErr(p.peek().pos, "column lists on WITH queries are not supported: alias the columns inside the query")
		}
		if _, err := p.expect("AS"); err != nil {
			return nil, 0, err
		}
		open := p.peek()
		if !open.isOp("(") {
			return nil, 0, p.errExpected("'('")
		}
		m := p.match[p.i]
		if m < 0 || m >= hi {
			return nil, 0, syntaxErr(open.pos, "unclosed '(': expected ')'")
		}
		q, err := p.lowerQuery(p.i+1, m, []string{"')'"})
		if err != nil {
			return nil, 0, err
		}
		with = append(with, NamedQuery{At: at, Name: name, Query: q})
		p.i = m + 1
		if p.acceptOp(",") {
			continue
		}
		t := p.peek()
		if !t.is("SELECT") && !t.isOp("(") {
			return nil, 0, p.errExpected("','", "SELECT")
		}
		return with, p.i, nil
	}
}

// lowerExpr parses the expression in toks[lo:hi]. sqlparser sees it as the WHERE
// condition of a dummy query, where no alias can swallow a stray word.
func (p *parser) lowerExpr(lo, hi int, ends []string) (Expr, error) {
	if err := p.enterAt(p.toks[lo]); err != nil {
		return nil, err
	}
	defer p.leave()
	if lo >= hi {
		return nil, p.errExpectedAt(p.toks[hi], "expression")
	}
	l := p.newLowering(hi, ends, true)
	for _, w := range []string{"SELECT", "*", "FROM", "`w`", "WHERE"} {
		l.emit(w, lo)
	}
	if err := l.emitRange(lo, hi, 0); err != nil {
		return nil, l.earliest(err)
	}
	st, err := l.parse()
	if err != nil {
		return nil, err
	}
	sel, ok := st.(*sqlparser.Select)
	if !ok || sel.Where == nil {
		return nil, syntaxErr(p.toks[lo].pos, "expected an expression")
	}
	e, _, err := l.convExpr(sel.Where.Expr)
	if err != nil {
		return nil, err
	}
	return e, l.resolveNulls()
}

// emitRange emits toks[lo:hi]; level counts the parentheses around them.
func (l *lowering) emitRange(lo, hi, level int) error {
	if level > maxDepth {
		return syntaxErr(l.p.toks[lo].pos, "nesting is too deep (more than %d levels)", maxDepth)
	}
	for i := lo; i < hi; {
		next, err := l.emitOne(i, hi, level)
		if err != nil {
			return err
		}
		i = next
	}
	return nil
}

// clauseWords end a select list, and in an expression are errors at the top level.
var clauseWords = setOf("FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "INTERSECT", "EXCEPT", "MINUS", "WINDOW", "QUALIFY")

func (l *lowering) emitOne(i, hi, level int) (int, error) {
	if end, ok := l.skip[i]; ok {
		return end, nil
	}
	p := l.p
	t := p.toks[i]
	switch t.kind {
	case tokString:
		l.emitLeaf(i, &leaf{kind: leafExpr, pos: t.pos, expr: &Literal{At: t.pos, Kind: StringLit, Text: t.val}})
		return i + 1, nil
	case tokNumber:
		l.emitLeaf(i, &leaf{kind: leafExpr, pos: t.pos, expr: &Literal{At: t.pos, Kind: NumberLit, Text: t.text}})
		return i + 1, nil
	case tokDQuoted, tokIllegal:
		return 0, badToken(t)
	case tokHint:
		return l.emitHint(i)
	case tokEOF:
		return 0, p.errExpectedAt(t, "expression")
	case tokQuoted:
		return l.emitNameOrCall(i, hi, level)
	case tokOp:
		switch t.text {
		case "(":
			m, err := l.group(i, hi)
			if err != nil {
				return 0, err
			}
			if p.toks[i+1].is("VALUES") && l.inFromList() {
				// (VALUES ...) [AS] t [(cols)]: a prebuilt query (values.go), its
				// column list folded into the query's names.
				aLo, aHi, names, end, err := l.valuesAlias(m+1, hi)
				if err != nil {
					return 0, err
				}
				q, err := p.lowerValues(i+1, m, names)
				if err != nil {
					return 0, err
				}
				l.emitLeaf(i, &leaf{kind: leafQuery, pos: t.pos, query: q})
				if aHi > aLo {
					// The alias alone: its column list is in the query's names.
					name := p.toks[aHi-1]
					l.emit("AS", aLo)
					l.emitLeaf(aHi-1, &leaf{kind: leafIdent, pos: name.pos, parts: []string{identPart(name)}})
				}
				return end, nil
			}
			if p.toks[i+1].is("WITH") || l.inFromList() && l.hasSetOp(i+1, m) { // setop.go
				q, err := p.lowerQuery(i+1, m, []string{"')'"})
				if err != nil {
					return 0, err
				}
				l.emitLeaf(i, &leaf{kind: leafQuery, pos: t.pos, query: q})
				return m + 1, nil
			}
			if m+1 < hi && l.postfixAt(m+1, hi) && !p.toks[i+1].is("SELECT") {
				return l.emitPostfix(i, m+1, hi)
			}
			if err := p.enterAt(t); err != nil {
				return 0, err
			}
			defer p.leave()
			derived := p.toks[i+1].is("SELECT") && l.inFromList()
			l.emit("(", i)
			if err := l.emitRange(i+1, m, level+1); err != nil {
				return 0, err
			}
			l.emit(")", m)
			if derived && !l.aliasFollows(m+1, hi) {
				// Flink lets a subquery in FROM go without an alias; sqlparser does not.
				l.emitLeaf(m, &leaf{kind: leafIdent, pos: p.toks[m].pos})
			}
			return m + 1, nil
		case ")":
			return 0, syntaxErr(t.pos, "syntax error at ')': no '(' to close")
		case "||":
			l.emit("DIV", i)
		case "=>":
			return 0, syntaxErr(t.pos, "syntax error at '=>': named arguments are only allowed in window table functions")
		case "[":
			return 0, unsupportedErr(t.pos, "element access [...] is only supported after a name, a function call, a parenthesized expression or ARRAY[...]/MAP[...]")
		case "]":
			return 0, syntaxErr(t.pos, "syntax error at ']': no '[' to close")
		case ";":
			return 0, syntaxErr(t.pos, "syntax error at ';': expected %s", orList(l.ends))
		default:
			l.emit(t.text, i)
		}
		return i + 1, nil
	}
	// A bare word.
	w := t.val
	nt := l.tok(i+1, hi)
	isCall := nt.isOp("(")
	switch {
	case w == "SELECT":
		return i + 1, l.emitSelect(i, hi)
	case (w == "LEFT" || w == "RIGHT") && isCall:
		return l.emitNameOrCall(i, hi, level)
	case w == "SIMILAR" && nt.is("TO"):
		// x [NOT] SIMILAR TO p [ESCAPE e]: emitted as LIKE, whose precedence and ESCAPE
		// it shares; convert tells the two apart by the source token.
		l.emit("LIKE", i)
		return i + 2, nil
	case w == "IS" && distinctFrom(l, i, hi) > 0:
		// x IS [NOT] DISTINCT FROM y: MySQL's null-safe <=> has the precedence of a
		// comparison; convert tells the two forms apart by the source tokens.
		l.emit("<=>", i)
		return i + distinctFrom(l, i, hi), nil
	case w == "TRUE" || w == "FALSE" || w == "NULL":
		if l.afterIS() {
			l.emit(w, i)
			return i + 1, nil
		}
		kind := BoolLit
		if w == "NULL" {
			kind = NullLit
		}
		l.emitLeaf(i, &leaf{kind: leafExpr, pos: t.pos, expr: &Literal{At: t.pos, Kind: kind, Text: w}})
		return i + 1, nil
	case w == "FULL" && (nt.is("JOIN") || nt.is("OUTER") && l.tok(i+2, hi).is("JOIN")):
		l.emit("STRAIGHT_JOIN", i)
		if nt.is("OUTER") {
			return i + 3, nil
		}
		return i + 2, nil
	case l.exprMode && level == 0 && clauseWords[w]:
		l.emit("CREATE", i)
		return i + 1, nil
	case queryKeywords[w]:
		l.emit(w, i)
		return i + 1, nil
	case w == "INTERVAL":
		return l.emitInterval(i, hi)
	case (w == "ARRAY" || w == "MAP") && nt.isOp("["):
		return l.emitConstructor(i, hi)
	case (w == "DATE" || w == "TIME" || w == "TIMESTAMP") && nt.kind == tokString:
		kind := map[string]LitKind{"DATE": DateLit, "TIME": TimeLit, "TIMESTAMP": TimestampLit}[w]
		l.emitLeaf(i, &leaf{kind: leafExpr, pos: t.pos, expr: &Literal{At: t.pos, Kind: kind, Text: nt.val}})
		return i + 2, nil
	case (w == "CAST" || w == "TRY_CAST") && isCall:
		return l.emitCast(i, hi, level)
	case w == "EXTRACT" && isCall:
		return l.emitExtract(i, hi, level)
	case (w == "FLOOR" || w == "CEIL" || w == "CEILING") && isCall && l.topLevel(i+2, l.p.match[i+1], "TO") >= 0:
		return l.emitFloorCeil(i, hi, level)
	case (w == "SUBSTRING" || w == "SUBSTR") && isCall && l.topLevel(i+2, l.p.match[i+1], "FROM") >= 0:
		return l.emitSubstring(i, hi, level)
	case w == "TRIM" && isCall && (l.topLevel(i+2, l.p.match[i+1], "FROM") >= 0 || trimModes[l.tok(i+2, hi).val] && l.tok(i+2, hi).kind == tokWord):
		return l.emitTrim(i, hi, level)
	case w == "POSITION" && isCall && l.topLevel(i+2, l.p.match[i+1], "IN") >= 0:
		return l.emitPosition(i, hi, level)
	case (w == "TIMESTAMPADD" || w == "TIMESTAMPDIFF") && isCall:
		return l.emitTimestampAdd(i, hi, level)
	case w == "TABLE" && isCall:
		return l.emitWindowTVF(i, hi)
	case w == "UNNEST" && isCall && l.inFromList():
		return l.emitUnnest(i, hi)
	case isCall && l.jsonCall(i, hi):
		return l.emitJSONCall(i, hi) // json.go
	case niladicFuncs[w] && !isCall:
		l.emitLeaf(i, &leaf{kind: leafFunc, pos: t.pos, fn: funcShape{name: w, niladic: true}})
		l.emit("(", i)
		l.emit(")", i)
		return i + 1, nil
	case w == "FOR" && nt.is("SYSTEM_TIME"):
		return l.emitAsOf(i, hi)
	case w == "GROUPING" && nt.is("SETS"):
		return l.emitGroupingSets(i, hi, level) // grouping.go
	case w == "NULLS" && (nt.is("FIRST") || nt.is("LAST")):
		return l.emitNulls(i, hi) // nulls.go
	case w == "MATCH_RECOGNIZE" && nt.isOp("("):
		return l.emitMatchRecognize(i, hi) // match.go
	case (w == "FINAL" || w == "RUNNING") && nt.kind == tokWord && l.tok(i+2, hi).isOp("("):
		return l.emitMatchSemantics(i, hi, w) // match.go
	case unsupportedWords[w] != "":
		return 0, unsupportedErr(t.pos, "%s", unsupportedWords[w])
	case junkWords[w]:
		l.emit("CREATE", i)
		return i + 1, nil
	}
	return l.emitNameOrCall(i, hi, level)
}

var trimModes = setOf("BOTH", "LEADING", "TRAILING")

// emitHint handles a hint inside a query. Right after a table name of a FROM clause it
// is a table hint, whose options the table's leaf keeps; right after SELECT a query
// hint, of which pipesql runs STATE_TTL. Anywhere else it is an error. It emits nothing.
func (l *lowering) emitHint(i int) (int, error) {
	t := l.p.toks[i]
	n := len(l.toks)
	switch {
	case n >= 2 && l.toks[n-2].sel != nil:
		// SELECT /*N*/ was just emitted: STATE_TTL is the one query hint kept.
		opts, err := l.p.parseHint(t, false)
		if err != nil {
			return 0, err
		}
		info := l.toks[n-2].sel
		info.stateTTL = append(info.stateTTL, opts...)
		return i + 1, nil
	case n >= 1 && l.toks[n-1].leaf != nil && l.toks[n-1].leaf.kind == leafIdent && l.tableStartsAt(n-1):
		opts, err := l.p.parseHint(t, true)
		if err != nil {
			return 0, err
		}
		lf := l.toks[n-1].leaf
		lf.options = append(lf.options, opts...)
		return i + 1, nil
	}
	return 0, badToken(t)
}

// emitAsOf handles FOR SYSTEM_TIME AS OF attr right after a table name of a FROM clause
// (and its OPTIONS hint): the table's leaf keeps the attribute. It emits nothing.
func (l *lowering) emitAsOf(i, hi int) (int, error) {
	t := l.p.toks[i]
	n := len(l.toks)
	if n == 0 || l.toks[n-1].leaf == nil || l.toks[n-1].leaf.kind != leafIdent || !l.tableStartsAt(n-1) {
		return 0, syntaxErr(t.pos, "FOR SYSTEM_TIME AS OF must follow the name of a table joined in FROM (JOIN t FOR SYSTEM_TIME AS OF o.ts AS d ON ...)")
	}
	lf := l.toks[n-1].leaf
	if lf.asOf != nil {
		return 0, syntaxErr(t.pos, "FOR SYSTEM_TIME AS OF is written once per table")
	}
	j := i + 2
	for _, w := range []string{"AS", "OF"} {
		if nt := l.tok(j, hi); !nt.is(w) {
			return 0, syntaxErr(nt.pos, "syntax error at %s: expected %s (FOR SYSTEM_TIME AS OF attr)", nt.describe(), w)
		}
		j++
	}
	at := l.tok(j, hi)
	if at.kind != tokWord && at.kind != tokQuoted || at.kind == tokWord && reservedWords[at.val] {
		return 0, syntaxErr(at.pos, "syntax error at %s: expected the time attribute after FOR SYSTEM_TIME AS OF (e.g. o.order_time)", at.describe())
	}
	parts := []string{identPart(at)}
	j++
	for j+1 < hi && l.p.toks[j].isOp(".") && (l.p.toks[j+1].kind == tokWord || l.p.toks[j+1].kind == tokQuoted) {
		parts = append(parts, identPart(l.p.toks[j+1]))
		j += 2
	}
	if nt := l.tok(j, hi); nt.isOp("(") || nt.isOp("-") || nt.isOp("+") || nt.isOp("[") {
		return 0, unsupportedErr(at.pos, "unsupported: FOR SYSTEM_TIME AS OF takes a time attribute column of the left table (e.g. o.order_time), not an expression")
	}
	lf.asOf = &Ident{At: at.pos, Parts: parts}
	return j, nil
}

// inFromList reports whether the next emitted token would be a table of a FROM clause:
// right after FROM, a JOIN, or a comma of a FROM list.
func (l *lowering) inFromList() bool { return l.tableStartsAt(len(l.toks)) }

// tableStartsAt reports whether a table reference would start at emitted token n.
func (l *lowering) tableStartsAt(n int) bool {
	if n == 0 {
		return false
	}
	switch l.toks[n-1].text {
	case "FROM", "JOIN", "STRAIGHT_JOIN":
		return true
	case "(":
		// A parenthesized join: FROM ((SELECT ...) JOIN t ON ...).
		return l.tableStartsAt(n - 1)
	case ",":
	default:
		return false
	}
	depth := 0
	for j := n - 2; j >= 0; j-- {
		switch l.toks[j].text {
		case ")":
			depth++
		case "(":
			if depth == 0 {
				return false
			}
			depth--
		case "FROM", "JOIN", "STRAIGHT_JOIN":
			if depth == 0 {
				return true
			}
		case "SELECT", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "ON", "BY":
			if depth == 0 {
				return false
			}
		}
	}
	return false
}

// aliasFollows reports whether toks[k] starts an alias: AS or a name.
func (l *lowering) aliasFollows(k, hi int) bool {
	t := l.tok(k, hi)
	switch t.kind {
	case tokQuoted:
		return true
	case tokWord:
		return t.val == "AS" || !queryKeywords[t.val] && !junkWords[t.val] && unsupportedWords[t.val] == "" && t.val != "QUALIFY"
	}
	return false
}

// distinctFrom returns the length of IS [NOT] DISTINCT FROM at token i, 0 when the
// tokens there are not that operator.
func distinctFrom(l *lowering, i, hi int) int {
	n := 1
	if l.tok(i+n, hi).is("NOT") {
		n++
	}
	if l.tok(i+n, hi).is("DISTINCT") && l.tok(i+n+1, hi).is("FROM") {
		return n + 2
	}
	return 0
}

// afterIS reports whether the last emitted tokens are IS or IS NOT.
func (l *lowering) afterIS() bool {
	n := len(l.toks)
	if n > 0 && l.toks[n-1].text == "IS" {
		return true
	}
	return n > 1 && l.toks[n-1].text == "NOT" && l.toks[n-2].text == "IS"
}

// emitSelect emits SELECT /*N*/ and records where the select items start, and the
// SELECT's WINDOW and QUALIFY clauses.
func (l *lowering) emitSelect(i, hi int) error {
	p := l.p
	info := &selectInfo{pos: p.toks[i].pos}
	k := i + 1
	if l.tok(k, hi).is("DISTINCT") || l.tok(k, hi).is("ALL") {
		k++
	}
	start := k
	for ; k < hi; k++ {
		t := p.toks[k]
		if t.isOp("(") {
			if m := p.match[k]; m > k && m < hi {
				k = m
			}
			continue
		}
		if t.kind == tokWord && clauseWords[t.val] {
			break
		}
		if t.isOp(",") {
			info.items = append(info.items, l.tok(start, hi).pos)
			start = k + 1
		}
	}
	info.items = append(info.items, l.tok(start, hi).pos)
	e := l.emit("SELECT", i)
	e.sel = info
	l.emit(fmt.Sprintf("/*%d*/", len(l.toks)-1), i)
	return l.selectClauses(i, hi, info) // over.go
}

// identPart returns the identifier a word or quoted token stands for.
func identPart(t token) string {
	if t.kind == tokQuoted {
		return t.val
	}
	return t.text
}

// emitNameOrCall emits an identifier chain, or a function call when '(' follows.
func (l *lowering) emitNameOrCall(i, hi, level int) (int, error) {
	p := l.p
	t := p.toks[i]
	parts := []string{identPart(t)}
	j := i + 1
	for j+1 < hi && p.toks[j].isOp(".") && (p.toks[j+1].kind == tokWord || p.toks[j+1].kind == tokQuoted) {
		parts = append(parts, identPart(p.toks[j+1]))
		j += 2
	}
	if l.tok(j, hi).isOp("(") {
		if len(parts) > 1 {
			return 0, unsupportedErr(t.pos, "qualified function names are not supported")
		}
		if m := p.match[j]; m > j && m+1 < hi && l.postfixAt(m+1, hi) {
			return l.emitPostfix(i, m+1, hi)
		}
		return l.emitCall(i, j, hi, level, strings.ToUpper(parts[0]))
	}
	// A name, not a call: Flink's parser refuses a reserved word in any of its parts.
	for k := i; k < j && l.reserved == nil; k += 2 {
		l.reserved = reservedName(p.toks[k])
	}
	if j < hi && p.toks[j].isOp("[") {
		return l.emitPostfix(i, j, hi)
	}
	l.emitLeaf(i, &leaf{kind: leafIdent, pos: t.pos, parts: parts})
	return j, nil
}

// emitPostfix emits the operand in toks[lo:k] followed by element accesses x[i] and
// field accesses x[i].f as one prebuilt expression: sqlparser has no syntax for them.
func (l *lowering) emitPostfix(lo, k, hi int) (int, error) {
	x, err := l.p.lowerExpr(lo, k, []string{"'['"})
	if err != nil {
		return 0, err
	}
	return l.emitPostfixOf(lo, x, k, hi)
}

// emitPostfixOf emits x, already parsed from the tokens before k, with the element and
// field accesses starting at k.
func (l *lowering) emitPostfixOf(lo int, x Expr, k, hi int) (int, error) {
	p := l.p
	for {
		t := l.tok(k, hi)
		switch {
		case t.isOp("["):
			c, err := l.bracket(k, hi)
			if err != nil {
				return 0, err
			}
			if c == k+1 {
				return 0, p.errExpectedAt(p.toks[c], "an index or a key")
			}
			idx, err := p.lowerExpr(k+1, c, []string{"']'"})
			if err != nil {
				return 0, err
			}
			x = &Subscript{At: t.pos, X: x, Index: idx}
			k = c + 1
			continue
		case t.isOp(".") && k > lo:
			f := l.tok(k+1, hi)
			if f.kind != tokWord && f.kind != tokQuoted {
				return 0, p.errExpectedAt(f, "a field name")
			}
			x = &FieldAccess{At: f.pos, X: x, Field: identPart(f)}
			k += 2
			continue
		}
		l.emitLeaf(lo, &leaf{kind: leafExpr, pos: x.Pos(), expr: x})
		return k, nil
	}
}

// postfixAt reports whether an element access [i] or a field access .f starts at k,
// right after a call or a parenthesized expression.
func (l *lowering) postfixAt(k, hi int) bool {
	t := l.p.toks[k]
	if t.isOp("[") {
		return true
	}
	if !t.isOp(".") || k+1 >= hi {
		return false
	}
	f := l.p.toks[k+1]
	return f.kind == tokWord || f.kind == tokQuoted
}

// bracket returns the index of the ']' closing the '[' at i, which must lie before hi.
func (l *lowering) bracket(i, hi int) (int, error) {
	depth := 0
	for k := i; k < hi; k++ {
		switch t := l.p.toks[k]; {
		case t.isOp("["):
			depth++
		case t.isOp("]"):
			depth--
			if depth == 0 {
				return k, nil
			}
		case t.isOp(";"):
			k = hi
		}
	}
	return 0, syntaxErr(l.p.toks[i].pos, "unclosed '[': expected ']'")
}

// exprList parses the comma-separated expressions of toks[lo:hi], which hi closes; what
// names an expected item for errors.
func (l *lowering) exprList(lo, hi int, what string, ends []string) ([]Expr, error) {
	p := l.p
	var out []Expr
	start, depth := lo, 0
	for k := lo; k <= hi; k++ {
		t := p.toks[k]
		switch {
		case t.isOp("(") && k < hi:
			if m := p.match[k]; m > k && m < hi {
				k = m
			}
			continue
		case t.isOp("[") && k < hi:
			depth++
			continue
		case t.isOp("]") && k < hi:
			depth--
			continue
		}
		if k == hi || depth == 0 && t.isOp(",") {
			if k == start {
				return nil, p.errExpectedAt(t, what)
			}
			e, err := p.lowerExpr(start, k, ends)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			start = k + 1
		}
	}
	return out, nil
}

// emitConstructor parses ARRAY[a, b, ...] or MAP[k, v, ...] (the word at i) into a
// prebuilt expression, with any element accesses after it.
func (l *lowering) emitConstructor(i, hi int) (int, error) {
	p := l.p
	c, err := l.bracket(i+1, hi)
	if err != nil {
		return 0, err
	}
	ctor := &Constructor{At: p.toks[i].pos, Kind: p.toks[i].val}
	if c == i+2 {
		return 0, p.errExpectedAt(p.toks[c], "an element")
	}
	if ctor.Args, err = l.exprList(i+2, c, "an element", []string{"','", "']'"}); err != nil {
		return 0, err
	}
	if ctor.Kind == "MAP" && len(ctor.Args)%2 != 0 {
		return 0, syntaxErr(p.toks[c].pos, "MAP[...] needs key and value pairs: it has %d elements", len(ctor.Args))
	}
	return l.emitPostfixOf(i, ctor, c+1, hi)
}

// emitCall emits name(args) for the name token at i and the '(' at open, wrapping it
// when FILTER (WHERE cond) follows.
func (l *lowering) emitCall(i, open, hi, level int, name string) (int, error) {
	p := l.p
	m, err := l.group(open, hi)
	if err != nil {
		return 0, err
	}
	after := l.tok(m+1, hi)
	if after.is("OVER") {
		return l.emitOver(i, open, m, hi, level, name)
	}
	filter := after.is("FILTER") && l.tok(m+2, hi).isOp("(") && l.tok(m+3, hi).is("WHERE")
	fm := 0
	if filter {
		if fm, err = l.group(m+2, hi); err != nil {
			return 0, err
		}
		if l.tok(fm+1, hi).is("OVER") {
			// Calcite's validator refuses it in Flink too.
			return 0, unsupportedErr(after.pos, "unsupported: FILTER (WHERE ...) with OVER, as in Flink (OVER must be applied to aggregate function); filter inside the aggregate instead: %s(CASE WHEN condition THEN x END) OVER (...)", strings.ToUpper(name))
		}
		l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: name, filter: true}})
		l.emit("(", i)
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: name}})
	l.emit("(", open)
	if err := l.emitRange(open+1, m, level+1); err != nil {
		return 0, err
	}
	l.emit(")", m)
	if !filter {
		return m + 1, nil
	}
	l.emit(",", m+3)
	if err := l.emitRange(m+4, fm, level+1); err != nil {
		return 0, err
	}
	l.emit(")", fm)
	return fm + 1, nil
}

// emitOver emits f(args) OVER (PARTITION BY p ORDER BY o [frame]) as the placeholder call
// f(args, p..., o...), and f(args) OVER w as f(args); the ')' closing the arguments is at m.
func (l *lowering) emitOver(i, open, m, hi, level int, name string) (int, error) {
	p := l.p
	at := p.toks[m+1]
	shape := &overShape{at: at.pos}
	var part, order [][2]int
	end := m + 2 // past the window
	if t := l.tok(m+2, hi); !t.isOp("(") {
		if t.kind != tokWord && t.kind != tokQuoted || t.kind == tokWord && reservedWords[t.val] {
			return 0, p.errExpectedAt(t, "'('", "a window name")
		}
		shape.name = identPart(t) // over.go: a window of the WINDOW clause
		end = m + 3
	} else {
		om, err := l.group(m+2, hi)
		if err != nil {
			return 0, err
		}
		if part, order, err = l.overSpec(m+3, om, shape); err != nil { // over.go
			return 0, err
		}
		end = om + 1
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: name, over: shape}})
	l.emit("(", open)
	args := open+1 < m
	if open+2 == m && p.toks[open+1].isOp("*") {
		shape.star, args = true, false
	} else if args {
		if err := l.emitRange(open+1, m, level+1); err != nil {
			return 0, err
		}
	}
	for _, r := range append(part, order...) {
		if args {
			l.emit(",", r[0])
		}
		args = true
		if err := l.emitRange(r[0], r[1], level+1); err != nil {
			return 0, err
		}
	}
	l.emit(")", end-1)
	return end, nil
}

// emitCast emits CAST(x AS type) as a placeholder call of x; the type is parsed here.
func (l *lowering) emitCast(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	as := l.lastTopLevel(i+2, m, "AS")
	if as < 0 {
		return 0, p.errExpectedAt(p.toks[m], "AS and a type")
	}
	if as == i+2 {
		return 0, p.errExpectedAt(p.toks[as], "expression")
	}
	dt, err := p.parseTypeIn(as+1, m)
	if err != nil {
		return 0, err
	}
	w := p.toks[i].val
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: w, cast: &dt, try: w == "TRY_CAST"}})
	l.emit("(", i+1)
	if err := l.emitRange(i+2, as, level+1); err != nil {
		return 0, err
	}
	l.emit(")", m)
	return m + 1, nil
}

// parseTypeIn parses a type filling exactly toks[lo:hi].
func (p *parser) parseTypeIn(lo, hi int) (DataType, error) {
	savedI, savedHi := p.i, p.hi
	defer func() { p.i, p.hi = savedI, savedHi }()
	p.i, p.hi = lo, hi
	dt, err := p.parseType()
	if err != nil {
		return dt, err
	}
	if p.i < hi {
		return dt, p.errExpected("')'")
	}
	return dt, nil
}

// timeUnitLeaf checks that toks[k] is a time unit and emits it.
func (l *lowering) emitTimeUnit(k, hi int) error {
	t := l.tok(k, hi)
	if t.kind != tokWord || !timeUnits[t.val] {
		return l.p.errExpectedAt(t, "a time unit (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, ...)")
	}
	l.emitLeaf(k, &leaf{kind: leafExpr, pos: t.pos, expr: &TimeUnit{At: t.pos, Unit: t.val}})
	return nil
}

// emitExtract emits EXTRACT(unit FROM x) as EXTRACT(unit, x).
func (l *lowering) emitExtract(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: "EXTRACT"}})
	l.emit("(", i+1)
	if err := l.emitTimeUnit(i+2, m); err != nil {
		return 0, err
	}
	if !l.tok(i+3, m).is("FROM") {
		return 0, p.errExpectedAt(l.tok(i+3, m), "FROM")
	}
	l.emit(",", i+3)
	if err := l.emitRange(i+4, m, level+1); err != nil {
		return 0, err
	}
	l.emit(")", m)
	return m + 1, nil
}

// emitFloorCeil emits FLOOR|CEIL(x TO unit) as FLOOR|CEIL(x, unit).
func (l *lowering) emitFloorCeil(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	to := l.topLevel(i+2, m, "TO")
	name := p.toks[i].val
	if name == "CEILING" {
		name = "CEIL"
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: name}})
	l.emit("(", i+1)
	if err := l.emitRange(i+2, to, level+1); err != nil {
		return 0, err
	}
	l.emit(",", to)
	if err := l.emitTimeUnit(to+1, m); err != nil {
		return 0, err
	}
	if to+2 < m {
		return 0, p.errExpectedAt(p.toks[to+2], "')'")
	}
	l.emit(")", m)
	return m + 1, nil
}

// emitSubstring emits SUBSTRING(s FROM a [FOR b]) as SUBSTRING(s, a [, b]).
func (l *lowering) emitSubstring(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	from := l.topLevel(i+2, m, "FROM")
	forAt := l.topLevel(from+1, m, "FOR")
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: "SUBSTRING"}})
	l.emit("(", i+1)
	if err := l.emitRange(i+2, from, level+1); err != nil {
		return 0, err
	}
	l.emit(",", from)
	end := m
	if forAt >= 0 {
		end = forAt
	}
	if err := l.emitRange(from+1, end, level+1); err != nil {
		return 0, err
	}
	if forAt >= 0 {
		l.emit(",", forAt)
		if err := l.emitRange(forAt+1, m, level+1); err != nil {
			return 0, err
		}
	}
	l.emit(")", m)
	return m + 1, nil
}

// emitTrim emits TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) as TRIM(s) or
// TRIM_<MODE>(chars, s).
func (l *lowering) emitTrim(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	k := i + 2
	mode := ""
	if t := p.toks[k]; t.kind == tokWord && trimModes[t.val] {
		mode = t.val
		k++
	}
	from := l.topLevel(k, m, "FROM")
	if from < 0 {
		return 0, p.errExpectedAt(l.tok(k, m), "FROM")
	}
	name := "TRIM"
	if mode != "" || from > k {
		if mode == "" {
			mode = "BOTH"
		}
		name = "TRIM_" + mode
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: name}})
	l.emit("(", i+1)
	if name != "TRIM" {
		if from == k {
			pos := p.toks[k-1].pos
			l.emitLeaf(k-1, &leaf{kind: leafExpr, pos: pos, expr: &Literal{At: pos, Kind: StringLit, Text: " "}})
		} else if err := l.emitRange(k, from, level+1); err != nil {
			return 0, err
		}
		l.emit(",", from)
	}
	if err := l.emitRange(from+1, m, level+1); err != nil {
		return 0, err
	}
	l.emit(")", m)
	return m + 1, nil
}

// emitPosition emits POSITION(a IN b) as POSITION(a, b).
func (l *lowering) emitPosition(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	in := l.topLevel(i+2, m, "IN")
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: "POSITION"}})
	l.emit("(", i+1)
	if err := l.emitRange(i+2, in, level+1); err != nil {
		return 0, err
	}
	l.emit(",", in)
	if err := l.emitRange(in+1, m, level+1); err != nil {
		return 0, err
	}
	l.emit(")", m)
	return m + 1, nil
}

// emitTimestampAdd emits TIMESTAMPADD/TIMESTAMPDIFF(unit, ...) with the unit as a
// TimeUnit; without a unit first it is an ordinary call.
func (l *lowering) emitTimestampAdd(i, hi, level int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	u := l.tok(i+2, m)
	if !(u.kind == tokWord && timeUnits[u.val] && l.tok(i+3, m).isOp(",")) {
		return l.emitCall(i, i+1, hi, level, p.toks[i].val)
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: p.toks[i].val}})
	l.emit("(", i+1)
	if err := l.emitTimeUnit(i+2, m); err != nil {
		return 0, err
	}
	l.emit(",", i+3)
	if err := l.emitRange(i+4, m, level+1); err != nil {
		return 0, err
	}
	l.emit(")", m)
	return m + 1, nil
}

// emitInterval parses INTERVAL [+|-]'value' unit [TO unit] into a prebuilt literal.
func (l *lowering) emitInterval(i, hi int) (int, error) {
	p := l.p
	k := i + 1
	sign := ""
	if t := l.tok(k, hi); t.isOp("-") || t.isOp("+") {
		sign = t.text
		k++
	}
	v := l.tok(k, hi)
	if v.kind != tokString {
		if v.kind == tokNumber {
			return 0, syntaxErr(v.pos, "syntax error at %s: expected a quoted interval value, like INTERVAL '%s' SECOND", v.describe(), v.text)
		}
		return 0, p.errExpectedAt(v, "a quoted interval value, like INTERVAL '5' SECOND")
	}
	k++
	u := l.tok(k, hi)
	unit, ok := intervalUnits[u.val]
	if !ok || u.kind != tokWord {
		return 0, p.errExpectedAt(u, "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR")
	}
	k++
	lit := &IntervalLit{At: p.toks[i].pos, Value: v.val, Unit: unit, UnitPos: u.pos}
	if sign == "-" {
		lit.Value = "-" + v.val
	}
	if l.tok(k, hi).is("TO") {
		u2 := l.tok(k+1, hi)
		to, ok := intervalUnits[u2.val]
		if !ok || u2.kind != tokWord {
			return 0, p.errExpectedAt(u2, "MONTH", "HOUR", "MINUTE", "SECOND")
		}
		if !intervalRanges[unit+" TO "+to] {
			return 0, syntaxErr(u2.pos, "invalid interval range %s TO %s: expected YEAR TO MONTH, DAY TO HOUR, DAY TO MINUTE, DAY TO SECOND, HOUR TO MINUTE, HOUR TO SECOND or MINUTE TO SECOND", unit, to)
		}
		lit.ToUnit = to
		k += 2
	}
	l.emitLeaf(i, &leaf{kind: leafExpr, pos: lit.At, expr: lit})
	return k, nil
}

// windowParams lists each window function's parameters in positional order; the
// parameters after the required ones are optional.
var windowParams = map[string]struct {
	params   []string
	required int
}{
	"TUMBLE":   {[]string{"DATA", "TIMECOL", "SIZE", "OFFSET"}, 3},
	"HOP":      {[]string{"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"}, 4},
	"CUMULATE": {[]string{"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"}, 4},
	"SESSION":  {[]string{"DATA", "TIMECOL", "GAP"}, 3},
}

// tvfArg is one argument of a window table function, as written.
type tvfArg struct {
	name   string // "" for a positional argument
	nameAt Pos
	lo, hi int // the value's tokens
}

// emitWindowTVF parses TABLE(TUMBLE|HOP|CUMULATE|SESSION(...)) into a placeholder table.
func (l *lowering) emitWindowTVF(i, hi int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	f := l.tok(i+2, m)
	spec, ok := windowParams[f.val]
	if f.kind != tokWord || !ok || !l.tok(i+3, m).isOp("(") {
		if f.kind == tokWord && !ok && l.tok(i+3, m).isOp("(") {
			return 0, unsupportedErr(f.pos, "table function %s is not supported: expected TUMBLE, HOP, CUMULATE or SESSION", f.text)
		}
		return 0, p.errExpectedAt(f, "TUMBLE", "HOP", "CUMULATE", "SESSION")
	}
	fm, err := l.group(i+3, m)
	if err != nil {
		return 0, err
	}
	if fm+1 < m {
		return 0, p.errExpectedAt(p.toks[fm+1], "')'")
	}
	// Split the arguments at top-level commas.
	var args []tvfArg
	start := i + 4
	for k := start; k <= fm; k++ {
		t := p.toks[k]
		if t.isOp("(") {
			if mm := p.match[k]; mm > k && mm < fm {
				k = mm
			}
			continue
		}
		if k == fm || t.isOp(",") {
			if k == start {
				return 0, p.errExpectedAt(t, "an argument")
			}
			a := tvfArg{lo: start, hi: k}
			if p.toks[start].kind == tokWord && p.toks[start+1].isOp("=>") {
				a.name, a.nameAt, a.lo = p.toks[start].val, p.toks[start].pos, start+2
				if a.lo >= a.hi {
					return 0, p.errExpectedAt(p.toks[a.hi], "an argument after =>")
				}
			}
			args = append(args, a)
			start = k + 1
		}
	}
	// Put the arguments in positional order.
	ordered := make([]*tvfArg, len(spec.params))
	named := len(args) > 0 && args[0].name != ""
	for n := range args {
		a := &args[n]
		if (a.name != "") != named {
			return 0, syntaxErr(p.toks[a.lo].pos, "cannot mix named (NAME => value) and positional arguments in %s", f.val)
		}
		if !named {
			if n >= len(spec.params) {
				return 0, syntaxErr(p.toks[a.lo].pos, "too many arguments for %s: expected at most %d (%s)", f.val, len(spec.params), strings.Join(spec.params, ", "))
			}
			ordered[n] = a
			continue
		}
		idx := -1
		for k, name := range spec.params {
			if name == a.name {
				idx = k
			}
		}
		if idx < 0 {
			return 0, syntaxErr(a.nameAt, "unknown argument %s for %s: expected %s", a.name, f.val, orList(spec.params))
		}
		if ordered[idx] != nil {
			return 0, syntaxErr(a.nameAt, "argument %s is given twice", a.name)
		}
		ordered[idx] = a
	}
	for k := 0; k < spec.required; k++ {
		if ordered[k] == nil {
			return 0, syntaxErr(p.toks[fm].pos, "%s needs its %s argument (%s)", f.val, spec.params[k], strings.Join(spec.params[:spec.required], ", "))
		}
	}
	tvf := &WindowTVF{At: p.toks[i].pos, Func: f.val}
	if tvf.Input, tvf.PartitionBy, err = p.parseTVFTable(ordered[0], f.val); err != nil {
		return 0, err
	}
	if tvf.TimeCol, err = p.parseDescriptor(ordered[1], f.val); err != nil {
		return 0, err
	}
	for _, a := range ordered[2:] {
		if a == nil {
			continue
		}
		e, err := p.lowerExpr(a.lo, a.hi, []string{"','", "')'"})
		if err != nil {
			return 0, err
		}
		tvf.Args = append(tvf.Args, e)
	}
	l.emitLeaf(i, &leaf{kind: leafTable, pos: tvf.At, table: tvf})
	return m + 1, nil
}

// parseTVFTable parses the DATA argument: TABLE name [PARTITION BY col, ...] (SESSION
// only) or (query).
func (p *parser) parseTVFTable(a *tvfArg, fn string) (TableExpr, []string, error) {
	t := p.toks[a.lo]
	switch {
	case t.is("TABLE"):
		savedI, savedHi := p.i, p.hi
		defer func() { p.i, p.hi = savedI, savedHi }()
		p.i, p.hi = a.lo+1, a.hi
		name, pos, err := p.parseObjectName("table name")
		if err != nil {
			return nil, nil, err
		}
		opts, err := p.parseTableHints()
		if err != nil {
			return nil, nil, err
		}
		var part []string
		if p.peek().is("PARTITION") {
			if fn != "SESSION" {
				return nil, nil, unsupportedErr(p.peek().pos, "PARTITION BY in window table functions is only for SESSION")
			}
			p.i++
			if _, err := p.expect("BY"); err != nil {
				return nil, nil, err
			}
			// PARTITION BY k, or PARTITION BY (k1, k2) for several.
			paren := p.acceptOp("(")
			for {
				c, _, err := p.parseIdent("partition column name")
				if err != nil {
					return nil, nil, err
				}
				part = append(part, c)
				if !paren || !p.acceptOp(",") {
					break
				}
			}
			if paren {
				if _, err := p.expectOp(")"); err != nil {
					return nil, nil, err
				}
			}
		}
		if p.i < a.hi {
			return nil, nil, p.errExpected("','", "')'")
		}
		return &TableName{At: pos, Name: name, Options: opts}, part, nil
	case t.isOp("(") && p.match[a.lo] == a.hi-1:
		q, err := p.lowerQuery(a.lo+1, a.hi-1, []string{"')'"})
		if err != nil {
			return nil, nil, err
		}
		return &SubqueryTable{At: t.pos, Query: q}, nil, nil
	}
	return nil, nil, p.errExpectedAt(t, fmt.Sprintf("TABLE name or (query) as the DATA argument of %s", fn))
}

// parseDescriptor parses the TIMECOL argument: DESCRIPTOR(col).
func (p *parser) parseDescriptor(a *tvfArg, fn string) (string, error) {
	t := p.toks[a.lo]
	if !t.is("DESCRIPTOR") || !p.toks[a.lo+1].isOp("(") {
		return "", p.errExpectedAt(t, fmt.Sprintf("DESCRIPTOR(time column) as the TIMECOL argument of %s", fn))
	}
	savedI, savedHi := p.i, p.hi
	defer func() { p.i, p.hi = savedI, savedHi }()
	p.i, p.hi = a.lo+2, a.hi
	col, _, err := p.parseIdent("time column name")
	if err != nil {
		return "", err
	}
	if _, err := p.expectOp(")"); err != nil {
		if p.peek().isOp(",") {
			return "", unsupportedErr(p.peek().pos, "DESCRIPTOR takes one time column")
		}
		return "", err
	}
	if p.i < a.hi {
		return "", p.errExpected("','", "')'")
	}
	return col, nil
}

// parse hands the lowered text to sqlparser, mapping a failure back to the source.
func (l *lowering) parse() (sqlparser.Statement, error) {
	l.emit(";", l.hi)
	text := l.buf.String()
	st, err := safeParse(text)
	if err == nil {
		if l.reserved != nil {
			return nil, l.reserved
		}
		return st, nil
	}
	return nil, l.earliest(l.mapError(err))
}

// earliest returns the reserved word emitted as a name when it comes before err, else err.
func (l *lowering) earliest(err error) error {
	var e *Error
	if l.reserved != nil && (!errors.As(err, &e) || l.reserved.Pos.Offset <= e.Pos.Offset) {
		return l.reserved
	}
	return err
}

// parserPanic is what safeParse returns when sqlparser panics.
type parserPanic struct{ v any }

func (e parserPanic) Error() string { return fmt.Sprintf("sqlparser panicked: %v", e.v) }

func safeParse(text string) (st sqlparser.Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, parserPanic{r}
		}
	}()
	return sqlparser.ParseStrictDDL(text)
}

var errPosRE = regexp.MustCompile(`^(.*) at position (\d+)`)

// errPosition extracts sqlparser's 1-based position just past the failing token.
func errPosition(err error) (msg string, pos int, ok bool) {
	m := errPosRE.FindStringSubmatch(err.Error())
	if m == nil {
		return "", 0, false
	}
	n, convErr := strconv.Atoi(m[2])
	if convErr != nil {
		return "", 0, false
	}
	return m[1], n, true
}

// mapError turns a sqlparser error into a positioned error in the source.
func (l *lowering) mapError(err error) error {
	first := l.p.toks[l.toks[0].src]
	if pp, ok := err.(parserPanic); ok {
		return syntaxErr(first.pos, "cannot parse this query (%v)", pp.v)
	}
	msg, n, ok := errPosition(err)
	if !ok {
		return syntaxErr(first.pos, "%v", err)
	}
	// The failing token is the emitted token ending just before n.
	k := len(l.toks) - 1
	for j, e := range l.toks {
		if e.end >= n-1 {
			k = j
			break
		}
	}
	e := l.toks[k]
	t := l.p.toks[e.src]
	if err := badToken(t); err != nil {
		return err
	}
	desc := t.describe()
	if msg != "syntax error" {
		if strings.Contains(msg, "nesting") {
			return syntaxErr(t.pos, "nesting is too deep")
		}
		return syntaxErr(t.pos, "%s at %s", msg, desc)
	}
	expected := l.expectedAt(k)
	if len(expected) == 0 {
		return syntaxErr(t.pos, "syntax error at %s", desc)
	}
	return syntaxErr(t.pos, "syntax error at %s: expected %s", desc, orList(expected))
}

// inCallArgs reports whether emitted token k lies directly among the arguments of a
// function call.
func (l *lowering) inCallArgs(k int) bool {
	depth := 0
	for j := k - 1; j >= 0; j-- {
		switch l.toks[j].text {
		case ")":
			depth++
		case "(":
			if depth == 0 {
				return j > 0 && l.toks[j-1].leaf != nil && l.toks[j-1].leaf.kind == leafFunc
			}
			depth--
		}
	}
	return false
}

// candidate is a token that may be suggested after a syntax error.
type candidate struct{ display, probe string }

var (
	queryCandidates = []candidate{
		{"','", ","}, {"FROM", "FROM"}, {"WHERE", "WHERE"}, {"GROUP BY", "GROUP"},
		{"HAVING", "HAVING"}, {"ORDER BY", "ORDER"}, {"LIMIT", "LIMIT"}, {"UNION", "UNION"},
		{"JOIN", "JOIN"}, {"ON", "ON"}, {"BY", "BY"}, {"AS", "AS"}, {"SELECT", "SELECT"},
		{"WHEN", "WHEN"}, {"THEN", "THEN"}, {"ELSE", "ELSE"}, {"END", "END"},
		{"'('", "("}, {"')'", ")"},
	}
	exprCandidates = []candidate{
		{"','", ","}, {"WHEN", "WHEN"}, {"THEN", "THEN"}, {"ELSE", "ELSE"}, {"END", "END"},
		{"'('", "("}, {"')'", ")"},
	}
	// operatorCandidates are suggested only when nothing structural fits.
	operatorCandidates = []candidate{
		{"NULL", "NULL"}, {"TRUE", "TRUE"}, {"FALSE", "FALSE"}, {"AND", "AND"}, {"OR", "OR"}, {"NOT", "NOT"}, {"IN", "IN"}, {"LIKE", "LIKE"},
		{"BETWEEN", "BETWEEN"}, {"IS", "IS"}, {"'='", "="},
	}
)

// expectedAt lists what sqlparser would have accepted in place of emitted token k,
// by asking it with each candidate there.
func (l *lowering) expectedAt(k int) []string {
	text := l.buf.String()
	prefix := text[:l.toks[k].start]
	accepts := func(probe string) bool {
		_, err := safeParse(prefix + probe + " ;")
		if err == nil {
			return true
		}
		_, n, ok := errPosition(err)
		return ok && n-1 > len(prefix)+len(probe)
	}
	cands := queryCandidates
	if l.exprMode {
		cands = exprCandidates
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	// After a name, '(' would make a function call of it: true to the grammar, but
	// never what the writer missed. Where an expression fits, '(' says nothing more.
	exprFits := accepts(":vz")
	afterName := k > 0 && l.toks[k-1].leaf != nil && l.toks[k-1].leaf.kind == leafIdent
	// sqlparser takes aliases among function arguments; Flink does not.
	inCall := l.inCallArgs(k)
	for _, c := range cands {
		if c.probe == "(" && (exprFits || afterName) || c.probe == "AS" && inCall {
			continue
		}
		if accepts(c.probe) {
			add(c.display)
		}
	}
	switch {
	case exprFits:
		add("expression")
	case !l.exprMode && !inCall && accepts("`pz`"):
		add("identifier")
	}
	if k != len(l.toks)-1 {
		if _, err := safeParse(prefix + ";"); err == nil {
			for _, e := range l.ends {
				add(e)
			}
		}
	}
	if len(out) == 0 {
		for _, c := range operatorCandidates {
			if accepts(c.probe) {
				add(c.display)
			}
		}
	}
	return out
}

// emitUnnest parses UNNEST(args) [WITH ORDINALITY] [[AS] alias [(columns)]] in FROM into
// a placeholder table; the alias and its column list are taken here, as sqlparser has no
// column lists on aliases.
func (l *lowering) emitUnnest(i, hi int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	u := &Unnest{At: p.toks[i].pos}
	if u.Args, err = l.exprList(i+2, m, "an ARRAY or MAP expression", []string{"','", "')'"}); err != nil {
		return 0, err
	}
	k := m + 1
	if l.tok(k, hi).is("WITH") && l.tok(k+1, hi).is("ORDINALITY") {
		u.Ordinality = true
		k += 2
	}
	if l.tok(k, hi).is("AS") {
		k++
		if t := l.tok(k, hi); t.kind != tokWord && t.kind != tokQuoted || t.kind == tokWord && queryKeywords[t.val] {
			return 0, p.errExpectedAt(t, "an alias")
		}
	}
	if t := l.tok(k, hi); k < hi && (t.kind == tokQuoted || t.kind == tokWord && l.aliasFollows(k, hi) && !t.is("AS")) {
		u.Alias = identPart(t)
		k++
		if k < hi && p.toks[k].isOp("(") {
			cm, err := l.group(k, hi)
			if err != nil {
				return 0, err
			}
			if p.toks[cm-1].isOp(",") {
				return 0, p.errExpectedAt(p.toks[cm], "a column alias")
			}
			for j := k + 1; j < cm; j += 2 {
				c := p.toks[j]
				if c.kind != tokWord && c.kind != tokQuoted {
					return 0, p.errExpectedAt(c, "a column alias")
				}
				u.Columns = append(u.Columns, identPart(c))
				if n := p.toks[j+1]; j+1 < cm && !n.isOp(",") {
					return 0, p.errExpectedAt(n, "','", "')'")
				}
			}
			if len(u.Columns) == 0 {
				return 0, p.errExpectedAt(p.toks[cm], "a column alias")
			}
			k = cm + 1
		}
	}
	l.emitLeaf(i, &leaf{kind: leafTable, pos: u.At, table: u})
	return k, nil
}
