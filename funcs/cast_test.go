package funcs

import (
	"errors"
	"math"
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestCast(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	tSmall := types.Type{Kind: types.SmallInt}
	tTS0 := types.TimestampType(0)
	tTS6 := types.TimestampType(6)
	tTime0 := types.Type{Kind: types.Time}
	tChar3 := types.Type{Kind: types.Char, Length: 3}
	tBytes := types.Type{Kind: types.Bytes}
	cases := []struct {
		v        types.Value
		from, to types.Type
		want     types.Value
		fails    bool
	}{
		{s("42"), tStr, tInt, i32(42), false},
		{s(" -42 "), tStr, tInt, i32(-42), false},
		{s("+7"), tStr, tBig, i64(7), false},
		{s("1.9"), tStr, tInt, i32(1), false},
		{s("abc"), tStr, tInt, null, true},
		{s(""), tStr, tInt, null, true},
		{s("2147483648"), tStr, tInt, null, true},
		{s("-2147483648"), tStr, tInt, i32(math.MinInt32), false},
		{s("9223372036854775807"), tStr, tBig, i64(math.MaxInt64), false},
		{s("128"), tStr, tTiny, null, true},
		{s("1e3"), tStr, tInt, null, true},
		{s("1e3"), tStr, tDouble, f64(1000), false},
		{s("NaN"), tStr, tDouble, f64(math.NaN()), false},
		{s("1.5d"), tStr, tDouble, f64(1.5), false},
		{s("inf"), tStr, tDouble, null, true},
		{s("12.345"), tStr, tDec(5, 2), dec("12.35"), false},
		{s("-12.345"), tStr, tDec(5, 2), dec("-12.35"), false},
		{s("12345.6"), tStr, tDec(5, 2), null, true},
		{s("1/3"), tStr, tDec(5, 2), null, true},
		{s("1e999999999"), tStr, tDec(5, 2), null, true},
		{s("yes"), tStr, tBool, tru, false},
		{s("F"), tStr, tBool, fals, false},
		{s("maybe"), tStr, tBool, null, true},
		{s("2024-02-29"), tStr, tDate, date(2024, 2, 29), false},
		{s("2024-2-9 10:00:00"), tStr, tDate, date(2024, 2, 9), false},
		{s("2023-02-29"), tStr, tDate, null, true},
		{s("10:20:30.5"), tStr, types.Type{Kind: types.Time, Prec: 3}, types.TimeValue(37230500000), false},
		{s("2024-01-02 03:04:05.123456789"), tStr, tTS3, ts(2024, 1, 2, 3, 4, 5, 123000), false},
		{s("2024-01-02T03:04:05"), tStr, tTS3, ts(2024, 1, 2, 3, 4, 5, 0), false},
		{s("2024-01-02"), tStr, tTS3, ts(2024, 1, 2, 0, 0, 0, 0), false},
		{s("2024-01-02 25:00:00"), tStr, tTS3, null, true},
		{s("2024-01-02 08:00:00"), tStr, tLTZ3, ltz(2024, 1, 2, 0, 0, 0, 0), false},
		{i32(300), tInt, tTiny, types.IntValue(types.TinyInt, 44), false},
		{i64(math.MaxInt64), tBig, tInt, i32(-1), false},
		{f64(3.99), tDouble, tInt, i32(3), false},
		{f64(-3.99), tDouble, tInt, i32(-3), false},
		{f64(1e20), tDouble, tInt, i32(math.MaxInt32), false},
		{f64(1e20), tDouble, tSmall, types.IntValue(types.SmallInt, -1), false},
		{f64(math.NaN()), tDouble, tBig, i64(0), false},
		{dec("-7.9"), tDec(5, 1), tInt, i32(-7), false},
		{dec("123.455"), tDec(6, 3), tDec(5, 2), dec("123.46"), false},
		{dec("12345.6"), tDec(6, 1), tDec(5, 2), null, false}, // NULL on overflow, as Flink
		{f64(2.675), tDouble, tDec(5, 2), dec("2.68"), false},
		{f64(math.Inf(1)), tDouble, tDec(5, 2), null, true},
		{i32(7), tInt, tDec(5, 2), dec("7"), false},
		{i32(1000), tInt, tDec(5, 2), null, false},
		{tru, tBool, tInt, i32(1), false},
		{i32(-3), tInt, tBool, tru, false},
		{i32(0), tInt, tBool, fals, false},
		{i32(5), tInt, tDouble, f64(5), false},
		{tru, tBool, tStr, s("TRUE"), false},
		{i32(-5), tInt, tStr, s("-5"), false},
		{f64(1), tDouble, tStr, s("1.0"), false},
		{f64(1e7), tDouble, tStr, s("1.0E7"), false},
		{f64(1.234e-5), tDouble, tStr, s("1.234E-5"), false},
		{f64(0.001), tDouble, tStr, s("0.001"), false},
		{f64(123456.789), tDouble, tStr, s("123456.789"), false},
		{f64(math.Inf(-1)), tDouble, tStr, s("-Infinity"), false},
		{types.FloatValue(float64(float32(0.1))), tFloat, tStr, s("0.1"), false},
		{dec("1.5"), tDec(5, 2), tStr, s("1.50"), false},
		{dec("-0.001"), tDec(5, 2), tStr, s("0.00"), false},
		{date(2024, 3, 9), tDate, tStr, s("2024-03-09"), false},
		{types.TimeValue(3723000000), tTime0, tStr, s("01:02:03"), false},
		{ts(2024, 1, 2, 3, 4, 5, 0), tTS3, tStr, s("2024-01-02 03:04:05.000"), false},
		{ts(2024, 1, 2, 3, 4, 5, 0), tTS0, tStr, s("2024-01-02 03:04:05"), false},
		{ts(2024, 1, 2, 3, 4, 5, 120000), tTS6, tStr, s("2024-01-02 03:04:05.120000"), false},
		{ltz(2024, 1, 1, 16, 0, 0, 0), tLTZ3, tStr, s("2024-01-02 00:00:00.000"), false},
		{s("abcdef"), tStr, tVarchar(3), s("abc"), false},
		{s("ab"), tStr, tChar3, s("ab "), false},
		{s("héllo"), tStr, tVarchar(2), s("hé"), false},
		{s("hi"), tStr, tBytes, types.BytesValue([]byte("hi")), false},
		{types.BytesValue([]byte("hi")), tBytes, tStr, s("hi"), false},
		{ts(2024, 1, 2, 3, 4, 5, 6), tTS6, tDate, date(2024, 1, 2), false},
		{ts(1969, 12, 31, 23, 0, 0, 0), tTS3, tDate, date(1969, 12, 31), false},
		{ltz(2024, 1, 1, 16, 0, 0, 0), tLTZ3, tDate, date(2024, 1, 2), false},
		{ts(2024, 1, 2, 3, 4, 5, 6789), tTS6, tTS3, ts(2024, 1, 2, 3, 4, 5, 6000), false},
		{ts(2024, 1, 2, 8, 0, 0, 0), tTS3, tLTZ3, ltz(2024, 1, 2, 0, 0, 0, 0), false},
		{ltz(2024, 1, 2, 0, 0, 0, 0), tLTZ3, tTS3, ts(2024, 1, 2, 8, 0, 0, 0), false},
		{date(2024, 1, 2), tDate, tLTZ3, ltz(2024, 1, 1, 16, 0, 0, 0), false},
		{ts(2024, 1, 2, 3, 4, 5, 0), tTS3, tTime0, types.TimeValue(11045000000), false},
		{ym(14), tYM, tStr, s("+1-02"), false},
		{i64(1500), tBig, tDT, dt(1500 * microsPerMilli), false},
		{null, tStr, tInt, null, false},
		{null, tNull, tDate, null, false},
		{types.ArrayValue([]types.Value{s("1"), s("2")}), types.Type{Kind: types.Array, Elem: &tStr},
			types.Type{Kind: types.Array, Elem: &tInt}, types.ArrayValue([]types.Value{i32(1), i32(2)}), false},
	}
	for _, c := range cases {
		got, err := CastValue(c.v, c.from, c.to, sh)
		if c.fails {
			if !errors.Is(err, ErrCastFailed) {
				t.Errorf("CAST(%s AS %s) = %s, %v; want a cast failure", show(c.v), c.to, show(got), err)
			}
			continue
		}
		if err != nil || !sameValue(got, c.want) {
			t.Errorf("CAST(%s AS %s) = %s, %v; want %s", show(c.v), c.to, show(got), err, show(c.want))
		}
	}
}

func TestCastErrorMessage(t *testing.T) {
	_, err := CastValue(s("abc"), tStr, tIntNN, nil)
	if err == nil || err.Error() != `cannot parse "abc" as INT` {
		t.Fatalf("error %v", err)
	}
	var ce *CastError
	if !errors.As(err, &ce) || ce.Input != "abc" {
		t.Errorf("not a CastError: %#v", err)
	}
	_, err = CastValue(s("123456"), tStr, tDec(5, 2), nil)
	if err == nil || err.Error() != `cannot parse "123456" as DECIMAL(5, 2): overflow` {
		t.Errorf("error %v", err)
	}
}

func TestCoerce(t *testing.T) {
	if NeedsCoerce(tStr, tVarchar(3)) || NeedsCoerce(tInt, tInt) || !NeedsCoerce(tInt, tBig) || !NeedsCoerce(tDec(5, 2), tDec(6, 3)) {
		t.Error("NeedsCoerce is wrong")
	}
	got, err := Coerce(dec("1/3"), tDec(10, 4), nil)
	if err != nil || !sameValue(got, dec("0.3333")) {
		t.Errorf("Coerce(1/3, DECIMAL(10, 4)) = %s, %v", show(got), err)
	}
	got, err = Coerce(i32(5), tBig, nil)
	if err != nil || !sameValue(got, i64(5)) {
		t.Errorf("Coerce(INT 5, BIGINT) = %s, %v", show(got), err)
	}
}
