package formats

import (
	"math"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

func TestAppendJavaFloat(t *testing.T) {
	cases := []struct {
		f    float64
		bits int
		want string
	}{
		{1, 64, "1.0"}, {0, 64, "0.0"}, {math.Copysign(0, -1), 64, "-0.0"}, {0.5, 64, "0.5"},
		{123.456, 64, "123.456"}, {0.001, 64, "0.001"}, {0.0001, 64, "1.0E-4"}, {1e7, 64, "1.0E7"},
		{9999999, 64, "9999999.0"}, {1.5e-5, 64, "1.5E-5"}, {-2.5e10, 64, "-2.5E10"}, {math.NaN(), 64, "NaN"},
		{math.Inf(1), 64, "Infinity"}, {math.Inf(-1), 64, "-Infinity"}, {0.1, 32, "0.1"}, {1e20, 32, "1.0E20"},
	}
	for _, c := range cases {
		if got := string(appendJavaFloat(nil, c.f, c.bits)); got != c.want {
			t.Errorf("appendJavaFloat(%v, %d) = %s, want %s", c.f, c.bits, got, c.want)
		}
	}
}

func TestAppendJavaDecimal(t *testing.T) {
	cases := []struct {
		v     string
		scale int
		plain bool
		want  string
	}{
		{"1.5", 2, false, "1.50"}, {"-1.005", 2, false, "-1.01"}, {"42", 0, false, "42"}, {"0.05", 3, false, "0.050"},
		{"0.0000001", 7, false, "1E-7"}, {"0.0000001", 7, true, "0.0000001"}, {"0.00000012", 10, false, "1.200E-7"},
		{"0", 2, false, "0.00"},
	}
	for _, c := range cases {
		if got := string(appendJavaDecimal(nil, dec(c.v).Rat(), c.scale, c.plain)); got != c.want {
			t.Errorf("appendJavaDecimal(%s, %d, %v) = %s, want %s", c.v, c.scale, c.plain, got, c.want)
		}
	}
}

func TestAppendPrintRow(t *testing.T) {
	schema := types.Schema{
		{Name: "d", Type: types.TypeDate}, {Name: "app", Type: types.TypeString}, {Name: "n", Type: types.TypeBigInt},
		{Name: "x", Type: types.TypeString}, {Name: "ts", Type: tTS3}, {Name: "ts2", Type: tTS3}, {Name: "ltz", Type: tLTZ3},
		{Name: "m", Type: tDec}, {Name: "dbl", Type: types.TypeDouble}, {Name: "b", Type: types.TypeBoolean},
		{Name: "arr", Type: tArrInt}, {Name: "map", Type: tMapSI}, {Name: "row", Type: tRow}, {Name: "raw", Type: tBytes},
		{Name: "iv", Type: types.TypeInterval}, {Name: "tm", Type: tTime},
	}
	row := types.Row{
		types.DateValue(19723), types.StringValue("app1"), types.BigIntValue(42), {},
		types.TimestampValue(ts("2024-01-01 12:30:00")), types.TimestampValue(ts("2024-01-01 12:30:05.120")),
		types.TimestampLTZValue(ts("2024-01-01 12:30:00")), dec("7"), types.DoubleValue(3), types.BoolValue(true),
		types.ArrayValue([]types.Value{types.IntValue(types.Int, 1), {}}),
		types.MapValue([]types.MapEntry{{Key: types.StringValue("k"), Value: types.IntValue(types.Int, 1)}}),
		types.RowValue([]types.Value{types.IntValue(types.Int, 1), types.StringValue("s")}), types.BytesValue([]byte{1, 255}),
		types.IntervalValue(-1_500_000), types.TimeValue(3_600_000_000 + 500),
	}
	want := "-U[2024-01-01, app1, 42, null, 2024-01-01T12:30, 2024-01-01T12:30:05.120, 2024-01-01T12:30:00Z, 7.00, 3.0, true, " +
		"[1, null], {k=1}, +I[1, s], [1, -1], PT-1.5S, 01:00:00.000500]"
	if got := string(AppendPrintRow(nil, connectors.UpdateBefore, row, schema)); got != want {
		t.Errorf("AppendPrintRow:\n got %s\nwant %s", got, want)
	}
	durations := map[int64]string{0: "PT0S", 3_600_000_000: "PT1H", 90_000_000: "PT1M30S", 86_400_000_000 + 1000: "PT24H0.001S", -60_000_000: "PT-1M"}
	for micros, want := range durations {
		if got := string(appendJavaDuration(nil, micros)); got != want {
			t.Errorf("appendJavaDuration(%d) = %s, want %s", micros, got, want)
		}
	}
}
