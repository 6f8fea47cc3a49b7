package funcs

import (
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestJSONConstructors(t *testing.T) {
	row := types.RowValue([]types.Value{i32(1), s("x")})
	runCases(t, ctxIn(nil), []valueCase{
		{"JSON_OBJECT", []types.Value{s("NULL")}, s("{}"), nil},
		{"JSON_OBJECT", []types.Value{s("NULL"), s("K1"), s("V1"), s("K2"), i64(2)}, s(`{"K1":"V1","K2":2}`), nil},
		{"JSON_OBJECT", []types.Value{s("NULL"), s("K1"), null}, s(`{"K1":null}`), nil},
		{"JSON_OBJECT", []types.Value{s("ABSENT"), s("K1"), null, s("K2"), tru}, s(`{"K2":true}`), nil},
		{"JSON_OBJECT", []types.Value{s("NULL:r"), s("K1"), s(`{"K2":"V"}`)}, s(`{"K1":{"K2":"V"}}`), nil},
		{"JSON_OBJECT", []types.Value{s("NULL:-"), s("K1"), s(`{"K2":"V"}`)}, s(`{"K1":"{\"K2\":\"V\"}"}`), nil},
		{"JSON_OBJECT", []types.Value{s("NULL"), null, i32(1)}, null, ErrInvalidArgument},
		{"JSON_ARRAY", []types.Value{s("ABSENT")}, s("[]"), nil},
		{"JSON_ARRAY", []types.Value{s("ABSENT"), i32(1), null, s("a<b\n"), f64(1.5), dec("2.50")}, s(`[1,"a<b\n",1.5,2.5]`), nil},
		{"JSON_ARRAY", []types.Value{s("NULL"), null, types.ArrayValue([]types.Value{i32(1), null})}, s(`[null,[1,null]]`), nil},
		{"JSON_ARRAY", []types.Value{s("NULL:-r"), s("x"), s("[1]")}, s(`["x",[1]]`), nil},
		{"JSON_ARRAY", []types.Value{s("ABSENT"), row}, s(`[{"EXPR$0":1,"EXPR$1":"x"}]`), nil},
	})
	if JSONEncodable(tTS3) || !JSONEncodable(types.Type{Kind: types.Array, Elem: &tInt}) {
		t.Error("JSONEncodable is wrong about TIMESTAMP or ARRAY<INT>")
	}
	o, _ := Lookup("JSON_OBJECT")
	if _, err := o.Infer([]types.Type{tStr, tInt, tInt}); err == nil {
		t.Error("JSON_OBJECT with an INT key typed")
	}
	if rt, err := o.Infer([]types.Type{tStr, tStr, tInt}); err != nil || rt.String() != "STRING NOT NULL" {
		t.Errorf("JSON_OBJECT is %s, %v", rt, err)
	}
}
