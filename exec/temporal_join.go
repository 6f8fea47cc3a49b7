package exec

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Event-time temporal joins
//
// temporalJoinOp runs a planner.TemporalJoin as Flink's TemporalRowTimeJoinOperator
// does. The right (versioned) side's rows are kept per key in the order of their rowtime
// (arrival order among equal times): a +I/+U starts a version, a -D ends the one before
// it. A -U is skipped, as Flink's planner asks the right input for updates without their
// before images (ONLY_UPDATE_AFTER): the +U that follows it starts the next version, and
// the before image may carry the old version's time (a deduplicating view's does). A left
// row waits, per key, until the watermark (the minimum of both inputs') reaches its time;
// it is then joined with the right row of the greatest rowtime at or before its own,
// unless that row is a retraction or the rest of the ON condition fails, when an inner
// join drops it and a left join emits it null-padded. A left row at or behind the
// watermark on arrival is late: over an insert-only left input it is dropped and
// counted, as the temporal sort does; over an updating one it is joined at the next
// watermark, as Flink's operator does, so that a late -U or -D still retracts the row
// its +I made. Each output row has its left row's kind. A left row whose key has a NULL
// never matches: a left join emits it padded at once, an inner join drops it.
//
// After a watermark W has been handled, a key keeps its versions after W and the last
// one at or before W (the one later left rows may still need). Over an insert-only left
// input, output is insert-only and every row emitted at W has a time at or before W, so
// nothing is late after it.
//
// State is checkpointed per key group (k<kg>: each key's waiting left rows and right
// versions) and one key w (the watermark and the version counter); a checkpoint rewrites
// only the key groups changed since its base.

type temporalJoinConfig struct {
	typ                 planner.JoinType
	keys                [2][]eval.Evaluator
	where               func(types.Row) (bool, error)
	widths              [2]int
	leftTime, rightTime int
	// updating: the left input has updates and deletes, joined like inserts and
	// emitted with their kind; late ones are joined at the next watermark.
	updating bool
}

func compileTemporalJoin(n *planner.TemporalJoin, env eval.Env, inputs []bool) (*opSpec, error) {
	if n.Type != planner.InnerJoin && n.Type != planner.LeftOuterJoin {
		return nil, fmt.Errorf("%w: %s temporal join", ErrUnsupportedPlan, n.Type)
	}
	sides := [2]types.Schema{n.Left.Schema(), n.Right.Schema()}
	cfg := &temporalJoinConfig{typ: n.Type, widths: [2]int{len(sides[0]), len(sides[1])}, leftTime: n.LeftTime, rightTime: n.RightTime,
		updating: len(inputs) == 2 && inputs[0]}
	if len(n.LeftKeys) == 0 || len(n.LeftKeys) != len(n.RightKeys) || len(n.KeyTypes) != len(n.LeftKeys) {
		return nil, fmt.Errorf("%w: temporal join without matching equality keys", ErrUnsupportedPlan)
	}
	if n.LeftTime < 0 || n.LeftTime >= cfg.widths[0] || n.RightTime < 0 || n.RightTime >= cfg.widths[1] {
		return nil, fmt.Errorf("%w: temporal join time columns %d, %d", ErrUnsupportedPlan, n.LeftTime, n.RightTime)
	}
	for s, cols := range [2][]int{n.LeftKeys, n.RightKeys} {
		for i, c := range cols {
			if c < 0 || c >= len(sides[s]) {
				return nil, fmt.Errorf("%w: temporal join key column %d of %d", ErrUnsupportedPlan, c, len(sides[s]))
			}
			var e planner.Expr = &planner.ColumnRef{Index: c, Name: sides[s][c].Name, T: sides[s][c].Type}
			if !sides[s][c].Type.SameKind(n.KeyTypes[i]) {
				e = &planner.Cast{X: e, T: n.KeyTypes[i].Nullable()}
			}
			ev, err := eval.Compile(e, env)
			if err != nil {
				return nil, fmt.Errorf("temporal join key %s: %w", e, err)
			}
			cfg.keys[s] = append(cfg.keys[s], ev)
		}
	}
	if n.Where != nil {
		f, err := eval.CompilePredicate(n.Where, env)
		if err != nil {
			return nil, fmt.Errorf("temporal join condition %s: %w", n.Where, err)
		}
		cfg.where = f
	}
	return &opSpec{name: "temporal join", stateDesc: describeTemporalJoin(n, cfg.updating), build: func(_ *runEnv, m *opMetrics) (operator, error) {
		return newTemporalJoinOp(cfg, m), nil
	}}, nil
}

// describeTemporalJoin describes what shapes a temporal join's state, for state.Meta.CheckPlan.
func describeTemporalJoin(n *planner.TemporalJoin, updating bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "temporal join %s updating=%v keys=[", n.Type, updating)
	for i, t := range n.KeyTypes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Nullable().WithoutTimeAttr().String())
	}
	b.WriteString("]")
	for _, side := range []planner.Node{n.Left, n.Right} {
		b.WriteString(" side=[")
		for i, c := range side.Schema() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Type.Nullable().WithoutTimeAttr().String())
		}
		b.WriteString("]")
	}
	fmt.Fprintf(&b, " left rows with their kinds and right versions, state v%d", stateVersion)
	return b.String()
}

// tjVersion is one right row: where a version starts (or, retract, ends) at ts.
type tjVersion struct {
	row     types.Row
	ts      int64
	seq     int64 // arrival order, to break ties of ts
	retract bool
}

// tjWaiting is a waiting left row and its kind.
type tjWaiting struct {
	row  types.Row
	kind connectors.RowKind
}

// tjBucket is the state of one key.
type tjBucket struct {
	key      string
	kg       uint16
	left     []tjWaiting // waiting, in arrival order
	versions []tjVersion // by (ts, seq)
	// queued: the bucket has an entry in the operator's due heap at minLeft, the
	// smallest time of its waiting rows.
	queued  bool
	minLeft int64
}

// tjDue is an entry of the heap of keys with waiting left rows, by their earliest time;
// an entry whose bucket's minLeft moved since is stale and skipped.
type tjDue struct {
	at int64
	bk *tjBucket
}

type tjDueHeap []tjDue

func (h tjDueHeap) Len() int           { return len(h) }
func (h tjDueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h tjDueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *tjDueHeap) Push(x any)        { *h = append(*h, x.(tjDue)) }
func (h *tjDueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = tjDue{}
	*h = old[:len(old)-1]
	return x
}

type temporalJoinOp struct {
	nopOperator
	cfg *temporalJoinConfig
	m   *opMetrics

	wm      int64
	seq     int64
	buckets map[string]*tjBucket
	pending map[string]*tjBucket // keys with waiting left rows
	multi   map[string]*tjBucket // keys with more than one version
	due     tjDueHeap
	rows    int64 // left rows and versions kept
	changed kgSet
	written map[uint16]uint64 // the checkpoint that last wrote each key group
	keyBuf  []byte
}

var _ multiInput = (*temporalJoinOp)(nil)

func newTemporalJoinOp(cfg *temporalJoinConfig, m *opMetrics) *temporalJoinOp {
	o := &temporalJoinOp{cfg: cfg, m: m}
	o.reset()
	return o
}

func (o *temporalJoinOp) reset() {
	o.wm, o.seq, o.rows = NoWatermark, 0, 0
	o.buckets, o.pending, o.multi = map[string]*tjBucket{}, map[string]*tjBucket{}, map[string]*tjBucket{}
	o.due = nil
	o.written = map[uint16]uint64{}
	o.changed.clear()
}

func (o *temporalJoinOp) bucket(key []byte) *tjBucket {
	if b := o.buckets[string(key)]; b != nil {
		return b
	}
	b := &tjBucket{key: string(key), kg: keyGroupOf(key)}
	o.buckets[b.key] = b
	return b
}

func (o *temporalJoinOp) key(s int, row types.Row) (key []byte, ok bool, err error) {
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

func (o *temporalJoinOp) joined(l, r types.Row) types.Row {
	row := make(types.Row, o.cfg.widths[0]+o.cfg.widths[1])
	copy(row, l)
	if r != nil {
		copy(row[o.cfg.widths[0]:], r)
	}
	return row
}

func (o *temporalJoinOp) processBatch(context.Context, batch, *outbox) error {
	return fmt.Errorf("%w: a temporal join's batch without its input", ErrInternal)
}

func (o *temporalJoinOp) processInput(ctx context.Context, s int, b batch, out *outbox) error {
	switch s {
	case 0:
		return o.processLeft(ctx, b, out)
	case 1:
		return o.processRight(b)
	}
	return fmt.Errorf("%w: temporal join input %d", ErrInternal, s)
}

func (o *temporalJoinOp) processLeft(ctx context.Context, b batch, out *outbox) error {
	late, bad := 0, 0
	lastLate := NoWatermark
	for i, row := range b.rows {
		k := b.kind(i)
		if k != connectors.Insert && !o.cfg.updating {
			return fmt.Errorf("%w: temporal join received %s on its left input", ErrRetraction, k)
		}
		ts := row[o.cfg.leftTime]
		switch {
		case ts.IsNull():
			bad++
			continue
		case o.wm != NoWatermark && ts.Int() <= o.wm && !o.cfg.updating:
			late++
			lastLate = ts.Int()
			continue
		}
		key, ok, err := o.key(0, row)
		if err != nil {
			return err
		}
		if !ok {
			if o.cfg.typ == planner.LeftOuterJoin {
				if err := out.emit(ctx, k, o.joined(row, nil)); err != nil {
					return err
				}
			}
			continue
		}
		bk := o.bucket(key)
		bk.left = append(bk.left, tjWaiting{row: row, kind: k})
		o.pending[bk.key] = bk
		o.queue(bk, ts.Int())
		o.rows++
		o.changed.set(bk.kg)
	}
	o.m.late.add(late)
	if lastLate != NoWatermark {
		o.m.lastLate.Store(lastLate)
	}
	o.m.bad.add(bad)
	return nil
}

func (o *temporalJoinOp) processRight(b batch) error {
	bad := 0
	for i, row := range b.rows {
		ts := row[o.cfg.rightTime]
		if ts.IsNull() {
			bad++
			continue
		}
		key, ok, err := o.key(1, row)
		if err != nil {
			return err
		}
		if !ok {
			continue // never matches
		}
		k := b.kind(i)
		if k == connectors.UpdateBefore {
			continue // the +U after it starts the next version
		}
		v := tjVersion{row: row, ts: ts.Int(), seq: o.seq, retract: k == connectors.Delete}
		o.seq++
		bk := o.bucket(key)
		at, _ := slices.BinarySearchFunc(bk.versions, v.ts, func(x tjVersion, t int64) int {
			if x.ts <= t {
				return -1
			}
			return 1
		})
		bk.versions = slices.Insert(bk.versions, at, v)
		o.rows++
		o.changed.set(bk.kg)
		if len(bk.versions) > 1 {
			o.multi[bk.key] = bk
		}
	}
	o.m.bad.add(bad)
	return nil
}

// versionAt is the index of the version of b valid at ts, -1 when none.
func (b *tjBucket) versionAt(ts int64) int {
	at, _ := slices.BinarySearchFunc(b.versions, ts, func(x tjVersion, t int64) int {
		if x.ts <= t {
			return -1
		}
		return 1
	})
	at--
	if at < 0 || b.versions[at].retract {
		return -1
	}
	return at
}

// queue makes sure bk's waiting rows are in the due heap by their earliest time, ts
// being the time of one of them.
func (o *temporalJoinOp) queue(bk *tjBucket, ts int64) {
	if bk.queued && bk.minLeft <= ts {
		return
	}
	bk.queued, bk.minLeft = true, ts
	heap.Push(&o.due, tjDue{at: ts, bk: bk})
}

func (o *temporalJoinOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	t := o.cfg.leftTime
	for len(o.due) > 0 && o.due[0].at <= wm {
		e := heap.Pop(&o.due).(tjDue)
		bk := e.bk
		if !bk.queued || bk.minLeft != e.at {
			continue // stale
		}
		bk.queued = false
		var due []tjWaiting
		kept := bk.left[:0]
		for _, l := range bk.left {
			if l.row[t].Int() <= wm {
				due = append(due, l)
			} else {
				kept = append(kept, l)
			}
		}
		clear(bk.left[len(kept):])
		bk.left = kept
		o.rows -= int64(len(due))
		o.changed.set(bk.kg)
		slices.SortStableFunc(due, func(a, b tjWaiting) int { return types.Compare(a.row[t], b.row[t]) })
		for _, l := range due {
			r := l.row
			var j types.Row
			if at := bk.versionAt(r[t].Int()); at >= 0 {
				j = o.joined(r, bk.versions[at].row)
				if o.cfg.where != nil {
					pass, err := o.cfg.where(j)
					if err != nil {
						return err
					}
					if !pass {
						j = nil
					}
				}
			}
			if j == nil {
				if o.cfg.typ != planner.LeftOuterJoin {
					continue
				}
				j = o.joined(r, nil)
			}
			if err := out.emit(ctx, l.kind, j); err != nil {
				return err
			}
		}
		if len(bk.left) == 0 {
			delete(o.pending, bk.key)
			o.dropIfEmpty(bk)
			continue
		}
		first := bk.left[0].row[t].Int()
		for _, l := range bk.left[1:] {
			first = min(first, l.row[t].Int())
		}
		o.queue(bk, first)
	}
	for key, bk := range o.multi {
		// Keep the versions after wm and the last one at or before it.
		at, _ := slices.BinarySearchFunc(bk.versions, wm, func(x tjVersion, t int64) int {
			if x.ts <= t {
				return -1
			}
			return 1
		})
		if drop := at - 1; drop > 0 {
			clear(bk.versions[:drop])
			bk.versions = bk.versions[drop:]
			o.rows -= int64(drop)
			o.changed.set(bk.kg)
		}
		if len(bk.versions) <= 1 {
			delete(o.multi, key)
		}
	}
	return nil
}

// dropIfEmpty forgets a key with nothing waiting whose only version is a retraction at
// or before the watermark.
func (o *temporalJoinOp) dropIfEmpty(bk *tjBucket) {
	if len(bk.left) == 0 && (len(bk.versions) == 0 || len(bk.versions) == 1 && bk.versions[0].retract && bk.versions[0].ts <= o.wm) {
		o.rows -= int64(len(bk.versions))
		delete(o.buckets, bk.key)
		delete(o.multi, bk.key)
		o.changed.set(bk.kg)
	}
}

func (o *temporalJoinOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput {
		return o.processWatermark(ctx, MaxWatermark, out)
	}
	return nil
}

func (o *temporalJoinOp) measureState() StateMetrics {
	return StateMetrics{Groups: o.rows}
}

const temporalJoinMetaKey = "w"

func (o *temporalJoinOp) snapshotState(_ context.Context, w stateWriter) error {
	base := w.Base()
	byKG := map[uint16][]*tjBucket{}
	for _, bk := range o.buckets {
		byKG[bk.kg] = append(byKG[bk.kg], bk)
	}
	kgs := make([]uint16, 0, len(byKG))
	for kg := range byKG {
		kgs = append(kgs, kg)
	}
	slices.Sort(kgs)
	for _, kg := range kgs {
		key := kgKey("k", kg)
		if at := o.written[kg]; base != 0 && at != 0 && at <= base && !o.changed.has(kg) {
			if err := w.Unchanged(key); err != nil {
				return err
			}
			continue
		}
		bs := byKG[kg]
		slices.SortFunc(bs, func(a, b *tjBucket) int { return strings.Compare(a.key, b.key) })
		dst := binary.AppendUvarint([]byte{stateVersion}, uint64(len(bs)))
		for _, bk := range bs {
			dst = appendLenBytes(dst, []byte(bk.key))
			dst = binary.AppendUvarint(dst, uint64(len(bk.left)))
			for _, l := range bk.left {
				dst = appendStateRow(dst, l.row)
				dst = append(dst, byte(l.kind))
			}
			dst = binary.AppendUvarint(dst, uint64(len(bk.versions)))
			for _, v := range bk.versions {
				dst = appendStateRow(dst, v.row)
				dst = binary.AppendVarint(dst, v.ts)
				dst = binary.AppendVarint(dst, v.seq)
				retract := byte(0)
				if v.retract {
					retract = 1
				}
				dst = append(dst, retract)
			}
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[kg] = w.ID()
	}
	o.changed.clear()
	dst := binary.AppendVarint([]byte{stateVersion}, o.wm)
	dst = binary.AppendVarint(dst, o.seq)
	return w.Put(temporalJoinMetaKey, dst)
}

func (o *temporalJoinOp) restoreState(r stateReader) error {
	o.reset()
	return r.Scan(func(key string, value []byte) error {
		d := &stateDecoder{data: value}
		d.version()
		if key == temporalJoinMetaKey {
			o.wm = d.varint()
			o.seq = d.varint()
			return d.finish()
		}
		prefix, kg, err := parseKGKey(key)
		if err != nil || prefix != "k" {
			return fmt.Errorf("malformed temporal join state key %q", key)
		}
		n := d.count(2)
		for range n {
			k := d.lenBytes()
			nl := d.count(1)
			if d.err != nil {
				break
			}
			bk := o.bucket(k)
			if bk.kg != kg {
				return fmt.Errorf("state key %q: a temporal join key of key group %d", key, bk.kg)
			}
			for range nl {
				row := d.row()
				if d.err == nil && len(row) != o.cfg.widths[0] {
					d.fail("a left row of %d columns, want %d", len(row), o.cfg.widths[0])
				}
				kind := d.byte()
				if d.err == nil && kind > byte(connectors.Delete) {
					d.fail("a left row of kind %d", kind)
				}
				bk.left = append(bk.left, tjWaiting{row: row, kind: connectors.RowKind(kind)})
			}
			nv := d.count(3)
			for range nv {
				row := d.row()
				if d.err == nil && len(row) != o.cfg.widths[1] {
					d.fail("a right row of %d columns, want %d", len(row), o.cfg.widths[1])
				}
				v := tjVersion{row: row, ts: d.varint(), seq: d.varint(), retract: d.byte() == 1}
				bk.versions = append(bk.versions, v)
			}
			if d.err != nil {
				break
			}
			o.rows += int64(len(bk.left) + len(bk.versions))
			if len(bk.left) > 0 {
				o.pending[bk.key] = bk
				for _, l := range bk.left {
					o.queue(bk, l.row[o.cfg.leftTime].Int())
				}
			}
			if len(bk.versions) > 1 {
				o.multi[bk.key] = bk
			}
		}
		if err := d.finish(); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		o.written[kg] = r.ID()
		return nil
	})
}
