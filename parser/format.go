package parser

import (
	"strconv"
	"strings"
)

// Format renders a node as canonical Flink SQL: keywords upper case, identifiers
// backquoted only when QuoteIdent says so, strings single-quoted, one space between
// tokens, only the parentheses precedence needs. A statement fits on one line, except
// CREATE TABLE and statement sets, which have a fixed multi-line layout. Parsing the
// output gives the same tree again, so formatting is idempotent.
func Format(n Node) string {
	var f formatter
	f.node(n)
	return f.String()
}

// String renders the type as Flink SQL, such as DECIMAL(10, 2) or ROW<a INT, b STRING>.
func (t DataType) String() string {
	var f formatter
	f.dataType(t)
	return f.String()
}

// QuoteIdent returns name as it must be written in Flink SQL: bare when it is a plain
// identifier that is no reserved word, backquoted (doubling inner backquotes) otherwise.
func QuoteIdent(name string) string {
	if isPlainIdent(name) && !needsQuotes(strings.ToUpper(name)) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// needsQuotes reports whether the upper-case word w is reserved in Flink or has a
// meaning of its own to this parser.
func needsQuotes(w string) bool {
	return reservedWords[w] || flinkReserved[w] || queryKeywords[w] || junkWords[w] || unsupportedWords[w] != "" ||
		niladicFuncs[w] || w == "PERIOD"
}

func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// quoteString renders s as a single-quoted SQL string.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

type formatter struct {
	strings.Builder
}

func (f *formatter) node(n Node) {
	switch n := n.(type) {
	case Statement:
		f.statement(n)
	case Expr:
		f.expr(n)
	case *Query:
		f.query(n)
	case QueryBody:
		f.body(n)
	case TableExpr:
		f.table(n)
	}
}

func (f *formatter) names(list []string) {
	for i, s := range list {
		if i > 0 {
			f.WriteString(", ")
		}
		f.WriteString(QuoteIdent(s))
	}
}

func (f *formatter) statement(s Statement) {
	switch s := s.(type) {
	case *CreateTable:
		f.createTable(s)
	case *CreateView:
		f.WriteString("CREATE ")
		if s.Temporary {
			f.WriteString("TEMPORARY ")
		}
		f.WriteString("VIEW ")
		if s.IfNotExists {
			f.WriteString("IF NOT EXISTS ")
		}
		f.WriteString(s.Name.String())
		if len(s.Columns) > 0 {
			f.WriteString(" (")
			f.names(s.Columns)
			f.WriteString(")")
		}
		if s.Comment != "" {
			f.WriteString(" COMMENT " + quoteString(s.Comment))
		}
		f.WriteString(" AS ")
		f.query(s.Query)
	case *DropTable:
		f.drop("TABLE", s.Temporary, s.IfExists, s.Name)
	case *DropView:
		f.drop("VIEW", s.Temporary, s.IfExists, s.Name)
	case *Set:
		f.WriteString("SET")
		if s.Key != "" {
			f.WriteString(" " + quoteString(s.Key) + " = " + quoteString(s.Value))
		}
	case *Reset:
		f.WriteString("RESET")
		if s.Key != "" {
			f.WriteString(" " + quoteString(s.Key))
		}
	case *Show:
		f.WriteString("SHOW ")
		switch s.What {
		case ShowTables:
			f.WriteString("TABLES")
		case ShowViews:
			f.WriteString("VIEWS")
		case ShowFunctions:
			f.WriteString("FUNCTIONS")
		case ShowJobs:
			f.WriteString("JOBS")
		case ShowCreateTable:
			f.WriteString("CREATE TABLE " + s.Name.String())
		case ShowCreateView:
			f.WriteString("CREATE VIEW " + s.Name.String())
		case ShowColumns:
			f.WriteString("COLUMNS FROM " + s.Name.String())
		}
		if l := s.Like; l != nil {
			if l.Not {
				f.WriteString(" NOT")
			}
			if l.IgnoreCase {
				f.WriteString(" ILIKE ")
			} else {
				f.WriteString(" LIKE ")
			}
			f.WriteString(quoteString(l.Pattern))
		}
	case *Describe:
		f.WriteString("DESCRIBE " + s.Name.String())
	case *Explain:
		f.WriteString("EXPLAIN ")
		f.statement(s.Stmt)
	case *Insert:
		f.insert(s)
	case *QueryStatement:
		f.query(s.Query)
	case *StatementSet:
		f.WriteString("EXECUTE STATEMENT SET\nBEGIN\n")
		for _, ins := range s.Inserts {
			f.WriteString("  ")
			f.insert(ins)
			f.WriteString(";\n")
		}
		f.WriteString("END")
	case *StopJob:
		f.WriteString("STOP JOB " + quoteString(s.ID))
		if s.WithSavepoint {
			f.WriteString(" WITH SAVEPOINT")
		}
		if s.WithDrain {
			f.WriteString(" WITH DRAIN")
		}
	case *Help:
		f.WriteString("HELP")
	case *Quit:
		f.WriteString("QUIT")
	}
}

func (f *formatter) drop(what string, temporary, ifExists bool, name ObjectName) {
	f.WriteString("DROP ")
	if temporary {
		f.WriteString("TEMPORARY ")
	}
	f.WriteString(what + " ")
	if ifExists {
		f.WriteString("IF EXISTS ")
	}
	f.WriteString(name.String())
}

func (f *formatter) insert(s *Insert) {
	if s.Overwrite {
		f.WriteString("INSERT OVERWRITE ")
	} else {
		f.WriteString("INSERT INTO ")
	}
	f.WriteString(s.Table.String())
	f.hint(s.Options)
	if len(s.Columns) > 0 {
		f.WriteString(" (")
		f.names(s.Columns)
		f.WriteString(")")
	}
	f.WriteString(" ")
	f.query(s.Query)
}

func (f *formatter) createTable(s *CreateTable) {
	f.WriteString("CREATE ")
	if s.Temporary {
		f.WriteString("TEMPORARY ")
	}
	f.WriteString("TABLE ")
	if s.IfNotExists {
		f.WriteString("IF NOT EXISTS ")
	}
	f.WriteString(s.Name.String())
	if len(s.Columns) > 0 || s.Watermark != nil || s.PrimaryKey != nil {
		f.tableElements(s)
	}
	if s.Comment != "" {
		f.WriteString(" COMMENT " + quoteString(s.Comment))
	}
	if len(s.PartitionBy) > 0 {
		f.WriteString(" PARTITIONED BY (")
		f.names(s.PartitionBy)
		f.WriteString(")")
	}
	if s.Options != nil {
		f.WriteString(" WITH (")
		if len(s.Options) > 0 {
			f.WriteString("\n")
		}
		for i, o := range s.Options {
			f.WriteString("  " + quoteString(o.Key) + " = " + quoteString(o.Value))
			if i < len(s.Options)-1 {
				f.WriteString(",")
			}
			f.WriteString("\n")
		}
		f.WriteString(")")
	}
	if s.Like != nil {
		f.like(s.Like)
	}
	if s.AsQuery != nil {
		f.WriteString(" AS\n")
		f.query(s.AsQuery)
	}
}

// tableElements formats the column list of CREATE TABLE: columns, watermark, primary key.
func (f *formatter) tableElements(s *CreateTable) {
	f.WriteString(" (\n")
	var lines []string
	for _, c := range s.Columns {
		var g formatter
		g.WriteString(QuoteIdent(c.Name))
		switch c.Kind {
		case ComputedColumn:
			g.WriteString(" AS ")
			g.expr(c.Expr)
		default:
			g.WriteString(" ")
			if c.Type != nil {
				g.dataType(*c.Type)
			}
			if c.Kind == MetadataColumn {
				g.WriteString(" METADATA")
				if c.Metadata != "" {
					g.WriteString(" FROM " + quoteString(c.Metadata))
				}
				if c.Virtual {
					g.WriteString(" VIRTUAL")
				}
			}
		}
		if c.Comment != "" {
			g.WriteString(" COMMENT " + quoteString(c.Comment))
		}
		lines = append(lines, g.String())
	}
	if w := s.Watermark; w != nil {
		var g formatter
		g.WriteString("WATERMARK FOR " + QuoteIdent(w.Column) + " AS ")
		g.expr(w.Expr)
		lines = append(lines, g.String())
	}
	if pk := s.PrimaryKey; pk != nil {
		var g formatter
		if pk.Name != "" {
			g.WriteString("CONSTRAINT " + QuoteIdent(pk.Name) + " ")
		}
		g.WriteString("PRIMARY KEY (")
		g.names(pk.Columns)
		g.WriteString(")")
		if pk.NotEnforced {
			g.WriteString(" NOT ENFORCED")
		}
		lines = append(lines, g.String())
	}
	for i, line := range lines {
		f.WriteString("  " + line)
		if i < len(lines)-1 {
			f.WriteString(",")
		}
		f.WriteString("\n")
	}
	f.WriteString(")")
}

func (f *formatter) dataType(t DataType) {
	f.WriteString(t.Name)
	switch {
	case len(t.Params) > 0:
		f.WriteString("(")
		for i, p := range t.Params {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(strconv.Itoa(p))
		}
		f.WriteString(")")
	case len(t.Elems) > 0:
		f.WriteString("<")
		for i, e := range t.Elems {
			if i > 0 {
				f.WriteString(", ")
			}
			f.dataType(e)
		}
		f.WriteString(">")
	case t.Name == "ROW":
		f.WriteString("<")
		for i, fl := range t.Fields {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(QuoteIdent(fl.Name) + " ")
			f.dataType(fl.Type)
			if fl.Comment != "" {
				f.WriteString(" " + quoteString(fl.Comment))
			}
		}
		f.WriteString(">")
	}
	if t.NotNull {
		f.WriteString(" NOT NULL")
	}
}

func (f *formatter) query(q *Query) {
	if len(q.With) > 0 {
		f.WriteString("WITH ")
		for i, w := range q.With {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(QuoteIdent(w.Name) + " AS (")
			f.query(w.Query)
			f.WriteString(")")
		}
		f.WriteString(" ")
	}
	f.body(q.Body)
	if len(q.OrderBy) > 0 {
		f.WriteString(" ORDER BY ")
		for i, o := range q.OrderBy {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(o.Expr)
			f.WriteString(o.suffix())
		}
	}
	if q.Limit != nil {
		f.WriteString(" LIMIT ")
		f.expr(q.Limit)
	}
}

func (f *formatter) body(b QueryBody) {
	switch b := b.(type) {
	case *Select:
		f.selectBody(b)
	case *SetOp:
		if l, ok := b.Left.(*SetOp); ok && b.Op == "INTERSECT" && l.Op != "INTERSECT" {
			f.WriteString("(") // INTERSECT binds tighter than UNION and EXCEPT
			f.body(b.Left)
			f.WriteString(")")
		} else {
			f.body(b.Left)
		}
		f.WriteString(" " + b.Op)
		if b.All {
			f.WriteString(" ALL")
		}
		f.WriteString(" ")
		if _, nested := b.Right.(*SetOp); nested {
			f.WriteString("(")
			f.body(b.Right)
			f.WriteString(")")
		} else {
			f.body(b.Right)
		}
	}
}

func (f *formatter) selectBody(s *Select) {
	f.WriteString("SELECT ")
	if len(s.StateTTL) > 0 {
		f.WriteString("/*+ STATE_TTL(")
		for i, o := range s.StateTTL {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(quoteString(o.Key) + " = " + quoteString(o.Value))
		}
		f.WriteString(") */ ")
	}
	if s.Distinct {
		f.WriteString("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			f.WriteString(", ")
		}
		f.expr(it.Expr)
		if it.Alias != "" {
			f.WriteString(" AS " + QuoteIdent(it.Alias))
		}
	}
	if s.From != nil {
		f.WriteString(" FROM ")
		f.table(s.From)
	}
	if s.Where != nil {
		f.WriteString(" WHERE ")
		f.expr(s.Where)
	}
	if len(s.GroupBy) > 0 {
		f.WriteString(" GROUP BY ")
		for i, g := range s.GroupBy {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(g)
		}
	}
	if s.Having != nil {
		f.WriteString(" HAVING ")
		f.expr(s.Having)
	}
	f.windowsAndQualify(s) // over.go
}

// hint renders the options of a table hint as one OPTIONS hint.
func (f *formatter) hint(opts []Option) {
	if len(opts) == 0 {
		return
	}
	f.WriteString(" /*+ OPTIONS(")
	for i, o := range opts {
		if i > 0 {
			f.WriteString(", ")
		}
		f.WriteString(quoteString(o.Key) + " = " + quoteString(o.Value))
	}
	f.WriteString(") */")
}

func (f *formatter) alias(a string) {
	if a != "" {
		f.WriteString(" AS " + QuoteIdent(a))
	}
}

func (f *formatter) table(t TableExpr) {
	switch t := t.(type) {
	case *TableName:
		f.WriteString(t.Name.String())
		f.hint(t.Options)
		if t.AsOf != nil {
			f.WriteString(" FOR SYSTEM_TIME AS OF ")
			f.expr(t.AsOf)
		}
		f.alias(t.Alias)
	case *SubqueryTable:
		f.WriteString("(")
		f.query(t.Query)
		f.WriteString(")")
		f.alias(t.Alias)
	case *WindowTVF:
		f.WriteString("TABLE(" + t.Func + "(")
		switch in := t.Input.(type) {
		case *TableName:
			f.WriteString("TABLE " + in.Name.String())
			f.hint(in.Options)
			if len(t.PartitionBy) > 0 {
				quoted := make([]string, len(t.PartitionBy))
				for i, c := range t.PartitionBy {
					quoted[i] = QuoteIdent(c)
				}
				if len(quoted) == 1 {
					f.WriteString(" PARTITION BY " + quoted[0])
				} else {
					f.WriteString(" PARTITION BY (" + strings.Join(quoted, ", ") + ")")
				}
			}
		case *SubqueryTable:
			f.WriteString("(")
			f.query(in.Query)
			f.WriteString(")")
		}
		f.WriteString(", DESCRIPTOR(" + QuoteIdent(t.TimeCol) + ")")
		for _, a := range t.Args {
			f.WriteString(", ")
			f.expr(a)
		}
		f.WriteString("))")
		f.alias(t.Alias)
	case *MatchRecognize:
		f.matchRecognize(t) // match.go
	case *Unnest:
		f.WriteString("UNNEST(")
		f.exprList(t.Args)
		f.WriteString(")")
		if t.Ordinality {
			f.WriteString(" WITH ORDINALITY")
		}
		f.alias(t.Alias)
		if t.Columns != nil {
			f.WriteString("(")
			for i, c := range t.Columns {
				if i > 0 {
					f.WriteString(", ")
				}
				f.WriteString(QuoteIdent(c))
			}
			f.WriteString(")")
		}
	case *Join:
		f.table(t.Left)
		switch t.Kind {
		case "INNER":
			f.WriteString(" JOIN ")
		default:
			f.WriteString(" " + t.Kind + " JOIN ")
		}
		if _, nested := t.Right.(*Join); nested {
			f.WriteString("(")
			f.table(t.Right)
			f.WriteString(")")
		} else {
			f.table(t.Right)
		}
		if t.On != nil {
			f.WriteString(" ON ")
			f.expr(t.On)
		}
	}
}

// Precedence levels, as sqlparser's grammar has them.
const (
	precOr      = 1
	precAnd     = 2
	precNot     = 3
	precCompare = 4 // = <> < <= > >= IS IN LIKE BETWEEN
	precAdd     = 6
	precMul     = 7 // * / % ||
	precUnary   = 8
	precAtom    = 10
)

func prec(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		switch e.Op {
		case "OR":
			return precOr
		case "AND":
			return precAnd
		case "+", "-":
			return precAdd
		case "*", "/", "%", "||":
			return precMul
		}
		return precCompare
	case *UnaryExpr:
		if e.Op == "NOT" {
			return precNot
		}
		return precUnary
	case *InExpr, *LikeExpr, *IsExpr, *BetweenExpr:
		return precCompare
	}
	return precAtom
}

// operand writes e, in parentheses when its precedence is at most max.
func (f *formatter) operand(e Expr, max int) {
	if prec(e) <= max {
		f.WriteString("(")
		f.expr(e)
		f.WriteString(")")
		return
	}
	f.expr(e)
}

// postfixOperand writes the operand of x[i] or x.f: names, constructors and other
// postfix expressions bare, anything else in parentheses.
func (f *formatter) postfixOperand(e Expr) {
	switch e.(type) {
	case *Ident, *Constructor, *Subscript, *FieldAccess:
		f.expr(e)
	default:
		f.WriteString("(")
		f.expr(e)
		f.WriteString(")")
	}
}

func (f *formatter) exprList(list []Expr) {
	for i, e := range list {
		if i > 0 {
			f.WriteString(", ")
		}
		f.expr(e)
	}
}

func (f *formatter) expr(e Expr) {
	switch e := e.(type) {
	case *Ident:
		for i, p := range e.Parts {
			if i > 0 {
				f.WriteString(".")
			}
			f.WriteString(QuoteIdent(p))
		}
	case *Star:
		if e.Qualifier != "" {
			f.WriteString(QuoteIdent(e.Qualifier) + ".")
		}
		f.WriteString("*")
	case *Literal:
		switch e.Kind {
		case StringLit:
			f.WriteString(quoteString(e.Text))
		case DateLit:
			f.WriteString("DATE " + quoteString(e.Text))
		case TimeLit:
			f.WriteString("TIME " + quoteString(e.Text))
		case TimestampLit:
			f.WriteString("TIMESTAMP " + quoteString(e.Text))
		default:
			f.WriteString(e.Text)
		}
	case *IntervalLit:
		f.WriteString("INTERVAL " + quoteString(e.Value) + " " + e.Unit)
		if e.ToUnit != "" {
			f.WriteString(" TO " + e.ToUnit)
		}
	case *TimeUnit:
		f.WriteString(e.Unit)
	case *FuncCall:
		f.call(e)
	case *Constructor:
		f.WriteString(e.Kind + "[")
		f.exprList(e.Args)
		f.WriteString("]")
	case *Subscript:
		f.postfixOperand(e.X)
		f.WriteString("[")
		f.expr(e.Index)
		f.WriteString("]")
	case *FieldAccess:
		f.postfixOperand(e.X)
		f.WriteString("." + QuoteIdent(e.Field))
	case *Cast:
		if e.Try {
			f.WriteString("TRY_CAST(")
		} else {
			f.WriteString("CAST(")
		}
		f.expr(e.X)
		f.WriteString(" AS ")
		f.dataType(e.Type)
		f.WriteString(")")
	case *Case:
		f.WriteString("CASE")
		if e.Operand != nil {
			f.WriteString(" ")
			f.expr(e.Operand)
		}
		for _, w := range e.Whens {
			f.WriteString(" WHEN ")
			f.expr(w.Cond)
			f.WriteString(" THEN ")
			f.expr(w.Result)
		}
		if e.Else != nil {
			f.WriteString(" ELSE ")
			f.expr(e.Else)
		}
		f.WriteString(" END")
	case *BinaryExpr:
		p := prec(e)
		switch p {
		case precCompare:
			f.operand(e.L, precCompare)
			f.WriteString(" " + e.Op + " ")
			f.operand(e.R, precCompare)
		default:
			f.operand(e.L, p-1)
			f.WriteString(" " + e.Op + " ")
			f.operand(e.R, p)
		}
	case *UnaryExpr:
		if e.Op == "NOT" {
			f.WriteString("NOT ")
			f.operand(e.X, precCompare)
			return
		}
		f.WriteString(e.Op)
		if u, ok := e.X.(*UnaryExpr); ok && u.Op != "NOT" {
			// Parentheses keep "- -x" from reading as a comment "--x".
			f.WriteString("(")
			f.expr(e.X)
			f.WriteString(")")
			return
		}
		f.operand(e.X, precUnary-1)
	case *InExpr:
		f.operand(e.X, precCompare)
		if e.Not {
			f.WriteString(" NOT")
		}
		f.WriteString(" IN (")
		if e.Subquery != nil {
			f.query(e.Subquery)
		} else {
			f.exprList(e.List)
		}
		f.WriteString(")")
	case *LikeExpr:
		f.operand(e.X, precCompare)
		if e.Not {
			f.WriteString(" NOT")
		}
		if e.Similar {
			f.WriteString(" SIMILAR TO ")
		} else {
			f.WriteString(" LIKE ")
		}
		f.operand(e.Pattern, precCompare)
		if e.Escape != nil {
			f.WriteString(" ESCAPE ")
			f.operand(e.Escape, precCompare)
		}
	case *IsExpr:
		f.operand(e.X, precCompare)
		f.WriteString(" IS ")
		if e.Not {
			f.WriteString("NOT ")
		}
		f.WriteString(e.What)
	case *BetweenExpr:
		f.operand(e.X, precCompare)
		if e.Not {
			f.WriteString(" NOT")
		}
		f.WriteString(" BETWEEN ")
		f.operand(e.Lo, precCompare)
		f.WriteString(" AND ")
		f.operand(e.Hi, precCompare)
	case *SubqueryExpr:
		if e.Exists {
			f.WriteString("EXISTS ")
		}
		f.WriteString("(")
		f.query(e.Query)
		f.WriteString(")")
	}
}

// funcNameNeedsQuotes reports whether a function name, written bare before '(', would
// parse as something else than a call of that name.
func funcNameNeedsQuotes(name string) bool {
	if !isPlainIdent(name) {
		return true
	}
	switch name {
	case "LEFT", "RIGHT":
		return false
	case "CAST", "TRY_CAST", "EXTRACT", "TABLE", "INTERVAL":
		return true
	}
	return queryKeywords[name] || junkWords[name] || unsupportedWords[name] != ""
}

func (f *formatter) call(e *FuncCall) {
	if e.Name == "GROUPING_SETS" && e.Over == nil {
		f.groupingSets(e) // grouping.go
		return
	}
	args := e.Args
	timeUnitAt := func(i int) bool {
		if i >= len(args) {
			return false
		}
		_, ok := args[i].(*TimeUnit)
		return ok
	}
	special := !e.Distinct && !e.Star
	if f.formatJSONCall(e) { // json.go
		return
	}
	if f.formatMatchSemantics(e) { // match.go
		return
	}
	switch {
	case special && e.Name == "EXTRACT" && len(args) == 2 && timeUnitAt(0):
		f.WriteString("EXTRACT(")
		f.expr(args[0])
		f.WriteString(" FROM ")
		f.expr(args[1])
		f.WriteString(")")
	case special && (e.Name == "FLOOR" || e.Name == "CEIL") && len(args) == 2 && timeUnitAt(1):
		f.WriteString(e.Name + "(")
		f.expr(args[0])
		f.WriteString(" TO ")
		f.expr(args[1])
		f.WriteString(")")
	case special && e.Name == "SUBSTRING" && (len(args) == 2 || len(args) == 3):
		f.WriteString("SUBSTRING(")
		f.expr(args[0])
		f.WriteString(" FROM ")
		f.expr(args[1])
		if len(args) == 3 {
			f.WriteString(" FOR ")
			f.expr(args[2])
		}
		f.WriteString(")")
	case special && e.Name == "POSITION" && len(args) == 2:
		f.WriteString("POSITION(")
		f.operand(args[0], precCompare)
		f.WriteString(" IN ")
		f.expr(args[1])
		f.WriteString(")")
	case special && strings.HasPrefix(e.Name, "TRIM_") && trimModes[e.Name[5:]] && len(args) == 2:
		f.WriteString("TRIM(" + e.Name[5:] + " ")
		f.expr(args[0])
		f.WriteString(" FROM ")
		f.expr(args[1])
		f.WriteString(")")
	case special && niladicFuncs[e.Name] && len(args) == 0 && e.Filter == nil:
		f.WriteString(e.Name)
	default:
		if funcNameNeedsQuotes(e.Name) || e.Name == "EXTRACT" || timeUnitAt(0) && !(e.Name == "TIMESTAMPADD" || e.Name == "TIMESTAMPDIFF") {
			f.WriteString("`" + strings.ReplaceAll(e.Name, "`", "``") + "`")
		} else {
			f.WriteString(e.Name)
		}
		f.WriteString("(")
		if e.Distinct {
			f.WriteString("DISTINCT ")
		}
		if e.Star {
			f.WriteString("*")
		}
		f.exprList(args)
		f.WriteString(")")
	}
	if e.Filter != nil {
		f.WriteString(" FILTER (WHERE ")
		f.expr(e.Filter)
		f.WriteString(")")
	}
	if o := e.Over; o != nil {
		if o.Name != "" {
			f.WriteString(" OVER " + QuoteIdent(o.Name))
			return
		}
		f.WriteString(" OVER (")
		f.overSpec(o) // over.go
		f.WriteString(")")
	}
}
