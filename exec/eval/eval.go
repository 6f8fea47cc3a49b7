package eval

import (
	"fmt"
	"time"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Env is what evaluation may read besides the row.
type Env struct {
	// Location is table.local-time-zone; nil means UTC.
	Location *time.Location
	// Now is the clock of CURRENT_TIMESTAMP, NOW, PROCTIME, LOCALTIMESTAMP, CURRENT_DATE and
	// UNIX_TIMESTAMP(). It may be nil when the expression does not read the time;
	// compiling one that does then fails.
	Now func() time.Time
	// Watermark is the current watermark of the operator evaluating, for
	// CURRENT_WATERMARK (funcs.Context.Watermark); nil makes it NULL.
	Watermark func() (wm int64, ok bool)
}

// Evaluator computes an expression over one row.
type Evaluator func(row types.Row) (types.Value, error)

// Compile turns a bound expression into an Evaluator. Errors found while compiling (an
// unknown function, a bad constant pattern, an impossible cast) are *ExprError naming
// the expression.
func Compile(e planner.Expr, env Env) (Evaluator, error) {
	c := newCompiler(env)
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return n.eval, nil
}

// CompilePredicate compiles a BOOLEAN expression for WHERE and filters: TRUE keeps the
// row, FALSE and NULL drop it.
func CompilePredicate(e planner.Expr, env Env) (func(row types.Row) (bool, error), error) {
	if k := e.Type().Kind; k != types.Boolean && k != types.Null {
		return nil, &ExprError{Expr: e.String(), Err: fmt.Errorf("%w: it is %s", ErrNotPredicate, e.Type().Nullable())}
	}
	c := newCompiler(env)
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	if n.isConst {
		keep := !n.val.IsNull() && n.val.Bool()
		return func(types.Row) (bool, error) { return keep, nil }, nil
	}
	ev := n.eval
	return func(row types.Row) (bool, error) {
		v, err := ev(row)
		if err != nil {
			return false, err
		}
		return !v.IsNull() && v.Bool(), nil
	}, nil
}

type compiler struct {
	ctx *funcs.Context
	loc *time.Location
	// memo is the memo slot of each shared call, by its text (CompileShared); nil:
	// nothing is shared.
	memo map[string]int
}

func newCompiler(env Env) *compiler {
	loc := env.Location
	if loc == nil {
		loc = time.UTC
	}
	return &compiler{ctx: &funcs.Context{Location: loc, Now: env.Now, Watermark: env.Watermark}, loc: loc}
}

// node is a compiled expression: its evaluator, its type, and its value when constant.
type node struct {
	eval    Evaluator
	typ     types.Type
	isConst bool
	val     types.Value
	column  int  // the column index of a plain column reference, else -1
	fits    bool // values already fit typ exactly (columns, casts): no DECIMAL rounding needed
}

func constNode(v types.Value, t types.Type) node {
	return node{eval: func(types.Row) (types.Value, error) { return v, nil }, typ: t, isConst: true, val: v, column: -1}
}

func (c *compiler) compile(e planner.Expr) (node, error) {
	switch e := e.(type) {
	case *planner.ColumnRef:
		return c.column(e)
	case *planner.Literal:
		v, err := funcs.Coerce(e.Value, e.T, c.loc)
		if err != nil {
			return node{}, wrap(e, err)
		}
		return constNode(v, e.T), nil
	case *planner.Call:
		if c.memo != nil {
			if slot, shared := c.memo[e.String()]; shared {
				n, err := c.call(e)
				if err == nil && !n.isConst {
					n.eval = memoized(n.eval, slot)
				}
				return n, err
			}
		}
		return c.call(e)
	case *planner.Cast:
		return c.cast(e)
	case *planner.Case:
		return c.caseExpr(e)
	case *planner.In:
		return c.in(e)
	case nil:
		return node{}, fmt.Errorf("%w: nil", ErrUnsupportedExpr)
	}
	return node{}, &ExprError{Expr: e.String(), Err: fmt.Errorf("%w %T", ErrUnsupportedExpr, e)}
}

func (c *compiler) column(e *planner.ColumnRef) (node, error) {
	idx := e.Index
	if idx < 0 {
		return node{}, &ExprError{Expr: e.String(), Err: fmt.Errorf("%w: negative column index", ErrUnsupportedExpr)}
	}
	return node{eval: func(row types.Row) (types.Value, error) {
		if idx >= len(row) {
			return types.NullValue, &ExprError{Expr: e.String(), Err: fmt.Errorf("%w: %d", ErrShortRow, len(row))}
		}
		return row[idx], nil
	}, typ: e.T, column: idx, fits: true}, nil
}

// coerceTo makes n produce values of type want, converting when its kind (or DECIMAL
// scale) differs.
func (c *compiler) coerceTo(n node, want types.Type, expr fmt.Stringer) (node, error) {
	if !funcs.NeedsCoerce(n.typ, want) && (want.Kind != types.Decimal || n.fits) {
		return n, nil
	}
	if n.isConst {
		v, err := funcs.Coerce(n.val, want, c.loc)
		if err != nil {
			return node{}, wrap(expr, err)
		}
		return constNode(v, want), nil
	}
	// The conversion from the node's type is resolved once; a value of another kind than
	// planned (data that disagrees with its schema) still converts, the slow way.
	ev, loc, from := n.eval, c.loc, n.typ.Kind
	caster, castErr := funcs.CastFunc(n.typ, want, loc)
	sameKind := from == want.Kind
	return node{eval: func(row types.Row) (types.Value, error) {
		v, err := ev(row)
		if err != nil || v.IsNull() {
			return v, err
		}
		if v.Kind() == from && !sameKind && castErr == nil {
			v, err = caster(v)
		} else {
			v, err = funcs.Coerce(v, want, loc)
		}
		if err != nil {
			return v, wrap(expr, err)
		}
		return v, nil
	}, typ: want, column: -1}, nil
}

func (c *compiler) args(exprs []planner.Expr) ([]node, bool, error) {
	nodes := make([]node, len(exprs))
	allConst := true
	for i, a := range exprs {
		n, err := c.compile(a)
		if err != nil {
			return nil, false, err
		}
		nodes[i] = n
		allConst = allConst && n.isConst
	}
	return nodes, allConst, nil
}

func (c *compiler) call(e *planner.Call) (node, error) {
	f, ok := funcs.Lookup(e.Func)
	if !ok {
		err := fmt.Errorf("%w %s", funcs.ErrUnknownFunction, e.Func)
		if near := funcs.Closest(e.Func); near != "" {
			err = fmt.Errorf("%w, did you mean %s?", err, near)
		}
		return node{}, &ExprError{Expr: e.String(), Err: err}
	}
	args, allConst, err := c.args(e.Args)
	if err != nil {
		return node{}, err
	}
	switch f.Name {
	case "AND", "OR":
		return c.logic(e, args, f.Name == "AND")
	case "IF":
		if len(args) == 3 {
			return c.ifExpr(e, args)
		}
	case "COALESCE", "IFNULL":
		return c.coalesce(e, args)
	}
	site := funcs.Site{Args: make([]types.Type, len(args)), Consts: make([]*types.Value, len(args)), Result: e.T}
	for i, a := range args {
		site.Args[i] = a.typ
		if a.isConst {
			v := a.val
			site.Consts[i] = &v
		}
	}
	k, err := f.Bind(c.ctx, site)
	if err != nil {
		return node{}, wrap(e, err)
	}
	n := node{eval: kernelEval(e, k, args), typ: e.T, column: -1}
	if fast, ok := c.fastCompare(e, args); ok {
		n.eval = fast
	}
	if f.Name == "." && args[0].column >= 0 && args[1].isConst && !args[1].val.IsNull() {
		n.eval = fieldOfColumn(args[0].column, args[1].val.Int(), n.eval)
	}
	// The kernel produces its natural type; the planner may have typed the call otherwise.
	have := e.T
	if t, err := f.InferConst(site.Args, site.Consts); err == nil {
		have = t
	}
	n.typ = have
	if allConst && f.Deterministic {
		if v, err := n.eval(nil); err == nil {
			n = constNode(v, have)
		}
		// A constant that fails (CAST('x' AS INT) in a SELECT) stays an expression: the
		// error belongs to the rows that reach it, with the expression's name on it.
	}
	return c.coerceTo(n, e.T, e)
}

// kernelEval calls a kernel with the evaluated arguments, using its one- and
// two-argument forms when it has them.
func kernelEval(e *planner.Call, k funcs.Kernel, args []node) Evaluator {
	fail := func(err error) (types.Value, error) { return types.NullValue, wrap(e, err) }
	switch {
	case len(args) == 0:
		return func(types.Row) (types.Value, error) {
			v, err := k.Call(nil)
			if err != nil {
				return fail(err)
			}
			return v, nil
		}
	case len(args) == 1 && k.Call1 != nil:
		a, call := args[0].eval, k.Call1
		return func(row types.Row) (types.Value, error) {
			x, err := a(row)
			if err != nil {
				return x, err
			}
			v, err := call(x)
			if err != nil {
				return fail(err)
			}
			return v, nil
		}
	case len(args) == 2 && k.Call2 != nil:
		a, b, call := args[0].eval, args[1].eval, k.Call2
		if args[1].isConst {
			y := args[1].val
			return func(row types.Row) (types.Value, error) {
				x, err := a(row)
				if err != nil {
					return x, err
				}
				v, err := call(x, y)
				if err != nil {
					return fail(err)
				}
				return v, nil
			}
		}
		return func(row types.Row) (types.Value, error) {
			x, err := a(row)
			if err != nil {
				return x, err
			}
			y, err := b(row)
			if err != nil {
				return y, err
			}
			v, err := call(x, y)
			if err != nil {
				return fail(err)
			}
			return v, nil
		}
	}
	evals := make([]Evaluator, len(args))
	for i, a := range args {
		evals[i] = a.eval
	}
	call := k.Call
	return func(row types.Row) (types.Value, error) {
		vals := make([]types.Value, len(evals))
		for i, ev := range evals {
			v, err := ev(row)
			if err != nil {
				return v, err
			}
			vals[i] = v
		}
		v, err := call(vals)
		if err != nil {
			return fail(err)
		}
		return v, nil
	}
}

// fastCompare is the comparison of two integers, the most common filter, without going
// through the kernel: a column against a literal reads the row directly.
func (c *compiler) fastCompare(e *planner.Call, args []node) (Evaluator, bool) {
	if len(args) != 2 || !isInt(args[0].typ) || !isInt(args[1].typ) {
		return nil, false
	}
	var test func(a, b int64) bool
	switch e.Func {
	case "=":
		test = func(a, b int64) bool { return a == b }
	case "<>":
		test = func(a, b int64) bool { return a != b }
	case "<":
		test = func(a, b int64) bool { return a < b }
	case "<=":
		test = func(a, b int64) bool { return a <= b }
	case ">":
		test = func(a, b int64) bool { return a > b }
	case ">=":
		test = func(a, b int64) bool { return a >= b }
	default:
		return nil, false
	}
	if col := args[0].column; col >= 0 && args[1].isConst {
		k := args[1].val
		if k.IsNull() {
			return func(types.Row) (types.Value, error) { return types.NullValue, nil }, true
		}
		y, ref := k.Int(), args[0].eval
		return func(row types.Row) (types.Value, error) {
			if col >= len(row) {
				return ref(row) // reports the short row
			}
			x := row[col]
			if x.IsNull() {
				return types.NullValue, nil
			}
			return types.BoolValue(test(x.Int(), y)), nil
		}, true
	}
	a, b := args[0].eval, args[1].eval
	return func(row types.Row) (types.Value, error) {
		x, err := a(row)
		if err != nil || x.IsNull() {
			return types.NullValue, err
		}
		y, err := b(row)
		if err != nil || y.IsNull() {
			return types.NullValue, err
		}
		return types.BoolValue(test(x.Int(), y.Int())), nil
	}, true
}

func isInt(t types.Type) bool { return t.IsInteger() }

// fieldOfColumn is col.field on a ROW column (bid.price in Nexmark's views), read from
// the row without the kernel's calls; a short row or ROW value goes to slow, which
// reports it.
func fieldOfColumn(col int, field int64, slow Evaluator) Evaluator {
	return func(row types.Row) (types.Value, error) {
		if col < len(row) {
			r := row[col]
			if r.IsNull() {
				return types.NullValue, nil
			}
			if fs := r.Elems(); field >= 0 && field < int64(len(fs)) {
				return fs[field], nil
			}
		}
		return slow(row)
	}
}

var (
	trueVal  = types.BoolValue(true)
	falseVal = types.BoolValue(false)
)

// logic compiles AND (and=true) or OR with short-circuit and three-valued logic: for AND
// a FALSE operand decides, a NULL makes the result UNKNOWN unless a FALSE follows.
func (c *compiler) logic(e *planner.Call, args []node, and bool) (node, error) {
	decisive := !and // AND stops at FALSE, OR at TRUE
	var live []Evaluator
	sawNullConst := false
	for _, a := range args {
		if a.isConst {
			switch {
			case a.val.IsNull():
				sawNullConst = true
			case a.val.Bool() == decisive:
				return constNode(types.BoolValue(decisive), e.T), nil
			}
			continue // the neutral constant drops out
		}
		live = append(live, a.eval)
	}
	if len(live) == 0 {
		if sawNullConst {
			return constNode(types.NullValue, e.T), nil
		}
		return constNode(types.BoolValue(!decisive), e.T), nil
	}
	result := types.BoolValue(decisive)
	neutral := types.BoolValue(!decisive)
	if len(live) == 2 && !sawNullConst {
		l, r := live[0], live[1]
		return node{eval: func(row types.Row) (types.Value, error) {
			x, err := l(row)
			if err != nil {
				return x, err
			}
			if !x.IsNull() && x.Bool() == decisive {
				return result, nil
			}
			y, err := r(row)
			if err != nil {
				return y, err
			}
			switch {
			case !y.IsNull() && y.Bool() == decisive:
				return result, nil
			case x.IsNull() || y.IsNull():
				return types.NullValue, nil
			}
			return neutral, nil
		}, typ: e.T, column: -1}, nil
	}
	return node{eval: func(row types.Row) (types.Value, error) {
		unknown := sawNullConst
		for _, ev := range live {
			v, err := ev(row)
			if err != nil {
				return v, err
			}
			if v.IsNull() {
				unknown = true
				continue
			}
			if v.Bool() == decisive {
				return result, nil
			}
		}
		if unknown {
			return types.NullValue, nil
		}
		return neutral, nil
	}, typ: e.T, column: -1}, nil
}

// truth compiles a condition to "is it TRUE" (FALSE and UNKNOWN are both not).
func truth(n node) func(types.Row) (bool, error) {
	ev := n.eval
	return func(row types.Row) (bool, error) {
		v, err := ev(row)
		return err == nil && !v.IsNull() && v.Bool(), err
	}
}

func (c *compiler) ifExpr(e *planner.Call, args []node) (node, error) {
	then, err := c.coerceTo(args[1], e.T, e)
	if err != nil {
		return node{}, err
	}
	els, err := c.coerceTo(args[2], e.T, e)
	if err != nil {
		return node{}, err
	}
	if cond := args[0]; cond.isConst {
		if !cond.val.IsNull() && cond.val.Bool() {
			return then, nil
		}
		return els, nil
	}
	cond, a, b := truth(args[0]), then.eval, els.eval
	return node{eval: func(row types.Row) (types.Value, error) {
		ok, err := cond(row)
		if err != nil {
			return types.NullValue, err
		}
		if ok {
			return a(row)
		}
		return b(row)
	}, typ: e.T, column: -1}, nil
}

func (c *compiler) coalesce(e *planner.Call, args []node) (node, error) {
	var live []Evaluator
	for _, a := range args {
		a, err := c.coerceTo(a, e.T, e)
		if err != nil {
			return node{}, err
		}
		if a.isConst {
			if a.val.IsNull() {
				continue
			}
			if len(live) == 0 {
				return a, nil
			}
			live = append(live, a.eval)
			break // nothing after a non-NULL constant is reached
		}
		live = append(live, a.eval)
	}
	if len(live) == 0 {
		return constNode(types.NullValue, e.T), nil
	}
	return node{eval: func(row types.Row) (types.Value, error) {
		for _, ev := range live {
			v, err := ev(row)
			if err != nil || !v.IsNull() {
				return v, err
			}
		}
		return types.NullValue, nil
	}, typ: e.T, column: -1}, nil
}

func (c *compiler) cast(e *planner.Cast) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return node{}, err
	}
	caster, err := funcs.CastFunc(x.typ, e.T, c.loc)
	if err != nil {
		return node{}, wrap(e, err)
	}
	try := e.Try
	conv := func(v types.Value) (types.Value, error) {
		r, err := caster(v)
		if err != nil {
			if try {
				return types.NullValue, nil
			}
			return r, wrap(e, err)
		}
		return r, nil
	}
	if x.isConst {
		if v, err := conv(x.val); err == nil {
			return constNode(v, e.T), nil
		}
	}
	ev := x.eval
	return node{eval: func(row types.Row) (types.Value, error) {
		v, err := ev(row)
		if err != nil || v.IsNull() {
			return v, err
		}
		return conv(v)
	}, typ: e.T, column: -1, fits: true}, nil
}

func (c *compiler) caseExpr(e *planner.Case) (node, error) {
	type branch struct {
		cond   func(types.Row) (bool, error)
		result Evaluator
	}
	var branches []branch
	var elseNode *node
	for _, w := range e.Whens {
		cond, err := c.compile(w.Cond)
		if err != nil {
			return node{}, err
		}
		res, err := c.compile(w.Result)
		if err != nil {
			return node{}, err
		}
		if res, err = c.coerceTo(res, e.T, e); err != nil {
			return node{}, err
		}
		if cond.isConst {
			if cond.val.IsNull() || !cond.val.Bool() {
				continue // never taken
			}
			elseNode = &res // always taken: later branches are unreachable
			break
		}
		branches = append(branches, branch{cond: truth(cond), result: res.eval})
	}
	if elseNode == nil {
		en := constNode(types.NullValue, e.T)
		if e.Else != nil {
			n, err := c.compile(e.Else)
			if err != nil {
				return node{}, err
			}
			if en, err = c.coerceTo(n, e.T, e); err != nil {
				return node{}, err
			}
		}
		elseNode = &en
	}
	if len(branches) == 0 {
		return *elseNode, nil
	}
	els := elseNode.eval
	return node{eval: func(row types.Row) (types.Value, error) {
		for _, b := range branches {
			ok, err := b.cond(row)
			if err != nil {
				return types.NullValue, err
			}
			if ok {
				return b.result(row)
			}
		}
		return els(row)
	}, typ: e.T, column: -1}, nil
}

func (c *compiler) in(e *planner.In) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return node{}, err
	}
	items, allConst, err := c.args(e.List)
	if err != nil {
		return node{}, err
	}
	// The comparison type: the literals convert to it once, so that 1 IN (1.0) and
	// ts IN ('2024-01-01 00:00:00') compare as values of one type.
	cmpType := x.typ
	for _, it := range items {
		if t, ok := funcs.ComparisonType(cmpType, it.typ); ok {
			cmpType = t
		} else {
			return node{}, &ExprError{Expr: e.String(), Err: fmt.Errorf("%w: cannot compare %s and %s",
				funcs.ErrArgumentType, x.typ.Nullable(), it.typ.Nullable())}
		}
	}
	not := e.Not
	answer := func(found, unknown bool) types.Value {
		switch {
		case found:
			return types.BoolValue(!not)
		case unknown:
			return types.NullValue
		}
		return types.BoolValue(not)
	}
	xev, loc := x.eval, c.loc
	if allConst {
		if set, hasNull, ok := c.constSet(items, cmpType); ok {
			key := keyFunc(cmpType)
			xNorm := x
			// Integers hash by their value whatever their width, strings by their text: only
			// other kinds (a DATE against TIMESTAMP items) convert per row.
			sameFamily := x.typ.IsInteger() && cmpType.IsInteger() || x.typ.IsString() && cmpType.IsString()
			if !sameFamily {
				if xNorm, err = c.coerceTo(x, cmpType, e); err != nil {
					return node{}, err
				}
			}
			xv := xNorm.eval
			return node{eval: func(row types.Row) (types.Value, error) {
				v, err := xv(row)
				if err != nil || v.IsNull() {
					return types.NullValue, err
				}
				_, found := set[key(v)]
				return answer(found, hasNull), nil
			}, typ: types.TypeBoolean, column: -1}, nil
		}
	}
	evals := make([]Evaluator, len(items))
	for i, it := range items {
		evals[i] = it.eval
	}
	return node{eval: func(row types.Row) (types.Value, error) {
		v, err := xev(row)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		unknown := false
		for _, ev := range evals {
			item, err := ev(row)
			if err != nil {
				return item, err
			}
			if item.IsNull() {
				unknown = true
				continue
			}
			c, ordered, err := funcs.Compare(v, item, loc)
			if err != nil {
				return types.NullValue, wrap(e, err)
			}
			if ordered && c == 0 {
				return answer(true, false), nil
			}
		}
		return answer(false, unknown), nil
	}, typ: types.TypeBoolean, column: -1}, nil
}

// setKey is a hashable form of a value of one comparison type.
type setKey struct {
	n int64
	s string
}

// keyFunc returns the hash key of values of type t, for the kinds an IN set supports:
// integers, strings, booleans and the date/time kinds (compared by their integer).
func keyFunc(t types.Type) func(types.Value) setKey {
	if t.IsString() {
		return func(v types.Value) setKey { return setKey{s: v.Str()} }
	}
	return func(v types.Value) setKey { return setKey{n: v.Int()} }
}

func hashable(t types.Type) bool {
	switch t.Kind {
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Boolean, types.Char, types.Varchar,
		types.Date, types.Time, types.Timestamp, types.TimestampLTZ:
		return true
	}
	return false
}

// constSet converts constant IN items to the comparison type and hashes them. ok is
// false when the type is not hashable or an item does not convert exactly.
func (c *compiler) constSet(items []node, cmpType types.Type) (map[setKey]struct{}, bool, bool) {
	if !hashable(cmpType) {
		return nil, false, false
	}
	key := keyFunc(cmpType)
	set := make(map[setKey]struct{}, len(items))
	hasNull := false
	for _, it := range items {
		if it.val.IsNull() {
			hasNull = true
			continue
		}
		v, err := funcs.Coerce(it.val, cmpType, c.loc)
		if err != nil || v.IsNull() {
			return nil, false, false
		}
		set[key(v)] = struct{}{}
	}
	return set, hasNull, true
}
