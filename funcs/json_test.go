package funcs

import (
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestJSON(t *testing.T) {
	doc := s(`{"a": {"b": "x", "n": 12, "f": 1.50, "e": 1e2, "t": true, "nil": null, "arr": [10, {"c": "deep"}]},
		"a b": "spaced", "a.b": [0.998, 0.996], "big": 123456789012345678901}`)
	runCases(t, ctxIn(nil), []valueCase{
		{"JSON_VALUE", []types.Value{doc, s("$.a.b")}, s("x"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.n")}, s("12"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.f")}, s("1.5"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.e")}, s("100.0"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.t")}, s("true"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.nil")}, null, nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a")}, null, nil}, // not a scalar
		{"JSON_VALUE", []types.Value{doc, s("$.a.arr[1].c")}, s("deep"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.arr[0]")}, s("10"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.arr[5]")}, null, nil},
		{"JSON_VALUE", []types.Value{doc, s("lax $.missing")}, null, nil},
		{"JSON_VALUE", []types.Value{doc, s("strict $.missing")}, null, nil},
		{"JSON_VALUE", []types.Value{doc, s("$.['a b']")}, s("spaced"), nil},
		{"JSON_VALUE", []types.Value{doc, s(`$["a.b"][0]`)}, s("0.998"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.big")}, s("123456789012345678901"), nil},
		{"JSON_VALUE", []types.Value{doc, s("$.a.arr[*]")}, null, nil},
		{"JSON_VALUE", []types.Value{s("not json"), s("$.a")}, null, nil},
		{"JSON_VALUE", []types.Value{s(`"just a string"`), s("$")}, s("just a string"), nil},
		{"JSON_VALUE", []types.Value{null, s("$.a")}, null, nil},
		{"JSON_VALUE", []types.Value{doc, s("a.b")}, null, nil}, // a bad per-row path is NULL
		{"JSON_QUERY", []types.Value{doc, s("$.a.arr")}, s(`[10, {"c": "deep"}]`), nil},
		{"JSON_QUERY", []types.Value{doc, s("$.a.b")}, null, nil},
		{"JSON_EXISTS", []types.Value{s(`{"a": true}`), s("$.a")}, tru, nil},
		{"JSON_EXISTS", []types.Value{s(`{"a": true}`), s("$.b")}, fals, nil},
		{"JSON_EXISTS", []types.Value{s(`{"a": [{"b": 1}]}`), s("$.a[0].b")}, tru, nil},
		{"JSON_EXISTS", []types.Value{s(`{"a": null}`), s("$.a")}, tru, nil},
		{"JSON_EXISTS", []types.Value{s(`{"a": [{"b": 1}, {"c": 1}]}`), s("$.a[*].c")}, tru, nil},
		{"JSON_EXISTS", []types.Value{s(`{`), s("$")}, fals, nil},
		{"IS JSON", []types.Value{s("1")}, tru, nil},
		{"IS JSON", []types.Value{s("abc")}, fals, nil},
		{"IS JSON", []types.Value{null}, fals, nil},
		{"IS JSON", []types.Value{s("{}"), s("OBJECT")}, tru, nil},
		{"IS JSON", []types.Value{s("{}"), s("SCALAR")}, fals, nil},
		{"IS JSON", []types.Value{s("[]"), s("ARRAY")}, tru, nil},
	})
	for _, bad := range []string{"a", "$.", "$[x]", "$['open", "$[1", "$.a..b"} {
		if _, err := compileJSONPath(bad); err == nil {
			t.Errorf("path %q compiled", bad)
		}
	}
}
