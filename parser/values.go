package parser

import "fmt"

// VALUES lists
//
// VALUES (a, b), (c, d) is lowered onto what pipesql's AST already has: a SELECT without
// FROM per row, the rows joined by UNION ALL, so that the planner types them as it types a
// UNION ALL (each column the rows' common type) and folds the rows into one Values node.
// The columns are EXPR$0, EXPR$1 ... as in Flink, or the names of a column list after the
// alias in FROM: (VALUES (1, 'a')) AS t (id, name). VALUES is accepted as a query, in FROM
// and after INSERT INTO t.

// lowerValues parses toks[lo:hi], VALUES row [, row]..., each row (expr [, expr]...),
// into a query whose columns are named names (nil: EXPR$i).
func (p *parser) lowerValues(lo, hi int, names []string) (*Query, error) {
	at := p.toks[lo].pos
	var rows [][]Expr
	var rowPos []Pos
	for k := lo + 1; ; {
		t := p.toks[k]
		if k >= hi || !t.isOp("(") {
			return nil, syntaxErr(t.pos, "syntax error at %s: expected a row of VALUES: (value, ...)", t.describe())
		}
		m := p.match[k]
		if m < 0 || m >= hi {
			return nil, syntaxErr(t.pos, "unclosed '(': expected ')'")
		}
		var row []Expr
		start := k + 1
		for j := start; j <= m; j++ {
			switch {
			case p.toks[j].isOp("(") && p.match[j] > j && p.match[j] < m:
				j = p.match[j]
			case p.toks[j].isOp(",") || j == m:
				e, err := p.lowerExpr(start, j, []string{"','", "')'"})
				if err != nil {
					return nil, err
				}
				row = append(row, e)
				start = j + 1
			}
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, syntaxErr(t.pos, "VALUES rows have different numbers of values: %d and %d", len(rows[0]), len(row))
		}
		rows, rowPos = append(rows, row), append(rowPos, t.pos)
		k = m + 1
		if k >= hi {
			break
		}
		if !p.toks[k].isOp(",") {
			return nil, syntaxErr(p.toks[k].pos, "syntax error at %s: expected ',' or the end of VALUES", p.toks[k].describe())
		}
		k++
	}
	if names != nil && len(names) != len(rows[0]) {
		return nil, syntaxErr(at, "the column list names %d columns but VALUES has %d", len(names), len(rows[0]))
	}
	var body QueryBody
	for r, row := range rows {
		sel := &Select{At: rowPos[r]}
		for i, e := range row {
			name := fmt.Sprintf("EXPR$%d", i)
			if names != nil {
				name = names[i]
			}
			sel.Items = append(sel.Items, SelectItem{At: e.Pos(), Expr: e, Alias: name})
		}
		if body == nil {
			body = sel
			continue
		}
		body = &SetOp{At: at, Op: "UNION", All: true, Left: body, Right: sel}
	}
	return &Query{At: at, Body: body}, nil
}

// valuesAlias reads what follows (VALUES ...) in FROM from toks[k]: [AS] alias
// [(col, ...)]. It returns the alias's tokens (lo, hi: the AS and the name, the name
// last; empty when there is no alias), the column names (nil without a list) and where
// the table ends.
func (l *lowering) valuesAlias(k, hi int) (aliasLo, aliasHi int, names []string, end int, err error) {
	p := l.p
	aliasLo, aliasHi, end = k, k, k
	if !l.aliasFollows(k, hi) {
		return
	}
	j := k
	if l.tok(j, hi).is("AS") {
		j++
	}
	if j >= hi {
		return
	}
	aliasHi, end = j+1, j+1
	if !l.tok(j+1, hi).isOp("(") {
		return
	}
	m := p.match[j+1]
	if m < 0 || m >= hi {
		return 0, 0, nil, 0, syntaxErr(p.toks[j+1].pos, "unclosed '(': expected ')'")
	}
	for c := j + 2; c < m; c++ {
		t := p.toks[c]
		switch {
		case t.kind == tokWord:
			names = append(names, t.text)
		case t.kind == tokQuoted:
			names = append(names, t.val)
		case t.isOp(",") && c+1 < m:
		default:
			return 0, 0, nil, 0, syntaxErr(t.pos, "syntax error at %s: expected a column name", t.describe())
		}
	}
	return aliasLo, aliasHi, names, m + 1, nil
}
