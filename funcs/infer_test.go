package funcs

import (
	"errors"
	"testing"

	"github.com/pipesql/pipesql/types"
)

var (
	tInt     = types.TypeInt
	tIntNN   = types.TypeInt.WithNotNull(true)
	tBig     = types.TypeBigInt
	tTiny    = types.Type{Kind: types.TinyInt}
	tDouble  = types.TypeDouble
	tFloat   = types.Type{Kind: types.Float}
	tStr     = types.TypeString
	tBool    = types.TypeBoolean
	tDate    = types.TypeDate
	tTS3     = types.TimestampType(3)
	tLTZ3    = types.TimestampLTZType(3)
	tDT      = types.Type{Kind: types.IntervalDayTime}
	tYM      = types.Type{Kind: types.IntervalYearMonth}
	tNull    = types.TypeNull
	tDec     = func(p, s int) types.Type { return types.Type{Kind: types.Decimal, Prec: p, Scale: s} }
	tVarchar = func(n int) types.Type { return types.Type{Kind: types.Varchar, Length: n} }
)

func TestInferResultTypes(t *testing.T) {
	rowtime := tTS3
	rowtime.TimeAttr = types.RowTime
	cases := []struct {
		name string
		args []types.Type
		want types.Type
	}{
		{"+", []types.Type{tInt, tInt}, tInt},
		{"+", []types.Type{tIntNN, tIntNN}, tIntNN},
		{"+", []types.Type{tTiny, tTiny}, tTiny},
		{"+", []types.Type{tInt, tBig}, tBig},
		{"*", []types.Type{tInt, tDouble}, tDouble},
		{"-", []types.Type{tFloat, tInt}, tFloat},
		{"/", []types.Type{tInt, tInt}, tInt},
		{"%", []types.Type{tBig, tInt}, tInt},
		{"+", []types.Type{tDec(10, 2), tDec(5, 3)}, tDec(12, 3)},
		{"+", []types.Type{tDec(10, 2), tInt}, tDec(13, 2)},
		{"*", []types.Type{tDec(10, 2), tDec(5, 3)}, tDec(16, 5)},
		{"/", []types.Type{tDec(10, 2), tDec(5, 3)}, tDec(19, 8)},
		{"%", []types.Type{tDec(10, 2), tDec(5, 3)}, tDec(5, 3)},
		{"*", []types.Type{tDec(38, 10), tDec(38, 10)}, tDec(38, 6)},
		{"+", []types.Type{tDec(10, 2), tDouble}, tDouble},
		{"+", []types.Type{rowtime, tDT}, tTS3},
		{"-", []types.Type{tLTZ3, tYM}, tLTZ3},
		{"+", []types.Type{tDT, tDate}, tDate},
		{"*", []types.Type{tDT, tInt}, tDT},
		{"NEG", []types.Type{tDec(5, 2)}, tDec(5, 2)},
		{"=", []types.Type{tInt, tDouble}, tBool},
		{"<", []types.Type{tTS3, tStr}, tBool},
		{"<", []types.Type{tDate, tLTZ3}, tBool},
		{"AND", []types.Type{tBool.WithNotNull(true), tBool.WithNotNull(true)}, tBool.WithNotNull(true)},
		{"IS NULL", []types.Type{tStr}, tBool.WithNotNull(true)},
		{"COALESCE", []types.Type{tInt, tBig.WithNotNull(true)}, tBig.WithNotNull(true)},
		{"COALESCE", []types.Type{tNull, tVarchar(5), tVarchar(10)}, tVarchar(10)},
		{"IFNULL", []types.Type{tInt, tIntNN}, tIntNN},
		{"IF", []types.Type{tBool, tInt, tDec(5, 2)}, tDec(12, 2)},
		{"NULLIF", []types.Type{tIntNN, tInt}, tInt},
		{"LOWER", []types.Type{tVarchar(8)}, tVarchar(8)},
		{"CONCAT", []types.Type{tStr.WithNotNull(true), tIntNN}, tStr.WithNotNull(true)},
		{"CHAR_LENGTH", []types.Type{tStr}, tInt},
		{"SUBSTRING", []types.Type{tStr.WithNotNull(true), tIntNN}, tStr},
		{"REGEXP_EXTRACT", []types.Type{tStr, tStr, tInt}, tStr},
		{"DATE_FORMAT", []types.Type{rowtime, tStr}, tStr},
		{"TO_TIMESTAMP", []types.Type{tStr}, tTS3},
		{"TO_TIMESTAMP_LTZ", []types.Type{tBig, tInt}, tLTZ3},
		{"TO_TIMESTAMP_LTZ", []types.Type{tStr}, tLTZ3},
		{"FLOOR", []types.Type{rowtime, tStr}, tTS3},
		{"FLOOR", []types.Type{tDec(10, 3)}, tDec(8, 0)},
		{"FLOOR", []types.Type{tDouble}, tDouble},
		{"CEIL", []types.Type{tLTZ3, tStr}, tLTZ3},
		{"EXTRACT", []types.Type{tStr, tDate}, tBig},
		{"TIMESTAMPDIFF", []types.Type{tStr, tTS3, tTS3}, tInt},
		{"TIMESTAMPADD", []types.Type{tStr, tInt, tDate}, tDate},
		{"PROCTIME", nil, types.Type{Kind: types.TimestampLTZ, Prec: 3, NotNull: true, TimeAttr: types.ProcTime}},
		{"CURRENT_TIMESTAMP", nil, tLTZ3.WithNotNull(true)},
		{"LOCALTIMESTAMP", nil, tTS3.WithNotNull(true)},
		{"CURRENT_DATE", nil, tDate.WithNotNull(true)},
		{"UNIX_TIMESTAMP", nil, tBig},
		{"JSON_VALUE", []types.Type{tStr.WithNotNull(true), tStr.WithNotNull(true)}, tStr},
		{"ROUND", []types.Type{tDec(5, 2), tInt}, tDec(6, 2)},
		{"POWER", []types.Type{tInt, tInt}, tDouble},
		{"HASH_CODE", []types.Type{tStr}, tIntNN},
		{"GREATEST", []types.Type{tInt, tBig, tTiny}, tBig},
		{"UPPER", []types.Type{tNull}, tStr},
	}
	for _, c := range cases {
		f, ok := Lookup(c.name)
		if !ok {
			t.Fatalf("%s not found", c.name)
		}
		got, err := f.Infer(c.args)
		if err != nil {
			t.Errorf("%s%v: %v", c.name, c.args, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("%s%v = %s (attr %d), want %s (attr %d)", c.name, c.args, got, got.TimeAttr, c.want, c.want.TimeAttr)
		}
	}
}

// TestInferRoundScale: ROUND and TRUNCATE of a DECIMAL(p, s) to a constant r digits are
// typed as Flink types them (LogicalTypeMerging.findRoundDecimalType); with r not a
// constant the scale stays and a digit is added for the carry.
func TestInferRoundScale(t *testing.T) {
	r := func(n int64) *types.Value { v := types.IntValue(types.Int, n); return &v }
	cases := []struct {
		name   string
		args   []types.Type
		consts []*types.Value
		want   types.Type
	}{
		{"ROUND", []types.Type{tDec(10, 2), tInt}, []*types.Value{nil, r(1)}, tDec(10, 1)},
		{"ROUND", []types.Type{tDec(10, 2)}, nil, tDec(9, 0)},
		{"TRUNCATE", []types.Type{tDec(10, 2), tInt}, []*types.Value{nil, r(0)}, tDec(9, 0)},
		{"ROUND", []types.Type{tDec(10, 2), tInt}, []*types.Value{nil, r(2)}, tDec(10, 2)},
		{"ROUND", []types.Type{tDec(10, 2), tInt}, []*types.Value{nil, r(5)}, tDec(10, 2)},
		{"ROUND", []types.Type{tDec(10, 2), tInt}, []*types.Value{nil, r(-1)}, tDec(9, 0)},
		{"ROUND", []types.Type{tDec(38, 2), tInt}, []*types.Value{nil, r(1)}, tDec(38, 1)},
		{"ROUND", []types.Type{tDec(10, 2), tInt}, []*types.Value{nil, nil}, tDec(11, 2)},
		{"ROUND", []types.Type{tDouble, tInt}, []*types.Value{nil, r(1)}, tDouble},
	}
	for _, c := range cases {
		f, _ := Lookup(c.name)
		got, err := f.InferConst(c.args, c.consts)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s%v with %v = %s, %v; want %s", c.name, c.args, c.consts, got, err, c.want)
		}
	}
}

func TestInferErrors(t *testing.T) {
	cases := []struct {
		name string
		args []types.Type
		msg  string
		err  error
	}{
		{"DATE_FORMAT", []types.Type{tInt, tStr}, "DATE_FORMAT expects a TIMESTAMP or STRING as its 1st argument, got INT", ErrArgumentType},
		{"DATE_FORMAT", []types.Type{tTS3}, "DATE_FORMAT takes 2 arguments, got 1; usage: DATE_FORMAT(timestamp, format)", ErrArgumentCount},
		{"LOWER", []types.Type{tInt}, "LOWER expects a STRING as its 1st argument, got INT", ErrArgumentType},
		{"SUBSTR", []types.Type{tStr, tStr}, "SUBSTR expects an integer as its 2nd argument, got STRING", ErrArgumentType},
		{"CONCAT_WS", []types.Type{tStr}, "CONCAT_WS takes at least 2 arguments, got 1; usage: CONCAT_WS(separator, string1, string2, ...)", ErrArgumentCount},
		{"SUBSTRING", []types.Type{tStr, tInt, tInt, tInt}, "SUBSTRING takes 2 to 3 arguments, got 4; usage: SUBSTRING(string, start[, length])", ErrArgumentCount},
		{"+", []types.Type{tStr, tInt}, "+ expects a number, a date/time or an interval as its 1st argument, got STRING", ErrArgumentType},
		{"+", []types.Type{tTS3, tInt}, "+ cannot be applied to TIMESTAMP(3) and INT", ErrArgumentType},
		{"=", []types.Type{tInt, tBool}, "= cannot compare INT and BOOLEAN", ErrArgumentType},
		{"<", []types.Type{types.Type{Kind: types.Map, Key: &tStr, Elem: &tInt}, types.Type{Kind: types.Map, Key: &tStr, Elem: &tInt}}, "< cannot order MAP<STRING, INT> and MAP<STRING, INT>", ErrArgumentType},
		{"COALESCE", []types.Type{tInt, tStr}, "COALESCE arguments have no common type: INT and STRING", ErrArgumentType},
		{"IF", []types.Type{tInt, tInt, tInt}, "IF expects a BOOLEAN as its 1st argument, got INT", ErrArgumentType},
		{"FLOOR", []types.Type{tStr}, "FLOOR expects a number (or a date/time with a unit: FLOOR(ts TO DAY)) as its 1st argument, got STRING", ErrArgumentType},
		{"FLOOR", []types.Type{tInt, tStr}, "FLOOR expects a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ as its 1st argument, got INT", ErrArgumentType},
		{"EXTRACT", []types.Type{tStr, tStr}, "EXTRACT expects a date/time or an interval as its 2nd argument, got STRING", ErrArgumentType},
		{"AND", []types.Type{tBool, tInt}, "AND expects a BOOLEAN as its 2nd argument, got INT", ErrArgumentType},
		{"HOUR", []types.Type{tDate}, "HOUR expects a TIME, TIMESTAMP or TIMESTAMP_LTZ as its 1st argument, got DATE", ErrArgumentType},
		{"PROCTIME", []types.Type{tInt}, "PROCTIME takes 0 arguments, got 1; usage: PROCTIME()", ErrArgumentCount},
	}
	for _, c := range cases {
		f, _ := Lookup(c.name)
		_, err := f.Infer(c.args)
		if err == nil {
			t.Errorf("%s%v: no error", c.name, c.args)
			continue
		}
		if err.Error() != c.msg {
			t.Errorf("%s%v:\n got %q\nwant %q", c.name, c.args, err, c.msg)
		}
		var se *SignatureError
		if !errors.As(err, &se) || !errors.Is(err, c.err) || se.Func != c.name {
			t.Errorf("%s%v: error %#v is not a SignatureError wrapping %v", c.name, c.args, err, c.err)
		}
	}
}

func TestCommonType(t *testing.T) {
	cases := []struct {
		a, b types.Type
		want types.Type
		ok   bool
	}{
		{tInt, tBig, tBig, true},
		{tIntNN, tBig.WithNotNull(true), tBig.WithNotNull(true), true},
		{tInt, tDec(5, 2), tDec(12, 2), true},
		{tDec(5, 2), tDec(10, 0), tDec(12, 2), true},
		{tFloat, tDouble, tDouble, true},
		{tFloat, tInt, tFloat, true},
		{tVarchar(5), types.Type{Kind: types.Char, Length: 10}, tVarchar(10), true},
		{tDate, tTS3, tTS3, true},
		{types.TimestampType(6), tLTZ3, types.TimestampLTZType(6), true},
		{tNull, tStr, tStr, true},
		{tInt, tStr, types.Type{}, false},
		{tBool, tDate, types.Type{}, false},
	}
	for _, c := range cases {
		got, ok := CommonType(c.a, c.b)
		if ok != c.ok || ok && !got.Equal(c.want) {
			t.Errorf("CommonType(%s, %s) = %s, %v; want %s, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
		if got2, ok2 := CommonType(c.b, c.a); ok2 != ok || ok && !got2.Equal(got) {
			t.Errorf("CommonType is not symmetric for %s, %s", c.a, c.b)
		}
	}
	if got, ok := ComparisonType(tStr, tTS3); !ok || !got.Equal(tTS3) {
		t.Errorf("ComparisonType(STRING, TIMESTAMP(3)) = %s, %v", got, ok)
	}
	if _, ok := ComparisonType(tStr, types.Type{Kind: types.Array, Elem: &tInt}); ok {
		t.Error("a string compares with an array")
	}
}

func TestCanCast(t *testing.T) {
	yes := [][2]types.Type{
		{tStr, tInt}, {tStr, tTS3}, {tStr, tLTZ3}, {tStr, tBool}, {tStr, tDec(5, 2)}, {tInt, tStr},
		{tTS3, tDate}, {tLTZ3, tTS3}, {tDate, tLTZ3}, {tBool, tInt}, {tInt, tBool}, {tDouble, tTiny},
		{tNull, tDate}, {tYM, tInt}, {tBig, tDT}, {tDT, tStr},
	}
	no := [][2]types.Type{
		{tInt, tTS3}, {tBig, tLTZ3}, {tDouble, tBool}, {tDec(5, 2), tBool}, {tDate, tInt}, {tBool, tDate},
		{tTS3, tBig}, {types.Type{Kind: types.Bytes}, tInt},
	}
	for _, c := range yes {
		if !CanCast(c[0], c[1]) {
			t.Errorf("CanCast(%s, %s) is false", c[0], c[1])
		}
	}
	for _, c := range no {
		if CanCast(c[0], c[1]) {
			t.Errorf("CanCast(%s, %s) is true", c[0], c[1])
		}
		if _, err := CastFunc(c[0], c[1], nil); !errors.Is(err, ErrUnsupportedCast) {
			t.Errorf("CastFunc(%s, %s): %v", c[0], c[1], err)
		}
	}
}
