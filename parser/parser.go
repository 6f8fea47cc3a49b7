package parser

import (
	"fmt"
	"strings"
)

// maxDepth bounds the nesting of parentheses, types and subqueries, so that hostile
// input gives an error instead of exhausting the stack.
const maxDepth = 200

// Chunk is the text of one statement of a script, without its terminating semicolon,
// and where it starts. A statement set (EXECUTE STATEMENT SET BEGIN ...; END or
// BEGIN STATEMENT SET; ...; END) is one chunk even though it holds semicolons.
type Chunk struct {
	Text string
	Pos  Pos
}

// span is a statement's tokens: toks[lo:hi], ended by toks[hi] (a ';' or tokEOF).
type span struct{ lo, hi int }

// Split cuts a script into statements at semicolons outside quotes and comments.
// Chunks holding only comments are dropped. It fails only on an unterminated string,
// quoted identifier or block comment.
func Split(file, src string) ([]Chunk, error) {
	toks, err := lex(file, src, Pos{})
	if err != nil {
		return nil, withSource(err, src)
	}
	spans, _ := splitTokens(toks)
	chunks := make([]Chunk, 0, len(spans))
	for _, s := range spans {
		chunks = append(chunks, Chunk{Text: src[toks[s.lo].pos.Offset:toks[s.hi-1].end], Pos: toks[s.lo].pos})
	}
	return chunks, nil
}

// StatementComplete reports whether src ends a statement, so that the shell knows when
// to run the buffer: the last token is a semicolon outside quotes and comments and no
// statement set is left open (BEGIN STATEMENT SET; needs its END;).
func StatementComplete(src string) bool {
	toks, err := lex("", src, Pos{})
	if err != nil || len(toks) < 2 {
		return false
	}
	if !toks[len(toks)-2].isOp(";") {
		return false
	}
	_, open := splitTokens(toks)
	return !open
}

// splitTokens groups tokens into statements. open reports a statement set whose END
// has not been seen.
func splitTokens(toks []token) (spans []span, open bool) {
	eof := len(toks) - 1
	nextSemi := func(i int) int {
		for i < eof && !toks[i].isOp(";") {
			i++
		}
		return i
	}
	for i := 0; i < eof; {
		if toks[i].isOp(";") {
			i++
			continue
		}
		lo := i
		hi := nextSemi(i)
		if opensStatementSet(toks[lo:hi]) {
			open = true
			for k := hi; k < eof; {
				start := k + 1
				next := nextSemi(start)
				if start < next && toks[start].is("END") {
					hi, open = next, false
					break
				}
				hi, k = next, next
			}
		}
		spans = append(spans, span{lo, hi})
		i = hi
		if i < eof {
			i++
		}
	}
	return spans, open
}

// explainDetails are the EXPLAIN detail keywords Flink accepts; pipesql refuses them.
var explainDetails = setOf("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")

// opensStatementSet reports whether the statement starts a statement set whose body
// continues past the next semicolon.
func opensStatementSet(toks []token) bool {
	k := 0
	at := func(i int, w string) bool { return i < len(toks) && toks[i].is(w) }
	if at(0, "BEGIN") && at(1, "STATEMENT") && at(2, "SET") {
		return true
	}
	if at(k, "EXPLAIN") {
		k++
		for k < len(toks) && (at(k, "PLAN") || at(k, "FOR") || toks[k].isOp(",") ||
			toks[k].kind == tokWord && explainDetails[toks[k].val]) {
			k++
		}
	}
	if at(k, "EXECUTE") {
		k++
	}
	return at(k, "STATEMENT") && at(k+1, "SET") && at(k+2, "BEGIN")
}

// ParseScript parses every statement of a script. The first error stops it; the error
// is an *Error with the source line filled in.
func ParseScript(file, src string) ([]Statement, error) {
	toks, err := lex(file, src, Pos{})
	if err != nil {
		return nil, withSource(err, src)
	}
	spans, _ := splitTokens(toks)
	stmts := make([]Statement, 0, len(spans))
	for _, s := range spans {
		st, err := parseSpan(file, toks, s)
		if err != nil {
			return nil, withSource(err, src)
		}
		stmts = append(stmts, st)
	}
	return stmts, nil
}

// ParseStatement parses exactly one statement; the trailing semicolon is optional.
func ParseStatement(file, src string) (Statement, error) {
	toks, err := lex(file, src, Pos{})
	if err != nil {
		return nil, withSource(err, src)
	}
	spans, _ := splitTokens(toks)
	if len(spans) == 0 {
		eof := toks[len(toks)-1]
		return nil, syntaxErr(eof.pos, "empty statement: expected a statement").WithSource(src)
	}
	st, err := parseSpan(file, toks, spans[0])
	if err != nil {
		return nil, withSource(err, src)
	}
	if len(spans) > 1 {
		t := toks[spans[1].lo]
		return nil, syntaxErr(t.pos, "syntax error at %s: expected end of input after the statement", t.describe()).WithSource(src)
	}
	return st, nil
}

// ParseExpr parses one scalar expression, such as a computed column or a filter.
func ParseExpr(file, src string) (Expr, error) {
	toks, err := lex(file, src, Pos{})
	if err != nil {
		return nil, withSource(err, src)
	}
	p := newParser(file, toks)
	e, err := p.lowerExpr(0, len(toks)-1, []string{"end of input"})
	if err != nil {
		return nil, withSource(err, src)
	}
	return e, nil
}

func parseSpan(file string, toks []token, s span) (st Statement, err error) {
	body := make([]token, 0, s.hi-s.lo+1)
	body = append(body, toks[s.lo:s.hi]...)
	term := toks[s.hi]
	if term.kind != tokEOF {
		term = token{kind: tokEOF, text: ";", pos: term.pos, end: term.end}
	}
	body = append(body, term)
	p := newParser(file, body)
	st, err = p.parseStatement()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errExpected("end of statement")
	}
	return st, nil
}

// parser is a recursive-descent parser over one statement's tokens. Queries inside the
// statement are lowered onto sqlparser (query.go); everything else is parsed here.
type parser struct {
	file  string
	toks  []token // the last token is the terminator (tokEOF)
	match []int   // for '(' the index of its ')', for ')' the index of its '('; -1 when unmatched
	i     int
	hi    int // peek never looks at or past hi: it returns toks[hi] instead
	depth int
}

func newParser(file string, toks []token) *parser {
	p := &parser{file: file, toks: toks, hi: len(toks) - 1}
	p.match = make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		p.match[i] = -1
		switch {
		case t.isOp("("):
			stack = append(stack, i)
		case t.isOp(")"):
			if n := len(stack); n > 0 {
				p.match[i] = stack[n-1]
				p.match[stack[n-1]] = i
				stack = stack[:n-1]
			}
		case t.isOp(";"):
			stack = stack[:0]
		}
	}
	return p
}

func (p *parser) peek() token {
	if p.i >= p.hi {
		return p.toks[p.hi]
	}
	return p.toks[p.i]
}

func (p *parser) peekAt(n int) token {
	if p.i+n >= p.hi {
		return p.toks[p.hi]
	}
	return p.toks[p.i+n]
}

func (p *parser) next() token {
	t := p.peek()
	if p.i < p.hi {
		p.i++
	}
	return t
}

// accept consumes the keyword w when it comes next.
func (p *parser) accept(w string) bool {
	if p.peek().is(w) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptOp(op string) bool {
	if p.peek().isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(w string) (token, error) {
	t := p.peek()
	if !t.is(w) {
		return t, p.errExpected(w)
	}
	p.i++
	return t, nil
}

func (p *parser) expectOp(op string) (token, error) {
	t := p.peek()
	if !t.isOp(op) {
		return t, p.errExpected("'" + op + "'")
	}
	p.i++
	return t, nil
}

// errExpected is a syntax error at the next token naming what could have come instead.
func (p *parser) errExpected(what ...string) error {
	return p.errExpectedAt(p.peek(), what...)
}

func (p *parser) errExpectedAt(t token, what ...string) error {
	if err := badToken(t); err != nil {
		return err
	}
	return syntaxErr(t.pos, "syntax error at %s: expected %s", t.describe(), orList(what))
}

// badToken explains tokens that are never valid, wherever they appear.
func badToken(t token) error {
	switch t.kind {
	case tokDQuoted:
		return syntaxErr(t.pos, "double quotes are not string delimiters in Flink SQL: use 'single quotes' for strings and `backquotes` for identifiers")
	case tokIllegal:
		return syntaxErr(t.pos, "unexpected character %q", t.text)
	case tokHint:
		return syntaxErr(t.pos, "hint %s is not allowed here: table hints go right after a table name, query hints right after SELECT", t.describe())
	}
	return nil
}

// orList renders "A", "A or B", "A, B or C".
func orList(items []string) string {
	switch len(items) {
	case 0:
		return "something else"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func (p *parser) enter() error { return p.enterAt(p.peek()) }

// enterAt counts one more level of nesting, which starts at t.
func (p *parser) enterAt(t token) error {
	p.depth++
	if p.depth > maxDepth {
		return syntaxErr(t.pos, "nesting is too deep (more than %d levels)", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseIdent parses an identifier: a bare word (kept as written) that Flink does not
// reserve, or a quoted one.
func (p *parser) parseIdent(what string) (string, Pos, error) {
	t := p.peek()
	switch t.kind {
	case tokWord:
		if err := reservedName(t); err != nil {
			return "", t.pos, err
		}
		p.i++
		return t.text, t.pos, nil
	case tokQuoted:
		p.i++
		return t.val, t.pos, nil
	}
	return "", t.pos, p.errExpected(what)
}

// parseObjectName parses [catalog.][database.]name.
func (p *parser) parseObjectName(what string) (ObjectName, Pos, error) {
	name, pos, err := p.parseIdent(what)
	if err != nil {
		return nil, pos, err
	}
	n := ObjectName{name}
	for p.peek().isOp(".") {
		p.i++
		part, _, err := p.parseIdent("identifier after '.'")
		if err != nil {
			return nil, pos, err
		}
		n = append(n, part)
	}
	if len(n) > 3 {
		return nil, pos, syntaxErr(pos, "name %s has %d parts: expected at most catalog.database.name", n, len(n))
	}
	return n, pos, nil
}

// parseIdentList parses ( ident [, ident]* ).
func (p *parser) parseIdentList(what string) ([]string, error) {
	if _, err := p.expectOp("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		id, _, err := p.parseIdent(what)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
		if p.acceptOp(",") {
			continue
		}
		if _, err := p.expectOpOr(")", "','"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// expectOpOr expects op, naming the alternatives in the error.
func (p *parser) expectOpOr(op string, alts ...string) (token, error) {
	t := p.peek()
	if !t.isOp(op) {
		return t, p.errExpected(append(alts, "'"+op+"'")...)
	}
	p.i++
	return t, nil
}

// parseString parses a string literal.
func (p *parser) parseString(what string) (string, token, error) {
	t := p.peek()
	if t.kind != tokString {
		return "", t, p.errExpected(what)
	}
	p.i++
	return t.val, t, nil
}

// endOfStatement is the index of the terminator of the statement part starting at i:
// the next ';' (inside a statement set) or the end.
func (p *parser) endOfStatement(i int) int {
	for i < p.hi && !p.toks[i].isOp(";") {
		i++
	}
	return i
}

var statementStarts = []string{
	"CREATE", "DROP", "SET", "RESET", "SHOW", "DESCRIBE", "EXPLAIN", "INSERT", "SELECT", "WITH",
	"EXECUTE", "BEGIN STATEMENT SET", "STOP JOB", "HELP", "QUIT",
}

func (p *parser) parseStatement() (Statement, error) {
	t := p.peek()
	switch {
	case t.is("CREATE"):
		return p.parseCreate()
	case t.is("DROP"):
		return p.parseDrop()
	case t.is("SET"):
		return p.parseSet()
	case t.is("RESET"):
		return p.parseReset()
	case t.is("SHOW"):
		return p.parseShow()
	case t.is("DESCRIBE"), t.is("DESC"):
		p.i++
		name, _, err := p.parseObjectName("table or view name")
		if err != nil {
			return nil, err
		}
		return &Describe{At: t.pos, Name: name}, nil
	case t.is("EXPLAIN"):
		return p.parseExplain()
	case t.is("INSERT"):
		return p.parseInsert()
	case t.is("SELECT"), t.is("WITH"), t.isOp("("):
		end := p.endOfStatement(p.i)
		q, err := p.lowerQuery(p.i, end, []string{"';'"})
		if err != nil {
			return nil, err
		}
		p.i = end
		return &QueryStatement{At: t.pos, Query: q}, nil
	case t.is("EXECUTE"):
		return p.parseExecute()
	case t.is("BEGIN"):
		return p.parseStatementSet()
	case t.is("STOP"):
		return p.parseStopJob()
	case t.is("HELP"):
		p.i++
		return &Help{At: t.pos}, nil
	case t.is("QUIT"), t.is("EXIT"):
		p.i++
		return &Quit{At: t.pos}, nil
	case t.is("VALUES"):
		end := p.endOfStatement(p.i)
		q, err := p.lowerValues(p.i, end, nil)
		if err != nil {
			return nil, err
		}
		p.i = end
		return &QueryStatement{At: t.pos, Query: q}, nil
	case t.is("ALTER"), t.is("USE"), t.is("LOAD"), t.is("UNLOAD"), t.is("ADD"), t.is("REMOVE"),
		t.is("ANALYZE"), t.is("TRUNCATE"), t.is("DELETE"), t.is("UPDATE"), t.is("CALL"):
		return nil, unsupportedErr(t.pos, "%s statements are not supported", t.val)
	}
	return nil, p.errExpected(statementStarts...)
}

func (p *parser) parseCreate() (Statement, error) {
	at := p.next().pos
	temporary := p.accept("TEMPORARY")
	if temporary && p.peek().is("SYSTEM") {
		return nil, unsupportedErr(p.peek().pos, "CREATE TEMPORARY SYSTEM FUNCTION is not supported")
	}
	t := p.peek()
	switch {
	case t.is("TABLE"):
		p.i++
		return p.parseCreateTable(at, temporary)
	case t.is("VIEW"):
		p.i++
		return p.parseCreateView(at, temporary)
	case t.is("FUNCTION"), t.is("CATALOG"), t.is("DATABASE"), t.is("MODEL"):
		return nil, unsupportedErr(t.pos, "CREATE %s is not supported", t.val)
	}
	if temporary {
		return nil, p.errExpected("TABLE", "VIEW")
	}
	return nil, p.errExpected("TABLE", "VIEW", "TEMPORARY")
}

// parseIfNotExists parses an optional IF NOT EXISTS.
func (p *parser) parseIfNotExists() (bool, error) {
	if !p.accept("IF") {
		return false, nil
	}
	if _, err := p.expect("NOT"); err != nil {
		return false, err
	}
	if _, err := p.expect("EXISTS"); err != nil {
		return false, err
	}
	return true, nil
}

func (p *parser) parseCreateView(at Pos, temporary bool) (Statement, error) {
	v := &CreateView{At: at, Temporary: temporary}
	var err error
	if v.IfNotExists, err = p.parseIfNotExists(); err != nil {
		return nil, err
	}
	if v.Name, _, err = p.parseObjectName("view name"); err != nil {
		return nil, err
	}
	if p.peek().isOp("(") {
		if v.Columns, err = p.parseIdentList("column name"); err != nil {
			return nil, err
		}
	}
	if p.accept("COMMENT") {
		if v.Comment, _, err = p.parseString("comment string"); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect("AS"); err != nil {
		return nil, err
	}
	if !(p.peek().is("SELECT") || p.peek().is("WITH") || p.peek().isOp("(")) {
		return nil, p.errExpected("SELECT", "WITH")
	}
	end := p.endOfStatement(p.i)
	if v.Query, err = p.lowerQuery(p.i, end, []string{"';'"}); err != nil {
		return nil, err
	}
	p.i = end
	return v, nil
}

func (p *parser) parseDrop() (Statement, error) {
	at := p.next().pos
	temporary := p.accept("TEMPORARY")
	t := p.peek()
	isView := t.is("VIEW")
	if !t.is("TABLE") && !isView {
		if t.is("FUNCTION") || t.is("CATALOG") || t.is("DATABASE") {
			return nil, unsupportedErr(t.pos, "DROP %s is not supported", t.val)
		}
		return nil, p.errExpected("TABLE", "VIEW")
	}
	p.i++
	ifExists := false
	if p.accept("IF") {
		if _, err := p.expect("EXISTS"); err != nil {
			return nil, err
		}
		ifExists = true
	}
	what := "table name"
	if isView {
		what = "view name"
	}
	name, _, err := p.parseObjectName(what)
	if err != nil {
		return nil, err
	}
	if isView {
		return &DropView{At: at, Name: name, Temporary: temporary, IfExists: ifExists}, nil
	}
	return &DropTable{At: at, Name: name, Temporary: temporary, IfExists: ifExists}, nil
}

// parseSet parses SET, SET 'k' = 'v', and the older unquoted SET k = v whose key and
// value are taken from the source text as written.
func (p *parser) parseSet() (Statement, error) {
	at := p.next().pos
	if p.peek().kind == tokEOF {
		return &Set{At: at}, nil
	}
	key, err := p.parseSetWord("key", func(t token) bool { return t.isOp("=") })
	if err != nil {
		return nil, err
	}
	if _, err := p.expectOp("="); err != nil {
		return nil, err
	}
	value, err := p.parseSetWord("value", func(t token) bool { return false })
	if err != nil {
		return nil, err
	}
	return &Set{At: at, Key: key, Value: value}, nil
}

// parseSetWord parses a quoted string or the raw text of the tokens up to stop or the
// end of the statement.
func (p *parser) parseSetWord(what string, stop func(token) bool) (string, error) {
	t := p.peek()
	if t.kind == tokString {
		if t.val == "" && what == "key" {
			return "", syntaxErr(t.pos, "syntax error at %s: expected a non-empty key", t.describe())
		}
		p.i++
		return t.val, nil
	}
	if err := badToken(t); err != nil && t.kind == tokDQuoted {
		return "", err
	}
	start := p.i
	for p.peek().kind != tokEOF && !stop(p.peek()) {
		if p.peek().kind == tokHint {
			return "", badToken(p.peek())
		}
		p.i++
	}
	if p.i == start {
		return "", p.errExpected("a " + what)
	}
	return p.rawText(start, p.i), nil
}

// rawText is the source text of toks[lo:hi], comments included, as written.
func (p *parser) rawText(lo, hi int) string {
	var b strings.Builder
	for i := lo; i < hi; i++ {
		if i > lo && p.toks[i].pos.Offset > p.toks[i-1].end {
			b.WriteByte(' ')
		}
		b.WriteString(p.toks[i].text)
	}
	return b.String()
}

func (p *parser) parseReset() (Statement, error) {
	at := p.next().pos
	if p.peek().kind == tokEOF {
		return &Reset{At: at}, nil
	}
	key, err := p.parseSetWord("key", func(t token) bool { return false })
	if err != nil {
		return nil, err
	}
	return &Reset{At: at, Key: key}, nil
}

func (p *parser) parseShow() (Statement, error) {
	at := p.next().pos
	t := p.peek()
	p.i++
	switch {
	case t.is("TABLES"), t.is("VIEWS"), t.is("FUNCTIONS"):
		s := &Show{At: at, What: map[string]ShowKind{"TABLES": ShowTables, "VIEWS": ShowViews, "FUNCTIONS": ShowFunctions}[t.val]}
		if k := p.peek(); (k.is("FROM") || k.is("IN")) && s.What != ShowFunctions {
			p.i++
			db, pos, err := p.parseObjectName("database name")
			if err != nil {
				return nil, err
			}
			// pipesql has one database, named as Flink's default (see planner.DefaultDatabase).
			if n := db.String(); n != "default_database" && n != "default_catalog.default_database" {
				return nil, syntaxErr(pos, "unknown database '%s': pipesql has one, default_database", n)
			}
		}
		return s, p.parseShowLike(s)
	case t.is("COLUMNS"):
		if k := p.peek(); !k.is("FROM") && !k.is("IN") {
			return nil, p.errExpected("FROM", "IN")
		}
		p.i++
		name, _, err := p.parseObjectName("table name")
		if err != nil {
			return nil, err
		}
		s := &Show{At: at, What: ShowColumns, Name: name}
		return s, p.parseShowLike(s)
	case t.is("USER") && p.peek().is("FUNCTIONS"):
		return nil, unsupportedErr(t.pos, "unsupported: SHOW USER FUNCTIONS")
	case t.is("JOBS"):
		return &Show{At: at, What: ShowJobs}, nil
	case t.is("CREATE"):
		k := p.peek()
		p.i++
		what := ShowCreateTable
		switch {
		case k.is("TABLE"):
		case k.is("VIEW"):
			what = ShowCreateView
		default:
			p.i--
			return nil, p.errExpected("TABLE", "VIEW")
		}
		name, _, err := p.parseObjectName("name")
		if err != nil {
			return nil, err
		}
		return &Show{At: at, What: what, Name: name}, nil
	case t.is("CATALOGS"), t.is("DATABASES"), t.is("MODULES"), t.is("PARTITIONS"), t.is("JARS"),
		t.is("CURRENT"), t.is("FULL"), t.is("PROCEDURES"), t.is("MODELS"):
		return nil, unsupportedErr(t.pos, "SHOW %s is not supported", t.val)
	}
	p.i--
	return nil, p.errExpected("TABLES", "VIEWS", "FUNCTIONS", "COLUMNS", "JOBS", "CREATE TABLE", "CREATE VIEW")
}

// parseShowLike parses the optional [NOT] LIKE | ILIKE 'pattern' of SHOW.
func (p *parser) parseShowLike(s *Show) error {
	like := &ShowLike{}
	if p.peek().is("NOT") && (p.peekAt(1).is("LIKE") || p.peekAt(1).is("ILIKE")) {
		p.i++
		like.Not = true
	}
	k := p.peek()
	if !k.is("LIKE") && !k.is("ILIKE") {
		return nil
	}
	p.i++
	like.IgnoreCase = k.is("ILIKE")
	var err error
	if like.Pattern, _, err = p.parseString("pattern string after " + k.val); err != nil {
		return err
	}
	s.Like = like
	return nil
}

func (p *parser) parseExplain() (Statement, error) {
	at := p.next().pos
	if p.accept("PLAN") {
		if _, err := p.expect("FOR"); err != nil {
			return nil, err
		}
	} else if t := p.peek(); t.kind == tokWord && explainDetails[t.val] {
		return nil, unsupportedErr(t.pos, "unsupported: EXPLAIN %s (EXPLAIN prints the physical plan, with the changelog of updating nodes)", t.val)
	}
	t := p.peek()
	var st Statement
	var err error
	switch {
	case t.is("SELECT"), t.is("WITH"), t.isOp("("):
		end := p.endOfStatement(p.i)
		var q *Query
		if q, err = p.lowerQuery(p.i, end, []string{"';'"}); err != nil {
			return nil, err
		}
		p.i = end
		st = &QueryStatement{At: t.pos, Query: q}
	case t.is("INSERT"):
		st, err = p.parseInsert()
	case t.is("EXECUTE"):
		st, err = p.parseExecute()
	case t.is("STATEMENT"), t.is("BEGIN"):
		st, err = p.parseStatementSet()
	default:
		return nil, p.errExpected("SELECT", "WITH", "INSERT", "STATEMENT SET", "EXECUTE", "PLAN FOR")
	}
	if err != nil {
		return nil, err
	}
	return &Explain{At: at, Stmt: st}, nil
}

func (p *parser) parseInsert() (*Insert, error) {
	at := p.next().pos
	ins := &Insert{At: at}
	switch {
	case p.accept("INTO"):
	case p.accept("OVERWRITE"):
		ins.Overwrite = true
	default:
		return nil, p.errExpected("INTO", "OVERWRITE")
	}
	var err error
	if ins.Table, _, err = p.parseObjectName("table name"); err != nil {
		return nil, err
	}
	if ins.Options, err = p.parseTableHints(); err != nil {
		return nil, err
	}
	if p.peek().is("PARTITION") {
		return nil, unsupportedErr(p.peek().pos, "INSERT ... PARTITION is not supported")
	}
	if p.peek().isOp("(") && !(p.peekAt(1).is("SELECT") || p.peekAt(1).is("WITH") || p.peekAt(1).isOp("(")) {
		if ins.Columns, err = p.parseIdentList("column name"); err != nil {
			return nil, err
		}
	}
	t := p.peek()
	if t.is("VALUES") {
		end := p.endOfStatement(p.i)
		if ins.Query, err = p.lowerValues(p.i, end, nil); err != nil {
			return nil, err
		}
		p.i = end
		return ins, nil
	}
	if !(t.is("SELECT") || t.is("WITH") || t.isOp("(")) {
		return nil, p.errExpected("SELECT", "WITH", "'('")
	}
	end := p.endOfStatement(p.i)
	if ins.Query, err = p.lowerQuery(p.i, end, []string{"';'"}); err != nil {
		return nil, err
	}
	p.i = end
	return ins, nil
}

// parseExecute parses EXECUTE INSERT ... and EXECUTE STATEMENT SET BEGIN ... END.
func (p *parser) parseExecute() (Statement, error) {
	t := p.peek()
	switch {
	case p.peekAt(1).is("INSERT"):
		p.i++
		return p.parseInsert()
	case p.peekAt(1).is("STATEMENT"):
		p.i++
		st, err := p.parseStatementSet()
		if st != nil {
			st.At = t.pos
		}
		return st, err
	}
	p.i++
	return nil, p.errExpected("INSERT", "STATEMENT SET")
}

// parseStatementSet parses STATEMENT SET BEGIN insert; ... END and the older
// BEGIN STATEMENT SET; insert; ... END.
func (p *parser) parseStatementSet() (*StatementSet, error) {
	set := &StatementSet{At: p.peek().pos}
	if p.accept("BEGIN") {
		if _, err := p.expect("STATEMENT"); err != nil {
			return nil, err
		}
		if _, err := p.expect("SET"); err != nil {
			return nil, err
		}
		if _, err := p.expectOp(";"); err != nil {
			return nil, err
		}
	} else {
		if _, err := p.expect("STATEMENT"); err != nil {
			return nil, err
		}
		if _, err := p.expect("SET"); err != nil {
			return nil, err
		}
		if _, err := p.expect("BEGIN"); err != nil {
			return nil, err
		}
	}
	for {
		t := p.peek()
		switch {
		case t.is("END"):
			p.i++
			if len(set.Inserts) == 0 {
				return nil, syntaxErr(t.pos, "empty statement set: expected INSERT before END")
			}
			return set, nil
		case t.isOp(";"):
			p.i++
		case t.is("INSERT"):
			ins, err := p.parseInsert()
			if err != nil {
				return nil, err
			}
			set.Inserts = append(set.Inserts, ins)
			if _, err := p.expectOp(";"); err != nil {
				return nil, err
			}
		case t.kind == tokEOF:
			return nil, syntaxErr(t.pos, "statement set is not closed: expected INSERT or END")
		default:
			if err := badToken(t); err != nil {
				return nil, err
			}
			return nil, syntaxErr(t.pos, "syntax error at %s: expected INSERT or END (a statement set holds only INSERT statements)", t.describe())
		}
	}
}

func (p *parser) parseStopJob() (Statement, error) {
	at := p.next().pos
	if _, err := p.expect("JOB"); err != nil {
		return nil, err
	}
	id, _, err := p.parseString("job id string")
	if err != nil {
		return nil, err
	}
	s := &StopJob{At: at, ID: id}
	for p.accept("WITH") {
		switch {
		case p.accept("SAVEPOINT"):
			s.WithSavepoint = true
		case p.accept("DRAIN"):
			s.WithDrain = true
		default:
			return nil, p.errExpected("SAVEPOINT", "DRAIN")
		}
	}
	return s, nil
}

// posString renders a position as line:col for messages that refer to another place.
func posString(p Pos) string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }
