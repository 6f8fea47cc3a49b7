package eval

import (
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

var (
	fixedNow = time.Date(2024, 3, 10, 1, 2, 3, 456789000, time.UTC)
	utcEnv   = Env{Now: func() time.Time { return fixedNow }}

	tInt  = types.TypeInt
	tBig  = types.TypeBigInt
	tStr  = types.TypeString
	tBool = types.TypeBoolean
	tTS3  = types.TimestampType(3)
	tLTZ3 = types.TimestampLTZType(3)
	tDec  = func(p, s int) types.Type { return types.Type{Kind: types.Decimal, Prec: p, Scale: s} }

	null = types.NullValue
	tru  = types.BoolValue(true)
	fals = types.BoolValue(false)
	i32  = func(n int64) types.Value { return types.IntValue(types.Int, n) }
	i64  = types.BigIntValue
	str  = types.StringValue
	dec  = func(x string) types.Value {
		r, ok := new(big.Rat).SetString(x)
		if !ok {
			panic(x)
		}
		return types.DecimalValue(r)
	}
)

func col(i int, name string, t types.Type) *planner.ColumnRef {
	return &planner.ColumnRef{Index: i, Name: name, T: t}
}

func lit(v types.Value, t types.Type) *planner.Literal { return &planner.Literal{Value: v, T: t} }
func slit(s string) *planner.Literal                   { return lit(str(s), tStr) }
func ilit(n int64) *planner.Literal                    { return lit(i32(n), tInt) }

// fn builds a call typed the way the planner types it: by the function's Infer.
func fn(t testing.TB, name string, args ...planner.Expr) *planner.Call {
	t.Helper()
	f, ok := funcs.Lookup(name)
	if !ok {
		t.Fatalf("no function %s", name)
	}
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	rt, err := f.Infer(ts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &planner.Call{Func: name, Args: args, T: rt}
}

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

func mustCompile(t testing.TB, e planner.Expr, env Env) Evaluator {
	t.Helper()
	ev, err := Compile(e, env)
	if err != nil {
		t.Fatalf("compile %s: %v", e, err)
	}
	return ev
}

func check(t *testing.T, e planner.Expr, env Env, row types.Row, want types.Value) {
	t.Helper()
	got, err := mustCompile(t, e, env)(row)
	if err != nil {
		t.Errorf("%s on %v: %v", e, row, err)
		return
	}
	if !sameValue(got, want) {
		t.Errorf("%s on %v = %s, want %s", e, row, show(got), show(want))
	}
}

func TestColumnsAndLiterals(t *testing.T) {
	row := types.Row{i64(7), str("x"), null}
	check(t, col(0, "id", tBig), utcEnv, row, i64(7))
	check(t, col(2, "n", tInt), utcEnv, row, null)
	check(t, lit(i32(5), tBig), utcEnv, nil, i64(5)) // an INT value in a BIGINT literal is converted
	check(t, lit(dec("1.005"), tDec(5, 2)), utcEnv, nil, dec("1.01"))
	_, err := mustCompile(t, col(5, "late", tInt), utcEnv)(row)
	if !errors.Is(err, ErrShortRow) || !strings.HasPrefix(err.Error(), "$5:late: ") {
		t.Errorf("short row: %v", err)
	}
	_, err = mustCompile(t, fn(t, ">", col(5, "late", tInt), ilit(1)), utcEnv)(row)
	if !errors.Is(err, ErrShortRow) {
		t.Errorf("short row through a comparison: %v", err)
	}
}

func TestRuntimeErrorsNameTheExpression(t *testing.T) {
	amount := col(2, "amount", tStr)
	cast := &planner.Cast{X: amount, T: tInt}
	row := types.Row{null, null, str("abc")}
	_, err := mustCompile(t, cast, utcEnv)(row)
	if err == nil || err.Error() != `CAST($2:amount AS INT): cannot parse "abc" as INT` {
		t.Fatalf("error %v", err)
	}
	var ee *ExprError
	if !errors.As(err, &ee) || !errors.Is(err, funcs.ErrCastFailed) {
		t.Errorf("error %#v is not an ExprError wrapping ErrCastFailed", err)
	}
	// The innermost failing expression is named, once.
	_, err = mustCompile(t, fn(t, "UPPER", &planner.Cast{X: cast, T: tStr}), utcEnv)(row)
	if err == nil || err.Error() != `CAST($2:amount AS INT): cannot parse "abc" as INT` {
		t.Errorf("nested error %v", err)
	}
	div := fn(t, "/", col(0, "a", tInt), col(1, "b", tInt))
	_, err = mustCompile(t, div, utcEnv)(types.Row{i32(1), i32(0)})
	if !errors.Is(err, funcs.ErrDivisionByZero) || err.Error() != "($0:a / $1:b): division by zero" {
		t.Errorf("division error %v", err)
	}
	// TRY_CAST is NULL instead.
	check(t, &planner.Cast{X: amount, T: tInt, Try: true}, utcEnv, row, null)
	check(t, &planner.Cast{X: amount, T: tInt}, utcEnv, types.Row{null, null, str(" 42 ")}, i32(42))
}

func TestCompileErrors(t *testing.T) {
	ts := col(0, "ts", tTS3)
	cases := []struct {
		e    planner.Expr
		want string
		err  error
	}{
		{&planner.Call{Func: "FLOR", Args: []planner.Expr{ilit(1)}, T: tInt}, "FLOR(1): unknown function FLOR, did you mean FLOOR?", funcs.ErrUnknownFunction},
		{fn(t, "DATE_FORMAT", ts, slit("yyyy-MM-dd 'oops")), "", funcs.ErrInvalidArgument},
		{fn(t, "LIKE", col(1, "s", tStr), slit("a!"), slit("!")), "", funcs.ErrInvalidArgument},
		{fn(t, "REGEXP_EXTRACT", col(1, "s", tStr), slit("(unclosed")), "", funcs.ErrInvalidArgument},
		{fn(t, "FLOOR", ts, slit("FORTNIGHT")), "FLOOR($0:ts, 'FORTNIGHT'): invalid argument: unknown time unit \"FORTNIGHT\"", funcs.ErrInvalidArgument},
		{&planner.Cast{X: col(0, "n", tInt), T: tTS3}, "CAST($0:n AS TIMESTAMP(3)): unsupported cast from INT to TIMESTAMP(3)", funcs.ErrUnsupportedCast},
	}
	for _, c := range cases {
		_, err := Compile(c.e, utcEnv)
		if !errors.Is(err, c.err) || c.want != "" && err.Error() != c.want {
			t.Errorf("Compile(%s): %v, want %q (%v)", c.e, err, c.want, c.err)
		}
	}
	// Without a clock, reading the time cannot compile; other expressions can.
	if _, err := Compile(fn(t, "CURRENT_TIMESTAMP"), Env{}); err == nil || !strings.Contains(err.Error(), "no clock") {
		t.Errorf("CURRENT_TIMESTAMP without a clock: %v", err)
	}
	if _, err := Compile(fn(t, "UPPER", slit("x")), Env{}); err != nil {
		t.Errorf("UPPER without a clock: %v", err)
	}
	if _, err := CompilePredicate(col(0, "n", tInt), utcEnv); !errors.Is(err, ErrNotPredicate) {
		t.Errorf("CompilePredicate of an INT: %v", err)
	}
}

func TestDecimalResultsTakeThePlannedScale(t *testing.T) {
	a, b := col(0, "a", tDec(10, 2)), col(1, "b", tDec(5, 3))
	div := fn(t, "/", a, b) // DECIMAL(19, 8)
	check(t, div, utcEnv, types.Row{dec("1.00"), dec("3.000")}, dec("0.33333333"))
	check(t, div, utcEnv, types.Row{dec("2.00"), dec("3.000")}, dec("0.66666667"))
	// CASE of INT and DECIMAL branches is DECIMAL.
	c := &planner.Case{Whens: []planner.CaseWhen{{Cond: col(2, "c", tBool), Result: ilit(1)}},
		Else: lit(dec("2.5"), tDec(2, 1)), T: tDec(11, 1)}
	check(t, c, utcEnv, types.Row{null, null, tru}, dec("1"))
	got, _ := mustCompile(t, c, utcEnv)(types.Row{null, null, tru})
	if got.Kind() != types.Decimal {
		t.Errorf("CASE branch kind %s, want DECIMAL", got.Kind())
	}
}

func TestLogic(t *testing.T) {
	x, y := col(0, "x", tBool), col(1, "y", tBool)
	and, or := fn(t, "AND", x, y), fn(t, "OR", x, y)
	vals := []types.Value{tru, fals, null}
	wantAnd := [3][3]types.Value{{tru, fals, null}, {fals, fals, fals}, {null, fals, null}}
	wantOr := [3][3]types.Value{{tru, tru, tru}, {tru, fals, null}, {tru, null, null}}
	for i, a := range vals {
		for j, b := range vals {
			row := types.Row{a, b}
			check(t, and, utcEnv, row, wantAnd[i][j])
			check(t, or, utcEnv, row, wantOr[i][j])
			p, err := CompilePredicate(and, utcEnv)
			if err != nil {
				t.Fatal(err)
			}
			if keep, _ := p(row); keep != (wantAnd[i][j].Kind() == types.Boolean && wantAnd[i][j].Bool()) {
				t.Errorf("predicate %s on %v = %v", and, row, keep)
			}
		}
	}
	// Three operands, and constants folded in.
	z := col(2, "z", tBool)
	and3 := &planner.Call{Func: "AND", Args: []planner.Expr{x, y, z}, T: tBool}
	check(t, and3, utcEnv, types.Row{tru, null, fals}, fals)
	check(t, and3, utcEnv, types.Row{tru, null, tru}, null)
	check(t, fn(t, "AND", x, lit(null, types.TypeBoolean)), utcEnv, types.Row{tru}, null)
	check(t, fn(t, "AND", x, lit(null, types.TypeBoolean)), utcEnv, types.Row{fals}, fals)
	check(t, fn(t, "OR", x, lit(tru, tBool)), utcEnv, types.Row{null}, tru)
	// Short circuit: the right side is not evaluated when the left decides.
	boom := fn(t, "=", fn(t, "/", ilit(1), col(1, "zero", tInt)), ilit(1))
	check(t, fn(t, "AND", x, boom), utcEnv, types.Row{fals, i32(0)}, fals)
	check(t, fn(t, "OR", x, boom), utcEnv, types.Row{tru, i32(0)}, tru)
	if _, err := mustCompile(t, fn(t, "AND", x, boom), utcEnv)(types.Row{tru, i32(0)}); !errors.Is(err, funcs.ErrDivisionByZero) {
		t.Errorf("right side evaluated: %v", err)
	}
	check(t, fn(t, "NOT", x), utcEnv, types.Row{null}, null)
	check(t, fn(t, "IS NOT TRUE", x), utcEnv, types.Row{null}, tru)
}

func TestLazyConditionals(t *testing.T) {
	n := col(0, "n", tInt)
	// IF(n <> 0, 10 / n, 0) never divides by zero.
	ife := fn(t, "IF", fn(t, "<>", n, ilit(0)), fn(t, "/", ilit(10), n), ilit(0))
	check(t, ife, utcEnv, types.Row{i32(0)}, i32(0))
	check(t, ife, utcEnv, types.Row{i32(5)}, i32(2))
	check(t, ife, utcEnv, types.Row{null}, i32(0))
	co := fn(t, "COALESCE", n, fn(t, "/", ilit(1), ilit(0)))
	check(t, co, utcEnv, types.Row{i32(3)}, i32(3))
	co2 := fn(t, "COALESCE", n, lit(dec("2.5"), tDec(2, 1)))
	check(t, co2, utcEnv, types.Row{null}, dec("2.5"))
	check(t, co2, utcEnv, types.Row{i32(4)}, dec("4"))
	check(t, fn(t, "IFNULL", n, lit(i64(9), tBig)), utcEnv, types.Row{null}, i64(9))
	check(t, fn(t, "IFNULL", n, lit(i64(9), tBig)), utcEnv, types.Row{i32(1)}, i64(1))
	check(t, fn(t, "NULLIF", n, ilit(1)), utcEnv, types.Row{i32(1)}, null)
	c := &planner.Case{Whens: []planner.CaseWhen{
		{Cond: fn(t, ">", n, ilit(10)), Result: slit("big")},
		{Cond: fn(t, ">", n, ilit(0)), Result: slit("small")},
	}, T: tStr}
	check(t, c, utcEnv, types.Row{i32(11)}, str("big"))
	check(t, c, utcEnv, types.Row{i32(1)}, str("small"))
	check(t, c, utcEnv, types.Row{i32(-1)}, null)
	check(t, c, utcEnv, types.Row{null}, null)
}

func TestIn(t *testing.T) {
	n := col(0, "n", tBig)
	s := col(0, "s", tStr)
	ts := col(0, "ts", tTS3)
	in := func(x planner.Expr, not bool, items ...planner.Expr) *planner.In {
		return &planner.In{X: x, List: items, Not: not}
	}
	cases := []struct {
		e    planner.Expr
		row  types.Row
		want types.Value
	}{
		{in(n, false, ilit(1), ilit(2), ilit(3)), types.Row{i64(2)}, tru},
		{in(n, false, ilit(1), ilit(2), ilit(3)), types.Row{i64(4)}, fals},
		{in(n, false, ilit(1), lit(null, tInt)), types.Row{i64(1)}, tru},
		{in(n, false, ilit(1), lit(null, tInt)), types.Row{i64(4)}, null},
		{in(n, false, ilit(1)), types.Row{null}, null},
		{in(n, true, ilit(1), ilit(2)), types.Row{i64(4)}, tru},
		{in(n, true, ilit(1), lit(null, tInt)), types.Row{i64(4)}, null},
		{in(n, true, ilit(1), lit(null, tInt)), types.Row{i64(1)}, fals},
		{in(n, false, lit(dec("2.0"), tDec(2, 1))), types.Row{i64(2)}, tru},
		{in(n, false, lit(dec("2.5"), tDec(2, 1))), types.Row{i64(2)}, fals},
		{in(s, false, slit("a"), slit("b")), types.Row{str("b")}, tru},
		{in(s, false, slit("a"), slit("b")), types.Row{str("c")}, fals},
		{in(ts, false, slit("2024-01-01 00:00:00"), slit("2024-01-02 00:00:00")),
			types.Row{types.TimestampValue(19724 * 86_400_000_000)}, tru},
		{in(col(0, "d", types.TypeDate), false, lit(types.TimestampValue(19724*86_400_000_000), tTS3)),
			types.Row{types.DateValue(19724)}, tru},
		{in(col(0, "d", types.TypeDate), false, lit(types.TimestampValue(19724*86_400_000_000+1), tTS3)),
			types.Row{types.DateValue(19724)}, fals},
		{in(n, false, col(1, "m", tBig), ilit(7)), types.Row{i64(5), i64(5)}, tru},
		{in(n, false, col(1, "m", tBig), ilit(7)), types.Row{i64(6), null}, null},
		{in(n, true, col(1, "m", tBig), ilit(7)), types.Row{i64(7), i64(5)}, fals},
	}
	for _, c := range cases {
		check(t, c.e, utcEnv, c.row, c.want)
	}
	if _, err := Compile(in(n, false, slit("x"), lit(tru, tBool)), utcEnv); !errors.Is(err, funcs.ErrArgumentType) {
		t.Errorf("IN over incomparable items: %v", err)
	}
}

func TestComparisonFastPath(t *testing.T) {
	id := col(0, "id", tBig)
	ops := map[string]func(a, b int64) bool{
		"=": func(a, b int64) bool { return a == b }, "<>": func(a, b int64) bool { return a != b },
		"<": func(a, b int64) bool { return a < b }, "<=": func(a, b int64) bool { return a <= b },
		">": func(a, b int64) bool { return a > b }, ">=": func(a, b int64) bool { return a >= b },
	}
	for op, test := range ops {
		for _, v := range []types.Value{i64(99), i64(100), i64(101), null} {
			want, swapped := null, null
			if !v.IsNull() {
				want, swapped = types.BoolValue(test(v.Int(), 100)), types.BoolValue(test(100, v.Int()))
			}
			check(t, fn(t, op, id, ilit(100)), utcEnv, types.Row{v}, want)    // column vs literal
			check(t, fn(t, op, ilit(100), id), utcEnv, types.Row{v}, swapped) // the general int path
			check(t, fn(t, op, id, col(1, "k", tInt)), utcEnv, types.Row{v, i32(100)}, want)
		}
	}
	check(t, fn(t, ">", id, lit(null, tBig)), utcEnv, types.Row{i64(1)}, null)
	check(t, fn(t, "=", col(0, "a", tInt), col(1, "b", tBig)), utcEnv, types.Row{i32(3), i64(3)}, tru)
}

func TestStringAndTimeCalls(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	shEnv := Env{Location: sh, Now: utcEnv.Now}
	s := col(0, "s", tStr)
	ltz := col(1, "ltz", tLTZ3)
	instant := types.TimestampLTZValue(time.Date(2024, 3, 9, 20, 0, 0, 0, time.UTC).UnixMicro())
	row := types.Row{str("Hello World"), instant}
	check(t, fn(t, "LIKE", s, slit("Hello%")), shEnv, row, tru)
	check(t, fn(t, "NOT LIKE", s, slit("%xyz%")), shEnv, row, tru)
	check(t, fn(t, "LIKE", s, col(2, "p", tStr)), shEnv, types.Row{str("ab"), null, str("a_")}, tru)
	check(t, fn(t, "SUBSTRING", s, ilit(7), ilit(3)), shEnv, row, str("Wor"))
	check(t, fn(t, "CONCAT", s, slit("!"), ilit(1)), shEnv, row, str("Hello World!1"))
	check(t, fn(t, "REGEXP_EXTRACT", s, slit(`(\w+) (\w+)`), ilit(2)), shEnv, row, str("World"))
	check(t, fn(t, "DATE_FORMAT", ltz, slit("yyyy-MM-dd HH:mm")), shEnv, row, str("2024-03-10 04:00"))
	// FLOOR(ltz TO DAY) in Shanghai: the day started at 16:00 UTC the day before.
	floor := fn(t, "FLOOR", ltz, slit("DAY"))
	want := types.TimestampLTZValue(time.Date(2024, 3, 9, 16, 0, 0, 0, time.UTC).UnixMicro())
	check(t, floor, shEnv, row, want)
	check(t, floor, utcEnv, row, types.TimestampLTZValue(time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC).UnixMicro()))
	check(t, fn(t, "CURRENT_TIMESTAMP"), shEnv, nil, types.TimestampLTZValue(fixedNow.UnixMicro()/1000*1000))
	check(t, fn(t, "CURRENT_DATE"), shEnv, nil, types.DateValue(19792))
	check(t, fn(t, "JSON_VALUE", s, slit("$.a")), shEnv, types.Row{str(`{"a": 1.5}`)}, str("1.5"))
	// JSON_VALUE(... RETURNING INT) is TRY_CAST of the string.
	jv := &planner.Cast{X: fn(t, "JSON_VALUE", s, slit("$.a")), T: tInt, Try: true}
	check(t, jv, shEnv, types.Row{str(`{"a": "x"}`)}, null)
	check(t, jv, shEnv, types.Row{str(`{"a": 42}`)}, i32(42))
}

func TestConstantFolding(t *testing.T) {
	c := newCompiler(utcEnv)
	folded := []planner.Expr{
		fn(t, "UPPER", slit("abc")),
		fn(t, "+", ilit(1), fn(t, "*", ilit(2), ilit(3))),
		&planner.Cast{X: slit("42"), T: tInt},
		fn(t, "AND", lit(fals, tBool), col(0, "x", tBool)),
		fn(t, "OR", col(0, "x", tBool), lit(tru, tBool)),
		fn(t, "COALESCE", lit(null, tInt), ilit(3), col(0, "x", tInt)),
		fn(t, "IF", lit(tru, tBool), ilit(1), col(0, "x", tInt)),
		&planner.Case{Whens: []planner.CaseWhen{{Cond: lit(tru, tBool), Result: ilit(1)}}, Else: col(0, "x", tInt), T: tInt},
	}
	for _, e := range folded {
		n, err := c.compile(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !n.isConst {
			t.Errorf("%s was not folded", e)
		}
	}
	notFolded := []planner.Expr{
		fn(t, "CURRENT_TIMESTAMP"),
		fn(t, "RAND"),
		&planner.Cast{X: slit("abc"), T: tInt}, // fails: left for the rows to report
		fn(t, "UPPER", col(0, "s", tStr)),
	}
	for _, e := range notFolded {
		n, err := c.compile(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if n.isConst {
			t.Errorf("%s was folded", e)
		}
	}
	check(t, fn(t, "+", ilit(1), fn(t, "*", ilit(2), ilit(3))), utcEnv, nil, i32(7))
	if _, err := mustCompile(t, &planner.Cast{X: slit("abc"), T: tInt}, utcEnv)(nil); !errors.Is(err, funcs.ErrCastFailed) {
		t.Errorf("failing constant cast: %v", err)
	}
}

func TestPredicate(t *testing.T) {
	p, err := CompilePredicate(fn(t, ">", col(0, "n", tInt), ilit(1)), utcEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    types.Value
		keep bool
	}{{i32(2), true}, {i32(1), false}, {null, false}} {
		if keep, err := p(types.Row{c.v}); err != nil || keep != c.keep {
			t.Errorf("predicate on %s = %v, %v", show(c.v), keep, err)
		}
	}
	always, err := CompilePredicate(lit(null, types.TypeBoolean), utcEnv)
	if err != nil {
		t.Fatal(err)
	}
	if keep, _ := always(nil); keep {
		t.Error("a NULL predicate keeps rows")
	}
}

func TestConcurrentUse(t *testing.T) {
	e := fn(t, "CONCAT", fn(t, "DATE_FORMAT", col(0, "ts", tTS3), slit("yyyy-MM-dd")), slit("/"),
		fn(t, "REGEXP_EXTRACT", col(1, "s", tStr), slit(`\d+`)))
	ev := mustCompile(t, e, utcEnv)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				day := int64(g*200 + i)
				row := types.Row{types.TimestampValue(day * 86_400_000_000), str("id-" + string(rune('0'+g)))}
				v, err := ev(row)
				want := time.UnixMicro(day*86_400_000_000).UTC().Format("2006-01-02") + "/" + string(rune('0'+g))
				if err != nil || v.Str() != want {
					errs <- v.Str() + " != " + want
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestConstantPatternsCompileOnce checks that a literal LIKE pattern, regex or date
// layout is compiled at Compile time: evaluating a row then allocates nothing (LIKE,
// REGEXP) or only the result string (DATE_FORMAT). Compiling per row would allocate the
// matcher or layout every time.
func TestConstantPatternsCompileOnce(t *testing.T) {
	row := types.Row{str("user-42"), types.TimestampValue(1_700_000_000_000_000)}
	cases := []struct {
		e      planner.Expr
		allocs float64
	}{
		{fn(t, "LIKE", col(0, "s", tStr), slit("user-%")), 0},
		{fn(t, "LIKE", col(0, "s", tStr), slit("%s_r-4%")), 0},
		{fn(t, "LIKE", col(0, "s", tStr), slit("u!_%"), slit("!")), 1}, // the argument slice of a 3-argument call
		{fn(t, "REGEXP", col(0, "s", tStr), slit(`\d+$`)), 0},
		{fn(t, "DATE_FORMAT", col(1, "ts", tTS3), slit("yyyy-MM-dd HH:mm:ss")), 1},
	}
	for _, c := range cases {
		ev := mustCompile(t, c.e, utcEnv)
		if n := testing.AllocsPerRun(100, func() { ev(row) }); n > c.allocs {
			t.Errorf("%s allocates %v times per row, want at most %v", c.e, n, c.allocs)
		}
	}
}
