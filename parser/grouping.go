package parser

// GROUPING SETS ((a, b), (a), ()) is emitted as the call GROUPING_SETS(ROW(a, b), a, ROW())
// (a parenthesized list is the implicit ROW, an empty one the niladic ROW()); ROLLUP(a, b)
// and CUBE(a, b) are calls already. The planner expands them into grouping sets.

// emitGroupingSets emits GROUPING SETS (...) at toks[i].
func (l *lowering) emitGroupingSets(i, hi, level int) (int, error) {
	p := l.p
	open := i + 2
	if !l.tok(open, hi).isOp("(") {
		return 0, p.errExpectedAt(l.tok(open, hi), "'('")
	}
	m, err := l.group(open, hi)
	if err != nil {
		return 0, err
	}
	if m == open+1 {
		return 0, p.errExpectedAt(p.toks[m], "a grouping set")
	}
	l.emitLeaf(i, &leaf{kind: leafFunc, pos: p.toks[i].pos, fn: funcShape{name: "GROUPING_SETS"}})
	l.emit("(", open)
	start := open + 1
	var ranges [][2]int
	l.scanTopLevel(start, m, func(k int) bool {
		if p.toks[k].isOp(",") {
			ranges = append(ranges, [2]int{start, k})
			start = k + 1
		}
		return true
	})
	ranges = append(ranges, [2]int{start, m})
	for n, r := range ranges {
		if n > 0 {
			l.emit(",", r[0]-1)
		}
		switch {
		case r[0] == r[1]:
			return 0, p.errExpectedAt(p.toks[r[0]], "a grouping set")
		case r[1] == r[0]+2 && p.toks[r[0]].isOp("(") && p.toks[r[0]+1].isOp(")"):
			// () is the grouping set of no column: the niladic ROW().
			l.emitLeaf(r[0], &leaf{kind: leafFunc, pos: p.toks[r[0]].pos, fn: funcShape{name: "ROW", niladic: true}})
			l.emit("(", r[0])
			l.emit(")", r[0]+1)
		default:
			if err := l.emitRange(r[0], r[1], level+1); err != nil {
				return 0, err
			}
		}
	}
	l.emit(")", m)
	return m + 1, nil
}

// groupingSets writes GROUPING_SETS(ROW(a, b), a, ROW()) as GROUPING SETS ((a, b), a, ()).
func (f *formatter) groupingSets(e *FuncCall) {
	f.WriteString("GROUPING SETS (")
	for i, a := range e.Args {
		if i > 0 {
			f.WriteString(", ")
		}
		if r, ok := a.(*FuncCall); ok && r.Name == "ROW" && r.Over == nil {
			f.WriteString("(")
			f.exprList(r.Args)
			f.WriteString(")")
			continue
		}
		f.expr(a)
	}
	f.WriteString(")")
}
