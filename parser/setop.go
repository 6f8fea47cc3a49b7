package parser

import "github.com/xwb1989/sqlparser"

// INTERSECT and EXCEPT
//
// sqlparser's MySQL grammar knows UNION only, so a query with INTERSECT or EXCEPT at its
// top level is cut here at its set operators: each operand is lowered as a query of its
// own, and the operands are combined as SQL says, INTERSECT binding tighter than UNION and
// EXCEPT, which go left to right. ORDER BY and LIMIT after the last operand belong to the
// whole query. MINUS is refused as Flink's parser refuses it (its conformance does not
// allow MINUS): EXCEPT is the word.

// setOperator is one set operator between two operands: toks[at:next] is the operator.
type setOperator struct {
	at, next int
	op       string // UNION, INTERSECT, EXCEPT
	all      bool
}

// lowerSetOps parses toks[lo:hi] as queries combined by set operators when INTERSECT or
// EXCEPT is among its top-level words; ok is false when neither is (sqlparser parses it).
func (p *parser) lowerSetOps(lo, hi int, ends []string) (q *Query, ok bool, err error) {
	l := p.newLowering(hi, ends, false)
	var ops []setOperator
	found := false
	l.scanTopLevel(lo, hi, func(k int) bool {
		t := p.toks[k]
		if t.kind != tokWord {
			return true
		}
		switch {
		case t.is("MINUS"):
			err = unsupportedErr(t.pos, "MINUS is not supported: Flink SQL does not allow it (write EXCEPT)")
			return false
		case t.is("UNION") || t.is("INTERSECT") || t.is("EXCEPT"):
			o := setOperator{at: k, next: k + 1, op: t.val}
			if n := l.tok(k+1, hi); n.is("ALL") || n.is("DISTINCT") {
				o.all, o.next = n.is("ALL"), k+2
			}
			found = found || o.op != "UNION"
			ops = append(ops, o)
		}
		return true
	})
	if err != nil {
		return nil, false, err
	}
	// An operand in parentheses holding INTERSECT or EXCEPT is lowered here too, so that
	// sqlparser never sees them.
	starts := []int{lo}
	for _, o := range ops {
		starts = append(starts, o.next)
	}
	for _, k := range starts {
		if m := p.match[k]; k < hi && p.toks[k].isOp("(") && m > k && m < hi && l.hasSetOp(k+1, m) {
			found = true
		}
	}
	if !found {
		return nil, false, nil
	}
	var bodies []QueryBody
	var last *Query
	var order []OrderItem
	var limit Expr
	for i, start := range starts {
		end, opEnds := hi, ends
		if i < len(ops) {
			end, opEnds = ops[i].at, []string{ops[i].op}
		}
		if start >= end {
			return nil, true, p.errExpectedAt(p.toks[end], "SELECT", "'('")
		}
		if m := p.match[start]; i == len(ops) && p.toks[start].isOp("(") && m > start && m < end-1 {
			// (query) ORDER BY ... LIMIT ...: the tail belongs to the whole query.
			if order, limit, err = p.lowerOrderLimit(m+1, end, ends); err != nil {
				return nil, true, err
			}
			end = m + 1
		}
		q, err := p.lowerQuery(start, end, opEnds)
		if err != nil {
			return nil, true, err
		}
		if len(q.With) > 0 {
			return nil, true, unsupportedErr(q.With[0].At, "WITH inside an operand of %s is not supported: put it before the first SELECT", ops[max(i-1, 0)].op)
		}
		if i < len(ops) && (len(q.OrderBy) > 0 || q.Limit != nil) {
			return nil, true, unsupportedErr(q.At, "ORDER BY and LIMIT inside an operand of %s are not supported: put them after the last SELECT", ops[i].op)
		}
		bodies = append(bodies, q.Body)
		last = q
	}
	if order != nil || limit != nil {
		last = &Query{OrderBy: order, Limit: limit}
	}
	// INTERSECT first, then UNION and EXCEPT from left to right.
	var terms []QueryBody
	var between []setOperator
	cur := bodies[0]
	for i, o := range ops {
		if o.op == "INTERSECT" {
			cur = &SetOp{At: cur.Pos(), Op: o.op, All: o.all, Left: cur, Right: bodies[i+1]}
			continue
		}
		terms, between = append(terms, cur), append(between, o)
		cur = bodies[i+1]
	}
	terms = append(terms, cur)
	body := terms[0]
	for i, o := range between {
		body = &SetOp{At: body.Pos(), Op: o.op, All: o.all, Left: body, Right: terms[i+1]}
	}
	return &Query{At: p.toks[lo].pos, Body: body, OrderBy: last.OrderBy, Limit: last.Limit}, true, nil
}

// hasSetOp reports whether toks[lo:hi] has INTERSECT, EXCEPT or MINUS at its top level.
func (l *lowering) hasSetOp(lo, hi int) bool {
	found := false
	l.scanTopLevel(lo, hi, func(k int) bool {
		t := l.p.toks[k]
		found = t.kind == tokWord && (t.is("INTERSECT") || t.is("EXCEPT") || t.is("MINUS"))
		return !found
	})
	return found
}

// lowerOrderLimit parses toks[lo:hi], ORDER BY ... [LIMIT ...] or LIMIT ..., as the
// clauses of a dummy query.
func (p *parser) lowerOrderLimit(lo, hi int, ends []string) ([]OrderItem, Expr, error) {
	if !p.toks[lo].is("ORDER") && !p.toks[lo].is("LIMIT") {
		return nil, nil, p.errExpectedAt(p.toks[lo], "ORDER BY", "LIMIT", orList(ends))
	}
	l := p.newLowering(hi, ends, false)
	for _, w := range []string{"SELECT", "*", "FROM", "`w`"} {
		l.emit(w, lo)
	}
	if err := l.emitRange(lo, hi, 0); err != nil {
		return nil, nil, err
	}
	st, err := l.parse()
	if err != nil {
		return nil, nil, err
	}
	sel, ok := st.(*sqlparser.Select)
	if !ok {
		return nil, nil, syntaxErr(p.toks[lo].pos, "expected ORDER BY or LIMIT")
	}
	q := &Query{}
	if err := l.convOrderLimit(q, sel.OrderBy, sel.Limit); err != nil {
		return nil, nil, err
	}
	if err := l.resolveNulls(); err != nil {
		return nil, nil, err
	}
	return q.OrderBy, q.Limit, nil
}
