package types

import (
	"encoding/hex"
	"math"
	"math/big"
	"testing"
)

func dec(s string) Value {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return DecimalValue(r)
}

// everyKind holds a value of every kind, composites included.
var everyKind = []Value{
	NullValue, BoolValue(true), BoolValue(false), IntValue(TinyInt, -3), IntValue(SmallInt, 300),
	IntValue(Int, 7), BigIntValue(-1 << 60), FloatValue(1.5), DoubleValue(-0.25), DoubleValue(math.Inf(1)),
	dec("123.45"), dec("-0.001"), dec("0"), StringValue("héllo"), StringValue(""), BytesValue([]byte{0, 1, 2}),
	DateValue(19000), DateValue(-800000), TimeValue(3600e6), TimestampValue(1e15), TimestampLTZValue(-5),
	IntervalValue(42), IntervalMonthsValue(-13),
	ArrayValue([]Value{BigIntValue(1), NullValue}),
	RowValue([]Value{StringValue("x"), ArrayValue(nil)}),
	MapValue([]MapEntry{{Key: StringValue("k"), Value: dec("2.5")}}),
}

func TestValueEncodingRoundTrip(t *testing.T) {
	for _, enc := range []Encoding{0, TextDecimals} {
		testRoundTrip(t, enc)
	}
}

func testRoundTrip(t *testing.T, enc Encoding) {
	var data []byte
	for _, v := range everyKind {
		one := AppendValue(nil, v, enc)
		got, n, err := DecodeValue(one, enc)
		if err != nil || n != len(one) || got.Kind() != v.Kind() || !Equal(got, v) && !(v.IsNull() && got.IsNull()) {
			t.Errorf("%v (%s): decoded %v (%s), %d of %d bytes, %v", v, v.Kind(), got, got.Kind(), n, len(one), err)
		}
		data = append(data, one...)
	}
	// values concatenate, and every cut of them is an error, never a panic
	for off, i := 0, 0; off < len(data); i++ {
		_, n, err := DecodeValue(data[off:], enc)
		if err != nil {
			t.Fatalf("value %d at byte %d: %v", i, off, err)
		}
		off += n
	}
	for _, v := range everyKind {
		one := AppendValue(nil, v, enc)
		for cut := range one {
			if _, _, err := DecodeValue(one[:cut], enc); err == nil {
				t.Errorf("%v cut at byte %d of %d decoded without error", v, cut, len(one))
			}
		}
	}
}

func TestValueEncodingRefusesDamage(t *testing.T) {
	deep := []byte{}
	for range maxValueDepth + 2 {
		deep = append(deep, byte(Array), 1)
	}
	deep = append(deep, byte(Null))
	for name, b := range map[string][]byte{
		"unknown kind":   {0xff},
		"huge count":     {byte(Array), 0xff, 0xff, 0xff, 0xff, 0x0f},
		"decimal sign":   {byte(Decimal), 2, 1, 1, 1, 1},
		"zero denom":     {byte(Decimal), 0, 1, 1, 0},
		"nested too far": deep,
	} {
		if _, _, err := DecodeValue(b, 0); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

// The layouts are part of checkpoints (exec and exec/agg state): these bytes must not
// change without a state version.
func TestValueEncodingLayout(t *testing.T) {
	for _, tc := range []struct {
		v                Value
		exact, canonical string
	}{
		{NullValue, "00", "00"},
		{BoolValue(true), "0102", "0102"},
		{IntValue(Int, -2), "0403", "0503"},
		{BigIntValue(300), "05d804", "05d804"},
		{FloatValue(1), "06000000000000f03f", "07000000000000f03f"},
		{DoubleValue(math.Copysign(0, -1)), "070000000000000080", "070000000000000000"},
		{dec("-1.50"), "080101030102", "080101030102"},
		{StringValue("ab"), "0a026162", "0a026162"},
		{Value{k: Char, s: "ab"}, "09026162", "0a026162"},
		{DateValue(1), "0c02", "0c02"},
		{ArrayValue([]Value{IntValue(Int, 1)}), "12010402", "12010502"},
	} {
		exact, canonical := hex.EncodeToString(AppendValue(nil, tc.v, 0)), hex.EncodeToString(AppendValue(nil, tc.v, Canonical))
		if exact != tc.exact || canonical != tc.canonical {
			t.Errorf("%v (%s): %s and canonically %s, want %s and %s", tc.v, tc.v.Kind(), exact, canonical, tc.exact, tc.canonical)
		}
	}
}

func TestCanonicalValueIdentity(t *testing.T) {
	same := [][2]Value{
		{IntValue(TinyInt, 5), BigIntValue(5)},
		{FloatValue(0.5), DoubleValue(0.5)},
		{DoubleValue(0), DoubleValue(math.Copysign(0, -1))},
		{DoubleValue(math.NaN()), DoubleValue(math.Float64frombits(0x7ff8000000000001))},
		{dec("1.0"), dec("1.00")},
		{Value{k: Char, s: "a"}, StringValue("a")},
		{ArrayValue([]Value{IntValue(Int, 1)}), ArrayValue([]Value{BigIntValue(1)})},
	}
	for _, p := range same {
		if a, b := AppendValue(nil, p[0], Canonical), AppendValue(nil, p[1], Canonical); string(a) != string(b) {
			t.Errorf("%v and %v encode as %x and %x", p[0], p[1], a, b)
		}
	}
	differ := [][2]Value{
		{BigIntValue(1), DoubleValue(1)},
		{StringValue("a"), BytesValue([]byte("a"))},
		{NullValue, StringValue("")},
		{dec("1.5"), dec("-1.5")},
		{ArrayValue([]Value{StringValue("ab")}), ArrayValue([]Value{StringValue("a"), StringValue("b")})},
	}
	for _, p := range differ {
		if a, b := AppendValue(nil, p[0], Canonical), AppendValue(nil, p[1], Canonical); string(a) == string(b) {
			t.Errorf("%v and %v both encode as %x", p[0], p[1], a)
		}
	}
}

func TestTextDecimals(t *testing.T) {
	// a DECIMAL as exec's checkpoint state holds it: the RatString text
	b := append([]byte{byte(Decimal), 4}, "-3/2"...)
	if got := AppendValue(nil, dec("-1.50"), TextDecimals); string(got) != string(b) {
		t.Errorf("encoded %x, want %x", got, b)
	}
	// exec's group keys: exact kinds, folded floats, text decimals
	key := FoldFloats | TextDecimals
	if a, b := AppendValue(nil, DoubleValue(math.Copysign(0, -1)), key), AppendValue(nil, DoubleValue(0), key); string(a) != string(b) {
		t.Errorf("-0.0 and 0.0 keys differ: %x, %x", a, b)
	}
	if got := hex.EncodeToString(AppendValue(nil, IntValue(Int, -2), key)); got != "0403" {
		t.Errorf("INT -2 key %s, want 0403", got)
	}
	v, n, err := DecodeValue(b, TextDecimals)
	if err != nil || n != len(b) || !Equal(v, dec("-1.5")) {
		t.Fatalf("got %v, %d, %v", v, n, err)
	}
	if _, _, err := DecodeValue(append([]byte{byte(Decimal), 1}, 'x'), TextDecimals); err == nil {
		t.Error("a bad decimal text decoded without error")
	}
}
