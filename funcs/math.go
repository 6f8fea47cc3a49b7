package funcs

import (
	"math"
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"sync"

	"github.com/pipesql/pipesql/types"
)

var doubleRet = retType(types.TypeDouble)

// roundValue rounds (HALF_UP) or truncates a number to d fractional digits, keeping its
// kind. Doubles go through their shortest decimal form, as Java's BigDecimal.valueOf
// does, so ROUND(2.675, 2) is 2.68.
func roundValue(v types.Value, d int64, trunc bool) types.Value {
	d = max(min(d, 400), -400)
	round := func(r *big.Rat) *big.Rat {
		if trunc {
			return truncRat(r, int(d))
		}
		return roundRat(r, int(d))
	}
	switch k := v.Kind(); {
	case isIntKind(k):
		if d >= 0 {
			return v
		}
		return types.IntValue(k, wrapInt(k, ratToInt64(round(new(big.Rat).SetInt64(v.Int())))))
	case k == types.Float || k == types.Double:
		bits := 64
		if k == types.Float {
			bits = 32
		}
		r, ok := ratFromFloat(v.Float(), bits)
		if !ok {
			return v
		}
		f, _ := round(r).Float64()
		if k == types.Float {
			return types.FloatValue(f32(f))
		}
		return types.DoubleValue(f)
	case k == types.Decimal:
		return types.DecimalValue(round(v.Rat()))
	}
	return v
}

// truncRat drops the digits of r beyond scale, toward zero.
func truncRat(r *big.Rat, scale int) *big.Rat {
	num := new(big.Int).Set(r.Num())
	den := new(big.Int).Set(r.Denom())
	if scale >= 0 {
		num.Mul(num, pow10(scale))
		q := num.Quo(num, den)
		return new(big.Rat).SetFrac(q, pow10(scale))
	}
	den.Mul(den, pow10(-scale))
	q := num.Quo(num, den)
	return new(big.Rat).SetInt(q.Mul(q, pow10(-scale)))
}

// floorCeilNumber rounds a number down or up to an integral value of the same kind.
func floorCeilNumber(v types.Value, ceil bool) types.Value {
	switch k := v.Kind(); k {
	case types.Float, types.Double:
		f := math.Floor(v.Float())
		if ceil {
			f = math.Ceil(v.Float())
		}
		if k == types.Float {
			return types.FloatValue(f)
		}
		return types.DoubleValue(f)
	case types.Decimal:
		r := v.Rat()
		q := new(big.Int)
		m := new(big.Int)
		q.DivMod(r.Num(), r.Denom(), m) // Euclidean: q is the floor for a positive denominator
		if ceil && m.Sign() != 0 {
			q.Add(q, bigOne)
		}
		return types.DecimalValue(new(big.Rat).SetInt(q))
	}
	return v
}

func numberRet(args []types.Type) (types.Type, error) {
	t := args[0]
	if t.Kind == types.Null {
		return types.TypeDouble, nil
	}
	return t, nil
}

// roundRet is the type of ROUND/TRUNCATE: the argument's type, but a DECIMAL(p, s)
// rounded to a constant r < s digits (0 without a second argument) is Flink's
// DECIMAL(1 + p - s + r, r), DECIMAL(1 + p - s, 0) for a negative r: one more digit
// before the point, because rounding up can carry. With r not a constant, the scale
// stays and the digit for the carry is added.
func roundRet(args []types.Type, consts []*types.Value) (types.Type, error) {
	t, _ := numberRet(args)
	if t.Kind != types.Decimal {
		return t, nil
	}
	r := int64(0)
	if len(args) > 1 {
		if len(consts) < 2 || consts[1] == nil || consts[1].IsNull() {
			return decimalType(min(t.Prec+1, maxDecimalPrecision), t.Scale), nil
		}
		r = consts[1].Int()
	}
	switch {
	case r >= int64(t.Scale):
		return t, nil
	case r < 0:
		return decimalType(min(1+t.Prec-t.Scale, maxDecimalPrecision), 0), nil
	}
	return decimalType(min(1+t.Prec-t.Scale+int(r), maxDecimalPrecision), int(r)), nil
}

func floorCeilRet(args []types.Type) (types.Type, error) {
	t := args[0]
	if len(args) == 2 {
		if !pTimeAny.ok(t) {
			return types.Type{}, argError("", 1, pTimeAny.want, t)
		}
		if !pUnit.ok(args[1]) {
			return types.Type{}, argError("", 2, pUnit.want, args[1])
		}
		if t.Kind == types.Null {
			return types.TimestampType(3), nil
		}
		return t, nil
	}
	if !pNumeric.ok(t) {
		return types.Type{}, argError("", 1, "a number (or a date/time with a unit: FLOOR(ts TO DAY))", t)
	}
	if t.Kind == types.Decimal && t.Scale > 0 {
		return decimalType(max(1, min(t.Prec-t.Scale+1, maxDecimalPrecision)), 0), nil
	}
	return numberRet(args)
}

// seededRand is RAND(seed)'s generator: one sequence per call site, shared by the rows
// in their order.
type seededRand struct {
	mu  sync.Mutex
	rng *mrand.Rand
}

func (s *seededRand) float() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64()
}

func (s *seededRand) intn(n int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Int63n(n)
}

func init() {
	floatFn := func(name, doc string, f func(float64) float64) {
		def(name, 1, 1, sig{params: []param{pNumeric}, ret: doubleRet}, name+"(numeric)", doc,
			Func{prepare: func(*Context, Site) (Kernel, error) {
				return Kernel{Call1: func(a types.Value) (types.Value, error) { return types.DoubleValue(f(a.Float())), nil }}, nil
			}})
	}
	floatFn("SQRT", "square root", math.Sqrt)
	floatFn("LN", "natural logarithm", math.Log)
	floatFn("LOG10", "base 10 logarithm", math.Log10)
	floatFn("LOG2", "base 2 logarithm", func(x float64) float64 { return math.Log(x) / math.Log(2) })
	floatFn("EXP", "e raised to the power of numeric", math.Exp)
	floatFn("SIN", "sine", math.Sin)
	floatFn("COS", "cosine", math.Cos)
	floatFn("TAN", "tangent", math.Tan)
	floatFn("COT", "cotangent", func(x float64) float64 { return 1 / math.Tan(x) })
	floatFn("ASIN", "arc sine", math.Asin)
	floatFn("ACOS", "arc cosine", math.Acos)
	floatFn("ATAN", "arc tangent", math.Atan)
	floatFn("SINH", "hyperbolic sine", math.Sinh)
	floatFn("COSH", "hyperbolic cosine", math.Cosh)
	floatFn("TANH", "hyperbolic tangent", math.Tanh)
	floatFn("DEGREES", "radians converted to degrees", func(x float64) float64 { return x * 180 / math.Pi })
	floatFn("RADIANS", "degrees converted to radians", func(x float64) float64 { return x / 180 * math.Pi })
	def("ATAN2", 2, 2, sig{params: []param{pNumeric}, ret: doubleRet}, "ATAN2(y, x)", "arc tangent of the point (x, y)",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(y, x types.Value) (types.Value, error) {
				return types.DoubleValue(math.Atan2(y.Float(), x.Float())), nil
			}}, nil
		}})
	pow := def("POWER", 2, 2, sig{params: []param{pNumeric}, ret: doubleRet}, "POWER(base, exponent)",
		"base raised to the power of exponent", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(a, b types.Value) (types.Value, error) {
				return types.DoubleValue(math.Pow(a.Float(), b.Float())), nil
			}}, nil
		}})
	alias("POW", pow)
	def("LOG", 1, 2, sig{params: []param{pNumeric}, ret: doubleRet}, "LOG([base, ] numeric)",
		"natural logarithm, or the logarithm to base", Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			if len(a) == 1 {
				return types.DoubleValue(math.Log(a[0].Float())), nil
			}
			return types.DoubleValue(math.Log(a[1].Float()) / math.Log(a[0].Float())), nil
		}})
	def("ABS", 1, 1, sig{params: []param{pNumInterval}, ret: numberRet}, "ABS(numeric)", "absolute value",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				switch k := a.Kind(); {
				case isIntKind(k) || isInterval(k):
					if a.Int() < 0 {
						return negate(a), nil
					}
				case k == types.Float || k == types.Double:
					if a.Float() < 0 {
						return negate(a), nil
					}
				case k == types.Decimal:
					if a.Rat().Sign() < 0 {
						return negate(a), nil
					}
				}
				return a, nil
			}}, nil
		}})
	def("SIGN", 1, 1, sig{params: []param{pNumeric}, ret: numberRet}, "SIGN(numeric)", "-1, 0 or 1 as numeric is negative, zero or positive",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				switch k := a.Kind(); {
				case isIntKind(k):
					return types.IntValue(k, int64(cmp64(a.Int(), 0))), nil
				case k == types.Decimal:
					return types.DecimalValue(new(big.Rat).SetInt64(int64(a.Rat().Sign()))), nil
				}
				f := a.Float()
				switch {
				case f > 0:
					f = 1
				case f < 0:
					f = -1
				}
				if a.Kind() == types.Float {
					return types.FloatValue(f), nil
				}
				return types.DoubleValue(f), nil
			}}, nil
		}})
	for _, r := range []struct {
		name, doc string
		trunc     bool
	}{{"ROUND", "numeric rounded half up to d decimal places (default 0)", false},
		{"TRUNCATE", "numeric truncated to d decimal places (default 0)", true}} {
		trunc := r.trunc
		def(r.name, 1, 2, sig{params: []param{pNumeric, pInteger}, retConst: roundRet}, r.name+"(numeric[, d])", r.doc,
			Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
				d := int64(0)
				if len(a) > 1 {
					d = a[1].Int()
				}
				return roundValue(a[0], d, trunc), nil
			}})
	}
	constant := func(name, doc string, v float64) {
		def(name, 0, 0, sig{ret: retType(types.TypeDouble.WithNotNull(true)), ownNull: true}, name+"()", doc,
			Func{Impl: func(*Context, []types.Value) (types.Value, error) { return types.DoubleValue(v), nil }})
	}
	constant("PI", "the number pi", math.Pi)
	constant("E", "the number e", math.E)
	def("RAND", 0, 1, sig{params: []param{pInteger}, ret: retType(types.TypeDouble.WithNotNull(true)), ownNull: true},
		"RAND([seed])", "a pseudorandom DOUBLE in [0, 1); with a seed, the same sequence every run",
		Func{volatile: true, nullSafe: true, prepare: func(_ *Context, site Site) (Kernel, error) {
			if seed, ok := site.constant(0); ok {
				g := &seededRand{rng: mrand.New(mrand.NewSource(seed.Int()))}
				return Kernel{Call: func([]types.Value) (types.Value, error) { return types.DoubleValue(g.float()), nil }}, nil
			}
			return Kernel{Call: func([]types.Value) (types.Value, error) { return types.DoubleValue(rand.Float64()), nil }}, nil
		}})
	def("RAND_INTEGER", 1, 2, sig{params: []param{pInteger}, ret: intRet}, "RAND_INTEGER([seed, ] bound)",
		"a pseudorandom INT in [0, bound)", Func{volatile: true, prepare: func(_ *Context, site Site) (Kernel, error) {
			var g *seededRand
			if len(site.Args) == 2 {
				if seed, ok := site.constant(0); ok && !seed.IsNull() {
					g = &seededRand{rng: mrand.New(mrand.NewSource(seed.Int()))}
				}
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				bound := a[len(a)-1].Int()
				if bound <= 0 {
					return types.NullValue, invalidArg("RAND_INTEGER bound must be positive, got %d", bound)
				}
				if g != nil {
					return types.IntValue(types.Int, g.intn(bound)), nil
				}
				return types.IntValue(types.Int, rand.Int64N(bound)), nil
			}}, nil
		}})
}
