package exec

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Interval joins
//
// An interval join keeps the rows of each input by join key, each with its time (the
// time attribute for event time; the operator's clock when the row arrived for
// processing time, as Flink does), and joins an arriving row with the rows of the other
// side whose times lie within the bounds: a pair joins when lower <= left.time -
// right.time <= upper (and the rest of the ON condition holds, the exact bounds among
// it). Every pair is joined once, when its second row arrives.
//
// A row stays only as long as a row of the other side can still join it. Rows arriving
// later have times after the current time W (the input watermark, the minimum of both
// inputs', or the clock): a left row at tl waits for right rows up to tl - lower, so it
// leaves when tl - lower <= W; a right row at tr leaves when tr + upper <= W. Each key
// has one cleanup timer at the earliest time one of its rows leaves, in a heap per side;
// a watermark (or a clock tick) fires the timers it passed. An outer side's row that
// joined nothing is emitted null-padded when it leaves, so the output is append-only.
//
// The output's time attributes lag the input watermark: a pair emitted now may hold a
// time up to the bounds behind it. The operator forwards the watermark held back by
// max(-lower, upper), as Flink's interval join does, so that a window over either time
// of the output does not drop the pairs as late.
//
// State is checkpointed per side and key group (l<kg>, r<kg>): the rows with their times
// and whether they joined; key groups unchanged since the checkpoint's base are reused.

// intervalJoinConfig is a compiled planner.IntervalJoin.
type intervalJoinConfig struct {
	typ          planner.JoinType
	keys         [2][]eval.Evaluator
	where        func(types.Row) (bool, error)
	widths       [2]int
	outer        [2]bool
	timeCol      [2]int
	rowTime      bool
	lower, upper int64 // microseconds; a strict bound is checked by where
}

func compileIntervalJoin(n *planner.IntervalJoin, env eval.Env) (*intervalJoinConfig, error) {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: n.Type, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		KeyTypes: n.KeyTypes, Where: n.Where, Condition: n.Condition, Out: n.Out}
	base, err := compileJoin(j, env, 0)
	if err != nil {
		return nil, err
	}
	cfg := &intervalJoinConfig{typ: n.Type, keys: base.keys, where: base.where, widths: base.widths, outer: base.outer,
		timeCol: [2]int{n.LeftTime, n.RightTime}, rowTime: n.RowTime, lower: n.LowerBound, upper: n.UpperBound}
	for s, c := range cfg.timeCol {
		if c < 0 || c >= cfg.widths[s] {
			return nil, fmt.Errorf("%w: interval join time column %d of %d", ErrUnsupportedPlan, c, cfg.widths[s])
		}
	}
	return cfg, nil
}

// describeIntervalJoin describes what shapes an interval join's state, for state.Meta.CheckPlan.
func describeIntervalJoin(n *planner.IntervalJoin) string {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: n.Type, KeyTypes: n.KeyTypes}
	d := strings.Replace(describeJoin(j), "join ", "interval join ", 1)
	return d + fmt.Sprintf(" rowtime=%v bounds=[%d, %d] times=%d,%d", n.RowTime, n.LowerBound, n.UpperBound, n.LeftTime, n.RightTime)
}

// ijRecord is one row kept by a side: its time, and whether it joined a row.
type ijRecord struct {
	row     types.Row
	ts      int64
	matched bool
}

// ijBucket is the rows of one side with one key.
type ijBucket struct {
	key  string
	kg   uint16
	recs []ijRecord
	// timer is the cleanup time in the side's heap, math.MaxInt64 for none; an entry of
	// the heap at another time is stale.
	timer int64
}

type ijTimer struct {
	at int64
	b  *ijBucket
}

type ijTimers []ijTimer

func (h ijTimers) Len() int           { return len(h) }
func (h ijTimers) Less(i, j int) bool { return h[i].at < h[j].at }
func (h ijTimers) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ijTimers) Push(x any)        { *h = append(*h, x.(ijTimer)) }
func (h *ijTimers) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = ijTimer{}
	*h = old[:len(old)-1]
	return t
}

// ijSide is the state of one input.
type ijSide struct {
	buckets map[string]*ijBucket
	timers  ijTimers
	rows    int64
	kgRows  map[uint16]int // rows per key group
	changed kgSet
	written map[uint16]uint64
}

func newIJSide() *ijSide {
	return &ijSide{buckets: map[string]*ijBucket{}, kgRows: map[uint16]int{}, written: map[uint16]uint64{}}
}

// intervalJoinOp runs an interval join.
type intervalJoinOp struct {
	nopOperator
	cfg    *intervalJoinConfig
	clock  connectors.Clock
	sides  [2]*ijSide
	now    int64 // W: the input watermark, or the clock for processing time
	keyBuf []byte
}

func newIntervalJoinOp(cfg *intervalJoinConfig, clock connectors.Clock) *intervalJoinOp {
	return &intervalJoinOp{cfg: cfg, clock: clock, sides: [2]*ijSide{newIJSide(), newIJSide()}, now: NoWatermark}
}

var (
	_ multiInput      = (*intervalJoinOp)(nil)
	_ stateful        = (*intervalJoinOp)(nil)
	_ timerOperator   = (*intervalJoinOp)(nil)
	_ watermarkHolder = (*intervalJoinOp)(nil)
)

// expiry is when a row of side s at ts leaves: no row of the other side arriving after
// that time can join it.
func (o *intervalJoinOp) expiry(s int, ts int64) int64 {
	if s == 0 {
		return satAdd(ts, -o.cfg.lower)
	}
	return satAdd(ts, o.cfg.upper)
}

func satAdd(a, b int64) int64 {
	c := a + b
	switch {
	case b > 0 && c < a:
		return math.MaxInt64
	case b < 0 && c > a:
		return math.MinInt64
	}
	return c
}

// outputWatermark holds the watermark back by the join's bounds.
func (o *intervalJoinOp) outputWatermark(wm int64) int64 {
	if wm == MaxWatermark || wm == NoWatermark {
		return wm
	}
	return satAdd(wm, -max(-o.cfg.lower, o.cfg.upper, 0))
}

func (o *intervalJoinOp) processBatch(context.Context, batch, *outbox) error {
	return fmt.Errorf("%w: an interval join's batch without its input", ErrInternal)
}

func (o *intervalJoinOp) key(s int, row types.Row) (key []byte, ok bool, err error) {
	o.keyBuf = o.keyBuf[:0]
	for _, ev := range o.cfg.keys[s] {
		v, err := ev(row)
		if err != nil {
			return nil, false, err
		}
		if v.IsNull() {
			return nil, false, nil
		}
		o.keyBuf = appendKey(o.keyBuf, v)
	}
	return o.keyBuf, true, nil
}

// pair is the output row of a row of side s and a row of the other side (nil: NULLs).
func (o *intervalJoinOp) pair(s int, row, other types.Row) types.Row {
	out := make(types.Row, o.cfg.widths[0]+o.cfg.widths[1])
	l, r := row, other
	if s == 1 {
		l, r = other, row
	}
	if l != nil {
		copy(out, l)
	}
	if r != nil {
		copy(out[o.cfg.widths[0]:], r)
	}
	return out
}

func (o *intervalJoinOp) processInput(ctx context.Context, s int, b batch, out *outbox) error {
	if s != 0 && s != 1 {
		return fmt.Errorf("%w: interval join input %d", ErrInternal, s)
	}
	if !o.cfg.rowTime {
		if err := o.advance(ctx, o.clock.Now().UnixMicro(), out); err != nil {
			return err
		}
	}
	me, other := o.sides[s], o.sides[1-s]
	for i, row := range b.rows {
		if k := b.kind(i); k != connectors.Insert {
			return fmt.Errorf("%w: interval join received %s", ErrRetraction, k)
		}
		key, ok, err := o.key(s, row)
		if err != nil {
			return err
		}
		ts := o.now
		if o.cfg.rowTime {
			if v := row[o.cfg.timeCol[s]]; v.IsNull() {
				ok = false
			} else {
				ts = v.Int()
			}
		}
		matched := false
		if ob := other.buckets[string(key)]; ok && ob != nil {
			// The other side's times that can join ts.
			lo, hi := satAdd(ts, -o.cfg.upper), satAdd(ts, -o.cfg.lower)
			if s == 1 {
				lo, hi = satAdd(ts, o.cfg.lower), satAdd(ts, o.cfg.upper)
			}
			for r := range ob.recs {
				rec := &ob.recs[r]
				if rec.ts < lo || rec.ts > hi {
					continue
				}
				j := o.pair(s, row, rec.row)
				if o.cfg.where != nil {
					pass, err := o.cfg.where(j)
					if err != nil {
						return err
					}
					if !pass {
						continue
					}
				}
				matched = true
				if !rec.matched {
					rec.matched = true
					if o.cfg.outer[1-s] {
						other.changed.set(ob.kg)
					}
				}
				if err := out.emit(ctx, connectors.Insert, j); err != nil {
					return err
				}
			}
		}
		exp := o.expiry(s, ts)
		if !ok || o.now != NoWatermark && exp <= o.now {
			// Nothing later can join it: not kept.
			if !matched && o.cfg.outer[s] {
				if err := out.emit(ctx, connectors.Insert, o.pair(s, row, nil)); err != nil {
					return err
				}
			}
			continue
		}
		bk := me.buckets[string(key)]
		if bk == nil {
			bk = &ijBucket{key: string(key), kg: keyGroupOf(key), timer: math.MaxInt64}
			me.buckets[bk.key] = bk
		}
		bk.recs = append(bk.recs, ijRecord{row: row, ts: ts, matched: matched})
		me.rows++
		me.kgRows[bk.kg]++
		me.changed.set(bk.kg)
		if exp < bk.timer {
			bk.timer = exp
			heap.Push(&me.timers, ijTimer{at: exp, b: bk})
		}
	}
	return nil
}

// advance moves the current time to now and drops the rows that left, emitting an
// outer side's unmatched ones null-padded.
func (o *intervalJoinOp) advance(ctx context.Context, now int64, out *outbox) error {
	if now <= o.now {
		return nil
	}
	o.now = now
	for s, side := range o.sides {
		for len(side.timers) > 0 && side.timers[0].at <= now {
			t := heap.Pop(&side.timers).(ijTimer)
			b := t.b
			if b.timer != t.at {
				continue // stale: the bucket's timer moved, or it is gone
			}
			b.timer = math.MaxInt64
			next := int64(math.MaxInt64)
			kept := b.recs[:0]
			for _, rec := range b.recs {
				if e := o.expiry(s, rec.ts); e > now {
					next = min(next, e)
					kept = append(kept, rec)
					continue
				}
				if !rec.matched && o.cfg.outer[s] {
					if err := out.emit(ctx, connectors.Insert, o.pair(s, rec.row, nil)); err != nil {
						return err
					}
				}
			}
			gone := len(b.recs) - len(kept)
			clear(b.recs[len(kept):])
			b.recs = kept
			side.rows -= int64(gone)
			if side.kgRows[b.kg] -= gone; side.kgRows[b.kg] <= 0 {
				delete(side.kgRows, b.kg)
			}
			side.changed.set(b.kg)
			if len(kept) == 0 {
				delete(side.buckets, b.key)
				continue
			}
			b.timer = next
			heap.Push(&side.timers, ijTimer{at: next, b: b})
		}
	}
	return nil
}

func (o *intervalJoinOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if !o.cfg.rowTime {
		return nil
	}
	return o.advance(ctx, wm, out)
}

// finish emits every unmatched row of an outer side at the end of a bounded input (its
// final watermark did already for event time).
func (o *intervalJoinOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if !endOfInput || o.cfg.rowTime {
		return nil
	}
	return o.advance(ctx, math.MaxInt64, out)
}

func (o *intervalJoinOp) timerInterval() time.Duration {
	if o.cfg.rowTime {
		return 0
	}
	return 100 * time.Millisecond
}

func (o *intervalJoinOp) onTimer(ctx context.Context, now time.Time, out *outbox) error {
	return o.advance(ctx, now.UnixMicro(), out)
}

func (o *intervalJoinOp) measureState() StateMetrics {
	return StateMetrics{Groups: o.sides[0].rows + o.sides[1].rows}
}

func (o *intervalJoinOp) snapshotState(_ context.Context, w stateWriter) error {
	base := w.Base()
	for s, side := range o.sides {
		var write map[uint16][]*ijBucket
		for kg := range side.kgRows {
			if at := side.written[kg]; base == 0 || at == 0 || at > base || side.changed.has(kg) {
				if write == nil {
					write = map[uint16][]*ijBucket{}
				}
				write[kg] = nil
			}
		}
		if write != nil {
			for _, b := range side.buckets {
				if _, ok := write[b.kg]; ok {
					write[b.kg] = append(write[b.kg], b)
				}
			}
		}
		kgs := make([]uint16, 0, len(side.kgRows))
		for kg := range side.kgRows {
			kgs = append(kgs, kg)
		}
		slices.Sort(kgs)
		for _, kg := range kgs {
			key := kgKey(joinSidePrefix[s], kg)
			bs, ok := write[kg]
			if !ok {
				if err := w.Unchanged(key); err != nil {
					return err
				}
				continue
			}
			if err := w.Put(key, encodeIJBuckets(bs)); err != nil {
				return err
			}
			side.written[kg] = w.ID()
		}
		side.changed.clear()
	}
	return nil
}

// encodeIJBuckets writes the buckets of one key group: version, count, then each
// bucket's key and records (row, time, matched).
func encodeIJBuckets(bs []*ijBucket) []byte {
	dst := []byte{stateVersion}
	dst = binary.AppendUvarint(dst, uint64(len(bs)))
	for _, b := range bs {
		dst = appendLenBytes(dst, []byte(b.key))
		dst = binary.AppendUvarint(dst, uint64(len(b.recs)))
		for _, r := range b.recs {
			dst = appendStateRow(dst, r.row)
			dst = binary.AppendVarint(dst, r.ts)
			m := byte(0)
			if r.matched {
				m = 1
			}
			dst = append(dst, m)
		}
	}
	return dst
}

func (o *intervalJoinOp) restoreState(r stateReader) error {
	o.sides = [2]*ijSide{newIJSide(), newIJSide()}
	return r.Scan(func(key string, value []byte) error {
		s := slices.Index(joinSidePrefix[:], key[:min(1, len(key))])
		prefix, kg, err := parseKGKey(key)
		if err != nil || s < 0 || prefix != joinSidePrefix[s] {
			return fmt.Errorf("malformed interval join state key %q", key)
		}
		side := o.sides[s]
		d := &stateDecoder{data: value}
		d.version()
		n := d.count(2)
		for range n {
			k := d.lenBytes()
			m := d.count(2)
			if d.err != nil {
				break
			}
			b := side.buckets[string(k)]
			if b == nil {
				b = &ijBucket{key: string(k), kg: keyGroupOf(k), timer: math.MaxInt64}
				side.buckets[b.key] = b
			}
			if b.kg != kg {
				return fmt.Errorf("state key %q: a join key of key group %d", key, b.kg)
			}
			for range m {
				row := d.row()
				if d.err == nil && len(row) != o.cfg.widths[s] {
					d.fail("a row of %d columns, want %d", len(row), o.cfg.widths[s])
				}
				rec := ijRecord{row: row, ts: d.varint(), matched: d.byte() == 1}
				b.recs = append(b.recs, rec)
				side.rows++
				side.kgRows[kg]++
				if e := o.expiry(s, rec.ts); e < b.timer {
					b.timer = e
				}
			}
			if b.timer != math.MaxInt64 {
				heap.Push(&side.timers, ijTimer{at: b.timer, b: b})
			}
		}
		if err := d.finish(); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		side.written[kg] = r.ID()
		return nil
	})
}
