package funcs

import (
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestCollectionFunctions(t *testing.T) {
	arr := types.ArrayValue([]types.Value{i32(10), null, i32(30)})
	m := types.MapValue([]types.MapEntry{{Key: s("a"), Value: i32(1)}, {Key: s("b"), Value: null}})
	row := types.RowValue([]types.Value{i64(7), s("x")})
	runCases(t, ctxIn(nil), []valueCase{
		{"ITEM", []types.Value{arr, i32(1)}, i32(10), nil},
		{"ITEM", []types.Value{arr, i64(3)}, i32(30), nil},
		{"ITEM", []types.Value{arr, i32(2)}, null, nil},
		{"ITEM", []types.Value{arr, i32(0)}, null, nil},  // arrays start at 1
		{"ITEM", []types.Value{arr, i32(4)}, null, nil},  // out of range is NULL, as in Flink
		{"ITEM", []types.Value{arr, i32(-1)}, null, nil}, // so is a negative index
		{"ITEM", []types.Value{null, i32(1)}, null, nil},
		{"ITEM", []types.Value{arr, null}, null, nil},
		{"ITEM", []types.Value{m, s("a")}, i32(1), nil},
		{"ITEM", []types.Value{m, s("b")}, null, nil},
		{"ITEM", []types.Value{m, s("z")}, null, nil},
		{"CARDINALITY", []types.Value{arr}, i32(3), nil},
		{"CARDINALITY", []types.Value{m}, i32(2), nil},
		{"CARDINALITY", []types.Value{types.ArrayValue(nil)}, i32(0), nil},
		{"CARDINALITY", []types.Value{null}, null, nil},
		{"ELEMENT", []types.Value{types.ArrayValue([]types.Value{s("only")})}, s("only"), nil},
		{"ELEMENT", []types.Value{types.ArrayValue(nil)}, null, nil},
		{"ELEMENT", []types.Value{arr}, null, ErrInvalidArgument},
		{".", []types.Value{row, i32(0)}, i64(7), nil},
		{".", []types.Value{row, i32(1)}, s("x"), nil},
		{".", []types.Value{null, i32(1)}, null, nil}, // a field of a NULL row is NULL
		{"ARRAY", []types.Value{i32(1), null}, types.ArrayValue([]types.Value{i32(1), null}), nil},
		{"ROW", []types.Value{i32(1), null, s("a")}, types.RowValue([]types.Value{i32(1), null, s("a")}), nil},
		{"MAP", []types.Value{s("k"), i32(1), s("j"), i32(2), s("k"), i32(3)},
			types.MapValue([]types.MapEntry{{Key: s("k"), Value: i32(3)}, {Key: s("j"), Value: i32(2)}}), nil},
	})
}

func TestConstructorsConvertToTheCommonType(t *testing.T) {
	f, _ := Lookup("ARRAY")
	rt, err := f.Infer([]types.Type{tIntNN, tDouble})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.String(); got != "ARRAY<DOUBLE> NOT NULL" {
		t.Fatalf("ARRAY[INT NOT NULL, DOUBLE] is %s", got)
	}
	k, err := f.Bind(ctxIn(nil), Site{Args: []types.Type{tIntNN, tDouble}, Consts: make([]*types.Value, 2), Result: rt})
	if err != nil {
		t.Fatal(err)
	}
	v, err := k.Call([]types.Value{i32(1), f64(2.5)})
	if err != nil || v.String() != "[1.0, 2.5]" || v.Elems()[0].Kind() != types.Double {
		t.Fatalf("ARRAY[1, 2.5] = %s, %v", show(v), err)
	}
	if _, err := f.Infer([]types.Type{tInt, tStr}); err == nil {
		t.Error("ARRAY[INT, STRING] typed")
	}
	r, _ := Lookup("ROW")
	if rt, _ := r.Infer([]types.Type{tIntNN, tStr}); rt.String() != "ROW<`EXPR$0` INT NOT NULL, `EXPR$1` STRING> NOT NULL" {
		t.Errorf("ROW(INT NOT NULL, STRING) is %s", rt)
	}
	mp, _ := Lookup("MAP")
	if rt, _ := mp.Infer([]types.Type{tStr, tIntNN, tStr, tBig}); rt.String() != "MAP<STRING, BIGINT> NOT NULL" {
		t.Errorf("MAP[STRING, INT NOT NULL, STRING, BIGINT] is %s", rt)
	}
	if _, err := mp.Infer([]types.Type{tStr, tInt, tStr}); err == nil {
		t.Error("MAP with an odd number of arguments typed")
	}
	it, _ := Lookup("ITEM")
	arrT := types.Type{Kind: types.Array, Elem: &tIntNN}
	if rt, err := it.Infer([]types.Type{arrT, tIntNN}); err != nil || rt.String() != "INT" {
		t.Errorf("ITEM(ARRAY<INT NOT NULL>, INT) is %s, %v", rt, err)
	}
	if _, err := it.Infer([]types.Type{arrT, tStr}); err == nil {
		t.Error("ARRAY indexed by a STRING typed")
	}
	if _, err := it.Infer([]types.Type{tInt, tInt}); err == nil {
		t.Error("INT indexed typed")
	}
}

func TestStrToMap(t *testing.T) {
	m := func(kv ...types.Value) types.Value {
		var es []types.MapEntry
		for i := 0; i < len(kv); i += 2 {
			es = append(es, types.MapEntry{Key: kv[i], Value: kv[i+1]})
		}
		return types.MapValue(es)
	}
	runCases(t, ctxIn(nil), []valueCase{
		{"STR_TO_MAP", []types.Value{s("a=1,b=2")}, m(s("a"), s("1"), s("b"), s("2")), nil},
		{"STR_TO_MAP", []types.Value{s("a=1,b,c=x=y")}, m(s("a"), s("1"), s("b"), null, s("c"), s("x=y")), nil},
		{"STR_TO_MAP", []types.Value{s("a:1;a:2"), s(";"), s(":")}, m(s("a"), s("2")), nil},
		{"STR_TO_MAP", []types.Value{s("a 1 | b 2"), s(`\s*\|\s*`), s(" ")}, m(s("a"), s("1"), s("b"), s("2")), nil},
		{"STR_TO_MAP", []types.Value{s("")}, m(s(""), null), nil},
		{"STR_TO_MAP", []types.Value{null}, null, nil},
	})
}
