package exec

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// SESSION windows
//
// sessionAggOp runs a planner.WindowAggregate over a SessionWindow as Flink's merging
// window operator does. Per key it keeps the open sessions, each [start, end) with its
// aggregate buffers: a row at time t is the window [t, t + gap); every open session it
// intersects (touching counts, as in Flink: rows exactly a gap apart are one session)
// merges with it into one (so a row can bridge two sessions, whose buffers merge), else
// it opens a session of its own. A row whose own window has ended but that merges into
// an open session counts in it, as in Flink, which checks the merged window. A session is emitted when the watermark
// reaches its end (end - 1 ms, as windows fire) and then forgotten; a row whose session
// would end at or behind the watermark is late, dropped and counted. On processing time
// the row's time is the wall clock and sessions fire on it.

// sessionConfig is a compiled session WindowAggregate.
type sessionConfig struct {
	gap, tick int64
	loc       *time.Location
	procTime  bool
	timeCol   int
	keys      []int
	aggs      *aggCalls
	cols      windowColumns
	width     int
}

func compileSessionAgg(n *planner.WindowAggregate) (*opSpec, error) {
	in := n.Input.Schema()
	w := n.Window
	if w.TimeCol < 0 || w.TimeCol >= len(in) {
		return nil, fmt.Errorf("%w: window time column %d of %d", ErrUnsupportedPlan, w.TimeCol, len(in))
	}
	tt := in[w.TimeCol].Type
	cfg := &sessionConfig{gap: w.Size.Microseconds(), tick: 1000, procTime: w.ProcTime, timeCol: w.TimeCol, keys: n.Keys}
	if cfg.gap <= 0 {
		return nil, fmt.Errorf("%w: SESSION gap must be positive", ErrUnsupportedPlan)
	}
	if tt.Kind == types.TimestampLTZ || w.ProcTime {
		cfg.loc = w.Location
		if cfg.loc == nil {
			cfg.loc = time.UTC
		}
	} else if tt.Kind != types.Timestamp {
		return nil, fmt.Errorf("%w: window time column is %s, want TIMESTAMP or TIMESTAMP_LTZ", ErrUnsupportedPlan, tt)
	}
	if p := tt.Prec; p > 3 && p <= 6 {
		cfg.tick = pow10(6 - p)
	}
	for _, k := range n.Keys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("%w: group key column %d of %d", ErrUnsupportedPlan, k, len(in))
		}
	}
	for _, a := range n.Aggs {
		if a.State == planner.StateRoaringDict {
			// The dictionary is shared by every buffer of the call; merging sessions'
			// buffers would need it checkpointed with them. The planner keeps such a
			// COUNT(DISTINCT) in a value set instead.
			return nil, fmt.Errorf("%w: %s in a SESSION window: COUNT(DISTINCT) with a dictionary", ErrUnsupportedPlan, a.Name)
		}
	}
	aggs, err := compileAggCalls(n.Aggs, in)
	if err != nil {
		return nil, err
	}
	cfg.aggs = aggs
	cfg.width = len(n.Keys) + len(n.Aggs) + 3
	if len(n.Out) != cfg.width {
		return nil, fmt.Errorf("%w: session window aggregate has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), cfg.width)
	}
	cfg.cols = newWindowColumns(n.Out, len(n.Keys)+len(n.Aggs), cfg.tick)
	return &opSpec{name: "session window aggregate", stateDesc: describeSessionAgg(n), build: func(rt *runEnv, m *opMetrics) (operator, error) {
		return newSessionAggOp(cfg, m, rt.clock)
	}}, nil
}

// session is one open session of a key.
type session struct {
	start, end int64 // local time; end is the last row's time + gap
	bufs       []agg.Buffer
	dead       bool // merged into another or emitted
}

// sessionKey is the open sessions of one key, by start, none overlapping.
type sessionKey struct {
	key      string
	keyRow   types.Row
	kg       uint16
	sessions []*session
}

// sessionEnd is a scheduled firing; stale when the session's end moved or it is dead.
type sessionEnd struct {
	instant int64
	end     int64
	k       *sessionKey
	s       *session
}

type sessionHeap []sessionEnd

func (h sessionHeap) Len() int           { return len(h) }
func (h sessionHeap) Less(i, j int) bool { return h[i].instant < h[j].instant }
func (h sessionHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sessionHeap) Push(x any)        { *h = append(*h, x.(sessionEnd)) }
func (h *sessionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type sessionAggOp struct {
	nopOperator
	cfg   *sessionConfig
	m     *opMetrics
	clock connectors.Clock
	funcs []agg.Func
	zone  *zone

	wm      int64
	keys    map[string]*sessionKey
	ends    sessionHeap
	dirty   kgSet
	written map[uint16]uint64
	keyBuf  []byte
}

func newSessionAggOp(cfg *sessionConfig, m *opMetrics, clock connectors.Clock) (*sessionAggOp, error) {
	funcs, err := cfg.aggs.funcs()
	if err != nil {
		return nil, err
	}
	return &sessionAggOp{cfg: cfg, m: m, clock: clock, funcs: funcs, zone: newZone(cfg.loc), wm: NoWatermark,
		keys: map[string]*sessionKey{}, written: map[uint16]uint64{}}, nil
}

func (o *sessionAggOp) fired(end int64) bool {
	return o.wm != NoWatermark && o.zone.instant(end)-o.cfg.tick <= o.wm
}

func (o *sessionAggOp) newBufs() []agg.Buffer {
	bufs := make([]agg.Buffer, len(o.funcs))
	for i, f := range o.funcs {
		bufs[i] = f.NewBuffer()
	}
	return bufs
}

func (o *sessionAggOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	var procNow int64
	if o.cfg.procTime {
		procNow = o.zone.local(o.clock.Now().UnixMicro())
	}
	late, bad := 0, 0
	lastLate := NoWatermark
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: session window aggregate received %s", ErrRetraction, b.kind(i))
		}
		t := procNow
		if !o.cfg.procTime {
			ts := row[o.cfg.timeCol]
			if ts.IsNull() {
				bad++
				continue
			}
			t = o.zone.local(ts.Int())
		}
		o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.keys)
		k := o.keys[string(o.keyBuf)]
		start, end := t, t+o.cfg.gap
		// The open sessions the row's window intersects: as Flink's TimeWindow.intersects,
		// windows that touch merge, so rows a gap apart are one session.
		lo, hi := -1, -1
		if k != nil {
			for j, s := range k.sessions {
				if s.start <= end && start <= s.end {
					if lo < 0 {
						lo = j
					}
					hi = j + 1
				}
			}
		}
		if lo < 0 && o.fired(end) {
			late++
			if !o.cfg.procTime {
				lastLate = row[o.cfg.timeCol].Int()
			}
			continue
		}
		if k == nil {
			k = &sessionKey{key: string(o.keyBuf), keyRow: keyValues(row, o.cfg.keys), kg: keyGroupOf(o.keyBuf)}
			o.keys[k.key] = k
		}
		var s *session
		if lo < 0 {
			s = &session{start: start, end: end, bufs: o.newBufs()}
			at, _ := slices.BinarySearchFunc(k.sessions, start, func(x *session, t int64) int { return cmpInt(x.start, t) })
			k.sessions = slices.Insert(k.sessions, at, s)
		} else {
			// Merge the overlapped sessions into the first.
			s = k.sessions[lo]
			s.start, s.end = min(s.start, start), max(s.end, end)
			for _, x := range k.sessions[lo+1 : hi] {
				s.end = max(s.end, x.end)
				for c, buf := range s.bufs {
					if err := buf.Merge(x.bufs[c]); err != nil {
						return err
					}
				}
				x.dead = true
			}
			k.sessions = slices.Delete(k.sessions, lo+1, hi)
		}
		if err := o.cfg.aggs.add(s.bufs, row); err != nil {
			return err
		}
		heap.Push(&o.ends, sessionEnd{instant: o.zone.instant(s.end), end: s.end, k: k, s: s})
		o.dirty.set(k.kg)
	}
	o.m.late.add(late)
	if lastLate != NoWatermark {
		o.m.lastLate.Store(lastLate)
	}
	o.m.bad.add(bad)
	return nil
}

func (o *sessionAggOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if o.cfg.procTime && wm != MaxWatermark {
		return nil
	}
	return o.advance(ctx, wm, out)
}

func (o *sessionAggOp) timerInterval() time.Duration {
	if !o.cfg.procTime {
		return 0
	}
	return min(time.Duration(o.cfg.gap)*time.Microsecond, 200*time.Millisecond)
}

func (o *sessionAggOp) onTimer(ctx context.Context, now time.Time, out *outbox) error {
	return o.advance(ctx, now.UnixMicro(), out)
}

// advance moves the operator's time to wm and emits every session that ends by then.
func (o *sessionAggOp) advance(ctx context.Context, wm int64, out *outbox) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	for len(o.ends) > 0 && o.ends[0].instant-o.cfg.tick <= wm {
		e := heap.Pop(&o.ends).(sessionEnd)
		if e.s.dead || e.s.end != e.end {
			continue
		}
		e.s.dead = true
		k := e.k
		k.sessions = slices.DeleteFunc(k.sessions, func(x *session) bool { return x == e.s })
		if len(k.sessions) == 0 {
			delete(o.keys, k.key)
		}
		o.dirty.set(k.kg)
		nk, na := len(o.cfg.keys), len(o.funcs)
		row := make(types.Row, o.cfg.width)
		copy(row, k.keyRow)
		for i, b := range e.s.bufs {
			row[nk+i] = b.Result()
		}
		o.cfg.cols.fill(row[nk+na:], o.zone, e.s.start, e.s.end, e.instant)
		if err := out.emit(ctx, connectors.Insert, row); err != nil {
			return err
		}
	}
	return nil
}

func (o *sessionAggOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput {
		return o.advance(ctx, MaxWatermark, out)
	}
	return nil
}

// Checkpointed state, under the operator's state id: "w" the watermark the operator has
// reached, "s<kg>" the keys of key group kg, each value
//
//	version | key count | per key: key values, session count,
//	          per session: start, end, per aggregate: buffer (length, bytes)
const (
	sessionPrefix = "s"
	sessionWMKey  = "w"
)

func (o *sessionAggOp) snapshotState(_ context.Context, w stateWriter) error {
	if err := w.Put(sessionWMKey, binary.AppendVarint([]byte{stateVersion}, o.wm)); err != nil {
		return err
	}
	var byKG [keyGroups][]*sessionKey
	for _, k := range o.keys {
		byKG[k.kg] = append(byKG[k.kg], k)
	}
	base := w.Base()
	for kg := range uint16(keyGroups) {
		ks := byKG[kg]
		if len(ks) == 0 {
			continue
		}
		key := kgKey(sessionPrefix, kg)
		if at := o.written[kg]; base != 0 && at != 0 && at <= base && !o.dirty.has(kg) {
			if err := w.Unchanged(key); err != nil {
				return err
			}
			continue
		}
		slices.SortFunc(ks, func(a, b *sessionKey) int { return strings.Compare(a.key, b.key) })
		dst := []byte{stateVersion}
		dst = binary.AppendUvarint(dst, uint64(len(ks)))
		for _, k := range ks {
			dst = appendStateRow(dst, k.keyRow)
			dst = binary.AppendUvarint(dst, uint64(len(k.sessions)))
			for _, s := range k.sessions {
				dst = binary.AppendVarint(dst, s.start)
				dst = binary.AppendVarint(dst, s.end)
				for _, b := range s.bufs {
					snap, err := b.AppendSnapshot(nil)
					if err != nil {
						return err
					}
					dst = appendLenBytes(dst, snap)
				}
			}
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[kg] = w.ID()
	}
	o.dirty.clear()
	return nil
}

func (o *sessionAggOp) restoreState(r stateReader) error {
	o.keys = map[string]*sessionKey{}
	o.ends = nil
	o.written = map[uint16]uint64{}
	o.wm = NoWatermark
	err := r.Scan(func(key string, value []byte) error {
		if key == sessionWMKey {
			d := &stateDecoder{data: value}
			d.version()
			o.wm = d.varint()
			return d.finish()
		}
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if prefix != sessionPrefix {
			return fmt.Errorf("malformed session window state key %q", key)
		}
		if err := o.restoreKeyGroup(kg, value); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		o.written[kg] = r.ID()
		return nil
	})
	o.dirty.clear()
	return err
}

func (o *sessionAggOp) restoreKeyGroup(kg uint16, value []byte) error {
	d := &stateDecoder{data: value}
	d.version()
	n := d.count(2)
	for range n {
		k := &sessionKey{kg: kg, keyRow: d.row()}
		if d.err == nil && len(k.keyRow) != len(o.cfg.keys) {
			d.fail("a key of %d columns, the plan's has %d", len(k.keyRow), len(o.cfg.keys))
		}
		ns := d.count(2)
		for range ns {
			s := &session{start: d.varint(), end: d.varint(), bufs: make([]agg.Buffer, len(o.funcs))}
			for c, f := range o.funcs {
				b := d.lenBytes()
				if d.err != nil {
					return d.err
				}
				buf, err := f.RestoreBuffer(b)
				if err != nil {
					return err
				}
				s.bufs[c] = buf
			}
			k.sessions = append(k.sessions, s)
		}
		if d.err != nil {
			return d.err
		}
		k.key = string(appendRowKey(nil, k.keyRow, allCols(len(k.keyRow))))
		if keyGroupOf([]byte(k.key)) != kg {
			return fmt.Errorf("a key of key group %d stored under %d", keyGroupOf([]byte(k.key)), kg)
		}
		if o.keys[k.key] != nil {
			return fmt.Errorf("key %v appears twice", k.keyRow)
		}
		o.keys[k.key] = k
		for _, s := range k.sessions {
			heap.Push(&o.ends, sessionEnd{instant: o.zone.instant(s.end), end: s.end, k: k, s: s})
		}
	}
	return d.finish()
}

// describeSessionAgg describes what shapes a session window aggregate's state.
func describeSessionAgg(n *planner.WindowAggregate) string {
	return "session " + describeWindowAgg(n)
}
