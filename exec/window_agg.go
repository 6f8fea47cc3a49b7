package exec

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// windowAggConfig is a compiled planner.WindowAggregate.
type windowAggConfig struct {
	win     *windowSpec
	timeCol int
	keys    []int
	aggs    *aggCalls
	cols    windowColumns // how to fill window_start, window_end, window_time
	width   int           // output columns
}

func compileWindowAgg(n *planner.WindowAggregate) (*windowAggConfig, error) {
	in := n.Input.Schema()
	if n.Window.TimeCol < 0 || n.Window.TimeCol >= len(in) {
		return nil, fmt.Errorf("%w: window time column %d of %d", ErrUnsupportedPlan, n.Window.TimeCol, len(in))
	}
	win, err := newWindowSpec(n.Window, in[n.Window.TimeCol].Type)
	if err != nil {
		return nil, err
	}
	for _, k := range n.Keys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("%w: group key column %d of %d", ErrUnsupportedPlan, k, len(in))
		}
	}
	aggs, err := compileAggCalls(n.Aggs, in)
	if err != nil {
		return nil, err
	}
	width := len(n.Keys) + len(n.Aggs) + 3
	if len(n.Out) != width {
		return nil, fmt.Errorf("%w: window aggregate has %d output columns, want keys, aggregates and 3 window columns (%d)",
			ErrUnsupportedPlan, len(n.Out), width)
	}
	return &windowAggConfig{
		win: win, timeCol: n.Window.TimeCol, keys: n.Keys, aggs: aggs,
		cols:  newWindowColumns(n.Out, len(n.Keys)+len(n.Aggs), win.tick),
		width: width,
	}, nil
}

// windowAggOp computes a window aggregate with sliced state, the way Flink's window
// aggregates do: each row is added to the one slice holding its time, and a window's
// result is built from its slices when the watermark passes its end.
//
//   - TUMBLE: a slice is a window; firing emits it and deletes it.
//   - HOP: slices are gcd(size, slide) long; firing merges the window's slices per key;
//     a slice is deleted when the last window containing it has fired.
//   - CUMULATE: slices are one step long; at each step end the slice is merged into the
//     window's running accumulator, which is emitted (so a 1-day window with 1-minute
//     steps emits its running value every minute, from its first row on) and deleted at
//     the window's end.
//
// A row whose every window has fired is late: it is dropped and counted. A row whose
// slice fired but whose later windows have not (HOP, CUMULATE) still counts in those.
type windowAggOp struct {
	nopOperator
	cfg   *windowAggConfig
	m     *opMetrics
	clock connectors.Clock
	funcs []agg.Func
	zone  *zone

	// state
	wm        int64               // input watermark (processing time for PROCTIME windows)
	slices    map[int64]*aggTable // by slice start, local time
	runs      map[int64]*aggTable // CUMULATE running accumulators, by window start
	ends      endHeap             // window ends to fire, each once
	scheduled map[int64]bool      // the ends in the heap

	// the slice (or running accumulator) the last row went to; valid until the next
	// watermark, as rows usually come in time order
	cached           bool
	cacheLo, cacheHi int64
	cacheTable       *aggTable
	cacheLate        bool
	keyBuf           []byte

	shared []sharedState // how each aggregate's shared state is checkpointed
}

func newWindowAggOp(cfg *windowAggConfig, m *opMetrics, clock connectors.Clock) (*windowAggOp, error) {
	funcs, err := cfg.aggs.funcs()
	if err != nil {
		return nil, err
	}
	return &windowAggOp{
		cfg: cfg, m: m, clock: clock, funcs: funcs, zone: newZone(cfg.win.loc),
		wm: NoWatermark, slices: map[int64]*aggTable{}, runs: map[int64]*aggTable{},
		scheduled: map[int64]bool{}, shared: sharedStates(len(funcs)),
	}, nil
}

func (o *windowAggOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	w := o.cfg.win
	var procNow int64
	if w.procTime {
		procNow = o.zone.local(o.clock.Now().UnixMicro())
	}
	late, bad := 0, 0
	lastLate := NoWatermark
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: window aggregate received %s", ErrRetraction, b.kind(i))
		}
		t := procNow
		if !w.procTime {
			ts := row[o.cfg.timeCol]
			if ts.IsNull() {
				bad++
				continue
			}
			t = o.zone.local(ts.Int())
		}
		tbl, isLate := o.target(t)
		if tbl == nil {
			if isLate {
				late++
				if !w.procTime {
					lastLate = row[o.cfg.timeCol].Int()
				}
			}
			continue
		}
		o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.keys)
		g := tbl.get(o.keyBuf, row, o.cfg.keys, o.funcs)
		if err := o.cfg.aggs.add(g.bufs, row); err != nil {
			return err
		}
	}
	o.m.late.add(late)
	if lastLate != NoWatermark {
		o.m.lastLate.Store(lastLate)
	}
	o.m.bad.add(bad)
	return nil
}

// target returns the table a row at local time t goes into, nil when it is late (late
// is then true) or belongs to no window (a gap between HOP windows).
func (o *windowAggOp) target(t int64) (tbl *aggTable, late bool) {
	if o.cached && t >= o.cacheLo && t < o.cacheHi {
		return o.cacheTable, o.cacheLate
	}
	w := o.cfg.win
	s := w.sliceStart(t)
	first, last := w.firstEnd(s), w.lastEnd(s)
	switch {
	case first > last:
		// A HOP slice in a gap between windows (slide > size): it belongs to no window.
	case o.fired(last):
		late = true
	case w.kind == planner.Cumulate && o.fired(s+w.slice):
		// This step has fired, but not the whole window: the row counts from the next
		// step on, through the window's running accumulator.
		ws := alignDown(s, w.size, w.offset)
		tbl = o.runs[ws]
		if tbl == nil {
			tbl = newAggTable()
			o.runs[ws] = tbl
			e := s + w.slice
			for o.fired(e) {
				e += w.slice
			}
			o.schedule(e)
		}
	default:
		tbl = o.slices[s]
		if tbl == nil {
			tbl = newAggTable()
			o.slices[s] = tbl
			switch w.kind {
			case planner.Hop:
				for e := first; e <= last; e += w.slide {
					if !o.fired(e) {
						o.schedule(e)
					}
				}
			default:
				o.schedule(s + w.slice)
			}
		}
	}
	o.cached, o.cacheLo, o.cacheHi, o.cacheTable, o.cacheLate = true, s, s+w.slice, tbl, late
	return tbl, late
}

// fired reports whether the window ending at local time end has fired.
func (o *windowAggOp) fired(end int64) bool {
	return o.wm != NoWatermark && o.zone.instant(end)-o.cfg.win.tick <= o.wm
}

func (o *windowAggOp) schedule(end int64) {
	if o.scheduled[end] {
		return
	}
	o.scheduled[end] = true
	heap.Push(&o.ends, windowEnd{local: end, instant: o.zone.instant(end)})
}

func (o *windowAggOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if o.cfg.win.procTime {
		// Event time does not drive processing-time windows, except that the end of a
		// bounded input fires them all.
		if wm != MaxWatermark {
			return nil
		}
	}
	return o.advance(ctx, wm, out)
}

func (o *windowAggOp) timerInterval() time.Duration {
	if !o.cfg.win.procTime {
		return 0
	}
	return min(time.Duration(o.cfg.win.slice)*time.Microsecond, 200*time.Millisecond)
}

func (o *windowAggOp) onTimer(ctx context.Context, now time.Time, out *outbox) error {
	return o.advance(ctx, now.UnixMicro(), out)
}

// advance moves the operator's time to wm and fires every window that ends by then, in
// order of end.
func (o *windowAggOp) advance(ctx context.Context, wm int64, out *outbox) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	o.cached = false
	for len(o.ends) > 0 && o.ends[0].instant-o.cfg.win.tick <= wm {
		e := heap.Pop(&o.ends).(windowEnd)
		delete(o.scheduled, e.local)
		if err := o.fire(ctx, e, out); err != nil {
			return err
		}
	}
	return nil
}

// fire emits the window ending at e and deletes the state no later window needs.
func (o *windowAggOp) fire(ctx context.Context, e windowEnd, out *outbox) error {
	w := o.cfg.win
	ws := w.windowStart(e.local)
	switch w.kind {
	case planner.Tumble:
		tbl := o.slices[ws]
		delete(o.slices, ws)
		if tbl != nil {
			return o.emit(ctx, tbl, ws, e, out)
		}
	case planner.Hop:
		win := newAggTable()
		for s := ws; s < e.local; s += w.slice {
			if tbl := o.slices[s]; tbl != nil {
				if err := win.mergeFrom(tbl, o.funcs, false); err != nil {
					return err
				}
				if w.lastEnd(s) <= e.local {
					delete(o.slices, s)
				}
			}
		}
		if len(win.order) > 0 {
			return o.emit(ctx, win, ws, e, out)
		}
	case planner.Cumulate:
		s := e.local - w.slice
		run := o.runs[ws]
		if tbl := o.slices[s]; tbl != nil {
			delete(o.slices, s)
			if run == nil {
				run = tbl
				o.runs[ws] = run
			} else if err := run.mergeFrom(tbl, o.funcs, true); err != nil {
				return err
			}
		}
		if run == nil {
			return nil
		}
		if e.local >= ws+w.size {
			delete(o.runs, ws)
		} else {
			o.schedule(e.local + w.slice)
		}
		return o.emit(ctx, run, ws, e, out)
	}
	return nil
}

// emit sends one row per group of tbl for the window [start, e).
func (o *windowAggOp) emit(ctx context.Context, tbl *aggTable, start int64, e windowEnd, out *outbox) error {
	nk, na := len(o.cfg.keys), len(o.funcs)
	width := o.cfg.width
	backing := make([]types.Value, width*len(tbl.order))
	for _, g := range tbl.order {
		row := backing[:width:width]
		backing = backing[width:]
		copy(row, g.key)
		for i, b := range g.bufs {
			row[nk+i] = b.Result()
		}
		o.cfg.cols.fill(row[nk+na:], o.zone, start, e.local, e.instant)
		if err := out.emit(ctx, connectors.Insert, row); err != nil {
			return err
		}
	}
	return nil
}

// windowEnd is a window end in local time and as the instant the watermark is compared with.
type windowEnd struct{ local, instant int64 }

// endHeap is a min-heap of window ends.
type endHeap []windowEnd

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].instant != h[j].instant {
		return h[i].instant < h[j].instant
	}
	return h[i].local < h[j].local
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(windowEnd)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
