package funcs

import (
	"bytes"
	"math"
	"strings"
	"time"

	"github.com/pipesql/pipesql/types"
)

// Compare orders two non-NULL values as SQL compares them: numbers across kinds, a DATE
// against a TIMESTAMP at midnight, a TIMESTAMP against a TIMESTAMP_LTZ read in loc, a
// string against a number or date/time after converting the string as CAST would.
// ordered is false when a NaN is involved: every comparison but <> is then FALSE, as in
// Java. err reports values that cannot be compared (a string that is not a date).
func Compare(a, b types.Value, loc *time.Location) (c int, ordered bool, err error) {
	ak, bk := a.Kind(), b.Kind()
	switch {
	case isIntKind(ak) && isIntKind(bk), ak == bk && ak >= types.Date && ak <= types.IntervalYearMonth,
		ak == types.Boolean && bk == types.Boolean:
		return cmp64(a.Int(), b.Int()), true, nil
	case isNumKind(ak) && isNumKind(bk):
		if ak == types.Float || ak == types.Double || bk == types.Float || bk == types.Double {
			x, y := a.Float(), b.Float()
			if math.IsNaN(x) || math.IsNaN(y) {
				return 0, false, nil
			}
			switch {
			case x < y:
				return -1, true, nil
			case x > y:
				return 1, true, nil
			}
			return 0, true, nil
		}
		return a.Rat().Cmp(b.Rat()), true, nil
	case isStrKind(ak) && isStrKind(bk):
		return strings.Compare(a.Str(), b.Str()), true, nil
	case ak == types.Bytes && bk == types.Bytes:
		return bytes.Compare([]byte(a.Str()), []byte(b.Str())), true, nil
	case isDateTime(ak) && isDateTime(bk) && ak != types.Time && bk != types.Time:
		x, y := instantOf(a, bk, loc), instantOf(b, ak, loc)
		return cmp64(x, y), true, nil
	case isStrKind(ak) && !isStrKind(bk):
		conv, err := CastValue(a, types.TypeString, valueType(b), loc)
		if err != nil {
			return 0, false, err
		}
		return Compare(conv, b, loc)
	case isStrKind(bk) && !isStrKind(ak):
		c, ordered, err := Compare(b, a, loc)
		return -c, ordered, err
	case ak == types.Array && bk == types.Array, ak == types.Struct && bk == types.Struct:
		ae, be := a.Elems(), b.Elems()
		for i := 0; i < len(ae) && i < len(be); i++ {
			if ae[i].IsNull() || be[i].IsNull() {
				if c := types.Compare(ae[i], be[i]); c != 0 {
					return c, true, nil
				}
				continue
			}
			if c, ordered, err := Compare(ae[i], be[i], loc); err != nil || !ordered || c != 0 {
				return c, ordered, err
			}
		}
		return cmp64(int64(len(ae)), int64(len(be))), true, nil
	case ak == types.Map && bk == types.Map:
		return strings.Compare(a.String(), b.String()), true, nil
	}
	return 0, false, invalidArg("cannot compare %s and %s", ak, bk)
}

// instantOf puts DATE, TIMESTAMP and TIMESTAMP_LTZ values on one axis for comparing with
// a value of kind other: wall-clock microseconds, or instants when either side is LTZ.
func instantOf(v types.Value, other types.Kind, loc *time.Location) int64 {
	n := v.Int()
	if v.Kind() == types.Date {
		n *= microsPerDay
	}
	if other == types.TimestampLTZ && v.Kind() != types.TimestampLTZ {
		return wallToInstant(n, loc)
	}
	return n
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareOps are the comparison operators and what each says about Compare's result.
var compareOps = map[string]func(c int) bool{
	"=":  func(c int) bool { return c == 0 },
	"<>": func(c int) bool { return c != 0 },
	"<":  func(c int) bool { return c < 0 },
	"<=": func(c int) bool { return c <= 0 },
	">":  func(c int) bool { return c > 0 },
	">=": func(c int) bool { return c >= 0 },
}

func compareRet(op string) func([]types.Type) (types.Type, error) {
	return func(args []types.Type) (types.Type, error) {
		a, b := args[0], args[1]
		if _, ok := ComparisonType(a, b); !ok {
			return types.Type{}, mismatch("cannot compare %s", typeList(args))
		}
		if op != "=" && op != "<>" && op != "IS DISTINCT FROM" && op != "IS NOT DISTINCT FROM" {
			switch a.Kind {
			case types.Map, types.Array, types.Struct:
				return types.Type{}, mismatch("cannot order %s", typeList(args))
			}
		}
		return types.TypeBoolean, nil
	}
}

// comparator returns the comparison of two non-NULL values for the given operand types,
// specialized for the common kinds.
func comparator(ctx *Context, test func(int) bool, ne bool, at, bt types.Type) func(a, b types.Value) (types.Value, error) {
	switch {
	case isIntKind(at.Kind) && isIntKind(bt.Kind):
		return func(a, b types.Value) (types.Value, error) {
			return types.BoolValue(test(cmp64(a.Int(), b.Int()))), nil
		}
	case isStrKind(at.Kind) && isStrKind(bt.Kind):
		return func(a, b types.Value) (types.Value, error) {
			return types.BoolValue(test(strings.Compare(a.Str(), b.Str()))), nil
		}
	}
	loc := ctx.loc()
	return func(a, b types.Value) (types.Value, error) {
		c, ordered, err := Compare(a, b, loc)
		if err != nil {
			return types.NullValue, err
		}
		if !ordered {
			return types.BoolValue(ne), nil
		}
		return types.BoolValue(test(c)), nil
	}
}

// Truth values of three-valued logic: a BOOLEAN Value or NULL (UNKNOWN).
var (
	trueValue  = types.BoolValue(true)
	falseValue = types.BoolValue(false)
)

// And is three-valued AND: FALSE wins over UNKNOWN, UNKNOWN over TRUE.
func And(a, b types.Value) types.Value {
	switch {
	case !a.IsNull() && !a.Bool(), !b.IsNull() && !b.Bool():
		return falseValue
	case a.IsNull() || b.IsNull():
		return types.NullValue
	}
	return trueValue
}

// Or is three-valued OR: TRUE wins over UNKNOWN, UNKNOWN over FALSE.
func Or(a, b types.Value) types.Value {
	switch {
	case !a.IsNull() && a.Bool(), !b.IsNull() && b.Bool():
		return trueValue
	case a.IsNull() || b.IsNull():
		return types.NullValue
	}
	return falseValue
}

// In is x IN (list) with SQL's NULL rules: TRUE when x equals an item, else UNKNOWN
// when x or an item is NULL, else FALSE. NOT IN is NOT of this.
func In(ctx *Context, x types.Value, list []types.Value) (types.Value, error) {
	if x.IsNull() {
		return types.NullValue, nil
	}
	sawNull := false
	loc := ctx.loc()
	for _, item := range list {
		if item.IsNull() {
			sawNull = true
			continue
		}
		c, ordered, err := Compare(x, item, loc)
		if err != nil {
			return types.NullValue, err
		}
		if ordered && c == 0 {
			return trueValue, nil
		}
	}
	if sawNull {
		return types.NullValue, nil
	}
	return falseValue, nil
}

// compareTV compares for BETWEEN: UNKNOWN when either side is NULL.
func compareTV(loc *time.Location, a, b types.Value, test func(int) bool) (types.Value, error) {
	if a.IsNull() || b.IsNull() {
		return types.NullValue, nil
	}
	c, ordered, err := Compare(a, b, loc)
	if err != nil {
		return types.NullValue, err
	}
	return types.BoolValue(ordered && test(c)), nil
}

func init() {
	for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
		test := compareOps[op]
		ne := op == "<>"
		def(op, 2, 2, sig{ret: compareRet(op)}, "a "+op+" b",
			"comparison; UNKNOWN when either side is NULL",
			Func{operator: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
				return Kernel{Call2: comparator(ctx, test, ne, site.arg(0), site.arg(1))}, nil
			}})
	}
	for _, op := range []string{"BETWEEN", "NOT BETWEEN"} {
		not := op == "NOT BETWEEN"
		def(op, 3, 3, sig{ret: func(args []types.Type) (types.Type, error) {
			if _, ok := ComparisonType(args[0], args[1]); !ok {
				return types.Type{}, mismatch("cannot compare %s", typeList(args[:2]))
			}
			if _, ok := ComparisonType(args[0], args[2]); !ok {
				return types.Type{}, mismatch("cannot compare %s", typeList([]types.Type{args[0], args[2]}))
			}
			return types.TypeBoolean, nil
		}}, "x "+op+" low AND high", "low <= x AND x <= high, with three-valued logic",
			Func{operator: true, nullSafe: true, Impl: func(ctx *Context, a []types.Value) (types.Value, error) {
				loc := ctx.loc()
				if not {
					lo, err := compareTV(loc, a[0], a[1], func(c int) bool { return c < 0 })
					if err != nil {
						return lo, err
					}
					hi, err := compareTV(loc, a[0], a[2], func(c int) bool { return c > 0 })
					return Or(lo, hi), err
				}
				lo, err := compareTV(loc, a[0], a[1], func(c int) bool { return c >= 0 })
				if err != nil {
					return lo, err
				}
				hi, err := compareTV(loc, a[0], a[2], func(c int) bool { return c <= 0 })
				return And(lo, hi), err
			}})
	}
	for _, op := range []string{"IS DISTINCT FROM", "IS NOT DISTINCT FROM"} {
		distinct := op == "IS DISTINCT FROM"
		def(op, 2, 2, sig{ret: compareRet(op), ownNull: true}, "a "+op+" b",
			"comparison that treats NULL as a value equal to NULL",
			Func{operator: true, nullSafe: true, Impl: func(ctx *Context, a []types.Value) (types.Value, error) {
				if a[0].IsNull() || a[1].IsNull() {
					return types.BoolValue((a[0].IsNull() != a[1].IsNull()) == distinct), nil
				}
				c, ordered, err := Compare(a[0], a[1], ctx.loc())
				if err != nil {
					return types.NullValue, err
				}
				return types.BoolValue((ordered && c == 0) != distinct), nil
			}})
	}
	notNullBool := types.TypeBoolean.WithNotNull(true)
	def("IS NULL", 1, 1, sig{ret: retType(notNullBool), ownNull: true}, "x IS NULL", "TRUE if x is NULL",
		Func{operator: true, nullSafe: true, prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) { return types.BoolValue(a.IsNull()), nil }}, nil
		}})
	def("IS NOT NULL", 1, 1, sig{ret: retType(notNullBool), ownNull: true}, "x IS NOT NULL", "TRUE if x is not NULL",
		Func{operator: true, nullSafe: true, prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) { return types.BoolValue(!a.IsNull()), nil }}, nil
		}})
	for _, p := range []struct {
		name string
		test func(v types.Value) bool
	}{
		{"IS TRUE", func(v types.Value) bool { return !v.IsNull() && v.Bool() }},
		{"IS NOT TRUE", func(v types.Value) bool { return v.IsNull() || !v.Bool() }},
		{"IS FALSE", func(v types.Value) bool { return !v.IsNull() && !v.Bool() }},
		{"IS NOT FALSE", func(v types.Value) bool { return v.IsNull() || v.Bool() }},
		{"IS UNKNOWN", func(v types.Value) bool { return v.IsNull() }},
		{"IS NOT UNKNOWN", func(v types.Value) bool { return !v.IsNull() }},
	} {
		test := p.test
		def(p.name, 1, 1, sig{params: []param{pBool}, ret: retType(notNullBool), ownNull: true},
			"boolean "+p.name, "never UNKNOWN", Func{operator: true, nullSafe: true,
				prepare: func(*Context, Site) (Kernel, error) {
					return Kernel{Call1: func(a types.Value) (types.Value, error) { return types.BoolValue(test(a)), nil }}, nil
				}})
	}
	boolRet := func(args []types.Type) (types.Type, error) {
		return types.TypeBoolean.WithNotNull(allNotNull(args)), nil
	}
	def("AND", 2, -1, sig{params: []param{pBool}, ret: boolRet, ownNull: true}, "a AND b",
		"three-valued AND: FALSE if either is FALSE, else UNKNOWN if either is UNKNOWN",
		Func{operator: true, nullSafe: true, Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			r := trueValue
			for _, v := range a {
				r = And(r, v)
			}
			return r, nil
		}})
	def("OR", 2, -1, sig{params: []param{pBool}, ret: boolRet, ownNull: true}, "a OR b",
		"three-valued OR: TRUE if either is TRUE, else UNKNOWN if either is UNKNOWN",
		Func{operator: true, nullSafe: true, Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			r := falseValue
			for _, v := range a {
				r = Or(r, v)
			}
			return r, nil
		}})
	def("NOT", 1, 1, sig{params: []param{pBool}, ret: retType(types.TypeBoolean)}, "NOT boolean",
		"TRUE for FALSE, FALSE for TRUE, UNKNOWN for UNKNOWN",
		Func{operator: true, prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) { return types.BoolValue(!a.Bool()), nil }}, nil
		}})
	extreme := func(name, word string, want int) {
		def(name, 1, -1, sig{ret: commonRet}, name+"(value1, value2, ...)",
			"the "+word+" argument; NULL if any argument is NULL",
			Func{Impl: func(ctx *Context, a []types.Value) (types.Value, error) {
				best := a[0]
				for _, v := range a[1:] {
					c, _, err := Compare(v, best, ctx.loc())
					if err != nil {
						return types.NullValue, err
					}
					if c == want {
						best = v
					}
				}
				return best, nil
			}})
	}
	extreme("GREATEST", "greatest", 1)
	extreme("LEAST", "least", -1)
}

// commonRet is the common type of all arguments (COALESCE, GREATEST, CASE-like functions).
func commonRet(args []types.Type) (types.Type, error) {
	t := types.TypeNull
	for i, a := range args {
		c, ok := CommonType(t, a)
		if !ok {
			return types.Type{}, mismatch("arguments have no common type: %s", typeList(args[:i+1]))
		}
		t = c
	}
	return t, nil
}
