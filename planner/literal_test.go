package planner

import (
	"testing"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

func TestTemporalLiterals(t *testing.T) {
	day := types.DaysFromCivil(2024, 1, 2)
	for _, tc := range []struct {
		kind parser.LitKind
		text string
		want types.Value // the zero Value: refused
		prec int
	}{
		{parser.DateLit, "2024-01-02", types.DateValue(day), 0},
		{parser.DateLit, " 2024-01-02 ", types.DateValue(day), 0},
		{parser.DateLit, "2024-1-2", types.Value{}, 0},
		{parser.DateLit, "2023-02-29", types.Value{}, 0},
		{parser.DateLit, "2024-01-02 00:00:00", types.Value{}, 0},
		{parser.TimeLit, "01:02:03", types.TimeValue(3_723_000_000), 0},
		{parser.TimeLit, "1:2:3.45", types.TimeValue(3_723_450_000), 2},
		{parser.TimeLit, "01:02", types.TimeValue(3_720_000_000), 0},
		{parser.TimeLit, "01:02:03.123456789", types.TimeValue(3_723_123_456), 9},
		{parser.TimeLit, "24:00:00", types.Value{}, 0},
		{parser.TimeLit, "+1:02:03", types.Value{}, 0},
		{parser.TimeLit, "01:02.5", types.Value{}, 0},
		{parser.TimestampLit, "2024-01-02 03:04:05.678", types.TimestampValue(day*86_400_000_000 + 11_045_678_000), 3},
		{parser.TimestampLit, "2024-01-02T03:04:05", types.TimestampValue(day*86_400_000_000 + 11_045_000_000), 0},
		{parser.TimestampLit, "2024-01-02", types.TimestampValue(day * 86_400_000_000), 0},
		{parser.TimestampLit, "2024-01-02 03:04:05Z", types.Value{}, 0},
	} {
		lit, err := bindLiteral(&parser.Literal{Kind: tc.kind, Text: tc.text})
		if tc.want.Kind() == types.Null {
			if err == nil {
				t.Errorf("%q: got %v, want an error", tc.text, lit.Value)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if lit.Value != tc.want || lit.T.Prec != tc.prec {
			t.Errorf("%q: got %v of precision %d, want %v of precision %d", tc.text, lit.Value, lit.T.Prec, tc.want, tc.prec)
		}
	}
}
