package funcs

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestLookupIsCaseInsensitive(t *testing.T) {
	for _, name := range []string{"date_format", "Date_Format", " DATE_FORMAT ", "is not null", "like"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(%q) found nothing", name)
		}
	}
	if _, ok := Lookup("NO_SUCH_FUNCTION"); ok {
		t.Error("Lookup found a function that does not exist")
	}
}

func TestEveryFunctionIsDescribed(t *testing.T) {
	for name, f := range registry {
		if f.Name != name || f.Infer == nil || f.Impl == nil || f.Syntax == "" || f.Doc == "" {
			t.Errorf("%s is incompletely defined: %+v", name, f)
		}
		if f.MaxArgs >= 0 && f.MaxArgs < f.MinArgs {
			t.Errorf("%s takes %d to %d arguments", name, f.MinArgs, f.MaxArgs)
		}
		if strings.ToUpper(name) != name {
			t.Errorf("%s is not upper case", name)
		}
	}
}

func TestNamesAreSortedFunctionsOnly(t *testing.T) {
	names := Names()
	if !sort.StringsAreSorted(names) {
		t.Error("Names is not sorted")
	}
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	for _, want := range []string{"DATE_FORMAT", "JSON_VALUE", "SUBSTR", "CHARACTER_LENGTH", "CEILING", "TO_TIMESTAMP_LTZ"} {
		if !has[want] {
			t.Errorf("Names lacks %s", want)
		}
	}
	for _, op := range []string{"+", "=", "AND", "IS NULL", "LIKE", "||", "NEG", "BETWEEN"} {
		if has[op] {
			t.Errorf("Names lists operator %s", op)
		}
	}
	all := AllNames()
	if !sort.StringsAreSorted(all) || len(all) <= len(names) {
		t.Error("AllNames is not the sorted union with aggregates and window functions")
	}
}

func TestClosest(t *testing.T) {
	for in, want := range map[string]string{
		"FLOR": "FLOOR", "date_formt": "DATE_FORMAT", "SUBSTING": "SUBSTRING", "COUNTT": "COUNT",
		"TUMBLE_STRT": "TUMBLE_START", "XQZWVK_PLONK": "",
	} {
		if got := Closest(in); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAggregateAndWindowNames(t *testing.T) {
	for _, n := range []string{"count", "SUM", "APPROX_COUNT_DISTINCT", "FIRST_VALUE", "LAST_VALUE", "ROW_NUMBER"} {
		if !IsAggregate(n) {
			t.Errorf("IsAggregate(%s) is false", n)
		}
	}
	for _, n := range []string{"TUMBLE", "hop", "SESSION", "CUMULATE", "TUMBLE_START", "TUMBLE_ROWTIME", "HOP_END"} {
		if !IsWindowFunc(n) {
			t.Errorf("IsWindowFunc(%s) is false", n)
		}
	}
	if IsAggregate("UPPER") || IsWindowFunc("FLOOR") {
		t.Error("a scalar function is taken for an aggregate or window function")
	}
}

func TestBindFailsOnBadConstants(t *testing.T) {
	cases := []struct {
		name string
		args []types.Value
	}{
		{"DATE_FORMAT", []types.Value{ts(2024, 1, 1, 0, 0, 0, 0), s("yyyy-MM-dd 'unterminated")}},
		{"DATE_FORMAT", []types.Value{ts(2024, 1, 1, 0, 0, 0, 0), s("YYYY-ww")}},
		{"REGEXP_EXTRACT", []types.Value{s("abc"), s("(a")}},
		{"LIKE", []types.Value{s("abc"), s("a\\"), s("\\")}},
		{"LIKE", []types.Value{s("abc"), s("a%"), s("ab")}},
		{"FLOOR", []types.Value{ts(2024, 1, 1, 0, 0, 0, 0), s("FORTNIGHT")}},
		{"EXTRACT", []types.Value{s("EON"), ts(2024, 1, 1, 0, 0, 0, 0)}},
		{"JSON_VALUE", []types.Value{s("{}"), s("a.b")}},
		{"TO_TIMESTAMP_LTZ", []types.Value{i64(1), i32(6)}},
	}
	ctx := ctxIn(nil)
	for _, c := range cases {
		f, _ := Lookup(c.name)
		_, err := f.Bind(ctx, siteOf(c.args))
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Bind %s%v: error %v, want ErrInvalidArgument", c.name, c.args, err)
		}
	}
}

func TestNowFunctionsNeedAClock(t *testing.T) {
	f, _ := Lookup("CURRENT_TIMESTAMP")
	if _, err := f.Bind(&Context{}, Site{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CURRENT_TIMESTAMP without a clock: %v", err)
	}
	if f.Deterministic {
		t.Error("CURRENT_TIMESTAMP is deterministic")
	}
	if g, _ := Lookup("UPPER"); !g.Deterministic {
		t.Error("UPPER is not deterministic")
	}
}

// TestStrictFunctionsReturnNullForNull checks the NULL rule on every function that does
// not opt out of it: NULL arguments give NULL, through Impl and through Bind.
func TestStrictFunctionsReturnNullForNull(t *testing.T) {
	ctx := ctxIn(nil)
	for name, f := range registry {
		if f.nullSafe || f.MinArgs == 0 {
			continue
		}
		args := make([]types.Value, f.MinArgs)
		if v, err := f.Impl(ctx, args); err != nil || !v.IsNull() {
			t.Errorf("%s(NULL...) = %s, %v", name, show(v), err)
		}
		k, err := f.Bind(ctx, Site{Args: make([]types.Type, len(args)), Consts: make([]*types.Value, len(args))})
		if err != nil {
			t.Errorf("Bind %s: %v", name, err)
			continue
		}
		if v, err := k.Call(args); err != nil || !v.IsNull() {
			t.Errorf("bound %s(NULL...) = %s, %v", name, show(v), err)
		}
	}
}

func TestLoadZone(t *testing.T) {
	for name, wantOffset := range map[string]int{"UTC": 0, "Asia/Shanghai": 8 * 3600, "GMT+08:00": 8 * 3600, "-05:30": -(5*3600 + 1800)} {
		loc, err := LoadZone(name)
		if err != nil {
			t.Errorf("LoadZone(%q): %v", name, err)
			continue
		}
		if _, off := fixedNow.In(loc).Zone(); off != wantOffset {
			t.Errorf("LoadZone(%q) offset %d, want %d", name, off, wantOffset)
		}
	}
	if _, err := LoadZone("Mars/Olympus"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("LoadZone of an unknown zone: %v", err)
	}
}

func TestWrongArgumentCountIsAnErrorNotAPanic(t *testing.T) {
	ctx := ctxIn(nil)
	for name, f := range registry {
		n := f.MaxArgs + 1
		if f.MaxArgs < 0 {
			if f.MinArgs == 0 {
				continue
			}
			n = f.MinArgs - 1
		}
		args := make([]types.Value, n)
		for i := range args {
			args[i] = s("x")
		}
		if _, err := f.Impl(ctx, args); !errors.Is(err, ErrArgumentCount) {
			t.Errorf("%s with %d arguments: %v", name, n, err)
		}
		if _, err := f.Bind(ctx, Site{Args: make([]types.Type, n)}); !errors.Is(err, ErrArgumentCount) {
			t.Errorf("Bind %s with %d arguments: %v", name, n, err)
		}
	}
}
