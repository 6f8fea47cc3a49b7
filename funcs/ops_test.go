package funcs

import (
	"math"
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestArithmetic(t *testing.T) {
	tiny := func(n int64) types.Value { return types.IntValue(types.TinyInt, n) }
	runCases(t, ctxIn(nil), []valueCase{
		{"+", []types.Value{i32(1), i32(2)}, i32(3), nil},
		{"+", []types.Value{i32(math.MaxInt32), i32(1)}, i32(math.MinInt32), nil}, // wraps like Java
		{"+", []types.Value{tiny(127), tiny(1)}, tiny(-128), nil},
		{"*", []types.Value{i64(math.MaxInt64), i64(2)}, i64(-2), nil},
		{"*", []types.Value{i32(65536), i32(65536)}, i32(0), nil},
		{"+", []types.Value{i32(1), i64(2)}, i64(3), nil},
		{"-", []types.Value{i32(1), null}, null, nil},
		{"/", []types.Value{i32(7), i32(2)}, i32(3), nil},
		{"/", []types.Value{i32(-7), i32(2)}, i32(-3), nil},
		{"/", []types.Value{i32(math.MinInt32), i32(-1)}, i32(math.MinInt32), nil},
		{"/", []types.Value{i32(1), i32(0)}, null, ErrDivisionByZero},
		{"%", []types.Value{i32(-7), i32(3)}, i32(-1), nil},
		{"%", []types.Value{i32(7), i32(0)}, null, ErrDivisionByZero},
		{"MOD", []types.Value{i64(10), i32(3)}, i32(1), nil},
		{"/", []types.Value{f64(1), f64(0)}, f64(math.Inf(1)), nil},
		{"+", []types.Value{i32(1), f64(0.5)}, f64(1.5), nil},
		{"+", []types.Value{types.FloatValue(0.1), types.FloatValue(0.2)}, types.FloatValue(float64(float32(0.1) + float32(0.2))), nil},
		{"+", []types.Value{dec("0.1"), dec("0.2")}, dec("0.3"), nil},
		{"*", []types.Value{dec("1.5"), i32(3)}, dec("4.5"), nil},
		{"/", []types.Value{dec("1"), dec("3")}, dec("1/3"), nil},
		{"/", []types.Value{dec("1"), dec("0")}, null, ErrDivisionByZero},
		{"%", []types.Value{dec("-7.5"), dec("2")}, dec("-1.5"), nil},
		{"+", []types.Value{dec("0.5"), f64(0.25)}, f64(0.75), nil},
		{"NEG", []types.Value{i32(5)}, i32(-5), nil},
		{"NEG", []types.Value{i32(math.MinInt32)}, i32(math.MinInt32), nil},
		{"NEG", []types.Value{dec("1.25")}, dec("-1.25"), nil},
		{"NEG", []types.Value{null}, null, nil},
		// dates, times and intervals
		{"+", []types.Value{ts(2024, 1, 31, 10, 0, 0, 0), ym(1)}, ts(2024, 2, 29, 10, 0, 0, 0), nil},
		{"-", []types.Value{ts(2024, 3, 1, 0, 0, 0, 0), dt(microsPerSecond)}, ts(2024, 2, 29, 23, 59, 59, 0), nil},
		{"+", []types.Value{dt(36 * microsPerHour), ts(2024, 1, 1, 0, 0, 0, 0)}, ts(2024, 1, 2, 12, 0, 0, 0), nil},
		{"+", []types.Value{date(2024, 1, 31), ym(13)}, date(2025, 2, 28), nil},
		{"+", []types.Value{date(2024, 1, 1), dt(30 * microsPerHour)}, date(2024, 1, 2), nil},
		{"-", []types.Value{date(2024, 1, 1), dt(microsPerHour)}, date(2023, 12, 31), nil},
		{"+", []types.Value{types.TimeValue(23 * microsPerHour), dt(2 * microsPerHour)}, types.TimeValue(microsPerHour), nil},
		{"+", []types.Value{ltz(2024, 1, 1, 0, 0, 0, 0), dt(microsPerDay)}, ltz(2024, 1, 2, 0, 0, 0, 0), nil},
		{"+", []types.Value{dt(5), dt(6)}, dt(11), nil},
		{"-", []types.Value{ym(5), ym(6)}, ym(-1), nil},
		{"*", []types.Value{dt(microsPerHour), i32(3)}, dt(3 * microsPerHour), nil},
		{"*", []types.Value{f64(1.5), dt(microsPerHour)}, dt(90 * microsPerMinute), nil},
		{"/", []types.Value{dt(microsPerHour), i32(0)}, null, ErrDivisionByZero},
		{"NEG", []types.Value{ym(3)}, ym(-3), nil},
	})
}

func TestMonthArithmeticOnInstantsUsesLocalZone(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	// 2024-01-30 17:00 UTC is 2024-01-31 01:00 in Shanghai. A month later in Shanghai is
	// 2024-02-29 01:00 (the day clamped to February's end), 2024-02-28 17:00 UTC; done in
	// UTC it would be 2024-02-29 17:00 UTC instead.
	got, err := call(t, ctxIn(sh), "+", ltz(2024, 1, 30, 17, 0, 0, 0), ym(1))
	if err != nil {
		t.Fatal(err)
	}
	if want := ltz(2024, 2, 28, 17, 0, 0, 0); !sameValue(got, want) {
		t.Errorf("got %s, want %s", show(got), show(want))
	}
}

// TestThreeValuedLogic checks AND, OR and NOT against SQL's truth tables.
func TestThreeValuedLogic(t *testing.T) {
	vals := []types.Value{tru, fals, null}
	and := [3][3]types.Value{{tru, fals, null}, {fals, fals, fals}, {null, fals, null}}
	or := [3][3]types.Value{{tru, tru, tru}, {tru, fals, null}, {tru, null, null}}
	not := [3]types.Value{fals, tru, null}
	ctx := ctxIn(nil)
	for i, a := range vals {
		for j, b := range vals {
			runCases(t, ctx, []valueCase{
				{"AND", []types.Value{a, b}, and[i][j], nil},
				{"OR", []types.Value{a, b}, or[i][j], nil},
			})
			if got := And(a, b); !sameValue(got, and[i][j]) {
				t.Errorf("And(%s, %s) = %s", show(a), show(b), show(got))
			}
			if got := Or(a, b); !sameValue(got, or[i][j]) {
				t.Errorf("Or(%s, %s) = %s", show(a), show(b), show(got))
			}
		}
		runCases(t, ctx, []valueCase{{"NOT", []types.Value{a}, not[i], nil}})
	}
	is := map[string][3]types.Value{
		"IS TRUE": {tru, fals, fals}, "IS NOT TRUE": {fals, tru, tru},
		"IS FALSE": {fals, tru, fals}, "IS NOT FALSE": {tru, fals, tru},
		"IS UNKNOWN": {fals, fals, tru}, "IS NOT UNKNOWN": {tru, tru, fals},
		"IS NULL": {fals, fals, tru}, "IS NOT NULL": {tru, tru, fals},
	}
	for op, want := range is {
		for i, v := range vals {
			runCases(t, ctx, []valueCase{{op, []types.Value{v}, want[i], nil}})
		}
	}
}

func TestComparisons(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	nan := f64(math.NaN())
	runCases(t, ctxIn(sh), []valueCase{
		{"=", []types.Value{i32(1), i64(1)}, tru, nil},
		{"<", []types.Value{i32(1), f64(1.5)}, tru, nil},
		{"=", []types.Value{dec("1.50"), i32(1)}, fals, nil},
		{"=", []types.Value{dec("1.0"), f64(1)}, tru, nil},
		{">=", []types.Value{dec("2.5"), dec("2.50")}, tru, nil},
		{"<>", []types.Value{s("a"), s("b")}, tru, nil},
		{"<", []types.Value{s("B"), s("a")}, tru, nil},
		{"=", []types.Value{i32(1), null}, null, nil},
		{"<>", []types.Value{null, null}, null, nil},
		{"=", []types.Value{nan, nan}, fals, nil},
		{"<>", []types.Value{nan, f64(1)}, tru, nil},
		{"<", []types.Value{nan, f64(1)}, fals, nil},
		{"=", []types.Value{tru, tru}, tru, nil},
		{"<", []types.Value{fals, tru}, tru, nil},
		{"=", []types.Value{date(2024, 1, 1), ts(2024, 1, 1, 0, 0, 0, 0)}, tru, nil},
		{"<", []types.Value{date(2024, 1, 1), ts(2024, 1, 1, 0, 0, 0, 1)}, tru, nil},
		// Shanghai wall clock 08:00 is 00:00 UTC
		{"=", []types.Value{ts(2024, 1, 1, 8, 0, 0, 0), ltz(2024, 1, 1, 0, 0, 0, 0)}, tru, nil},
		{">", []types.Value{ts(2024, 1, 1, 12, 0, 0, 0), s("2024-01-01 11:59:59")}, tru, nil},
		{"=", []types.Value{s("42"), i32(42)}, tru, nil},
		{"=", []types.Value{date(2024, 1, 1), s("not a date")}, null, ErrCastFailed},
		{"=", []types.Value{types.ArrayValue([]types.Value{i32(1), i32(2)}), types.ArrayValue([]types.Value{i32(1), i32(2)})}, tru, nil},
		{"BETWEEN", []types.Value{i32(12), i32(10), i32(15)}, tru, nil},
		{"BETWEEN", []types.Value{i32(12), i32(15), i32(12)}, fals, nil},
		{"BETWEEN", []types.Value{i32(12), i32(10), null}, null, nil},
		{"BETWEEN", []types.Value{i32(12), null, i32(10)}, fals, nil},
		{"NOT BETWEEN", []types.Value{i32(12), i32(15), i32(12)}, tru, nil},
		{"NOT BETWEEN", []types.Value{i32(12), null, i32(15)}, null, nil},
		{"NOT BETWEEN", []types.Value{i32(12), i32(15), null}, tru, nil},
		{"IS DISTINCT FROM", []types.Value{i32(1), null}, tru, nil},
		{"IS DISTINCT FROM", []types.Value{null, null}, fals, nil},
		{"IS NOT DISTINCT FROM", []types.Value{i32(1), i64(1)}, tru, nil},
		{"GREATEST", []types.Value{i32(1), i32(7), i32(3)}, i32(7), nil},
		{"LEAST", []types.Value{s("b"), s("a")}, s("a"), nil},
		{"GREATEST", []types.Value{i32(1), null}, null, nil},
	})
}

func TestIn(t *testing.T) {
	ctx := ctxIn(nil)
	cases := []struct {
		x    types.Value
		list []types.Value
		want types.Value
	}{
		{i32(4), []types.Value{i32(1), i32(2), i32(3)}, fals},
		{i32(1), []types.Value{i32(1), i32(2), null}, tru},
		{i32(4), []types.Value{i32(1), i32(2), null}, null},
		{null, []types.Value{i32(1)}, null},
		{i64(2), []types.Value{dec("2.0")}, tru},
		{s("b"), []types.Value{s("a"), s("b")}, tru},
	}
	for _, c := range cases {
		got, err := In(ctx, c.x, c.list)
		if err != nil || !sameValue(got, c.want) {
			t.Errorf("%s IN %v = %s, %v; want %s", show(c.x), c.list, show(got), err, show(c.want))
		}
	}
}

func TestConditionals(t *testing.T) {
	runCases(t, ctxIn(nil), []valueCase{
		{"IF", []types.Value{tru, i32(1), i32(2)}, i32(1), nil},
		{"IF", []types.Value{fals, i32(1), i32(2)}, i32(2), nil},
		{"IF", []types.Value{null, i32(1), i32(2)}, i32(2), nil},
		{"COALESCE", []types.Value{null, null, s("x"), s("y")}, s("x"), nil},
		{"COALESCE", []types.Value{null, null}, null, nil},
		{"IFNULL", []types.Value{null, i32(5)}, i32(5), nil},
		{"IFNULL", []types.Value{i32(1), i32(5)}, i32(1), nil},
		{"NULLIF", []types.Value{i32(5), i32(5)}, null, nil},
		{"NULLIF", []types.Value{i32(5), i32(0)}, i32(5), nil},
		{"NULLIF", []types.Value{null, i32(0)}, null, nil},
		{"NULLIF", []types.Value{i32(5), null}, i32(5), nil},
	})
}

func TestMath(t *testing.T) {
	runCases(t, ctxIn(nil), []valueCase{
		{"ABS", []types.Value{i32(-3)}, i32(3), nil},
		{"ABS", []types.Value{i32(math.MinInt32)}, i32(math.MinInt32), nil},
		{"ABS", []types.Value{dec("-1.5")}, dec("1.5"), nil},
		{"ABS", []types.Value{f64(-0.5)}, f64(0.5), nil},
		{"ROUND", []types.Value{f64(2.675), i32(2)}, f64(2.68), nil},
		{"ROUND", []types.Value{f64(-2.5)}, f64(-3), nil},
		{"ROUND", []types.Value{dec("1.2345"), i32(3)}, dec("1.235"), nil},
		{"ROUND", []types.Value{i32(1250), i32(-2)}, i32(1300), nil},
		{"ROUND", []types.Value{i32(7), i32(2)}, i32(7), nil},
		{"TRUNCATE", []types.Value{f64(42.324), i32(2)}, f64(42.32), nil},
		{"TRUNCATE", []types.Value{dec("-1.99")}, dec("-1"), nil},
		{"FLOOR", []types.Value{f64(-1.5)}, f64(-2), nil},
		{"CEIL", []types.Value{f64(-1.5)}, f64(-1), nil},
		{"FLOOR", []types.Value{dec("-1.5")}, dec("-2"), nil},
		{"CEILING", []types.Value{dec("1.01")}, dec("2"), nil},
		{"FLOOR", []types.Value{i32(5)}, i32(5), nil},
		{"POWER", []types.Value{i32(2), i32(10)}, f64(1024), nil},
		{"SQRT", []types.Value{f64(16)}, f64(4), nil},
		{"LN", []types.Value{f64(1)}, f64(0), nil},
		{"LOG10", []types.Value{i32(1000)}, f64(3), nil},
		{"LOG", []types.Value{i32(2), i32(8)}, f64(3), nil},
		{"EXP", []types.Value{i32(0)}, f64(1), nil},
		{"SIGN", []types.Value{i32(-9)}, i32(-1), nil},
		{"SIGN", []types.Value{f64(0.1)}, f64(1), nil},
		{"SQRT", []types.Value{null}, null, nil},
	})
	got, err := call(t, ctxIn(nil), "LN", f64(-1))
	if err != nil || !math.IsNaN(got.Float()) {
		t.Errorf("LN(-1) = %s, %v; want NaN as Java", show(got), err)
	}
}
