package eval

import (
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// TestCompileShared compiles Nexmark q21's filter and CASE, which repeat LOWER(channel)
// and REGEXP_EXTRACT(url, ...), together and alone: over extended rows the shared
// evaluators give what the separate ones give, and a shared call in a branch no row
// takes is not made (TO_TIMESTAMP_LTZ with precision 5 fails when it is).
func TestCompileShared(t *testing.T) {
	channel, url, prec := col(0, "channel", tStr), col(1, "url", tStr), col(2, "p", tInt)
	lower := func() planner.Expr { return fn(t, "LOWER", channel) }
	extract := func() planner.Expr {
		return fn(t, "REGEXP_EXTRACT", url, slit("(&|^)channel_id=([^&]*)"), ilit(2))
	}
	eq := func(a planner.Expr, s string) planner.Expr { return fn(t, "=", a, slit(s)) }
	caseExpr := &planner.Case{Whens: []planner.CaseWhen{
		{Cond: eq(lower(), "apple"), Result: slit("0")},
		{Cond: eq(lower(), "google"), Result: slit("1")},
	}, Else: extract(), T: tStr}
	filter := fn(t, "OR", fn(t, "IS NOT NULL", extract()), eq(lower(), "baidu"))
	ltz := func() planner.Expr { return fn(t, "TO_TIMESTAMP_LTZ", col(3, "ms", tBig), prec) }
	guarded := &planner.Case{Whens: []planner.CaseWhen{
		{Cond: fn(t, "=", prec, ilit(3)), Result: fn(t, "YEAR", ltz())},
		{Cond: fn(t, "=", prec, ilit(0)), Result: fn(t, "MONTH", ltz())},
	}, Else: lit(null, tBig), T: tBig}
	exprs := []planner.Expr{caseExpr, filter, guarded}

	s, err := CompileShared(exprs, 4, utcEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.MemoWidth != 6 {
		t.Errorf("MemoWidth %d, want 6 (LOWER, REGEXP_EXTRACT, TO_TIMESTAMP_LTZ)", s.MemoWidth)
	}
	rows := []types.Row{
		{str("Apple"), str("https://x/?channel_id=9"), i32(3), i64(1700000000000)},
		{str("baidu"), str("https://x/?a=1"), i32(0), i64(1700000000)},
		{str("other"), str("https://x/?a=1&channel_id=abc"), i32(5), i64(1)},
		{null, null, null, null},
	}
	ext := make(types.Row, 4+s.MemoWidth)
	for i, row := range rows {
		for j, e := range exprs {
			alone, err := Compile(e, utcEnv)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := alone(row)
			copy(ext, row)
			clear(ext[4:])
			// evaluate the expressions before this one first, as a Calc would, so that
			// the memo holds what they computed
			for _, prev := range s.Evals[:j] {
				prev(ext)
			}
			got, err := s.Evals[j](ext)
			if (err != nil) != (wantErr != nil) || !types.Equal(got, want) && !(got.IsNull() && want.IsNull()) {
				t.Errorf("row %d, %s: shared %v (%v), alone %v (%v)", i, e, got, err, want, wantErr)
			}
		}
	}
}
