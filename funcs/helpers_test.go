package funcs

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/pipesql/pipesql/types"
)

// fixedNow is the clock of every test: 2024-03-10 01:02:03.456789 UTC.
var fixedNow = time.Date(2024, 3, 10, 1, 2, 3, 456789000, time.UTC)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

func ctxIn(loc *time.Location) *Context {
	return &Context{Location: loc, Now: func() time.Time { return fixedNow }}
}

var (
	null  = types.NullValue
	tru   = types.BoolValue(true)
	fals  = types.BoolValue(false)
	i32   = func(n int64) types.Value { return types.IntValue(types.Int, n) }
	i64   = types.BigIntValue
	f64   = types.DoubleValue
	s     = types.StringValue
	date  = func(y, m, d int) types.Value { return types.DateValue(types.DaysFromCivil(y, m, d)) }
	ym    = types.IntervalMonthsValue
	dt    = types.IntervalValue
	ratOf = func(x string) *big.Rat {
		r, ok := new(big.Rat).SetString(x)
		if !ok {
			panic(x)
		}
		return r
	}
	dec = func(x string) types.Value { return types.DecimalValue(ratOf(x)) }
)

// ts is a TIMESTAMP wall clock.
func ts(y, mo, d, h, mi, sec, micro int) types.Value {
	return types.TimestampValue(wallMicros(y, mo, d, h, mi, sec, micro))
}

// ltz is the TIMESTAMP_LTZ instant of a UTC reading.
func ltz(y, mo, d, h, mi, sec, micro int) types.Value {
	return types.TimestampLTZValue(wallMicros(y, mo, d, h, mi, sec, micro))
}

// sameValue compares kind and printed form; DECIMALs numerically.
func sameValue(a, b types.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	if a.Kind() == types.Decimal {
		return a.Rat().Cmp(b.Rat()) == 0
	}
	return a.String() == b.String()
}

func show(v types.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	return v.Kind().String() + " " + v.String()
}

// call evaluates a function through Bind, with every argument constant, and through Impl,
// and checks that both agree.
func call(t *testing.T, ctx *Context, name string, args ...types.Value) (types.Value, error) {
	t.Helper()
	f, ok := Lookup(name)
	if !ok {
		t.Fatalf("function %s not found", name)
	}
	implV, implErr := f.Impl(ctx, args)
	site := siteOf(args)
	// Bind with varying arguments, the evaluator's usual situation.
	site.Consts = make([]*types.Value, len(args))
	k, err := f.Bind(ctx, site)
	if err != nil {
		return types.NullValue, err
	}
	var v types.Value
	switch {
	case len(args) == 1 && k.Call1 != nil:
		v, err = k.Call1(args[0])
	case len(args) == 2 && k.Call2 != nil:
		v, err = k.Call2(args[0], args[1])
	default:
		v, err = k.Call(args)
	}
	if (err == nil) != (implErr == nil) || !sameValue(v, implV) && f.Deterministic {
		t.Errorf("%s%v: Bind gives %s (%v), Impl gives %s (%v)", name, args, show(v), err, show(implV), implErr)
	}
	// Bound with every argument constant (patterns and units compiled up front), the
	// result must be the same, unless a constant is rejected outright.
	if kc, cerr := f.Bind(ctx, siteOf(args)); cerr == nil && f.Deterministic {
		cv, cerr := kc.Call(args)
		if (cerr == nil) != (err == nil) || !sameValue(cv, v) {
			t.Errorf("%s%v: constant Bind gives %s (%v), varying Bind gives %s (%v)", name, args, show(cv), cerr, show(v), err)
		}
	} else if cerr != nil && !errors.Is(cerr, ErrInvalidArgument) {
		t.Errorf("%s%v: constant Bind: %v", name, args, cerr)
	}
	return v, err
}

type valueCase struct {
	name string
	args []types.Value
	want types.Value
	err  error // expected error kind (errors.Is), nil for success
}

func runCases(t *testing.T, ctx *Context, cases []valueCase) {
	t.Helper()
	for _, c := range cases {
		got, err := call(t, ctx, c.name, c.args...)
		switch {
		case c.err != nil:
			if !errors.Is(err, c.err) {
				t.Errorf("%s%v: error %v, want %v", c.name, c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("%s%v: unexpected error %v", c.name, c.args, err)
		case !sameValue(got, c.want):
			t.Errorf("%s%v = %s, want %s", c.name, c.args, show(got), show(c.want))
		}
	}
}
