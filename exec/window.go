package exec

import (
	"fmt"
	"math"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// windowSpec is a planner.Window in microseconds, with what assigning rows needs.
//
// All window arithmetic happens on "local" microseconds: the wall clock of the row's time
// in table.local-time-zone for TIMESTAMP_LTZ time columns (so a day starts at local
// midnight), and the column's own value for TIMESTAMP columns (already a wall clock).
// Firing compares the instant of a window's end with the watermark, which is an instant
// for TIMESTAMP_LTZ and a wall clock for TIMESTAMP, like the column it came from.
type windowSpec struct {
	kind   planner.WindowKind
	size   int64 // window size
	slide  int64 // HOP slide, CUMULATE step, TUMBLE size
	offset int64
	// slice is the length of the pieces state is kept in: TUMBLE the window, HOP the
	// greatest common divisor of size and slide, CUMULATE the step. Every window is a
	// whole number of slices, so a row goes into exactly one slice.
	slice    int64
	loc      *time.Location // nil when the time column is a TIMESTAMP (wall clock)
	procTime bool
	// tick is the smallest step of the time column (1 ms for TIMESTAMP(3)): window_time is
	// window_end - tick, and a window fires when the watermark reaches it.
	tick int64
}

func newWindowSpec(w planner.Window, timeType types.Type) (*windowSpec, error) {
	s := &windowSpec{
		kind:     w.Kind,
		size:     w.Size.Microseconds(),
		slide:    w.Slide.Microseconds(),
		offset:   w.Offset.Microseconds(),
		procTime: w.ProcTime,
		tick:     1000,
	}
	if s.kind == planner.Tumble {
		s.slide = s.size
	}
	switch {
	case s.size <= 0:
		return nil, fmt.Errorf("%w: %s window size must be positive", ErrUnsupportedPlan, w.Kind)
	case s.slide <= 0:
		return nil, fmt.Errorf("%w: %s window slide or step must be positive", ErrUnsupportedPlan, w.Kind)
	}
	switch s.kind {
	case planner.Tumble:
		s.slice = s.size
	case planner.Hop:
		// A slide larger than the size leaves gaps; rows in a gap belong to no window.
		s.slice = gcd(s.size, s.slide)
	case planner.Cumulate:
		if s.size%s.slide != 0 {
			return nil, fmt.Errorf("%w: CUMULATE window size %s must be a multiple of its step %s",
				ErrUnsupportedPlan, w.Size, w.Slide)
		}
		s.slice = s.slide
	default:
		return nil, fmt.Errorf("%w: window kind %d", ErrUnsupportedPlan, w.Kind)
	}
	if timeType.Kind == types.TimestampLTZ || w.ProcTime {
		s.loc = w.Location
		if s.loc == nil {
			s.loc = time.UTC
		}
	} else if timeType.Kind != types.Timestamp {
		return nil, fmt.Errorf("%w: window time column is %s, want TIMESTAMP or TIMESTAMP_LTZ", ErrUnsupportedPlan, timeType)
	}
	if p := timeType.Prec; p > 3 && p <= 6 {
		s.tick = pow10(6 - p)
	}
	return s, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func pow10(n int) int64 {
	r := int64(1)
	for range n {
		r *= 10
	}
	return r
}

// floorMod is the mathematical modulo (never negative for positive m).
func floorMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// alignDown returns the largest t' <= t with t' = offset (mod unit).
func alignDown(t, unit, offset int64) int64 { return t - floorMod(t-offset, unit) }

// sliceStart returns the start of the slice holding local time t.
func (s *windowSpec) sliceStart(t int64) int64 { return alignDown(t, s.slice, s.offset) }

// windowStart returns the start of the window ending at end (end is on the slide grid).
func (s *windowSpec) windowStart(end int64) int64 {
	if s.kind == planner.Cumulate {
		return alignDown(end-s.slice, s.size, s.offset)
	}
	return end - s.size
}

// Window starts are offset + k*slide (k*size for TUMBLE and CUMULATE), so HOP window ends
// are offset + size + k*slide: on the slide grid only when size is a multiple of slide,
// which Flink's window table functions require but its legacy HOP does not.

// lastEnd returns the end of the last window that contains the slice starting at start;
// once it has fired, rows of that slice are late.
func (s *windowSpec) lastEnd(start int64) int64 {
	switch s.kind {
	case planner.Hop:
		return alignDown(start+s.size, s.slide, s.offset+s.size)
	case planner.Cumulate:
		return alignDown(start, s.size, s.offset) + s.size
	}
	return start + s.size
}

// firstEnd returns the end of the first window that contains the slice starting at
// start, or a value past lastEnd when none does (a slice in a gap between HOP windows).
func (s *windowSpec) firstEnd(start int64) int64 {
	if s.kind == planner.Hop {
		// the first window end at or after the slice's end
		return alignDown(start+s.slice-1, s.slide, s.offset+s.size) + s.slide
	}
	return start + s.slice
}

// windowsOf calls fn with the start and end of every window containing local time t, in
// order of end.
func (s *windowSpec) windowsOf(t int64, fn func(start, end int64)) {
	switch s.kind {
	case planner.Tumble:
		start := alignDown(t, s.size, s.offset)
		fn(start, start+s.size)
	case planner.Hop:
		// starts on the slide grid in (t-size, t]
		for start := alignDown(t-s.size, s.slide, s.offset) + s.slide; start <= t; start += s.slide {
			fn(start, start+s.size)
		}
	case planner.Cumulate:
		start := alignDown(t, s.size, s.offset)
		for end := alignDown(t, s.slide, s.offset) + s.slide; end <= start+s.size; end += s.slide {
			fn(start, end)
		}
	}
}

// zone converts instants to local wall-clock microseconds in one location, remembering
// the offset of the last zone period it looked up: consecutive rows almost always fall
// in the same period, so the common case is a range check and an add.
type zone struct {
	loc         *time.Location // nil: values are wall clocks already
	from, until int64          // instants of the cached period
	offset      int64
}

func newZone(loc *time.Location) *zone { return &zone{loc: loc, from: 1, until: 0} }

// local returns the wall clock of an instant.
func (z *zone) local(instant int64) int64 {
	if z.loc == nil {
		return instant
	}
	if instant >= z.from && instant < z.until {
		return instant + z.offset
	}
	t := time.UnixMicro(instant).In(z.loc)
	_, off := t.Zone()
	z.offset = int64(off) * 1_000_000
	start, end := t.ZoneBounds()
	z.from, z.until = math.MinInt64, math.MaxInt64
	if !start.IsZero() {
		z.from = start.UnixMicro()
	}
	if !end.IsZero() {
		z.until = end.UnixMicro()
	}
	return instant + z.offset
}

// instant returns the instant of a wall clock. In a daylight-saving gap or overlap the
// choice is time.Date's.
func (z *zone) instant(local int64) int64 {
	if z.loc == nil || local == math.MaxInt64 || local == math.MinInt64 {
		return local
	}
	t := time.UnixMicro(local).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), z.loc).UnixMicro()
}

// windowColumns fills the window_start, window_end and window_time values of a window
// given in local time, in the types the plan declares: TIMESTAMP columns show the local
// wall clock, TIMESTAMP_LTZ columns the instant.
type windowColumns struct {
	startLTZ, endLTZ, timeLTZ bool
	tick                      int64
}

func newWindowColumns(out types.Schema, at int, tick int64) windowColumns {
	return windowColumns{
		startLTZ: out[at].Type.Kind == types.TimestampLTZ,
		endLTZ:   out[at+1].Type.Kind == types.TimestampLTZ,
		timeLTZ:  out[at+2].Type.Kind == types.TimestampLTZ,
		tick:     tick,
	}
}

func (c windowColumns) fill(dst types.Row, z *zone, start, end, endInstant int64) {
	dst[0] = tsValue(c.startLTZ, start, z)
	if c.endLTZ {
		dst[1] = types.TimestampLTZValue(endInstant)
	} else {
		dst[1] = types.TimestampValue(end)
	}
	if c.timeLTZ {
		dst[2] = types.TimestampLTZValue(endInstant - c.tick)
	} else {
		dst[2] = types.TimestampValue(end - c.tick)
	}
}

func tsValue(ltz bool, local int64, z *zone) types.Value {
	if ltz {
		return types.TimestampLTZValue(z.instant(local))
	}
	return types.TimestampValue(local)
}
