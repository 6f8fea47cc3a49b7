package funcs

import (
	"math"
	"math/big"

	"github.com/pipesql/pipesql/types"
)

var pArith = kinds("a number, a date/time or an interval",
	types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Float, types.Double, types.Decimal,
	types.Date, types.Time, types.Timestamp, types.TimestampLTZ, types.IntervalDayTime, types.IntervalYearMonth)

var pNumInterval = kinds("a number or an interval",
	types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Float, types.Double, types.Decimal,
	types.IntervalDayTime, types.IntervalYearMonth)

func isInterval(k types.Kind) bool { return k == types.IntervalDayTime || k == types.IntervalYearMonth }
func isDateTime(k types.Kind) bool { return k >= types.Date && k <= types.TimestampLTZ }

// arithType is the result type of a op b (op one of + - * / %), as Flink derives it:
// the wider integer, FLOAT/DOUBLE when approximate, DECIMAL by SQL Server's precision
// rules, a date/time moved by an interval, or an interval scaled by a number.
func arithType(op string, a, b types.Type) (types.Type, error) {
	if a.Kind == types.Null {
		a = b
	}
	if b.Kind == types.Null {
		b = a
	}
	if a.Kind == types.Null {
		return types.TypeInt, nil
	}
	a, b = a.Nullable().WithoutTimeAttr(), b.Nullable().WithoutTimeAttr()
	ak, bk := a.Kind, b.Kind
	switch {
	case isNumKind(ak) && isNumKind(bk):
		return numericResult(op, a, b), nil
	case (op == "+" || op == "-") && isDateTime(ak) && isInterval(bk):
		if ak == types.Time && bk == types.IntervalYearMonth {
			break
		}
		return a, nil
	case op == "+" && isInterval(ak) && isDateTime(bk):
		if bk == types.Time && ak == types.IntervalYearMonth {
			break
		}
		return b, nil
	case (op == "+" || op == "-") && isInterval(ak) && ak == bk:
		return a, nil
	case (op == "*" || op == "/") && isInterval(ak) && isNumKind(bk):
		return a, nil
	case op == "*" && isNumKind(ak) && isInterval(bk):
		return b, nil
	}
	return types.Type{}, mismatch("cannot be applied to %s", typeList([]types.Type{a, b}))
}

func numericResult(op string, a, b types.Type) types.Type {
	switch {
	case a.Kind == types.Double || b.Kind == types.Double:
		return types.TypeDouble
	case a.Kind == types.Float || b.Kind == types.Float:
		if a.Kind == types.Decimal || b.Kind == types.Decimal {
			return types.TypeDouble
		}
		return types.Type{Kind: types.Float}
	case a.Kind == types.Decimal || b.Kind == types.Decimal:
		da, db := asDecimal(a), asDecimal(b)
		p1, s1, p2, s2 := da.Prec, da.Scale, db.Prec, db.Scale
		switch op {
		case "*":
			return adjustDecimal(p1+p2+1, s1+s2)
		case "/":
			s := max(6, s1+p2+1)
			return adjustDecimal(p1-s1+s2+s, s)
		case "%":
			s := max(s1, s2)
			return adjustDecimal(min(p1-s1, p2-s2)+s, s)
		}
		s := max(s1, s2)
		return adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
	case op == "%":
		return types.Type{Kind: b.Kind} // |a % b| < |b|: Calcite types MOD by its divisor
	}
	return types.Type{Kind: widerInt(a.Kind, b.Kind)}
}

func arithRet(op string) func([]types.Type) (types.Type, error) {
	return func(args []types.Type) (types.Type, error) { return arithType(op, args[0], args[1]) }
}

// arith computes a op b on non-NULL values by their kinds.
func arith(ctx *Context, op byte, a, b types.Value) (types.Value, error) {
	ak, bk := a.Kind(), b.Kind()
	switch {
	case isIntKind(ak) && isIntKind(bk):
		k := widerInt(ak, bk)
		if op == '%' {
			k = bk
		}
		x, y := a.Int(), b.Int()
		var r int64
		switch op {
		case '+':
			r = x + y
		case '-':
			r = x - y
		case '*':
			r = x * y
		case '/':
			if y == 0 {
				return types.NullValue, ErrDivisionByZero
			}
			r = x / y
		case '%':
			if y == 0 {
				return types.NullValue, ErrDivisionByZero
			}
			r = x % y
		}
		return types.IntValue(k, wrapInt(k, r)), nil
	case isNumKind(ak) && isNumKind(bk):
		if ak == types.Float || ak == types.Double || bk == types.Float || bk == types.Double {
			return floatArith(op, a, b), nil
		}
		if v, ok := scaledArith(op, a, b); ok {
			return v, nil
		}
		return decimalArith(op, a.Rat(), b.Rat())
	}
	return temporalArith(ctx, op, a, b)
}

func floatArith(op byte, a, b types.Value) types.Value {
	isFloat := (a.Kind() == types.Float || b.Kind() == types.Float) &&
		a.Kind() != types.Double && b.Kind() != types.Double && a.Kind() != types.Decimal && b.Kind() != types.Decimal
	if isFloat {
		x, y := float32(a.Float()), float32(b.Float())
		var r float32
		switch op {
		case '+':
			r = x + y
		case '-':
			r = x - y
		case '*':
			r = x * y
		case '/':
			r = x / y
		case '%':
			r = float32(math.Mod(float64(x), float64(y)))
		}
		return types.FloatValue(float64(r))
	}
	x, y := a.Float(), b.Float()
	var r float64
	switch op {
	case '+':
		r = x + y
	case '-':
		r = x - y
	case '*':
		r = x * y
	case '/':
		r = x / y
	case '%':
		r = math.Mod(x, y)
	}
	return types.DoubleValue(r)
}

func decimalArith(op byte, x, y *big.Rat) (types.Value, error) {
	r := new(big.Rat)
	switch op {
	case '+':
		r.Add(x, y)
	case '-':
		r.Sub(x, y)
	case '*':
		r.Mul(x, y)
	case '/':
		if y.Sign() == 0 {
			return types.NullValue, ErrDivisionByZero
		}
		r.Quo(x, y)
	case '%':
		if y.Sign() == 0 {
			return types.NullValue, ErrDivisionByZero
		}
		// x - y * trunc(x / y): the sign follows x, as Java's BigDecimal.remainder.
		q := new(big.Rat).Quo(x, y)
		t := new(big.Int).Quo(q.Num(), q.Denom())
		r.Sub(x, new(big.Rat).Mul(y, new(big.Rat).SetInt(t)))
	}
	return types.DecimalValue(r), nil
}

func temporalArith(ctx *Context, op byte, a, b types.Value) (types.Value, error) {
	ak, bk := a.Kind(), b.Kind()
	if op == '+' && isInterval(ak) && isDateTime(bk) {
		a, b, ak, bk = b, a, bk, ak
	}
	switch {
	case isDateTime(ak) && isInterval(bk) && (op == '+' || op == '-'):
		n := b.Int()
		if op == '-' {
			n = -n
		}
		return shiftTime(ctx, a, bk, n), nil
	case isInterval(ak) && ak == bk && (op == '+' || op == '-'):
		if op == '-' {
			return intervalOf(ak, a.Int()-b.Int()), nil
		}
		return intervalOf(ak, a.Int()+b.Int()), nil
	case isInterval(ak) && isNumKind(bk) && (op == '*' || op == '/'):
		return scaleInterval(op, a, b)
	case isNumKind(ak) && isInterval(bk) && op == '*':
		return scaleInterval(op, b, a)
	}
	return types.NullValue, invalidArg("cannot apply %c to %s and %s", op, ak, bk)
}

func intervalOf(k types.Kind, n int64) types.Value {
	if k == types.IntervalYearMonth {
		return types.IntervalMonthsValue(n)
	}
	return types.IntervalValue(n)
}

// shiftTime moves a date/time by n microseconds (day-time interval) or n months.
func shiftTime(ctx *Context, t types.Value, unit types.Kind, n int64) types.Value {
	if unit == types.IntervalYearMonth {
		switch t.Kind() {
		case types.Date:
			return types.DateValue(addMonths(t.Int(), n))
		case types.Timestamp:
			return types.TimestampValue(addMonthsWall(t.Int(), n))
		case types.TimestampLTZ:
			loc := ctx.loc()
			return types.TimestampLTZValue(wallToInstant(addMonthsWall(instantToWall(t.Int(), loc), n), loc))
		}
		return t
	}
	switch t.Kind() {
	case types.Date:
		return types.DateValue(floorDiv(t.Int()*microsPerDay+n, microsPerDay))
	case types.Time:
		return types.TimeValue(floorMod(t.Int()+n, microsPerDay))
	case types.Timestamp:
		return types.TimestampValue(t.Int() + n)
	}
	return types.TimestampLTZValue(t.Int() + n)
}

func scaleInterval(op byte, iv, num types.Value) (types.Value, error) {
	n := iv.Int()
	if isIntKind(num.Kind()) {
		k := num.Int()
		if op == '/' {
			if k == 0 {
				return types.NullValue, ErrDivisionByZero
			}
			return intervalOf(iv.Kind(), n/k), nil
		}
		return intervalOf(iv.Kind(), n*k), nil
	}
	f := num.Float()
	if op == '/' {
		if f == 0 {
			return types.NullValue, ErrDivisionByZero
		}
		return intervalOf(iv.Kind(), int64(float64(n)/f)), nil
	}
	return intervalOf(iv.Kind(), int64(float64(n)*f)), nil
}

func negate(v types.Value) types.Value {
	switch k := v.Kind(); {
	case isIntKind(k):
		return types.IntValue(k, wrapInt(k, -v.Int()))
	case k == types.Float:
		return types.FloatValue(-v.Float())
	case k == types.Double:
		return types.DoubleValue(-v.Float())
	case k == types.Decimal:
		return types.DecimalValue(new(big.Rat).Neg(v.Rat()))
	case isInterval(k):
		return intervalOf(k, -v.Int())
	}
	return v
}

func init() {
	for _, op := range []struct{ sym, doc string }{
		{"+", "addition; also a date/time plus an interval"},
		{"-", "subtraction; also a date/time minus an interval"},
		{"*", "multiplication; also an interval times a number"},
		{"/", "division; integers divide to an integer, a zero divisor is an error"},
		{"%", "remainder, negative only when the dividend is"},
	} {
		c := op.sym[0]
		def(op.sym, 2, 2, sig{params: []param{pArith}, ret: arithRet(op.sym)},
			"a "+op.sym+" b", op.doc, Func{operator: true, prepare: arithPrepare(c)})
	}
	def("MOD", 2, 2, sig{params: []param{pNumeric}, ret: arithRet("%")},
		"MOD(numeric1, numeric2)", "remainder of numeric1 divided by numeric2, negative only when numeric1 is",
		Func{prepare: arithPrepare('%')})
	def("NEG", 1, 1, sig{params: []param{pNumInterval}, ret: retArg(0)},
		"-numeric", "negation", Func{operator: true, prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) { return negate(a), nil }}, nil
		}})
}

// arithPrepare picks the integer or double fast path when the types are known.
func arithPrepare(op byte) func(ctx *Context, site Site) (Kernel, error) {
	return func(ctx *Context, site Site) (Kernel, error) {
		a, b := site.arg(0).Kind, site.arg(1).Kind
		if a == types.BigInt && b == types.BigInt && op != '/' && op != '%' {
			return Kernel{Call2: func(x, y types.Value) (types.Value, error) {
				switch op {
				case '+':
					return types.BigIntValue(x.Int() + y.Int()), nil
				case '-':
					return types.BigIntValue(x.Int() - y.Int()), nil
				}
				return types.BigIntValue(x.Int() * y.Int()), nil
			}}, nil
		}
		if a == types.Double && b == types.Double {
			return Kernel{Call2: func(x, y types.Value) (types.Value, error) { return floatArith(op, x, y), nil }}, nil
		}
		return Kernel{Call2: func(x, y types.Value) (types.Value, error) { return arith(ctx, op, x, y) }}, nil
	}
}
