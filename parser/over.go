package parser

import "strings"

// OVER windows: frames, named windows and QUALIFY
//
// f(x) OVER (PARTITION BY p ORDER BY o ROWS|RANGE BETWEEN bound AND bound) keeps its
// partition and order expressions as the call's last arguments (query.go, emitOver); the
// frame is parsed here, its offsets (n, INTERVAL '1' HOUR) lowered as expressions of
// their own. A SELECT's WINDOW w AS (...) and QUALIFY cond clauses are found when its
// SELECT keyword is emitted, parsed here and kept in its selectInfo, and their tokens
// skipped when the lowering reaches them: sqlparser's grammar has neither.

// BoundKind is the kind of one end of a window frame.
type BoundKind uint8

const (
	UnboundedPreceding BoundKind = iota
	Preceding                    // Offset PRECEDING
	CurrentRow
	Following // Offset FOLLOWING
	UnboundedFollowing
)

func (k BoundKind) String() string {
	return [...]string{"UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING"}[k]
}

// FrameBound is one end of a window frame.
type FrameBound struct {
	At     Pos
	Kind   BoundKind
	Offset Expr // n or INTERVAL '..' unit for Preceding and Following, else nil
}

// Frame is ROWS|RANGE BETWEEN Start AND End; ROWS|RANGE Start is read with End CURRENT ROW.
type Frame struct {
	At   Pos // ROWS or RANGE
	Rows bool
	// Between is set when the frame was written with BETWEEN, for formatting only.
	Between    bool
	Start, End FrameBound
}

// NamedWindow is one definition of a WINDOW clause: name AS (spec).
type NamedWindow struct {
	At   Pos
	Name string
	Spec *Over
}

// overSpec parses the window specification in toks[lo:hi] (inside the parentheses of
// OVER (...) or of a WINDOW definition): the token ranges of its partition and order
// expressions, and its frame.
func (l *lowering) overSpec(lo, hi int, shape *overShape) (part, order [][2]int, err error) {
	p := l.p
	split := func(lo, hi int) [][2]int {
		var out [][2]int
		start := lo
		l.scanTopLevel(lo, hi, func(k int) bool {
			if p.toks[k].isOp(",") {
				out = append(out, [2]int{start, k})
				start = k + 1
			}
			return true
		})
		return append(out, [2]int{start, hi})
	}
	// The partition and order clauses end where ROWS, RANGE or the ')' begins.
	end := hi
	for _, w := range []string{"ROWS", "RANGE"} {
		if k := l.topLevel(lo, hi, w); k >= 0 && k < end {
			end = k
		}
	}
	if end < hi {
		if shape.frame, err = l.frame(end, hi); err != nil {
			return nil, nil, err
		}
	}
	orderAt := -1
	for k := lo; k+1 < end; k++ {
		if p.toks[k].is("ORDER") && p.toks[k+1].is("BY") && l.topLevel(lo, end, "ORDER") == k {
			orderAt = k
			break
		}
	}
	partEnd := end
	if orderAt >= 0 {
		partEnd = orderAt
	}
	if lo < partEnd && p.toks[lo].is("PARTITION") {
		if !l.tok(lo+1, partEnd).is("BY") {
			return nil, nil, p.errExpectedAt(l.tok(lo+1, hi), "BY")
		}
		if lo+2 >= partEnd {
			return nil, nil, p.errExpectedAt(p.toks[partEnd], "expression")
		}
		part = split(lo+2, partEnd)
	} else if lo < partEnd {
		if t := p.toks[lo]; (t.kind == tokWord || t.kind == tokQuoted) && partEnd == lo+1 {
			return nil, nil, unsupportedErr(t.pos, "unsupported: a window specification based on the named window %s: define it whole in the WINDOW clause", t.text)
		}
		return nil, nil, p.errExpectedAt(p.toks[lo], "PARTITION BY", "ORDER BY", "ROWS", "RANGE", "')'")
	}
	if orderAt >= 0 {
		if orderAt+2 >= end {
			return nil, nil, p.errExpectedAt(p.toks[end], "expression")
		}
		for _, r := range split(orderAt+2, end) {
			item := OrderItem{At: l.tok(r[0], hi).pos}
			e := r[1]
			if n := nullsAt(p.toks, r[0], e); n != NullsDefault {
				item.Nulls = n
				e -= 2
			}
			if e-1 > r[0] && (p.toks[e-1].is("ASC") || p.toks[e-1].is("DESC")) {
				item.Desc = p.toks[e-1].is("DESC")
				e--
			}
			if e <= r[0] {
				return nil, nil, p.errExpectedAt(p.toks[e], "expression")
			}
			order = append(order, [2]int{r[0], e})
			shape.order = append(shape.order, item)
		}
	}
	shape.nPart = len(part)
	return part, order, nil
}

// frame parses ROWS|RANGE [BETWEEN bound AND bound | bound] in toks[k:hi].
func (l *lowering) frame(k, hi int) (*Frame, error) {
	p := l.p
	f := &Frame{At: p.toks[k].pos, Rows: p.toks[k].is("ROWS")}
	k++
	if l.tok(k, hi).is("BETWEEN") {
		f.Between = true
		start, next, err := l.bound(k+1, hi)
		if err != nil {
			return nil, err
		}
		if !l.tok(next, hi).is("AND") {
			return nil, p.errExpectedAt(l.tok(next, hi), "AND")
		}
		end, next, err := l.bound(next+1, hi)
		if err != nil {
			return nil, err
		}
		f.Start, f.End, k = start, end, next
	} else {
		start, next, err := l.bound(k, hi)
		if err != nil {
			return nil, err
		}
		f.Start, f.End, k = start, FrameBound{At: start.At, Kind: CurrentRow}, next
	}
	if k < hi {
		return nil, p.errExpectedAt(p.toks[k], "')'")
	}
	return f, nil
}

// bound parses one frame bound at toks[k] and returns where it ends.
func (l *lowering) bound(k, hi int) (FrameBound, int, error) {
	p := l.p
	t := l.tok(k, hi)
	b := FrameBound{At: t.pos}
	switch {
	case t.is("UNBOUNDED"):
		switch nt := l.tok(k+1, hi); {
		case nt.is("PRECEDING"):
			b.Kind = UnboundedPreceding
		case nt.is("FOLLOWING"):
			b.Kind = UnboundedFollowing
		default:
			return b, 0, p.errExpectedAt(nt, "PRECEDING", "FOLLOWING")
		}
		return b, k + 2, nil
	case t.is("CURRENT"):
		if nt := l.tok(k+1, hi); !nt.is("ROW") {
			return b, 0, p.errExpectedAt(nt, "ROW")
		}
		b.Kind = CurrentRow
		return b, k + 2, nil
	}
	end := -1
	l.scanTopLevel(k, hi, func(j int) bool {
		if p.toks[j].is("PRECEDING") || p.toks[j].is("FOLLOWING") {
			end = j
			return false
		}
		return !p.toks[j].is("AND")
	})
	if end < 0 {
		return b, 0, syntaxErr(t.pos, "syntax error at %s: expected a frame bound (UNBOUNDED PRECEDING, n PRECEDING, INTERVAL '1' HOUR PRECEDING, CURRENT ROW)", t.describe())
	}
	if end == k {
		return b, 0, p.errExpectedAt(t, "UNBOUNDED", "CURRENT ROW", "an offset")
	}
	off, err := p.lowerExpr(k, end, []string{"PRECEDING", "FOLLOWING"})
	if err != nil {
		return b, 0, err
	}
	b.Offset, b.Kind = off, Preceding
	if p.toks[end].is("FOLLOWING") {
		b.Kind = Following
	}
	return b, end + 1, nil
}

// selectClauses finds the WINDOW and QUALIFY clauses of the SELECT at toks[i] (before
// hi, outside parentheses, before a set operator, ORDER BY or LIMIT), parses them into
// info and marks their tokens to be skipped.
func (l *lowering) selectClauses(i, hi int, info *selectInfo) error {
	p := l.p
	var starts []int
	end := hi
scan:
	for k := i + 1; k < hi; k++ {
		t := p.toks[k]
		switch {
		case t.isOp("("):
			if m := p.match[k]; m > k && m < hi {
				k = m
			}
		case t.is("WINDOW") || t.is("QUALIFY"):
			starts = append(starts, k)
		case t.is("UNION") || t.is("INTERSECT") || t.is("EXCEPT") || t.is("MINUS") || t.is("LIMIT") ||
			t.is("ORDER") && l.tok(k+1, hi).is("BY") || t.isOp(")") || t.isOp(";"):
			end = k
			break scan
		}
	}
	for n, k := range starts {
		stop := end
		if n+1 < len(starts) {
			stop = starts[n+1]
		}
		if l.skip == nil {
			l.skip = map[int]int{}
		}
		l.skip[k] = stop
		if p.toks[k].is("QUALIFY") {
			if info.qualify != nil {
				return syntaxErr(p.toks[k].pos, "QUALIFY is written once per SELECT")
			}
			if k+1 >= stop {
				return p.errExpectedAt(p.toks[stop], "expression")
			}
			q, err := p.lowerExpr(k+1, stop, []string{"ORDER BY", "LIMIT", "UNION"})
			if err != nil {
				return err
			}
			info.qualify = q
			continue
		}
		if len(info.windows) > 0 {
			return syntaxErr(p.toks[k].pos, "WINDOW is written once per SELECT: separate its definitions with ','")
		}
		if err := l.windowDefs(k+1, stop, info); err != nil {
			return err
		}
	}
	return nil
}

// windowDefs parses name AS (spec) [, ...] in toks[k:hi].
func (l *lowering) windowDefs(k, hi int, info *selectInfo) error {
	p := l.p
	for {
		t := l.tok(k, hi)
		if t.kind != tokWord && t.kind != tokQuoted || t.kind == tokWord && reservedWords[t.val] {
			return p.errExpectedAt(t, "a window name")
		}
		name := identPart(t)
		for _, w := range info.windows {
			if strings.EqualFold(w.Name, name) {
				return syntaxErr(t.pos, "window %s is defined twice", name)
			}
		}
		if !l.tok(k+1, hi).is("AS") {
			return p.errExpectedAt(l.tok(k+1, hi), "AS")
		}
		if !l.tok(k+2, hi).isOp("(") {
			return p.errExpectedAt(l.tok(k+2, hi), "'('")
		}
		m, err := l.group(k+2, hi)
		if err != nil {
			return err
		}
		spec, err := l.windowSpec(k+3, m)
		if err != nil {
			return err
		}
		info.windows = append(info.windows, NamedWindow{At: t.pos, Name: name, Spec: spec})
		k = m + 1
		if k >= hi {
			return nil
		}
		if !p.toks[k].isOp(",") {
			return p.errExpectedAt(p.toks[k], "','", "QUALIFY", "ORDER BY")
		}
		k++
	}
}

// windowSpec parses the specification of a named window, its expressions lowered
// one by one.
func (l *lowering) windowSpec(lo, hi int) (*Over, error) {
	p := l.p
	shape := &overShape{at: p.toks[lo-1].pos}
	part, order, err := l.overSpec(lo, hi, shape)
	if err != nil {
		return nil, err
	}
	o := &Over{At: shape.at, Frame: shape.frame}
	for _, r := range part {
		e, err := p.lowerExpr(r[0], r[1], []string{"','", "ORDER BY", "')'"})
		if err != nil {
			return nil, err
		}
		o.PartitionBy = append(o.PartitionBy, e)
	}
	for j, r := range order {
		e, err := p.lowerExpr(r[0], r[1], []string{"','", "ASC", "DESC", "')'"})
		if err != nil {
			return nil, err
		}
		it := shape.order[j]
		it.Expr = e
		o.OrderBy = append(o.OrderBy, it)
	}
	return o, nil
}

// overSpec writes the inside of OVER (...) or of a WINDOW definition.
func (f *formatter) overSpec(o *Over) {
	written := false
	sep := func() {
		if written {
			f.WriteString(" ")
		}
		written = true
	}
	if len(o.PartitionBy) > 0 {
		sep()
		f.WriteString("PARTITION BY ")
		f.exprList(o.PartitionBy)
	}
	if len(o.OrderBy) > 0 {
		sep()
		f.WriteString("ORDER BY ")
		for i, it := range o.OrderBy {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(it.Expr)
			f.WriteString(it.suffix())
		}
	}
	if fr := o.Frame; fr != nil {
		sep()
		if fr.Rows {
			f.WriteString("ROWS ")
		} else {
			f.WriteString("RANGE ")
		}
		if fr.Between {
			f.WriteString("BETWEEN ")
			f.bound(fr.Start)
			f.WriteString(" AND ")
			f.bound(fr.End)
		} else {
			f.bound(fr.Start)
		}
	}
}

func (f *formatter) bound(b FrameBound) {
	if b.Offset != nil {
		f.expr(b.Offset)
		f.WriteString(" ")
	}
	f.WriteString(b.Kind.String())
}

// windowsAndQualify writes a SELECT's WINDOW and QUALIFY clauses.
func (f *formatter) windowsAndQualify(s *Select) {
	for i, w := range s.Windows {
		if i == 0 {
			f.WriteString(" WINDOW ")
		} else {
			f.WriteString(", ")
		}
		f.WriteString(QuoteIdent(w.Name) + " AS (")
		f.overSpec(w.Spec)
		f.WriteString(")")
	}
	if s.Qualify != nil {
		f.WriteString(" QUALIFY ")
		f.expr(s.Qualify)
	}
}
