package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// DescribeHeader names the cells of each row Describe returns, as Flink's DESCRIBE does.
var DescribeHeader = []string{"name", "type", "null", "key", "extras", "watermark"}

// Describe returns one row per column of a table or view (see DescribeHeader): the type
// with *ROWTIME* / *PROCTIME* marks, nullability as TRUE/FALSE, PRI(cols) for primary
// key columns, "AS expr" for computed columns and "METADATA FROM 'key' [VIRTUAL]" for
// metadata columns, and the watermark expression on the rowtime column.
func (s *Session) Describe(name parser.ObjectName) ([][]string, error) {
	n, err := objectName(parser.Pos{}, name)
	if err != nil {
		return nil, err
	}
	if v, ok := s.cat.View(n); ok {
		rows := make([][]string, len(v.Schema))
		for i, c := range v.Schema {
			rows[i] = []string{c.Name, typeString(c.Type), nullString(c.Type), "", "", ""}
		}
		return rows, nil
	}
	t, ok := s.cat.Table(n)
	if !ok {
		return nil, kindErrorf(ErrUnknownTable, "unknown table '%s'%s", n, didYouMean(n, s.cat.allNames()))
	}
	pk := ""
	if len(t.PrimaryKey) > 0 {
		pk = "PRI(" + strings.Join(t.PrimaryKey, ", ") + ")"
	}
	rows := make([][]string, len(t.Columns))
	for i, c := range t.Columns {
		key := ""
		for _, k := range t.PrimaryKey {
			if k == c.Name {
				key = pk
			}
		}
		wm := ""
		if t.Watermark != nil && t.Watermark.Column == i {
			wm = parser.Format(t.Watermark.Def.Expr)
		}
		rows[i] = []string{c.Name, typeString(c.Type), nullString(c.Type), key, columnExtras(&c), wm}
	}
	return rows, nil
}

func nullString(t types.Type) string {
	if t.NotNull {
		return "FALSE"
	}
	return "TRUE"
}

func columnExtras(c *TableColumn) string {
	switch c.Kind {
	case parser.ComputedColumn:
		return "AS " + parser.Format(c.Def.Expr)
	case parser.MetadataColumn:
		s := "METADATA"
		if c.Def.Metadata != "" {
			s += " FROM '" + c.Def.Metadata + "'"
		}
		if c.Virtual {
			s += " VIRTUAL"
		}
		return s
	}
	return ""
}

// quoteName backquotes an identifier, as SHOW CREATE TABLE prints every name.
func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ShowCreate returns the CREATE statement of a table or view, with the types and
// defaults the planner resolved, as Flink's SHOW CREATE TABLE / VIEW prints it.
func (s *Session) ShowCreate(name parser.ObjectName) (string, error) {
	n, err := objectName(parser.Pos{}, name)
	if err != nil {
		return "", err
	}
	if v, ok := s.cat.View(n); ok {
		var b strings.Builder
		fmt.Fprintf(&b, "CREATE VIEW %s", quoteName(v.Name))
		if v.Columns != nil {
			cols := make([]string, len(v.Columns))
			for i, c := range v.Columns {
				cols[i] = quoteName(c)
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(cols, ", "))
		}
		if v.Def != nil && v.Def.Comment != "" {
			fmt.Fprintf(&b, " COMMENT %s", quoteString(v.Def.Comment))
		}
		fmt.Fprintf(&b, " AS\n%s", parser.Format(v.Query))
		return b.String(), nil
	}
	t, ok := s.cat.Table(n)
	if !ok {
		return "", kindErrorf(ErrUnknownTable, "unknown table '%s'%s", n, didYouMean(n, s.cat.allNames()))
	}
	var lines []string
	for _, c := range t.Columns {
		var l string
		switch c.Kind {
		case parser.ComputedColumn:
			l = fmt.Sprintf("%s AS %s", quoteName(c.Name), parser.Format(c.Def.Expr))
		case parser.MetadataColumn:
			l = fmt.Sprintf("%s %s %s", quoteName(c.Name), c.Type.WithoutTimeAttr(), columnExtras(&c))
		default:
			l = fmt.Sprintf("%s %s", quoteName(c.Name), c.Type.WithoutTimeAttr())
		}
		if c.Def.Comment != "" {
			l += " COMMENT " + quoteString(c.Def.Comment)
		}
		lines = append(lines, l)
	}
	if wm := t.Watermark; wm != nil {
		lines = append(lines, fmt.Sprintf("WATERMARK FOR %s AS %s", quoteName(t.Columns[wm.Column].Name), parser.Format(wm.Def.Expr)))
	}
	if len(t.PrimaryKey) > 0 {
		cols := make([]string, len(t.PrimaryKey))
		for i, c := range t.PrimaryKey {
			cols[i] = quoteName(c)
		}
		cname := "PK_" + strings.Join(t.PrimaryKey, "_")
		if t.Def.PrimaryKey.Name != "" {
			cname = t.Def.PrimaryKey.Name
		}
		lines = append(lines, fmt.Sprintf("CONSTRAINT %s PRIMARY KEY (%s) NOT ENFORCED", quoteName(cname), strings.Join(cols, ", ")))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n  %s\n)", quoteName(t.Name), strings.Join(lines, ",\n  "))
	if t.Def.Comment != "" {
		fmt.Fprintf(&b, "\nCOMMENT %s", quoteString(t.Def.Comment))
	}
	if len(t.Def.PartitionBy) > 0 {
		cols := make([]string, len(t.Def.PartitionBy))
		for i, c := range t.Def.PartitionBy {
			cols[i] = quoteName(c)
		}
		fmt.Fprintf(&b, "\nPARTITIONED BY (%s)", strings.Join(cols, ", "))
	}
	b.WriteString(" WITH (\n")
	for i, o := range t.Def.Options {
		fmt.Fprintf(&b, "  %s = %s", quoteString(o.Key), quoteString(o.Value))
		if i < len(t.Def.Options)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(")")
	return b.String(), nil
}
