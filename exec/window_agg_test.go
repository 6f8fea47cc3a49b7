package exec

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

var rowtime3 = types.Type{Kind: types.Timestamp, Prec: 3, TimeAttr: types.RowTime}
var rowtimeLTZ3 = types.Type{Kind: types.TimestampLTZ, Prec: 3, TimeAttr: types.RowTime}

// bidSchema is the Bid table of Flink's window documentation.
var bidSchema = types.Schema{{Name: "bidtime", Type: rowtime3}, {Name: "price", Type: types.TypeBigInt}, {Name: "item", Type: types.TypeString}}

// bids are the rows of Flink's documentation example, in its arrival order.
func bids() []types.Row {
	row := func(at string, price int64, item string) types.Row {
		return types.Row{types.TimestampValue(ts("2020-04-15 " + at + ":00")), types.BigIntValue(price), types.StringValue(item)}
	}
	return []types.Row{
		row("08:07", 2, "A"), row("08:11", 3, "B"), row("08:05", 4, "C"),
		row("08:09", 5, "D"), row("08:13", 1, "E"), row("08:17", 6, "F"),
	}
}

func sumPrice() planner.AggCall {
	return planner.AggCall{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, Name: "price"}
}

func windowOut(keys types.Schema, aggs []planner.AggCall, timeType types.Type) types.Schema {
	out := slices.Clone(keys)
	for _, a := range aggs {
		out = append(out, types.Column{Name: a.Name, Type: a.T})
	}
	wt := types.TimestampType(3)
	if timeType.Kind == types.TimestampLTZ {
		wt = types.TimestampLTZType(3)
	}
	wt.TimeAttr = types.RowTime
	return append(out,
		types.Column{Name: "window_start", Type: types.TimestampType(3)},
		types.Column{Name: "window_end", Type: types.TimestampType(3)},
		types.Column{Name: "window_time", Type: wt})
}

// newWindowAgg builds a window aggregate operator over an input of schema in.
func newWindowAgg(t *testing.T, in types.Schema, w planner.Window, keys []int, aggs []planner.AggCall) (*windowAggOp, *opMetrics) {
	t.Helper()
	var keyCols types.Schema
	for _, k := range keys {
		keyCols = append(keyCols, in[k])
	}
	n := &planner.WindowAggregate{
		Input: &planner.Values{Out: in}, Window: w, Keys: keys, Aggs: aggs,
		Out: windowOut(keyCols, aggs, in[w.TimeCol].Type),
	}
	cfg, err := compileWindowAgg(n)
	if err != nil {
		t.Fatal(err)
	}
	m := newOpMetrics(0, "window aggregate")
	op, err := newWindowAggOp(cfg, m, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	return op, m
}

// TestWindowKindsFlinkExample checks TUMBLE, HOP and CUMULATE against the results
// printed in Flink's windowing TVF documentation for the Bid table.
func TestWindowKindsFlinkExample(t *testing.T) {
	tests := []struct {
		name string
		win  planner.Window
		want []string
	}{
		{
			name: "tumble 10 min",
			win:  planner.Window{Kind: planner.Tumble, Size: 10 * time.Minute, Slide: 10 * time.Minute},
			want: []string{
				"+I(11, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 2020-04-15 08:09:59.999)",
				"+I(10, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 2020-04-15 08:19:59.999)",
			},
		},
		{
			name: "hop 5 min slide 10 min size",
			win:  planner.Window{Kind: planner.Hop, Size: 10 * time.Minute, Slide: 5 * time.Minute},
			want: []string{
				"+I(11, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 2020-04-15 08:09:59.999)",
				"+I(15, 2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 2020-04-15 08:14:59.999)",
				"+I(10, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 2020-04-15 08:19:59.999)",
				"+I(6, 2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000, 2020-04-15 08:24:59.999)",
			},
		},
		{
			name: "cumulate 2 min step 10 min size",
			win:  planner.Window{Kind: planner.Cumulate, Size: 10 * time.Minute, Slide: 2 * time.Minute},
			want: []string{
				"+I(4, 2020-04-15 08:00:00.000, 2020-04-15 08:06:00.000, 2020-04-15 08:05:59.999)",
				"+I(6, 2020-04-15 08:00:00.000, 2020-04-15 08:08:00.000, 2020-04-15 08:07:59.999)",
				"+I(11, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 2020-04-15 08:09:59.999)",
				"+I(3, 2020-04-15 08:10:00.000, 2020-04-15 08:12:00.000, 2020-04-15 08:11:59.999)",
				"+I(4, 2020-04-15 08:10:00.000, 2020-04-15 08:14:00.000, 2020-04-15 08:13:59.999)",
				"+I(4, 2020-04-15 08:10:00.000, 2020-04-15 08:16:00.000, 2020-04-15 08:15:59.999)",
				"+I(10, 2020-04-15 08:10:00.000, 2020-04-15 08:18:00.000, 2020-04-15 08:17:59.999)",
				"+I(10, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 2020-04-15 08:19:59.999)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, m := newWindowAgg(t, bidSchema, tt.win, nil, []planner.AggCall{sumPrice()})
			h := newHarness(t, op, m)
			h.batch(bids()...)
			if got := h.emitted(); len(got) != 0 {
				t.Fatalf("emitted before any watermark: %v", got)
			}
			h.watermark(MaxWatermark)
			if got := h.emitted(); !slices.Equal(got, tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", lines(got), lines(tt.want))
			}
			if len(op.slices) != 0 || len(op.runs) != 0 || len(op.ends) != 0 || len(op.scheduled) != 0 {
				t.Fatalf("state left after every window fired: %d slices, %d running, %d ends, %d scheduled",
					len(op.slices), len(op.runs), len(op.ends), len(op.scheduled))
			}
		})
	}
}

func lines(s []string) string {
	out := ""
	for _, l := range s {
		out += "  " + l + "\n"
	}
	return out
}

// TestWindowFiresWhenWatermarkPassesEnd checks that a window fires exactly when the
// watermark reaches its last millisecond and that its state is deleted then.
func TestWindowFiresWhenWatermarkPassesEnd(t *testing.T) {
	op, m := newWindowAgg(t, bidSchema, planner.Window{Kind: planner.Tumble, Size: 10 * time.Minute, Slide: 10 * time.Minute},
		nil, []planner.AggCall{sumPrice()})
	h := newHarness(t, op, m)
	h.batch(bids()...)
	h.watermark(ts("2020-04-15 08:09:59.998"))
	if got := h.emitted(); len(got) != 0 {
		t.Fatalf("fired before the watermark reached the window's last millisecond: %v", got)
	}
	h.watermark(ts("2020-04-15 08:09:59.999"))
	want := []string{"+I(11, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 2020-04-15 08:09:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if len(op.slices) != 1 {
		t.Fatalf("%d slices after the first window fired, want only the second", len(op.slices))
	}
}

// TestTumbleDayInShanghai checks that a 1-day window over TIMESTAMP_LTZ follows
// table.local-time-zone: in Asia/Shanghai a day is [16:00 UTC, 16:00 UTC next day), and
// window_start/window_end show the local midnight.
func TestTumbleDayInShanghai(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	in := types.Schema{{Name: "ts", Type: rowtimeLTZ3}, {Name: "user_id", Type: types.TypeString}}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "cnt"}
	op, m := newWindowAgg(t, in, planner.Window{Kind: planner.Tumble, Size: 24 * time.Hour, Slide: 24 * time.Hour, Location: shanghai},
		nil, []planner.AggCall{count})
	h := newHarness(t, op, m)
	row := func(utc string) types.Row {
		return types.Row{types.TimestampLTZValue(ts(utc)), types.StringValue("u")}
	}
	// 15:59:59.999 UTC is 23:59:59.999 in Shanghai; 16:00 UTC is midnight of the next day.
	h.batch(
		row("2023-12-31 15:00:00"),     // Dec 31, 23:00 in Shanghai
		row("2024-01-01 15:59:59.999"), // Jan 1, 23:59:59.999
		row("2023-12-31 16:00:00"),     // Jan 1, 00:00
		row("2024-01-01 16:00:00"),     // Jan 2, 00:00
		row("2024-01-02 15:59:59"),     // Jan 2, 23:59:59
	)
	h.watermark(ts("2024-01-01 15:59:59.998"))
	want := []string{"+I(1, 2023-12-31 00:00:00.000, 2024-01-01 00:00:00.000, 2023-12-31 15:59:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	h.watermark(ts("2024-01-01 15:59:59.999"))
	// window_time is TIMESTAMP_LTZ: the instant, printed in UTC.
	want = []string{"+I(2, 2024-01-01 00:00:00.000, 2024-01-02 00:00:00.000, 2024-01-01 15:59:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	h.watermark(MaxWatermark)
	want = []string{"+I(2, 2024-01-02 00:00:00.000, 2024-01-03 00:00:00.000, 2024-01-02 15:59:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestTumbleDayOverTimestamp checks that over a TIMESTAMP (no zone) rowtime, days align
// on the wall-clock values whatever the local time zone.
func TestTumbleDayOverTimestamp(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	in := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "v", Type: types.TypeBigInt}}
	op, m := newWindowAgg(t, in, planner.Window{Kind: planner.Tumble, Size: 24 * time.Hour, Slide: 24 * time.Hour, Location: shanghai},
		nil, []planner.AggCall{{Func: planner.AggSum, Arg: 1, Filter: -1, T: types.TypeBigInt, Name: "s"}})
	h := newHarness(t, op, m)
	h.batch(
		types.Row{types.TimestampValue(ts("2024-01-01 23:59:59.999")), types.BigIntValue(1)},
		types.Row{types.TimestampValue(ts("2024-01-01 00:00:00")), types.BigIntValue(2)},
		types.Row{types.TimestampValue(ts("2024-01-02 00:00:00")), types.BigIntValue(4)},
	)
	h.watermark(ts("2024-01-01 23:59:59.999"))
	want := []string{"+I(3, 2024-01-01 00:00:00.000, 2024-01-02 00:00:00.000, 2024-01-01 23:59:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestCumulateDailyActiveUsers is the DAU-with-minute-updates pattern: a 1-day window
// with 1-minute steps emits the running COUNT(DISTINCT user) at each step end, from the
// first step with data to the end of the day, and starts over the next day.
func TestCumulateDailyActiveUsers(t *testing.T) {
	in := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "user_id", Type: types.TypeString}}
	dau := planner.AggCall{Func: planner.AggCount, Arg: 1, Distinct: true, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "dau"}
	op, m := newWindowAgg(t, in, planner.Window{Kind: planner.Cumulate, Size: 24 * time.Hour, Slide: time.Minute},
		nil, []planner.AggCall{dau})
	h := newHarness(t, op, m)
	row := func(at, user string) types.Row {
		return types.Row{types.TimestampValue(ts(at)), types.StringValue(user)}
	}
	h.batch(
		row("2024-01-01 23:57:10", "a"),
		row("2024-01-01 23:57:50", "b"),
		row("2024-01-01 23:59:30", "a"), // no new user in the last minute
		row("2024-01-01 23:58:01", "c"), // out of order, within the watermark delay
		row("2024-01-02 00:00:05", "a"), // next day: counted again
	)
	h.watermark(ts("2024-01-01 23:58:59.999"))
	want := []string{
		"+I(2, 2024-01-01 00:00:00.000, 2024-01-01 23:58:00.000, 2024-01-01 23:57:59.999)",
		"+I(3, 2024-01-01 00:00:00.000, 2024-01-01 23:59:00.000, 2024-01-01 23:58:59.999)",
	}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", lines(got), lines(want))
	}
	h.watermark(ts("2024-01-02 00:01:59.999"))
	want = []string{
		"+I(3, 2024-01-01 00:00:00.000, 2024-01-02 00:00:00.000, 2024-01-01 23:59:59.999)",
		"+I(1, 2024-01-02 00:00:00.000, 2024-01-02 00:01:00.000, 2024-01-02 00:00:59.999)",
		"+I(1, 2024-01-02 00:00:00.000, 2024-01-02 00:02:00.000, 2024-01-02 00:01:59.999)",
	}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", lines(got), lines(want))
	}
	if len(op.runs) != 1 {
		t.Fatalf("%d running windows, want only the second day's", len(op.runs))
	}
	// A row late for the steps that fired but inside the day counts from the next step on.
	h.batch(row("2024-01-02 00:00:30", "d"))
	h.watermark(ts("2024-01-02 00:02:59.999"))
	want = []string{"+I(2, 2024-01-02 00:00:00.000, 2024-01-02 00:03:00.000, 2024-01-02 00:02:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if n := m.late.load(); n != 0 {
		t.Fatalf("%d late rows, want 0: the day had not ended", n)
	}
	// A row for the first day, which has fired entirely, is late.
	h.batch(row("2024-01-01 12:00:00", "e"))
	if n := m.late.load(); n != 1 {
		t.Fatalf("%d late rows, want 1", n)
	}
}

// TestHopOverlaps checks that a row counts in every hopping window that contains it.
func TestHopOverlaps(t *testing.T) {
	in := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "k", Type: types.TypeString}}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "cnt"}
	// size 3 min, slide 2 min: slices of gcd = 1 min; windows overlap by 1 min. Keyed.
	op, m := newWindowAgg(t, in, planner.Window{Kind: planner.Hop, Size: 3 * time.Minute, Slide: 2 * time.Minute},
		[]int{1}, []planner.AggCall{count})
	h := newHarness(t, op, m)
	row := func(at, k string) types.Row {
		return types.Row{types.TimestampValue(ts("2024-01-01 " + at)), types.StringValue(k)}
	}
	h.batch(row("00:02:30", "x"), row("00:01:10", "y"), row("00:04:00", "x"))
	h.watermark(MaxWatermark)
	// Windows start every 2 minutes, as Flink's hopping windows do, and last 3.
	want := []string{
		// [00:00, 00:03) holds y@00:01:10 and x@00:02:30, keys in the order of their slices
		"+I(y, 1, 2024-01-01 00:00:00.000, 2024-01-01 00:03:00.000, 2024-01-01 00:02:59.999)",
		"+I(x, 1, 2024-01-01 00:00:00.000, 2024-01-01 00:03:00.000, 2024-01-01 00:02:59.999)",
		// [00:02, 00:05) holds x@00:02:30 and x@00:04
		"+I(x, 2, 2024-01-01 00:02:00.000, 2024-01-01 00:05:00.000, 2024-01-01 00:04:59.999)",
		// [00:04, 00:07) holds x@00:04
		"+I(x, 1, 2024-01-01 00:04:00.000, 2024-01-01 00:07:00.000, 2024-01-01 00:06:59.999)",
	}
	got := h.emitted()
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", lines(got), lines(want))
	}
}

// TestLateRowsDroppedAndCounted checks that rows for windows that already fired are
// dropped and counted, and that a HOP row with a window still open is not late.
func TestLateRowsDroppedAndCounted(t *testing.T) {
	op, m := newWindowAgg(t, bidSchema, planner.Window{Kind: planner.Hop, Size: 10 * time.Minute, Slide: 5 * time.Minute},
		nil, []planner.AggCall{sumPrice()})
	h := newHarness(t, op, m)
	row := func(at string, price int64) types.Row {
		return types.Row{types.TimestampValue(ts("2020-04-15 " + at)), types.BigIntValue(price), types.StringValue("i")}
	}
	h.batch(row("08:07:00", 2))
	h.watermark(ts("2020-04-15 08:10:00")) // [08:00, 08:10) fires
	if got := h.emitted(); len(got) != 1 {
		t.Fatalf("got %v, want the window [08:00, 08:10)", got)
	}
	// 08:03 belongs to [07:55, 08:05) and [08:00, 08:10): both fired, so it is late.
	// 08:08 belongs to [08:00, 08:10), fired, and [08:05, 08:15), open: it counts there.
	h.batch(row("08:03:00", 100), row("08:08:00", 10))
	if n := m.late.load(); n != 1 {
		t.Fatalf("%d late rows, want 1", n)
	}
	h.watermark(MaxWatermark)
	want := []string{
		"+I(12, 2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 2020-04-15 08:14:59.999)",
	}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestWindowNullTimeDropped checks that rows without an event time are counted as bad.
func TestWindowNullTimeDropped(t *testing.T) {
	op, m := newWindowAgg(t, bidSchema, planner.Window{Kind: planner.Tumble, Size: 10 * time.Minute, Slide: 10 * time.Minute},
		nil, []planner.AggCall{sumPrice()})
	h := newHarness(t, op, m)
	h.batch(types.Row{types.NullValue, types.BigIntValue(1), types.StringValue("x")})
	h.watermark(MaxWatermark)
	if got := h.emitted(); len(got) != 0 {
		t.Fatalf("got %v, want nothing", got)
	}
	if n := m.bad.load(); n != 1 {
		t.Fatalf("%d bad rows, want 1", n)
	}
}

func TestWindowTableFunction(t *testing.T) {
	in := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "v", Type: types.TypeBigInt}}
	out := append(slices.Clone(in),
		types.Column{Name: "window_start", Type: types.TimestampType(3)},
		types.Column{Name: "window_end", Type: types.TimestampType(3)},
		types.Column{Name: "window_time", Type: rowtime3})
	n := &planner.WindowTableFunction{
		Input:  &planner.Values{Out: in},
		Window: planner.Window{Kind: planner.Cumulate, Size: 3 * time.Minute, Slide: time.Minute},
		Out:    out,
	}
	cfg, err := compileWindowTVF(n)
	if err != nil {
		t.Fatal(err)
	}
	m := newOpMetrics(0, "window table function")
	h := newHarness(t, &windowTVFOp{cfg: cfg, m: m, clock: newFakeClock(), zone: newZone(cfg.win.loc)}, m)
	h.batch(types.Row{types.TimestampValue(ts("2024-01-01 00:01:30")), types.BigIntValue(7)})
	want := []string{
		"+I(2024-01-01 00:01:30.000, 7, 2024-01-01 00:00:00.000, 2024-01-01 00:02:00.000, 2024-01-01 00:01:59.999)",
		"+I(2024-01-01 00:01:30.000, 7, 2024-01-01 00:00:00.000, 2024-01-01 00:03:00.000, 2024-01-01 00:02:59.999)",
	}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", lines(got), lines(want))
	}
}

// TestProcessingTimeWindow checks that a PROCTIME window takes rows at the clock's time
// and fires on the clock, not on watermarks.
func TestProcessingTimeWindow(t *testing.T) {
	proc := types.Type{Kind: types.TimestampLTZ, Prec: 3, TimeAttr: types.ProcTime}
	in := types.Schema{{Name: "k", Type: types.TypeString}, {Name: "pt", Type: proc}}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "cnt"}
	n := &planner.WindowAggregate{
		Input:  &planner.Values{Out: in},
		Window: planner.Window{Kind: planner.Tumble, TimeCol: 1, Size: time.Minute, Slide: time.Minute, ProcTime: true, Location: time.UTC},
		Aggs:   []planner.AggCall{count},
		Out:    windowOut(nil, []planner.AggCall{count}, proc),
	}
	cfg, err := compileWindowAgg(n)
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock() // 2024-01-01 00:00:00 UTC
	m := newOpMetrics(0, "window aggregate")
	op, err := newWindowAggOp(cfg, m, clock)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, op, m)
	clock.Advance(10 * time.Second)
	h.batch(types.Row{types.StringValue("a"), types.NullValue}, types.Row{types.StringValue("b"), types.NullValue})
	h.watermark(ts("2030-01-01 00:00:00")) // event time does not fire processing-time windows
	if got := h.emitted(); len(got) != 0 {
		t.Fatalf("fired on a watermark: %v", got)
	}
	if err := op.onTimer(context.Background(), clock.Now().Add(49*time.Second), h.out); err != nil {
		t.Fatal(err)
	}
	if got := h.emitted(); len(got) != 0 {
		t.Fatalf("fired before the minute ended: %v", got)
	}
	if err := op.onTimer(context.Background(), clock.Now().Add(50*time.Second), h.out); err != nil {
		t.Fatal(err)
	}
	_ = h.out.flush(context.Background())
	want := []string{"+I(2, 2024-01-01 00:00:00.000, 2024-01-01 00:01:00.000, 2024-01-01 00:00:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestTumbleDayAcrossDST checks days in a zone with daylight saving time: the day the
// clocks go forward is 23 hours long, and rows on both sides of the change land in the
// local day they belong to.
func TestTumbleDayAcrossDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	in := types.Schema{{Name: "ts", Type: rowtimeLTZ3}, {Name: "user_id", Type: types.TypeString}}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "cnt"}
	op, m := newWindowAgg(t, in, planner.Window{Kind: planner.Tumble, Size: 24 * time.Hour, Slide: 24 * time.Hour, Location: ny},
		nil, []planner.AggCall{count})
	h := newHarness(t, op, m)
	row := func(utc string) types.Row { return types.Row{types.TimestampLTZValue(ts(utc)), types.StringValue("u")} }
	h.batch(
		row("2024-03-10 04:59:59"), // Mar 9, 23:59:59 EST
		row("2024-03-10 05:00:00"), // Mar 10, 00:00 EST
		row("2024-03-10 07:30:00"), // Mar 10, 03:30 EDT, after the change
		row("2024-03-11 03:59:59"), // Mar 10, 23:59:59 EDT
		row("2024-03-11 04:00:00"), // Mar 11, 00:00 EDT
	)
	// Mar 10 ends at 04:00 UTC on Mar 11 (EDT), 23 hours after it began at 05:00 UTC.
	h.watermark(ts("2024-03-11 03:59:59.998"))
	want := []string{"+I(1, 2024-03-09 00:00:00.000, 2024-03-10 00:00:00.000, 2024-03-10 04:59:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	h.watermark(ts("2024-03-11 03:59:59.999"))
	want = []string{"+I(3, 2024-03-10 00:00:00.000, 2024-03-11 00:00:00.000, 2024-03-11 03:59:59.999)"}
	if got := h.emitted(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
