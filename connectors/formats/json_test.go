package formats

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

func ptr(t types.Type) *types.Type { return &t }

var (
	tTinyInt  = types.Type{Kind: types.TinyInt}
	tSmallInt = types.Type{Kind: types.SmallInt}
	tFloat    = types.Type{Kind: types.Float}
	tDec      = types.Type{Kind: types.Decimal, Prec: 10, Scale: 2}
	tTime     = types.Type{Kind: types.Time}
	tTS3      = types.TimestampType(3)
	tLTZ3     = types.TimestampLTZType(3)
	tBytes    = types.Type{Kind: types.Bytes}
	tArrInt   = types.Type{Kind: types.Array, Elem: ptr(types.TypeInt)}
	tMapSI    = types.Type{Kind: types.Map, Key: ptr(types.TypeString), Elem: ptr(types.TypeInt)}
	tMapIS    = types.Type{Kind: types.Map, Key: ptr(types.TypeInt), Elem: ptr(types.TypeString)}
	tRow      = types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "a", Type: types.TypeInt}, {Name: "b", Type: types.TypeString}}}
	tArrRow   = types.Type{Kind: types.Array, Elem: ptr(tRow)}
)

func ts(s string) int64 {
	micros, ok := types.ParseTimestamp(s, types.SpaceSep)
	if !ok {
		panic("bad test timestamp " + s)
	}
	return micros
}

func dec(s string) types.Value {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return types.DecimalValue(r)
}

// sameValue compares kind and value, including inside composites.
func sameValue(a, b types.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case types.Float, types.Double:
		return a.Float() == b.Float() || (math.IsNaN(a.Float()) && math.IsNaN(b.Float()))
	case types.Map:
		ae, be := a.Entries(), b.Entries()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !sameValue(ae[i].Key, be[i].Key) || !sameValue(ae[i].Value, be[i].Value) {
				return false
			}
		}
		return true
	case types.Array, types.Struct:
		ae, be := a.Elems(), b.Elems()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !sameValue(ae[i], be[i]) {
				return false
			}
		}
		return true
	}
	return types.Equal(a, b)
}

func decodeOne(t *testing.T, typ types.Type, field string, opts map[string]string) (types.Value, error) {
	t.Helper()
	d, err := NewJSONDecoder([]connectors.ProducedColumn{{Name: "f", Type: typ}}, opts)
	if err != nil {
		t.Fatalf("NewJSONDecoder(%s): %v", typ, err)
	}
	row := make(types.Row, 1)
	err = d.Decode([]byte(`{"f":`+field+`}`), row)
	return row[0], err
}

func TestJSONDecodeConversions(t *testing.T) {
	iso := map[string]string{JSONTimestampFormatStandard: "ISO-8601"}
	cases := []struct {
		typ   types.Type
		json  string
		opts  map[string]string
		want  types.Value
		isErr string
	}{
		{typ: types.TypeBoolean, json: `true`, want: types.BoolValue(true)},
		{typ: types.TypeBoolean, json: `false`, want: types.BoolValue(false)},
		{typ: types.TypeBoolean, json: `"TRUE"`, want: types.BoolValue(true)},
		{typ: types.TypeBoolean, json: `"yes"`, want: types.BoolValue(false)}, // Boolean.parseBoolean
		{typ: types.TypeBoolean, json: `[true]`, isErr: "expected a json boolean"},
		{typ: tTinyInt, json: `127`, want: types.IntValue(types.TinyInt, 127)},
		{typ: tTinyInt, json: `128`, isErr: `cannot parse "128" as TINYINT`},
		{typ: tSmallInt, json: `"-300"`, want: types.IntValue(types.SmallInt, -300)},
		{typ: types.TypeInt, json: `42`, want: types.IntValue(types.Int, 42)},
		{typ: types.TypeInt, json: `"123"`, want: types.IntValue(types.Int, 123)},
		{typ: types.TypeInt, json: `" 7 "`, want: types.IntValue(types.Int, 7)},
		{typ: types.TypeInt, json: `1.9`, want: types.IntValue(types.Int, 1)}, // Jackson asInt truncates
		{typ: types.TypeInt, json: `1e3`, want: types.IntValue(types.Int, 1000)},
		{typ: types.TypeInt, json: `3000000000`, isErr: `cannot parse "3000000000" as INT`},
		{typ: types.TypeInt, json: `"1.5"`, isErr: `cannot parse "1.5" as INT`},
		{typ: types.TypeInt, json: `"abc"`, isErr: `cannot parse "abc" as INT`},
		{typ: types.TypeInt, json: `{}`, isErr: "expected a json number for INT, got object"},
		{typ: types.TypeBigInt, json: `9223372036854775807`, want: types.BigIntValue(math.MaxInt64)},
		{typ: types.TypeBigInt, json: `"-9223372036854775808"`, want: types.BigIntValue(math.MinInt64)},
		{typ: types.TypeBigInt, json: `92233720368547758070`, isErr: "as BIGINT"},
		{typ: tFloat, json: `1.5`, want: types.FloatValue(1.5)},
		{typ: types.TypeDouble, json: `"2.25"`, want: types.DoubleValue(2.25)},
		{typ: types.TypeDouble, json: `-1e300`, want: types.DoubleValue(-1e300)},
		{typ: types.TypeDouble, json: `"x"`, isErr: `cannot parse "x" as DOUBLE`},
		{typ: tDec, json: `12.345`, want: dec("12.35")},
		{typ: tDec, json: `"-0.005"`, want: dec("-0.01")},
		{typ: tDec, json: `1e2`, want: dec("100")},
		{typ: tDec, json: `123456789`, want: types.NullValue}, // does not fit DECIMAL(10, 2)
		{typ: tDec, json: `1e999999999`, want: types.NullValue},
		{typ: tDec, json: `1e-999999999`, want: dec("0")},
		{typ: tDec, json: `"1/2"`, isErr: "cannot parse"},
		{typ: types.TypeString, json: `"héllo \"x\"\n"`, want: types.StringValue("héllo \"x\"\n")},
		{typ: types.TypeString, json: `42.50`, want: types.StringValue("42.50")},
		{typ: types.TypeString, json: `true`, want: types.StringValue("true")},
		{typ: types.TypeString, json: `{"a": [1, 2]}`, want: types.StringValue(`{"a":[1,2]}`)},
		{typ: tBytes, json: `"AQID"`, want: types.BytesValue([]byte{1, 2, 3})},
		{typ: tBytes, json: `"!!"`, isErr: "base64"},
		{typ: types.TypeDate, json: `"2024-02-29"`, want: types.DateValue(19782)},
		{typ: types.TypeDate, json: `"2023-02-29"`, isErr: `cannot parse "2023-02-29" as DATE`},
		{typ: types.TypeDate, json: `"1969-12-31"`, want: types.DateValue(-1)},
		{typ: tTime, json: `"12:34:56"`, want: types.TimeValue((12*3600 + 34*60 + 56) * 1e6)},
		{typ: tTime, json: `"25:00:00"`, isErr: "as TIME(0)"},
		{typ: tTS3, json: `"2024-01-02 03:04:05.678"`, want: types.TimestampValue(ts("2024-01-02 03:04:05.678"))},
		{typ: tTS3, json: `"2024-01-02 03:04:05"`, want: types.TimestampValue(ts("2024-01-02 03:04:05"))},
		{typ: tTS3, json: `"2024-01-02 03:04"`, want: types.TimestampValue(ts("2024-01-02 03:04:00"))},
		{typ: tTS3, json: `"2024-01-02 03:04:05.123456789"`, want: types.TimestampValue(ts("2024-01-02 03:04:05.123456"))},
		{typ: tTS3, json: `"abc"`, isErr: `cannot parse "abc" as TIMESTAMP(3) (expected 'yyyy-MM-dd HH:mm:ss.SSS')`},
		{typ: tTS3, json: `"2024-01-02T03:04:05"`, isErr: "expected 'yyyy-MM-dd HH:mm:ss.SSS'"},
		{typ: tTS3, json: `1704164645000`, isErr: "as TIMESTAMP(3)"},
		{typ: tTS3, json: `"2024-01-02T03:04:05.5"`, opts: iso, want: types.TimestampValue(ts("2024-01-02 03:04:05.5"))},
		{typ: tTS3, json: `"2024-01-02T03:04:05.5Z"`, opts: iso, want: types.TimestampValue(ts("2024-01-02 03:04:05.5"))},
		{typ: tTS3, json: `"2024-01-02 03:04:05"`, opts: iso, isErr: "expected 'yyyy-MM-ddTHH:mm:ss.SSS'"},
		{typ: tLTZ3, json: `"2024-01-02 03:04:05.678Z"`, want: types.TimestampLTZValue(ts("2024-01-02 03:04:05.678"))},
		{typ: tLTZ3, json: `"2024-01-02T03:04:05Z"`, opts: iso, want: types.TimestampLTZValue(ts("2024-01-02 03:04:05"))},
		{typ: tArrInt, json: `[1, "2", null]`, want: types.ArrayValue([]types.Value{types.IntValue(types.Int, 1), types.IntValue(types.Int, 2), {}})},
		{typ: tArrInt, json: `[1, "x"]`, isErr: `field "f[1]": cannot parse "x" as INT`},
		{typ: tArrInt, json: `{"a":1}`, isErr: "expected a json array for ARRAY<INT>, got object"},
		{typ: tMapSI, json: `{"x": 1, "y": null}`, want: types.MapValue([]types.MapEntry{
			{Key: types.StringValue("x"), Value: types.IntValue(types.Int, 1)}, {Key: types.StringValue("y")}})},
		{typ: tMapIS, json: `{"7": "seven"}`, want: types.MapValue([]types.MapEntry{
			{Key: types.IntValue(types.Int, 7), Value: types.StringValue("seven")}})},
		{typ: tMapIS, json: `{"seven": "7"}`, isErr: `field "f.seven": cannot parse "seven" as INT`},
		{typ: tRow, json: `{"b": "x", "a": 1, "c": 3}`, want: types.RowValue([]types.Value{types.IntValue(types.Int, 1), types.StringValue("x")})},
		{typ: tRow, json: `{"b": "x"}`, want: types.RowValue([]types.Value{{}, types.StringValue("x")})},
		{typ: tRow, json: `{"b": "x"}`, opts: map[string]string{JSONFailOnMissingField: "true"}, isErr: `field "f.a": field is missing`},
		{typ: tArrRow, json: `[{"a": 1}, {"a": "z"}]`, isErr: `field "f[1].a": cannot parse "z" as INT`},
		{typ: types.TypeInt, json: `null`, want: types.NullValue},
	}
	for _, c := range cases {
		got, err := decodeOne(t, c.typ, c.json, c.opts)
		if c.isErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.isErr) {
				t.Errorf("%s from %s: got %v, %v; want error containing %q", c.typ, c.json, got, err, c.isErr)
			}
			if err != nil && !errors.Is(err, ErrBadRecord) {
				t.Errorf("%s from %s: error %v does not wrap ErrBadRecord", c.typ, c.json, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s from %s: %v", c.typ, c.json, err)
			continue
		}
		if !sameValue(got, c.want) {
			t.Errorf("%s from %s: got %v (%s), want %v (%s)", c.typ, c.json, got, got.Kind(), c.want, c.want.Kind())
		}
	}
}

func TestJSONDecodeRecordErrors(t *testing.T) {
	cols := []connectors.ProducedColumn{{Name: "ts", Type: tTS3}, {Name: "n", Type: types.TypeInt}}
	long := `{"ts":"abc","pad":"` + strings.Repeat("x", 300) + `"}`
	cases := []struct {
		data, want string
	}{
		{``, "empty record"},
		{"  \n", "empty record"},
		{`{"ts":`, "invalid json"},
		{`{"ts":"2024-01-01 00:00:00"} trailing`, "invalid json"},
		{`[1,2]`, "record is a json array, not an object"},
		{`null`, "record is a json null, not an object"},
		{`{"ts":"abc"}`, `field "ts": cannot parse "abc" as TIMESTAMP(3)`},
		{long, `field "ts": cannot parse "abc" as TIMESTAMP(3)`},
	}
	for _, ignore := range []bool{false, true} {
		d, err := NewJSONDecoder(cols, map[string]string{JSONIgnoreParseErrors: map[bool]string{false: "false", true: "true"}[ignore]})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			row := make(types.Row, 2)
			err := d.Decode([]byte(c.data), row)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Decode(%q): %v, want error containing %q", c.data, err, c.want)
				continue
			}
			if got := errors.Is(err, connectors.ErrSkipped); got != ignore {
				t.Errorf("Decode(%q) with ignore-parse-errors=%v: errors.Is(ErrSkipped) = %v", c.data, ignore, got)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode(%q): %T is not a *DecodeError", c.data, err)
			}
			if len(de.Snippet) > snippetLen+3 {
				t.Errorf("Decode(%q): snippet of %d bytes", c.data, len(de.Snippet))
			}
		}
	}
	// the long record's snippet shows its start, cut
	d, _ := NewJSONDecoder(cols, nil)
	err := d.Decode([]byte(long), make(types.Row, 2))
	if !strings.HasSuffix(err.Error(), `; record: {"ts":"abc","pad":"`+strings.Repeat("x", snippetLen-19)+"...") {
		t.Errorf("long record error: %v", err)
	}
}

func TestJSONMissingFields(t *testing.T) {
	cols := []connectors.ProducedColumn{{Name: "a", Type: types.TypeInt}, {Name: "B", Type: types.TypeInt}}
	d, _ := NewJSONDecoder(cols, nil)
	row := make(types.Row, 2)
	row[1] = types.IntValue(types.Int, 99) // a stale value must be overwritten with NULL
	if err := d.Decode([]byte(`{"a":1,"b":2}`), row); err != nil {
		t.Fatal(err)
	}
	if row[0].Int() != 1 || !row[1].IsNull() {
		t.Errorf("case-sensitive match: got %v", row)
	}
	strict, _ := NewJSONDecoder(cols, map[string]string{JSONFailOnMissingField: "true"})
	err := strict.Decode([]byte(`{"a":1,"b":2}`), row)
	if err == nil || !strings.Contains(err.Error(), `field "B": field is missing`) {
		t.Errorf("fail-on-missing-field: %v", err)
	}
	if err := strict.Decode([]byte(`{"a":1,"B":null}`), row); err != nil || !row[1].IsNull() {
		t.Errorf("explicit null is not missing: %v %v", row, err)
	}
	if _, err := NewJSONDecoder(cols, map[string]string{JSONFailOnMissingField: "true", JSONIgnoreParseErrors: "true"}); err == nil {
		t.Error("fail-on-missing-field with ignore-parse-errors accepted")
	}
	if _, err := NewJSONDecoder(cols, map[string]string{JSONTimestampFormatStandard: "RFC"}); err == nil {
		t.Error("unknown timestamp standard accepted")
	}
}

func TestJSONProjection(t *testing.T) {
	// Only the requested columns are converted: a field of a wrong type that was not
	// asked for does not fail the record, while asking for it does.
	record := []byte(`{"user":"u1","age":"not a number","ts":"2024-01-01 00:00:00","extra":{"deep":[1,2,3]}}`)
	d, err := NewJSONDecoder([]connectors.ProducedColumn{{Name: "ts", Type: tTS3}, {Name: "user", Type: types.TypeString}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 2)
	if err := d.Decode(record, row); err != nil {
		t.Fatalf("projected decode: %v", err)
	}
	if row[0].Int() != ts("2024-01-01 00:00:00") || row[1].Str() != "u1" {
		t.Errorf("got %v", row)
	}
	withAge, _ := NewJSONDecoder([]connectors.ProducedColumn{{Name: "age", Type: types.TypeInt}}, nil)
	if err := withAge.Decode(record, make(types.Row, 1)); err == nil {
		t.Error("age is not an INT, but decoding it succeeded")
	}
	// the physical-schema form: NULL-typed columns are skipped
	skip, _ := NewJSONDecoder([]connectors.ProducedColumn{{Name: "age", Type: types.TypeNull}, {Name: "user", Type: types.TypeString}}, nil)
	row = types.Row{types.StringValue("stale"), {}}
	if err := skip.Decode(record, row); err != nil || !row[0].IsNull() || row[1].Str() != "u1" {
		t.Errorf("skip NULL-typed column: %v %v", row, err)
	}
}

func TestJSONEncode(t *testing.T) {
	schema := types.Schema{
		{Name: "b", Type: types.TypeBoolean},
		{Name: "i", Type: types.TypeInt},
		{Name: "d", Type: types.TypeDouble},
		{Name: "f", Type: tFloat},
		{Name: "m", Type: tDec},
		{Name: "s", Type: types.TypeString},
		{Name: "day", Type: types.TypeDate},
		{Name: "ts", Type: tTS3},
		{Name: "ltz", Type: tLTZ3},
		{Name: "n", Type: types.TypeString},
		{Name: "arr", Type: tArrInt},
		{Name: "map", Type: tMapIS},
		{Name: "row", Type: tRow},
		{Name: "raw", Type: tBytes},
	}
	row := types.Row{
		types.BoolValue(true), types.IntValue(types.Int, -5), types.DoubleValue(1e10), types.FloatValue(0.5),
		dec("3.1"), types.StringValue("a\"b\\c\n\x01é"), types.DateValue(19782),
		types.TimestampValue(ts("2024-01-02 03:04:05.120")), types.TimestampLTZValue(ts("2024-01-02 03:04:05")),
		{},
		types.ArrayValue([]types.Value{types.IntValue(types.Int, 1), {}}),
		types.MapValue([]types.MapEntry{{Key: types.IntValue(types.Int, 7), Value: types.StringValue("x")}}),
		types.RowValue([]types.Value{types.IntValue(types.Int, 1), {}}),
		types.BytesValue([]byte{1, 2, 3}),
	}
	e, err := NewJSONEncoder(schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Encode([]byte("prefix:"), row)
	if err != nil {
		t.Fatal(err)
	}
	want := `prefix:{"b":true,"i":-5,"d":1.0E10,"f":0.5,"m":3.10,"s":"a\"b\\c\n\u0001é","day":"2024-02-29",` +
		`"ts":"2024-01-02 03:04:05.12","ltz":"2024-01-02 03:04:05Z","n":null,"arr":[1,null],"map":{"7":"x"},` +
		`"row":{"a":1,"b":null},"raw":"AQID"}`
	if string(out) != want {
		t.Errorf("Encode:\n got %s\nwant %s", out, want)
	}
	if !json.Valid(out[len("prefix:"):]) {
		t.Error("output is not valid JSON")
	}
	// round trip through the decoder
	cols := make([]connectors.ProducedColumn, len(schema))
	for i, c := range schema {
		cols[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	d, _ := NewJSONDecoder(cols, nil)
	back := make(types.Row, len(schema))
	if err := d.Decode(out[len("prefix:"):], back); err != nil {
		t.Fatal(err)
	}
	for i := range row {
		if !sameValue(row[i], back[i]) {
			t.Errorf("round trip of %s: %v became %v", schema[i].Name, row[i], back[i])
		}
	}

	iso, _ := NewJSONEncoder(types.Schema{{Name: "ts", Type: tTS3}, {Name: "x", Type: types.TypeInt}},
		map[string]string{JSONTimestampFormatStandard: "ISO-8601", JSONEncodeIgnoreNullFields: "true"})
	out, _ = iso.Encode(nil, types.Row{types.TimestampValue(ts("2024-01-02 03:04:05")), {}})
	if string(out) != `{"ts":"2024-01-02T03:04:05"}` {
		t.Errorf("ISO-8601 without nulls: %s", out)
	}
}

func TestJSONEncodeMapNullKey(t *testing.T) {
	schema := types.Schema{{Name: "m", Type: tMapSI}}
	row := types.Row{types.MapValue([]types.MapEntry{{Key: types.NullValue, Value: types.IntValue(types.Int, 1)}, {Key: types.StringValue("k"), Value: types.IntValue(types.Int, 2)}})}
	for mode, want := range map[string]string{"DROP": `{"m":{"k":2}}`, "LITERAL": `{"m":{"nil":1,"k":2}}`} {
		e, _ := NewJSONEncoder(schema, map[string]string{JSONMapNullKeyMode: mode, JSONMapNullKeyLiteral: "nil"})
		out, err := e.Encode(nil, row)
		if err != nil || string(out) != want {
			t.Errorf("%s: %s %v, want %s", mode, out, err, want)
		}
	}
	e, _ := NewJSONEncoder(schema, nil)
	if _, err := e.Encode(nil, row); !errors.Is(err, ErrMapNullKey) {
		t.Errorf("FAIL mode: %v", err)
	}
}

func FuzzJSONDecode(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"s":"x","ts":"2024-01-01 00:00:00.123","arr":[1,2],"m":{"k":1.5},"r":{"a":1,"b":"y"},"d":"12.5"}`,
		`{"a":"1e400","d":1e-400}`, `[]`, `{`, `{"a":-}`, `{"s":{"nested":[true,false,null]}}`, `"\u0000"`,
		`{"ts":"9999-12-31 23:59:59.999999999","day":"0000-01-01"}`,
	} {
		f.Add([]byte(s))
	}
	schema := types.Schema{
		{Name: "a", Type: types.TypeInt}, {Name: "s", Type: types.TypeString}, {Name: "ts", Type: tTS3},
		{Name: "arr", Type: tArrInt}, {Name: "m", Type: types.Type{Kind: types.Map, Key: ptr(types.TypeString), Elem: ptr(types.TypeDouble)}},
		{Name: "r", Type: tRow}, {Name: "d", Type: tDec}, {Name: "day", Type: types.TypeDate}, {Name: "b", Type: types.TypeBoolean},
	}
	cols := make([]connectors.ProducedColumn, len(schema))
	for i, c := range schema {
		cols[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	d, err := NewJSONDecoder(cols, nil)
	if err != nil {
		f.Fatal(err)
	}
	e, err := NewJSONEncoder(schema, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		row := make(types.Row, len(cols))
		if err := d.Decode(data, row); err != nil {
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("error %v does not wrap ErrBadRecord", err)
			}
			return
		}
		out, err := e.Encode(nil, row)
		if err != nil {
			t.Fatalf("re-encode of %v: %v", row, err)
		}
		if !json.Valid(out) {
			t.Fatalf("re-encoded %q is not JSON", out)
		}
		again := make(types.Row, len(cols))
		if err := d.Decode(out, again); err != nil {
			t.Fatalf("decode of re-encoded %s: %v", out, err)
		}
	})
}
