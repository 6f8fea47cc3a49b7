package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Interval joins
//
// A join whose ON condition bounds the time attribute of one side by the other's, on
// top of an equality of keys, is an interval join (Flink's IntervalJoin):
//
//	o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND s.ship_time
//	o.order_time >= s.ship_time - INTERVAL '4' HOUR AND o.order_time < s.ship_time
//	o.order_time = s.ship_time
//
// The bounds say how far apart the two times of a joined pair may be: left.time -
// right.time lies in [LowerBound, UpperBound]. Both time attributes are event time
// (rowtime) or both processing time. Knowing the bounds, the operator keeps a row only
// until no row of the other side can still join it (the watermark, or the clock, passed
// the row's time plus the bound), so that the state stays small, and it emits the rows
// of an outer side that found no match null-padded when they leave the state. Its output
// is append-only, and the time attributes of both inputs stay time attributes.

// IntervalJoin is a join of two append-only inputs by keys and a bounded distance
// between their time attributes.
type IntervalJoin struct {
	Left, Right Node
	Type        JoinType
	// LeftKeys[i] = RightKeys[i] are the equality conditions; KeyTypes[i] is the type
	// both sides are compared in.
	LeftKeys, RightKeys []int
	KeyTypes            []types.Type
	// RowTime is true for event-time attributes, false for processing time.
	RowTime bool
	// LeftTime and RightTime are the time attribute columns of each input.
	LeftTime, RightTime int
	// A pair joins when LowerBound <= left.time - right.time <= UpperBound (in
	// microseconds; < instead of <= where the bound is strict).
	LowerBound, UpperBound   int64
	LowerStrict, UpperStrict bool
	// Where is the ON condition without the equalities, over the joined row (the time
	// bounds included, so that a pair is checked exactly); nil when there is nothing else.
	Where Expr
	// Condition is the whole ON condition, as EXPLAIN shows it.
	Condition Expr
	Out       types.Schema
}

func (n *IntervalJoin) Children() []Node     { return []Node{n.Left, n.Right} }
func (n *IntervalJoin) Schema() types.Schema { return n.Out }

// Changelog says an interval join is append-only: an outer side's unmatched row is
// emitted only once it can no longer match.
func (n *IntervalJoin) Changelog() Changelog { return InsertOnly }

// flinkBound is a bound in milliseconds as Flink shows it: a strict bound moved by 1 ms
// to the closest included value.
func flinkBound(us int64, strict bool, lower bool) int64 {
	ms := us / 1000
	if us%1000 != 0 && us < 0 {
		ms-- // floor
	}
	if strict {
		if lower {
			ms++
		} else if us%1000 == 0 {
			ms--
		}
	}
	return ms
}

func (n *IntervalJoin) Explain() string {
	return fmt.Sprintf("IntervalJoin(joinType=[%s], windowBounds=[isRowTime=%v, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d], where=[%s], select=[%s])",
		n.Type, n.RowTime, flinkBound(n.LowerBound, n.LowerStrict, true), flinkBound(n.UpperBound, n.UpperStrict, false),
		n.LeftTime, n.RightTime, ExplainExpr(n.Condition), names(n.Out))
}

// timeBound is one conjunct read as left.time - right.time op c.
type timeBound struct {
	lt, rt int    // the time columns (rt of the joined row: lw + right column)
	op     string // >=, >, <=, <, =
	c      int64  // microseconds
}

// linearTime reads e as column + constant interval (day-time).
func linearTime(e Expr) (col int, off int64, ok bool) {
	switch x := e.(type) {
	case *ColumnRef:
		return x.Index, 0, true
	case *Call:
		if len(x.Args) != 2 || x.Func != "+" && x.Func != "-" {
			return 0, 0, false
		}
		a, b := x.Args[0], x.Args[1]
		if x.Func == "+" {
			if _, isLit := a.(*Literal); isLit {
				a, b = b, a
			}
		}
		lit, isLit := b.(*Literal)
		if !isLit || lit.T.Kind != types.IntervalDayTime || lit.Value.IsNull() {
			return 0, 0, false
		}
		col, off, ok := linearTime(a)
		if !ok {
			return 0, 0, false
		}
		if x.Func == "-" {
			return col, off - lit.Value.Int(), true
		}
		return col, off + lit.Value.Int(), true
	}
	return 0, 0, false
}

var flipOp = map[string]string{">=": "<=", ">": "<", "<=": ">=", "<": ">", "=": "="}

// timeBounds reads a conjunct over the time attributes of both sides as one or two
// bounds (BETWEEN gives two); ok is false for any other form.
func timeBounds(c Expr, s *scope, lw int) ([]timeBound, bool) {
	call, isCall := c.(*Call)
	if !isCall {
		return nil, false
	}
	if call.Func == "BETWEEN" && len(call.Args) == 3 {
		lo, ok1 := timeBounds(&Call{Func: ">=", Args: []Expr{call.Args[0], call.Args[1]}, T: call.T}, s, lw)
		hi, ok2 := timeBounds(&Call{Func: "<=", Args: []Expr{call.Args[0], call.Args[2]}, T: call.T}, s, lw)
		return append(lo, hi...), ok1 && ok2
	}
	if _, cmp := flipOp[call.Func]; !cmp || len(call.Args) != 2 {
		return nil, false
	}
	ca, oa, ok1 := linearTime(call.Args[0])
	cb, ob, ok2 := linearTime(call.Args[1])
	if !ok1 || !ok2 || s.cols[ca].t.TimeAttr == types.NoTimeAttr || s.cols[cb].t.TimeAttr == types.NoTimeAttr {
		return nil, false
	}
	switch {
	case ca < lw && cb >= lw:
		// L + oa op R + ob: L - R op ob - oa
		return []timeBound{{lt: ca, rt: cb, op: call.Func, c: ob - oa}}, true
	case cb < lw && ca >= lw:
		// R + oa op L + ob: L - R flip(op) oa - ob
		return []timeBound{{lt: cb, rt: ca, op: flipOp[call.Func], c: oa - ob}}, true
	}
	return nil, false
}

// oneSidedByColumn reports whether conds bound the distance between both sides' time
// attributes in one direction only while a comparison bounds a time attribute of one side
// by a column of the other that is no time attribute, as Nexmark's q4 and q9 do with
// B.dateTime BETWEEN A.dateTime AND A.expires. Flink plans that as a regular Join (an
// interval join needs both bounds between time attributes), and so does pipesql; one
// bound alone is refused instead, saying which bound is missing.
func oneSidedByColumn(conds []Expr, s *scope, lw int) bool {
	var lower, upper, byColumn bool
	for _, c := range conds {
		halves := []Expr{c}
		if call, ok := c.(*Call); ok && call.Func == "BETWEEN" && len(call.Args) == 3 {
			halves = []Expr{&Call{Func: ">=", Args: []Expr{call.Args[0], call.Args[1]}, T: call.T},
				&Call{Func: "<=", Args: []Expr{call.Args[0], call.Args[2]}, T: call.T}}
		}
		for _, h := range halves {
			if bs, ok := timeBounds(h, s, lw); ok {
				for _, b := range bs {
					lower = lower || b.op != "<" && b.op != "<="
					upper = upper || b.op != ">" && b.op != ">="
				}
				continue
			}
			byColumn = byColumn || timeByColumn(h, s, lw)
		}
	}
	return lower != upper && byColumn
}

// timeByColumn reports whether c compares a time attribute of one side with a column
// (plus a constant interval) of the other side that is not a time attribute.
func timeByColumn(c Expr, s *scope, lw int) bool {
	call, ok := c.(*Call)
	if !ok || len(call.Args) != 2 || call.Func != "<" && call.Func != "<=" && call.Func != ">" && call.Func != ">=" {
		return false
	}
	ca, _, ok1 := linearTime(call.Args[0])
	cb, _, ok2 := linearTime(call.Args[1])
	if !ok1 || !ok2 || (ca < lw) == (cb < lw) {
		return false
	}
	return (s.cols[ca].t.TimeAttr == types.NoTimeAttr) != (s.cols[cb].t.TimeAttr == types.NoTimeAttr)
}

// colName is column i of s as written with its qualifier (o.order_time).
func colName(s *scope, i int) string {
	c := s.cols[i]
	if len(c.quals) > 0 && c.quals[0] != "" {
		return c.quals[0] + "." + c.name
	}
	return c.name
}

// planIntervalJoin makes j, a join whose ON condition has the conjuncts timeConds over
// the time attributes of both sides, an interval join.
func (p *planner) planIntervalJoin(x *parser.Join, j *Join, left, right *relation, in *scope, timeConds []Expr) (*relation, error) {
	lw := len(left.scope.cols)
	ij := &IntervalJoin{Type: j.Type, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, KeyTypes: j.KeyTypes,
		Where: j.Where, Condition: j.Condition, LeftTime: -1, RightTime: -1}
	var hasLower, hasUpper bool
	for _, c := range timeConds {
		bs, ok := timeBounds(c, in, lw)
		if !ok {
			return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: interval join condition %s (bound one time attribute by the other's plus an interval: l.ts BETWEEN r.ts - INTERVAL '1' HOUR AND r.ts, or l.ts >= r.ts - INTERVAL ... AND l.ts < r.ts + INTERVAL ...)", ExplainExpr(c))
		}
		for _, b := range bs {
			if ij.LeftTime < 0 {
				ij.LeftTime, ij.RightTime = b.lt, b.rt
			} else if ij.LeftTime != b.lt || ij.RightTime != b.rt {
				return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: interval join bounds over different time attributes (%s and %s, then %s and %s)",
					colName(in, ij.LeftTime), colName(in, ij.RightTime), colName(in, b.lt), colName(in, b.rt))
			}
			if b.op == ">=" || b.op == ">" || b.op == "=" {
				strict := b.op == ">"
				if !hasLower || b.c > ij.LowerBound || b.c == ij.LowerBound && strict {
					ij.LowerBound, ij.LowerStrict = b.c, strict
				}
				hasLower = true
			}
			if b.op == "<=" || b.op == "<" || b.op == "=" {
				strict := b.op == "<"
				if !hasUpper || b.c < ij.UpperBound || b.c == ij.UpperBound && strict {
					ij.UpperBound, ij.UpperStrict = b.c, strict
				}
				hasUpper = true
			}
		}
	}
	lt, rt := in.cols[ij.LeftTime], in.cols[ij.RightTime]
	if lt.t.TimeAttr != rt.t.TimeAttr {
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: interval join of an event-time and a processing-time attribute (%s and %s): both sides' times must be of one kind", colName(in, ij.LeftTime), colName(in, ij.RightTime))
	}
	l, r := colName(in, ij.LeftTime), colName(in, ij.RightTime)
	switch {
	case !hasLower:
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: interval join without a lower bound: %s - %s is bounded only from above; add a condition like %s >= %s - INTERVAL '1' HOUR (or write %s BETWEEN %s - INTERVAL ... AND %s + INTERVAL ...)", l, r, l, r, l, r, r)
	case !hasUpper:
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: interval join without an upper bound: %s - %s is bounded only from below; add a condition like %s <= %s + INTERVAL '1' HOUR (or write %s BETWEEN %s - INTERVAL ... AND %s + INTERVAL ...)", l, r, l, r, l, r, r)
	}
	if len(ij.LeftKeys) == 0 {
		return nil, errAt(x.On.Pos(), ErrUnsupported, "unsupported: interval join without an equality between a column of each side (add one, e.g. o.id = s.order_id)")
	}
	ij.RowTime = lt.t.TimeAttr == types.RowTime
	ij.RightTime -= lw
	ij.Left = &Exchange{Input: left.node, Keys: ij.LeftKeys}
	ij.Right = &Exchange{Input: right.node, Keys: ij.RightKeys}
	ij.Out = intervalJoinSchema(left.node.Schema(), right.node.Schema(), ij.Type)
	for i, c := range in.cols {
		ij.Out[i].Name = c.name
	}
	out := &scope{}
	for i, c := range in.cols {
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: ij.Out[i].Type})
	}
	return &relation{node: ij, scope: out, changelog: InsertOnly}, nil
}

// intervalJoinSchema is the output of an interval join: the columns of both sides,
// nullable on a side that may be null-padded. Time attributes stay time attributes (the
// operator holds its output watermark back by the bounds, see exec), except on a
// null-padded side, whose time may be NULL.
func intervalJoinSchema(left, right types.Schema, typ JoinType) types.Schema {
	var out types.Schema
	for s, side := range []types.Schema{left, right} {
		padded := (s == 0 && typ.RightOuter()) || (s == 1 && typ.LeftOuter())
		for _, c := range side {
			t := c.Type
			if padded {
				t = t.WithoutTimeAttr().Nullable()
			}
			out = append(out, types.Column{Name: c.Name, Type: t})
		}
	}
	return out
}

// pruneIntervalJoin prunes both inputs to the columns the parent uses, the keys, the
// time attributes and the condition read.
func (o *optimizer) pruneIntervalJoin(x *IntervalJoin, used []bool) (Node, []int, error) {
	lw := len(x.Left.Schema())
	width := lw + len(x.Right.Schema())
	all := append([]bool(nil), used...)
	markUsed(x.Condition, all)
	for i := range x.LeftKeys {
		all[x.LeftKeys[i]] = true
		all[lw+x.RightKeys[i]] = true
	}
	all[x.LeftTime] = true
	all[lw+x.RightTime] = true
	left, ml, err := o.prune(x.Left, all[:lw])
	if err != nil {
		return nil, nil, err
	}
	right, mr, err := o.prune(x.Right, all[lw:width])
	if err != nil {
		return nil, nil, err
	}
	nl := len(left.Schema())
	m := make([]int, width)
	for i := range m {
		switch {
		case i < lw:
			m[i] = ml[i]
		case mr[i-lw] >= 0:
			m[i] = nl + mr[i-lw]
		default:
			m[i] = -1
		}
	}
	j := *x
	j.Left, j.Right = left, right
	j.LeftKeys, j.RightKeys = remapInts(x.LeftKeys, ml), remapInts(x.RightKeys, mr)
	j.LeftTime, j.RightTime = ml[x.LeftTime], mr[x.RightTime]
	j.Condition = remap(x.Condition, m)
	if x.Where != nil {
		j.Where = remap(x.Where, m)
	}
	j.Out = intervalJoinSchema(left.Schema(), right.Schema(), x.Type)
	for i, to := range m {
		if to >= 0 {
			j.Out[to].Name = x.Out[i].Name
		}
	}
	return &j, m, nil
}

// describeIntervalJoin writes what shapes an interval join's state, for the fingerprint.
func describeIntervalJoin(b *strings.Builder, x *IntervalJoin) {
	fmt.Fprintf(b, "interval-join %s rowtime=%v bounds=%d%v..%d%v time=%s,%s", x.Type, x.RowTime,
		x.LowerBound, x.LowerStrict, x.UpperBound, x.UpperStrict, lineage(x.Left, x.LeftTime), lineage(x.Right, x.RightTime))
	for i := range x.LeftKeys {
		fmt.Fprintf(b, " key=%s=%s:%s", lineage(x.Left, x.LeftKeys[i]), lineage(x.Right, x.RightKeys[i]), x.KeyTypes[i])
	}
	for _, side := range []Node{x.Left, x.Right} {
		b.WriteString(" side=[")
		for i, c := range side.Schema() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Type.WithoutTimeAttr().String())
		}
		b.WriteString("]")
	}
	b.WriteByte('\n')
}
