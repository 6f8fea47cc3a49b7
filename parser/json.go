package parser

// The SQL/JSON constructor and query syntax Flink takes, parsed here because sqlparser
// has none of it:
//
//	JSON_OBJECT([KEY] k VALUE v, ... [{NULL | ABSENT} ON NULL])
//	JSON_ARRAY(v, ... [{NULL | ABSENT} ON NULL])
//	JSON_VALUE(json, path [RETURNING type] [NULL ON EMPTY] [NULL ON ERROR])
//
// JSON_OBJECT and JSON_ARRAY become calls whose first argument is the ON NULL behaviour
// as a string literal ('NULL' or 'ABSENT', each function's default when none is written):
// JSON_OBJECT('NULL', k1, v1, ...). JSON_VALUE ... RETURNING t is TRY_CAST(JSON_VALUE(json,
// path) AS t): a value that does not convert is NULL, as under Flink's default NULL ON
// ERROR. The other ON EMPTY and ON ERROR behaviours are refused.

// jsonCall reports whether the call at i is one of the forms above: JSON_OBJECT and
// JSON_ARRAY always, JSON_VALUE when it has a RETURNING or ON clause.
func (l *lowering) jsonCall(i, hi int) bool {
	switch l.p.toks[i].val {
	case "JSON_OBJECT", "JSON_ARRAY":
		return true
	case "JSON_VALUE":
		m := l.p.match[i+1]
		return m > i && m < hi && (l.topLevel(i+2, m, "RETURNING") >= 0 || l.topLevel(i+2, m, "ON") >= 0)
	}
	return false
}

// splitTop returns the ranges of toks[lo:hi] between top-level commas.
func (l *lowering) splitTop(lo, hi int) [][2]int {
	var out [][2]int
	start, depth := lo, 0
	for k := lo; k < hi; k++ {
		t := l.p.toks[k]
		switch {
		case t.isOp("("):
			if m := l.p.match[k]; m > k && m < hi {
				k = m
			}
		case t.isOp("["):
			depth++
		case t.isOp("]"):
			depth--
		case t.isOp(",") && depth == 0:
			out = append(out, [2]int{start, k})
			start = k + 1
		}
	}
	return append(out, [2]int{start, hi})
}

// onNullClause takes a trailing {NULL | ABSENT} ON NULL off toks[lo:hi].
func (l *lowering) onNullClause(lo, hi int) (mode string, end int) {
	p := l.p
	if hi-lo >= 3 && (p.toks[hi-3].is("NULL") || p.toks[hi-3].is("ABSENT")) && p.toks[hi-2].is("ON") && p.toks[hi-1].is("NULL") {
		return p.toks[hi-3].val, hi - 3
	}
	return "", hi
}

func (l *lowering) emitJSONCall(i, hi int) (int, error) {
	p := l.p
	m, err := l.group(i+1, hi)
	if err != nil {
		return 0, err
	}
	name, at := p.toks[i].val, p.toks[i].pos
	var e Expr
	switch name {
	case "JSON_VALUE":
		e, err = l.jsonValue(i, m)
	default:
		e, err = l.jsonConstructor(name, at, i+2, m)
	}
	if err != nil {
		return 0, err
	}
	l.emitLeaf(i, &leaf{kind: leafExpr, pos: at, expr: e})
	return m + 1, nil
}

func (l *lowering) jsonConstructor(name string, at Pos, lo, hi int) (Expr, error) {
	p := l.p
	mode := "NULL"
	if name == "JSON_ARRAY" {
		mode = "ABSENT"
	}
	parts := l.splitTop(lo, hi)
	last := &parts[len(parts)-1]
	if m, end := l.onNullClause(last[0], last[1]); m != "" {
		mode, last[1] = m, end
	}
	call := &FuncCall{At: at, Name: name, Args: []Expr{&Literal{At: at, Kind: StringLit, Text: mode}}}
	if len(parts) == 1 && parts[0][0] == parts[0][1] {
		return call, nil // no members
	}
	for _, r := range parts {
		if r[0] == r[1] {
			want := "a value"
			if name == "JSON_OBJECT" {
				want = "KEY key VALUE value"
			}
			return nil, p.errExpectedAt(p.toks[r[1]], want)
		}
		if name == "JSON_ARRAY" {
			v, err := p.lowerExpr(r[0], r[1], []string{"','", "')'"})
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, v)
			continue
		}
		start := r[0]
		if p.toks[start].is("KEY") {
			start++
		}
		va := l.topLevel(start, r[1], "VALUE")
		if va < 0 {
			return nil, p.errExpectedAt(p.toks[r[1]], "VALUE and the member's value")
		}
		if va == start {
			return nil, p.errExpectedAt(p.toks[va], "the member's key")
		}
		k, err := p.lowerExpr(start, va, []string{"VALUE"})
		if err != nil {
			return nil, err
		}
		if va+1 == r[1] {
			return nil, p.errExpectedAt(p.toks[r[1]], "the member's value")
		}
		v, err := p.lowerExpr(va+1, r[1], []string{"','", "')'"})
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, k, v)
	}
	return call, nil
}

func (l *lowering) jsonValue(i, m int) (Expr, error) {
	p := l.p
	parts := l.splitTop(i+2, m)
	if len(parts) != 2 {
		return nil, syntaxErr(p.toks[i].pos, "JSON_VALUE takes a JSON text and a path, then its RETURNING and ON clauses")
	}
	doc, err := p.lowerExpr(parts[0][0], parts[0][1], []string{"','"})
	if err != nil {
		return nil, err
	}
	lo, hi := parts[1][0], parts[1][1]
	// The clauses after the path: [RETURNING type] [{NULL | ERROR | DEFAULT x} ON EMPTY] [... ON ERROR].
	end := hi
	if on := l.topLevel(lo, hi, "ON"); on >= 0 {
		end = on - 1
		for end > lo && !p.toks[end].is("NULL") && !p.toks[end].is("ERROR") && !p.toks[end].is("DEFAULT") {
			end--
		}
		for k := end; k < hi; {
			t := p.toks[k]
			if k+2 < hi && t.is("NULL") && p.toks[k+1].is("ON") && (p.toks[k+2].is("EMPTY") || p.toks[k+2].is("ERROR")) {
				k += 3
				continue
			}
			return nil, unsupportedErr(t.pos, "unsupported: JSON_VALUE with %s: only the default NULL ON EMPTY and NULL ON ERROR are supported", t.describe())
		}
	}
	ret := l.topLevel(lo, end, "RETURNING")
	pathEnd := end
	if ret >= 0 {
		pathEnd = ret
	}
	if pathEnd == lo {
		return nil, p.errExpectedAt(p.toks[lo], "a JSON path")
	}
	path, err := p.lowerExpr(lo, pathEnd, []string{"RETURNING", "')'"})
	if err != nil {
		return nil, err
	}
	call := &FuncCall{At: p.toks[i].pos, Name: "JSON_VALUE", Args: []Expr{doc, path}}
	if ret < 0 {
		return call, nil
	}
	dt, err := p.parseTypeIn(ret+1, end)
	if err != nil {
		return nil, err
	}
	return &Cast{At: p.toks[i].pos, X: call, Type: dt, Try: true}, nil
}

// formatJSONCall writes JSON_OBJECT and JSON_ARRAY calls in their SQL/JSON syntax; it
// returns false for other calls.
func (f *formatter) formatJSONCall(e *FuncCall) bool {
	if e.Name != "JSON_OBJECT" && e.Name != "JSON_ARRAY" || len(e.Args) == 0 || e.Distinct || e.Star {
		return false
	}
	mode, ok := e.Args[0].(*Literal)
	if !ok || mode.Kind != StringLit || mode.Text != "NULL" && mode.Text != "ABSENT" {
		return false
	}
	f.WriteString(e.Name + "(")
	members := e.Args[1:]
	step := 1
	if e.Name == "JSON_OBJECT" {
		step = 2
		if len(members)%2 != 0 {
			return false
		}
	}
	for i := 0; i < len(members); i += step {
		if i > 0 {
			f.WriteString(", ")
		}
		if step == 2 {
			f.WriteString("KEY ")
			f.expr(members[i])
			f.WriteString(" VALUE ")
			f.expr(members[i+1])
		} else {
			f.expr(members[i])
		}
	}
	if len(members) > 0 {
		f.WriteString(" ")
	}
	f.WriteString(mode.Text + " ON NULL)")
	return true
}
