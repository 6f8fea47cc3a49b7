package parser

import (
	"strconv"

	"github.com/pipesql/pipesql/config"
)

// parseCreateTable parses the rest of CREATE [TEMPORARY] TABLE after TABLE.
func (p *parser) parseCreateTable(at Pos, temporary bool) (Statement, error) {
	ct := &CreateTable{At: at, Temporary: temporary}
	var err error
	if ct.IfNotExists, err = p.parseIfNotExists(); err != nil {
		return nil, err
	}
	if ct.Name, _, err = p.parseObjectName("table name"); err != nil {
		return nil, err
	}
	open := p.peek()
	listAt := open.pos
	switch {
	case open.isOp("("):
		closeIdx := p.match[p.i]
		if closeIdx < 0 || closeIdx > p.hi {
			return nil, syntaxErr(open.pos, "unclosed '(': the column list has no matching ')'")
		}
		p.i++
		if err := p.parseTableElements(ct, closeIdx); err != nil {
			return nil, err
		}
		p.i = closeIdx + 1
	case !open.is("WITH") && !open.is("LIKE") && !open.is("AS"):
		return nil, p.errExpected("'('", "WITH", "LIKE", "AS")
	}
	if p.accept("COMMENT") {
		if ct.Comment, _, err = p.parseString("comment string"); err != nil {
			return nil, err
		}
	}
	if t := p.peek(); t.is("DISTRIBUTED") {
		return nil, unsupportedErr(t.pos, "unsupported: DISTRIBUTED BY (pipesql runs each job in one process)")
	}
	if t := p.peek(); t.is("PARTITIONED") {
		p.i++
		ct.PartitionAt = t.pos
		if _, err := p.expect("BY"); err != nil {
			return nil, err
		}
		if ct.PartitionBy, err = p.parseIdentList("partition column"); err != nil {
			return nil, err
		}
	}
	if p.peek().is("WITH") {
		p.i++
		if ct.Options, err = p.parseOptions(); err != nil {
			return nil, err
		}
	}
	switch t := p.peek(); {
	case t.is("LIKE"):
		if ct.Like, err = p.parseLike(); err != nil {
			return nil, err
		}
	case t.is("AS"):
		p.i++
		if !(p.peek().is("SELECT") || p.peek().is("WITH") || p.peek().isOp("(")) {
			return nil, p.errExpected("SELECT", "WITH")
		}
		end := p.endOfStatement(p.i)
		if ct.AsQuery, err = p.lowerQuery(p.i, end, []string{"';'"}); err != nil {
			return nil, err
		}
		ct.AsAt = t.pos
		p.i = end
	}
	if p.peek().kind != tokEOF {
		var want []string
		if ct.Options == nil && ct.Like == nil {
			if ct.Comment == "" && ct.PartitionBy == nil {
				want = append(want, "COMMENT")
			}
			if ct.PartitionBy == nil {
				want = append(want, "PARTITIONED BY")
			}
			want = append(want, "WITH")
		}
		if ct.Like == nil && ct.AsQuery == nil {
			want = append(want, "LIKE", "AS")
		}
		return nil, p.errExpected(append(want, "end of statement")...)
	}
	if len(ct.Columns) == 0 && ct.Like == nil && ct.AsQuery == nil {
		if ct.Options == nil {
			return nil, syntaxErr(listAt, "CREATE TABLE needs a column list (or LIKE another table)")
		}
		return nil, syntaxErr(listAt, "CREATE TABLE needs at least one column (or LIKE another table)")
	}
	return ct, nil
}

// parseTableElements parses the column list up to toks[end], the closing parenthesis.
func (p *parser) parseTableElements(ct *CreateTable, end int) error {
	saved := p.hi
	p.hi = end
	defer func() { p.hi = saved }()
	for {
		t := p.peek()
		var err error
		switch {
		case t.is("WATERMARK"):
			err = p.parseWatermark(ct, end)
		case t.is("PRIMARY"), t.is("CONSTRAINT"), t.is("UNIQUE"), t.is("FOREIGN"), t.is("CHECK"):
			err = p.parseTableConstraint(ct)
		case t.is("PERIOD") && p.peekAt(1).is("FOR"):
			return unsupportedErr(t.pos, "PERIOD FOR is not supported")
		case t.is("LIKE"):
			return unsupportedErr(t.pos, "LIKE inside the column list is not supported: write it after WITH (...), as CREATE TABLE t (...) WITH (...) LIKE source")
		default:
			err = p.parseColumn(ct, end)
		}
		if err != nil {
			return err
		}
		if p.acceptOp(",") {
			continue
		}
		if p.i >= end {
			return nil
		}
		return p.errExpected("','", "')'")
	}
}

func (p *parser) parseWatermark(ct *CreateTable, end int) error {
	at := p.next().pos
	if _, err := p.expect("FOR"); err != nil {
		return err
	}
	if ct.Watermark != nil {
		return syntaxErr(at, "a table has at most one WATERMARK: another is at %s", posString(ct.Watermark.At))
	}
	col, _, err := p.parseIdent("rowtime column name")
	if err != nil {
		return err
	}
	if _, err := p.expect("AS"); err != nil {
		return err
	}
	exprEnd := p.exprEnd(p.i, end, false)
	e, err := p.lowerExpr(p.i, exprEnd, []string{"','", "')'"})
	if err != nil {
		return err
	}
	p.i = exprEnd
	ct.Watermark = &WatermarkDef{At: at, Column: col, Expr: e}
	return nil
}

// exprEnd finds where an expression inside a column list ends: at a ',' or the end of
// the list, or at COMMENT when the expression is a computed column's.
func (p *parser) exprEnd(i, end int, stopAtComment bool) int {
	for i < end {
		t := p.toks[i]
		switch {
		case t.isOp(","):
			return i
		case stopAtComment && t.is("COMMENT"):
			return i
		case t.isOp("("):
			if m := p.match[i]; m > i && m < end {
				i = m
			}
		}
		i++
	}
	return end
}

// parseTableConstraint parses [CONSTRAINT name] PRIMARY KEY (cols) [NOT ENFORCED].
func (p *parser) parseTableConstraint(ct *CreateTable) error {
	at := p.peek().pos
	pk := &PrimaryKey{At: at}
	if p.accept("CONSTRAINT") {
		name, _, err := p.parseIdent("constraint name")
		if err != nil {
			return err
		}
		pk.Name = name
	}
	if _, err := p.expect("PRIMARY"); err != nil {
		if p.peek().is("UNIQUE") || p.peek().is("FOREIGN") || p.peek().is("CHECK") {
			return unsupportedErr(p.peek().pos, "%s constraints are not supported: only PRIMARY KEY", p.peek().val)
		}
		return err
	}
	if _, err := p.expect("KEY"); err != nil {
		return err
	}
	cols, err := p.parseIdentList("primary key column")
	if err != nil {
		return err
	}
	pk.Columns = cols
	pk.NotEnforced = p.parseNotEnforced()
	return setPrimaryKey(ct, pk)
}

func setPrimaryKey(ct *CreateTable, pk *PrimaryKey) error {
	if ct.PrimaryKey != nil {
		return syntaxErr(pk.At, "a table has at most one PRIMARY KEY: another is at %s", posString(ct.PrimaryKey.At))
	}
	ct.PrimaryKey = pk
	return nil
}

// parseNotEnforced parses an optional NOT ENFORCED. Flink requires it; the planner
// rejects a key without it, so that the message can explain why.
func (p *parser) parseNotEnforced() bool {
	if p.peek().is("NOT") && p.peekAt(1).is("ENFORCED") {
		p.i += 2
		return true
	}
	p.accept("ENFORCED")
	return false
}

// parseColumn parses a physical, computed or metadata column.
func (p *parser) parseColumn(ct *CreateTable, end int) error {
	name, at, err := p.parseIdent("column name, WATERMARK, PRIMARY KEY or CONSTRAINT")
	if err != nil {
		return err
	}
	col := ColumnDef{At: at, Name: name}
	if p.accept("AS") {
		col.Kind = ComputedColumn
		exprEnd := p.exprEnd(p.i, end, true)
		if col.Expr, err = p.lowerExpr(p.i, exprEnd, []string{"COMMENT", "','", "')'"}); err != nil {
			return err
		}
		p.i = exprEnd
	} else {
		typ, err := p.parseType()
		if err != nil {
			return err
		}
		col.Type = &typ
		if p.accept("METADATA") {
			col.Kind = MetadataColumn
			if p.accept("FROM") {
				if col.Metadata, _, err = p.parseString("metadata key string"); err != nil {
					return err
				}
			}
			col.Virtual = p.accept("VIRTUAL")
		}
	}
	for {
		t := p.peek()
		switch {
		case t.is("COMMENT") && col.Comment == "":
			p.i++
			if col.Comment, _, err = p.parseString("comment string"); err != nil {
				return err
			}
			continue
		case t.is("PRIMARY"), t.is("CONSTRAINT"):
			pk := &PrimaryKey{At: t.pos, Columns: []string{name}}
			if p.accept("CONSTRAINT") {
				if pk.Name, _, err = p.parseIdent("constraint name"); err != nil {
					return err
				}
			}
			if _, err := p.expect("PRIMARY"); err != nil {
				return err
			}
			if _, err := p.expect("KEY"); err != nil {
				return err
			}
			pk.NotEnforced = p.parseNotEnforced()
			if err := setPrimaryKey(ct, pk); err != nil {
				return err
			}
			continue
		}
		break
	}
	for _, c := range ct.Columns {
		if c.Name == name {
			return syntaxErr(at, "duplicate column %s: first defined at %s", QuoteIdent(name), posString(c.At))
		}
	}
	ct.Columns = append(ct.Columns, col)
	return nil
}

// parseOptions parses ( 'key' = 'value' [, ...] ) after WITH.
func (p *parser) parseOptions() ([]Option, error) {
	if _, err := p.expectOp("("); err != nil {
		return nil, err
	}
	opts := []Option{}
	if p.acceptOp(")") {
		return opts, nil
	}
	for {
		t := p.peek()
		if t.kind == tokWord || t.kind == tokQuoted {
			return nil, syntaxErr(t.pos, "syntax error at %s: expected option key string: options are written 'key' = 'value'", t.describe())
		}
		key, kt, err := p.parseString("option key string")
		if err != nil {
			return nil, err
		}
		if _, err := p.expectOp("="); err != nil {
			return nil, err
		}
		vt := p.peek()
		if vt.kind == tokNumber || vt.kind == tokWord {
			return nil, syntaxErr(vt.pos, "syntax error at %s: expected option value string: quote it as '%s'", vt.describe(), vt.text)
		}
		value, _, err := p.parseString("option value string")
		if err != nil {
			return nil, err
		}
		opts = append(opts, Option{At: kt.pos, Key: key, Value: value})
		if p.acceptOp(",") {
			continue
		}
		if _, err := p.expectOpOr(")", "','"); err != nil {
			return nil, err
		}
		return opts, nil
	}
}

// typeNames are the canonical type names, in the order an error lists them.
var typeNames = []string{
	"STRING", "VARCHAR", "CHAR", "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT",
	"DOUBLE", "DECIMAL", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "BYTES", "BINARY",
	"VARBINARY", "ARRAY", "MAP", "MULTISET", "ROW",
}

var typeAliases = map[string]string{"INTEGER": "INT", "DEC": "DECIMAL", "NUMERIC": "DECIMAL"}

// parseType parses a Flink data type with an optional NOT NULL / NULL suffix.
func (p *parser) parseType() (DataType, error) {
	if err := p.enter(); err != nil {
		return DataType{}, err
	}
	defer p.leave()
	t := p.peek()
	if t.kind != tokWord {
		return DataType{}, p.errExpected("a type")
	}
	p.i++
	name := t.val
	if a, ok := typeAliases[name]; ok {
		name = a
	}
	dt := DataType{At: t.pos, Name: name}
	var err error
	switch name {
	case "STRING", "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DATE", "BYTES":
	case "DOUBLE":
		p.accept("PRECISION")
	case "VARCHAR", "CHAR", "BINARY", "VARBINARY":
		dt.Params, err = p.parseTypeParams(1)
	case "DECIMAL":
		dt.Params, err = p.parseTypeParams(2)
	case "TIME":
		if dt.Params, err = p.parseTypeParams(1); err == nil {
			err = p.parseWithoutTimeZone()
		}
	case "TIMESTAMP":
		if dt.Params, err = p.parseTypeParams(1); err != nil {
			break
		}
		if p.peek().is("WITH") && p.peekAt(1).is("LOCAL") {
			p.i += 2
			for _, w := range []string{"TIME", "ZONE"} {
				if _, err = p.expect(w); err != nil {
					break
				}
			}
			dt.Name = "TIMESTAMP_LTZ"
		} else {
			err = p.parseWithoutTimeZone()
		}
	case "TIMESTAMP_LTZ":
		dt.Params, err = p.parseTypeParams(1)
	case "ARRAY", "MULTISET":
		var e DataType
		if err = p.expectAngle("<"); err == nil {
			if e, err = p.parseType(); err == nil {
				err = p.expectAngle(">")
			}
		}
		dt.Elems = []DataType{e}
	case "MAP":
		var k, v DataType
		if err = p.expectAngle("<"); err != nil {
			break
		}
		if k, err = p.parseType(); err != nil {
			break
		}
		if _, err = p.expectOp(","); err != nil {
			break
		}
		if v, err = p.parseType(); err != nil {
			break
		}
		err = p.expectAngle(">")
		dt.Elems = []DataType{k, v}
	case "ROW":
		dt.Fields, err = p.parseRowFields()
	case "RAW", "INTERVAL", "STRUCTURED", "SYMBOL", "LEGACY":
		return DataType{}, unsupportedErr(t.pos, "type %s is not supported", name)
	default:
		if t.is("WITH") || t.is("AS") || t.is("COMMENT") {
			p.i--
			return DataType{}, p.errExpected("a type")
		}
		return DataType{}, unknownType(t)
	}
	if err != nil {
		return DataType{}, err
	}
	// Flink also writes collections postfix: INT ARRAY, STRING MULTISET.
	for (p.peek().is("ARRAY") || p.peek().is("MULTISET")) && !p.peekAt(1).isOp("<") {
		k := p.next()
		dt = DataType{At: dt.At, Name: k.val, Elems: []DataType{dt}}
	}
	if p.peek().is("NOT") && p.peekAt(1).is("NULL") {
		p.i += 2
		dt.NotNull = true
	} else if p.peek().is("NULL") {
		p.i++
	}
	return dt, nil
}

func (p *parser) expectAngle(op string) error {
	_, err := p.expectOp(op)
	return err
}

func (p *parser) parseWithoutTimeZone() error {
	if !p.accept("WITHOUT") {
		return nil
	}
	for _, w := range []string{"TIME", "ZONE"} {
		if _, err := p.expect(w); err != nil {
			return err
		}
	}
	return nil
}

// parseTypeParams parses an optional (n) or (n, m) with at most max integers.
func (p *parser) parseTypeParams(max int) ([]int, error) {
	if !p.peek().isOp("(") {
		return nil, nil
	}
	p.i++
	var out []int
	for {
		t := p.peek()
		if t.kind != tokNumber {
			return nil, p.errExpected("an integer")
		}
		n, err := strconv.Atoi(t.text)
		if err != nil || n < 0 {
			return nil, syntaxErr(t.pos, "type parameter %s is not a non-negative integer", t.text)
		}
		p.i++
		out = append(out, n)
		if len(out) < max && p.acceptOp(",") {
			continue
		}
		if len(out) < max {
			if _, err := p.expectOpOr(")", "','"); err != nil {
				return nil, err
			}
		} else if _, err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// parseRowFields parses ROW<name type ['comment'], ...> or ROW(name type, ...).
func (p *parser) parseRowFields() ([]RowField, error) {
	closer := ">"
	if p.acceptOp("(") {
		closer = ")"
	} else if _, err := p.expectOpOr("<", "'('"); err != nil {
		return nil, err
	}
	var fields []RowField
	for {
		name, _, err := p.parseIdent("field name")
		if err != nil {
			return nil, err
		}
		typ, err := p.parseType()
		if err != nil {
			return nil, err
		}
		f := RowField{Name: name, Type: typ}
		if p.peek().kind == tokString {
			f.Comment = p.next().val
		}
		fields = append(fields, f)
		if p.acceptOp(",") {
			continue
		}
		if _, err := p.expectOpOr(closer, "','"); err != nil {
			return nil, err
		}
		return fields, nil
	}
}

// unknownType names the closest known type, or lists them all.
func unknownType(t token) error {
	// Allow one typo in a short name, two in a longer one.
	limit := 2
	if len(t.val) > 4 {
		limit = 3
	}
	if best := config.Closest(t.val, append(append([]string{}, typeNames...), "INTEGER", "NUMERIC"), limit-1); best != "" {
		return syntaxErr(t.pos, "unknown type %s: did you mean %s?", t.text, best)
	}
	return syntaxErr(t.pos, "unknown type %s: expected one of %s", t.text, orList(typeNames))
}
