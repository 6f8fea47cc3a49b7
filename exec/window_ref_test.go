package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// TestWindowAggregateAgainstReference compares the sliced window aggregate with a
// brute-force one: every window of the family (starts at offset + k*slide, or k*size for
// CUMULATE with ends every step) counts the rows inside it, per key. Rows come out of
// order within a bound and watermarks trail them by more, so none is late.
func TestWindowAggregateAgainstReference(t *testing.T) {
	m1 := time.Minute
	wins := []planner.Window{
		{Kind: planner.Tumble, Size: 5 * m1, Slide: 5 * m1},
		{Kind: planner.Tumble, Size: 5 * m1, Slide: 5 * m1, Offset: 2 * m1},
		{Kind: planner.Hop, Size: 6 * m1, Slide: 2 * m1},
		{Kind: planner.Hop, Size: 5 * m1, Slide: 2 * m1},             // size not a multiple of slide
		{Kind: planner.Hop, Size: 2 * m1, Slide: 5 * m1},             // gaps between windows
		{Kind: planner.Hop, Size: 7 * m1, Slide: 3 * m1, Offset: m1}, // offset
		{Kind: planner.Cumulate, Size: 6 * m1, Slide: 2 * m1},
		{Kind: planner.Cumulate, Size: 9 * m1, Slide: 3 * m1, Offset: 4 * m1},
	}
	in := types.Schema{{Name: "ts", Type: rowtime3}, {Name: "k", Type: types.TypeString}}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true), Name: "cnt"}
	for i, w := range wins {
		t.Run(fmt.Sprintf("%d %s size %s slide %s offset %s", i, w.Kind, w.Size, w.Slide, w.Offset), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			base := ts("2024-01-01 00:00:00")
			const disorder = int64(90 * time.Second / time.Microsecond)
			var rows []types.Row
			for n := range 400 {
				at := base + int64(n)*int64(7*time.Second/time.Microsecond) - rng.Int64N(disorder)
				rows = append(rows, types.Row{types.TimestampValue(at), types.StringValue(fmt.Sprintf("k%d", rng.IntN(3)))})
			}

			op, m := newWindowAgg(t, in, w, []int{1}, []planner.AggCall{count})
			h := newHarness(t, op, m)
			var got []string
			maxTS := NoWatermark
			for start := 0; start < len(rows); start += 13 {
				chunk := rows[start:min(start+13, len(rows))]
				h.batch(chunk...)
				for _, r := range chunk {
					maxTS = max(maxTS, r[0].Int())
				}
				h.watermark(maxTS - disorder - 1)
				got = append(got, h.emitted()...)
			}
			h.watermark(MaxWatermark)
			got = append(got, h.emitted()...)
			if n := m.late.load(); n != 0 {
				t.Fatalf("%d late rows, want none", n)
			}
			// Windows come out in order of their end.
			ends := make([]string, len(got))
			for i, g := range got {
				ends[i] = strings.Split(g, ", ")[3]
			}
			if !slices.IsSorted(ends) {
				t.Fatalf("windows not in order of end:\n%s", lines(got))
			}

			want := referenceWindows(w, rows)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows, want %d\ngot\n%s\nwant\n%s", len(got), len(want), lines(got), lines(want))
			}
		})
	}
}

// referenceWindows counts rows per key in every window of w's family that holds any.
func referenceWindows(w planner.Window, rows []types.Row) []string {
	size, slide, off := w.Size.Microseconds(), w.Slide.Microseconds(), w.Offset.Microseconds()
	lo, hi := rows[0][0].Int(), rows[0][0].Int()
	for _, r := range rows {
		lo, hi = min(lo, r[0].Int()), max(hi, r[0].Int())
	}
	type win struct{ start, end int64 }
	var family []win
	step := slide
	if w.Kind == planner.Tumble || w.Kind == planner.Cumulate {
		step = size
	}
	first := off - ((off-(lo-size))/step+2)*step
	for start := first; start <= hi; start += step {
		if w.Kind == planner.Cumulate {
			for end := start + slide; end <= start+size; end += slide {
				family = append(family, win{start, end})
			}
		} else {
			family = append(family, win{start, start + size})
		}
	}
	var out []string
	for _, fw := range family {
		counts := map[string]int{}
		for _, r := range rows {
			if t := r[0].Int(); t >= fw.start && t < fw.end {
				counts[r[1].Str()]++
			}
		}
		for k, n := range counts {
			out = append(out, fmt.Sprintf("+I(%s, %d, %s, %s, %s)", k, n,
				types.FormatTimestamp(fw.start, 3), types.FormatTimestamp(fw.end, 3), types.FormatTimestamp(fw.end-1000, 3)))
		}
	}
	return out
}
