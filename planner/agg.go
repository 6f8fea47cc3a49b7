package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// windowInfo is a time window being planned: from a window table function in FROM
// (TABLE(TUMBLE(...))) or from a legacy GROUP BY TUMBLE(ts, size).
type windowInfo struct {
	win      Window // TimeCol indexes the scope the window was declared over
	timeName string
	timeType types.Type
	// legacyArgs are the bound arguments of GROUP BY TUMBLE(ts, size) as strings, which
	// TUMBLE_START(ts, size) must repeat.
	legacyArgs []string
	legacyText string
	// partition are the columns of SESSION(TABLE t PARTITION BY ...), nil otherwise.
	partition []int
}

// windowColumns are the columns a window adds: window_start and window_end as TIMESTAMP(3),
// and window_time, the time attribute of the result: TIMESTAMP(3) *ROWTIME* over a
// TIMESTAMP rowtime, TIMESTAMP_LTZ(3) *ROWTIME* over a TIMESTAMP_LTZ one, TIMESTAMP_LTZ(3)
// *PROCTIME* over processing time, as in Flink.
func (w *windowInfo) columns() []types.Column {
	bound := types.TimestampType(3).WithNotNull(true)
	tt := types.TimestampType(3).WithNotNull(true)
	switch {
	case w.win.ProcTime:
		tt = types.TimestampLTZType(3).WithNotNull(true)
		tt.TimeAttr = types.ProcTime
	case w.timeType.Kind == types.TimestampLTZ:
		tt = types.TimestampLTZType(3).WithNotNull(true)
		tt.TimeAttr = types.RowTime
	default:
		tt.TimeAttr = types.RowTime
	}
	return []types.Column{{Name: "window_start", Type: bound}, {Name: "window_end", Type: bound}, {Name: "window_time", Type: tt}}
}

// slotKind says what a slotRef points at in an aggregation's output.
type slotKind int

const (
	keySlot slotKind = iota
	aggSlot
	winSlot
)

// slotRef is a placeholder for a column of an aggregation's output while the select list
// is bound: the output's layout (keys, then aggregates, then window columns) is known only
// once every aggregate call has been seen.
type slotRef struct {
	kind slotKind
	i    int
	T    types.Type
}

func (s *slotRef) Type() types.Type { return s.T }
func (s *slotRef) String() string   { return fmt.Sprintf("slot(%d,%d)", s.kind, s.i) }

// aggItem is one distinct aggregate call of a query.
type aggItem struct {
	call AggCall // Arg indexes aggContext.args, -1 for COUNT(*)
	key  string
}

// aggContext binds the select list and HAVING of an aggregating query: an expression is
// either a group key, an aggregate, a window property, a constant, or built from those.
type aggContext struct {
	input  *scope
	keys   []Expr
	keyIdx map[string]int
	// window is the window of a window aggregation, nil for a GroupAggregate.
	window *windowInfo
	// tvfProps maps the scope columns window_start/end/time of a window TVF that GROUP BY
	// lists to the property, so that selecting them reads the aggregation's window columns.
	tvfProps map[int]winProp
	// legacy is set for GROUP BY TUMBLE(...): TUMBLE_START(...) and friends are allowed.
	legacy *windowInfo
	aggs   []*aggItem
	args   []Expr
	argIdx map[string]int
}

func newAggContext(input *scope) *aggContext {
	return &aggContext{input: input, keyIdx: map[string]int{}, argIdx: map[string]int{}}
}

func (a *aggContext) addKey(e Expr) {
	k := e.String()
	if _, dup := a.keyIdx[k]; dup {
		return
	}
	a.keyIdx[k] = len(a.keys)
	a.keys = append(a.keys, e)
}

// match returns the aggregation output that e denotes as a whole (a group key, a window
// property, or a constant), or false when e must be bound part by part.
func (a *aggContext) match(e parser.Expr) (Expr, bool) {
	if _, star := e.(*parser.Star); star || hasAggregate(e) {
		return nil, false
	}
	x, err := (&binder{scope: a.input, clause: "GROUP BY"}).bind(e)
	if err != nil {
		return nil, false
	}
	if i, ok := a.keyIdx[x.String()]; ok {
		return &slotRef{kind: keySlot, i: i, T: a.keys[i].Type()}, true
	}
	if c, ok := x.(*ColumnRef); ok {
		if p, ok := a.tvfProps[c.Index]; ok {
			return &slotRef{kind: winSlot, i: int(p) - 1, T: a.window.columns()[p-1].Type}, true
		}
	}
	if !hasColumnRefs(x) {
		return x, true
	}
	return nil, false
}

var aggFuncs = map[string]AggFunc{
	"COUNT": AggCount, "SUM": AggSum, "MIN": AggMin, "MAX": AggMax, "AVG": AggAvg,
	"APPROX_COUNT_DISTINCT": AggApproxCountDi, "COLLECT": AggCollect,
	"FIRST_VALUE": AggFirstValue, "LAST_VALUE": AggLastValue, "LISTAGG": AggListAgg, "ARRAY_AGG": AggArrayAgg,
}

// orderedAggs are the aggregates whose result depends on the order of the input rows.
var orderedAggs = map[AggFunc]bool{AggFirstValue: true, AggLastValue: true, AggListAgg: true, AggArrayAgg: true}

// aggregate binds one aggregate call and returns the placeholder of its result.
func (a *aggContext) aggregate(c *parser.FuncCall) (Expr, error) {
	name := strings.ToUpper(c.Name)
	fn, ok := aggFuncs[name]
	if !ok {
		return nil, errAt(c.At, ErrUnsupported, "unsupported: aggregate function %s (pipesql has COUNT, SUM, MIN, MAX, AVG, APPROX_COUNT_DISTINCT, COLLECT, FIRST_VALUE, LAST_VALUE, LISTAGG, ARRAY_AGG, STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP, VARIANCE)", name)
	}
	if orderedAggs[fn] && c.Distinct {
		if fn == AggFirstValue || fn == AggLastValue {
			c = &parser.FuncCall{At: c.At, Name: c.Name, Args: c.Args, Filter: c.Filter} // the same value either way
		} else {
			return nil, errAt(c.At, ErrUnsupported, "unsupported: %s(DISTINCT ...)", name)
		}
	}
	separator := ","
	if fn == AggListAgg && len(c.Args) == 2 {
		lit, ok := c.Args[1].(*parser.Literal)
		if !ok || lit.Kind != parser.StringLit {
			return nil, errAt(c.Args[1].Pos(), ErrTypeMismatch, "LISTAGG's separator must be a string literal")
		}
		separator = lit.Text
		c = &parser.FuncCall{At: c.At, Name: c.Name, Args: c.Args[:1], Filter: c.Filter}
	}
	call := AggCall{Func: fn, Arg: -1, Filter: -1, Distinct: c.Distinct}
	if fn == AggListAgg {
		call.Separator = separator
	}
	var arg Expr
	switch {
	case c.Star:
		if fn != AggCount || c.Distinct {
			return nil, errAt(c.At, ErrTypeMismatch, "%s(*) is not allowed: only COUNT(*) takes '*'", name)
		}
	case len(c.Args) != 1:
		return nil, errAt(c.At, ErrTypeMismatch, "%s takes 1 argument, got %d", name, len(c.Args))
	default:
		x, err := (&binder{scope: a.input, clause: clauseAggArg}).bind(c.Args[0])
		if err != nil {
			return nil, err
		}
		arg = x
	}
	// COUNT(1) counts rows, like COUNT(*): no argument column is needed.
	if lit, ok := arg.(*Literal); ok && fn == AggCount && !c.Distinct && !lit.Value.IsNull() {
		arg = nil
	}
	if arg != nil {
		t, err := aggResultType(fn, arg.Type())
		if err != nil {
			return nil, errAt(c.Args[0].Pos(), ErrTypeMismatch, "type mismatch: %s expects %s, got %s", name, err.Error(), arg.Type().Nullable())
		}
		call.T = t
	} else {
		call.T = types.TypeBigInt.WithNotNull(true)
	}
	if fn == AggMin || fn == AggMax {
		call.Distinct = false // the same result either way, and no set to keep
	}
	var filter Expr
	if c.Filter != nil {
		x, err := (&binder{scope: a.input, clause: clauseAggFilter}).bind(c.Filter)
		if err != nil {
			return nil, err
		}
		if err := checkBoolean(c.Filter.Pos(), x, "a FILTER condition"); err != nil {
			return nil, err
		}
		// FILTER (WHERE TRUE) keeps every row: the call is the unfiltered one.
		if lit, ok := x.(*Literal); !ok || lit.Value.IsNull() || !lit.Value.Bool() {
			filter = x
		}
	}
	// Two calls are the same aggregate only when function, DISTINCT, argument and filter
	// all match: COUNT(*) and COUNT(*) FILTER (WHERE ...) are different columns.
	argKey, filterKey := "*", ""
	if arg != nil {
		argKey = arg.String()
	}
	if filter != nil {
		filterKey = filter.String()
	}
	key := fmt.Sprintf("%s|%v|%s|%s|%q", fn, call.Distinct, argKey, filterKey, call.Separator)
	for i, it := range a.aggs {
		if it.key == key {
			return &slotRef{kind: aggSlot, i: i, T: it.call.T}, nil
		}
	}
	if arg != nil {
		call.Arg = a.inputColumn(arg)
		call.State = stateKind(fn, call.Distinct, arg.Type())
	} else {
		call.State = StateCounter
	}
	if filter != nil {
		call.Filter = a.inputColumn(filter)
	}
	a.aggs = append(a.aggs, &aggItem{call: call, key: key})
	return &slotRef{kind: aggSlot, i: len(a.aggs) - 1, T: call.T}, nil
}

// input_ returns the index in args of e, an aggregate argument or filter condition that
// the aggregation reads from its input, adding it when new: calls that read the same
// expression read one column.
func (a *aggContext) inputColumn(e Expr) int {
	k := e.String()
	idx, seen := a.argIdx[k]
	if !seen {
		idx = len(a.args)
		a.argIdx[k] = idx
		a.args = append(a.args, e)
	}
	return idx
}

// aggResultType is the type of fn over an argument of type t, as Flink types it: COUNT is
// BIGINT NOT NULL, SUM and AVG keep the integer type, MIN and MAX the argument's. The
// error text says what the function expects.
func aggResultType(fn AggFunc, t types.Type) (types.Type, error) {
	switch fn {
	case AggCount, AggApproxCountDi:
		return types.TypeBigInt.WithNotNull(true), nil
	case AggSum, AggAvg:
		if !t.IsNumeric() {
			return types.Type{}, fmt.Errorf("a number")
		}
		if t.Kind == types.Decimal {
			scale := t.Scale
			if fn == AggAvg {
				scale = max(scale, 6)
			}
			return types.Type{Kind: types.Decimal, Prec: 38, Scale: scale}, nil
		}
		return types.Type{Kind: t.Kind}, nil
	case AggMin, AggMax:
		switch t.Kind {
		case types.Array, types.Map, types.Struct, types.Null:
			return types.Type{}, fmt.Errorf("a comparable value")
		}
		return t.Nullable().WithoutTimeAttr(), nil
	case AggFirstValue, AggLastValue:
		if t.Kind == types.Null {
			return types.Type{}, fmt.Errorf("a typed value")
		}
		return t.Nullable().WithoutTimeAttr(), nil
	case AggListAgg:
		if !t.IsString() {
			return types.Type{}, fmt.Errorf("a string")
		}
		return types.TypeString, nil
	case AggArrayAgg:
		if t.Kind == types.Null {
			return types.Type{}, fmt.Errorf("a typed value")
		}
		elem := t.Nullable().WithoutTimeAttr()
		return types.Type{Kind: types.Array, Elem: &elem}, nil
	case AggCollect:
		if t.Kind == types.Null {
			return types.Type{}, fmt.Errorf("a typed value")
		}
		return types.MultisetType(t.WithoutTimeAttr()).WithNotNull(true), nil
	}
	return types.Type{}, fmt.Errorf("a supported argument")
}

// stateKind is how exec keeps an aggregate's state. Exact COUNT(DISTINCT) keeps the set of
// values seen as a roaring bitmap: integers that fit 32 bits go in directly, BIGINT in a
// 64-bit bitmap, and everything else (strings above all: user ids) through a dictionary
// that numbers values densely, because bitmaps of sparse 64-bit hashes are slow and large.
func stateKind(fn AggFunc, distinct bool, t types.Type) StateKind {
	switch fn {
	case AggCollect:
		return StateRetractMultiset // each value with its count, which is the result
	case AggFirstValue, AggLastValue:
		return StateValue
	case AggListAgg, AggArrayAgg:
		return StateValueList
	case AggCount, AggApproxCountDi:
		if !distinct && fn == AggCount {
			return StateCounter
		}
		switch t.Kind {
		case types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.Date:
			return StateRoaring32
		case types.BigInt:
			return StateRoaring64
		}
		return StateRoaringDict
	case AggSum:
		if distinct {
			return StateDistinctValues
		}
		return StateSum
	case AggAvg:
		if distinct {
			return StateDistinctValues
		}
		return StateAvg
	}
	return StateMinMax
}

// legacyProperty binds TUMBLE_START(ts, size) and the other auxiliary functions of a
// legacy group window: they read the aggregation's window columns.
func (a *aggContext) legacyProperty(c *parser.FuncCall, name string) (Expr, error) {
	w := a.legacy
	kind, prop, _ := strings.Cut(name, "_")
	if kind != w.win.Kind.String() {
		return nil, errAt(c.At, ErrTypeMismatch, "%s does not match the group window %s", name, w.legacyText)
	}
	if len(c.Args) != len(w.legacyArgs) {
		return nil, errAt(c.At, ErrTypeMismatch, "%s must repeat the arguments of the group window %s", name, w.legacyText)
	}
	for i, arg := range c.Args {
		x, err := (&binder{scope: a.input, clause: "a window property"}).bind(arg)
		if err != nil {
			return nil, err
		}
		if x.String() != w.legacyArgs[i] {
			return nil, errAt(arg.Pos(), ErrTypeMismatch, "%s must repeat the arguments of the group window %s", name, w.legacyText)
		}
	}
	cols := w.columns()
	switch prop {
	case "START":
		return &slotRef{kind: winSlot, i: 0, T: cols[0].Type}, nil
	case "END":
		return &slotRef{kind: winSlot, i: 1, T: cols[1].Type}, nil
	case "ROWTIME":
		if w.win.ProcTime {
			return nil, errAt(c.At, ErrTimeAttribute, "%s needs an event-time window, but %s is a processing-time attribute", name, w.timeName)
		}
		return &slotRef{kind: winSlot, i: 2, T: cols[2].Type}, nil
	case "PROCTIME":
		if !w.win.ProcTime {
			return nil, errAt(c.At, ErrTimeAttribute, "%s needs a processing-time window, but %s is an event-time attribute", name, w.timeName)
		}
		return &slotRef{kind: winSlot, i: 2, T: cols[2].Type}, nil
	}
	return nil, errAt(c.At, ErrUnsupported, "unsupported: %s", name)
}
