package parser

// NULLS FIRST and NULLS LAST
//
// OVER and MATCH_RECOGNIZE parse their ORDER BY items here (nullsAt). The ORDER BY of a
// query goes through sqlparser, which has no syntax for a null order: there NULLS FIRST|LAST
// is emitted as nothing, remembered as a nullsMark, and given to its item once the query
// is converted (resolveNulls), to the first item that starts within the marked one.

// nullsAt returns the null order that toks[lo:hi], an ORDER BY item, ends with.
func nullsAt(toks []token, lo, hi int) NullOrder {
	if hi-2 <= lo || !toks[hi-2].is("NULLS") {
		return NullsDefault
	}
	switch {
	case toks[hi-1].is("FIRST"):
		return NullsFirst
	case toks[hi-1].is("LAST"):
		return NullsLast
	}
	return NullsDefault
}

// nullsMark is a NULLS FIRST|LAST of a query's ORDER BY item: the item's tokens are the
// emitted ones from start to end.
type nullsMark struct {
	at         Pos
	start, end int
	nulls      NullOrder
}

// orderRef is an ORDER BY item of a converted query and the emitted token it starts at.
type orderRef struct {
	item  *OrderItem
	start int
}

// emitNulls handles NULLS FIRST|LAST at toks[i], which must end an item of an ORDER BY.
func (l *lowering) emitNulls(i, hi int) (int, error) {
	t := l.p.toks[i]
	start, ok := l.orderItemStart()
	if !ok {
		return 0, syntaxErr(t.pos, "syntax error at %s: NULLS %s only ends an ORDER BY item", t.describe(), l.p.toks[i+1].val)
	}
	if nt := l.tok(i+2, hi); !(i+2 >= hi || nt.isOp(",") || nt.isOp(")") || nt.isOp(";") ||
		nt.is("LIMIT") || nt.is("UNION") || nt.is("INTERSECT") || nt.is("EXCEPT")) {
		return 0, syntaxErr(nt.pos, "syntax error at %s: expected ',' or LIMIT after NULLS %s", nt.describe(), l.p.toks[i+1].val)
	}
	n := NullsFirst
	if l.p.toks[i+1].is("LAST") {
		n = NullsLast
	}
	l.nulls = append(l.nulls, nullsMark{at: t.pos, start: start, end: len(l.toks), nulls: n})
	return i + 2, nil
}

// orderItemStart returns where the ORDER BY item being emitted starts: just after the BY
// of ORDER BY or the comma before it, at the same depth of parentheses.
func (l *lowering) orderItemStart() (int, bool) {
	depth := 0
	for j := len(l.toks) - 1; j >= 0; j-- {
		switch l.toks[j].text {
		case ")":
			depth++
		case "(":
			if depth == 0 {
				return 0, false
			}
			depth--
		case ",":
			if depth == 0 {
				for k := j - 1; k >= 0 && depth == 0; k-- {
					// A comma of the ORDER BY list, not of a select list or GROUP BY.
					switch l.toks[k].text {
					case ")":
						depth++
					case "(":
						depth--
					case "BY":
						if k > 0 && l.toks[k-1].text == "ORDER" {
							return j + 1, true
						}
						return 0, false
					case "SELECT", "FROM", "WHERE", "HAVING", "LIMIT", "ON":
						return 0, false
					}
				}
				return 0, false
			}
		case "BY":
			if depth == 0 {
				return j + 1, j > 0 && l.toks[j-1].text == "ORDER"
			}
		case "SELECT", "FROM", "WHERE", "HAVING", "LIMIT", "ON", "UNION":
			if depth == 0 {
				return 0, false
			}
		}
	}
	return 0, false
}

// resolveNulls gives each remembered NULLS FIRST|LAST to its ORDER BY item.
func (l *lowering) resolveNulls() error {
	for _, m := range l.nulls {
		var best *orderRef
		for i := range l.orders {
			r := &l.orders[i]
			if r.start >= m.start && r.start < m.end && (best == nil || r.start < best.start) {
				best = r
			}
		}
		if best == nil {
			return syntaxErr(m.at, "syntax error at NULLS: NULLS FIRST|LAST only ends an ORDER BY item")
		}
		best.item.Nulls = m.nulls
	}
	return nil
}
