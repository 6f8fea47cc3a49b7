package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Regular joins
//
// A regular join keeps every row of both inputs in state, by join key, and joins each
// arriving row with the rows of the other side that arrived before it: whichever order
// the rows arrive in, each pair is joined exactly once, when its second row arrives.
//
// With table.exec.state.ttl set, a row is forgotten that long (processing time) after it
// was last written, as Flink's idle state retention does (OnCreateAndWrite,
// NeverReturnExpired): its insertion writes it, and so does a match that counts against
// an outer side's row; reading it to join does not. An expired row joins nothing more,
// and nothing is emitted when it goes: an outer row's null-padded result stays, as in
// Flink. Expired rows are dropped when their key is next looked up and by a sweep of
// the whole state every quarter of the TTL (at least every second, at most every minute).
//
// Outer joins follow Flink's changelog: a row of an outer side with no match yet is
// emitted null-padded (+I); when its first match arrives on the other side, the padded
// row is retracted (-D) and the joined row emitted (+I). Each row of an outer side
// counts its matches so that only the first one retracts. A row whose key has a NULL
// never matches (= is never true on NULL): it is emitted null-padded when its side is
// outer, and not kept.
//
// Inputs may be updating (a GROUP BY result, a CDC source): an accumulating row (+I,
// +U) joins as an insertion does, a retracting row (-U, -D) removes one equal row (all
// columns) from its side's state and retracts (-D) every joined row it made; when it
// was the last match of an outer side's row, that row's null-padded result comes back
// (+I). Output is +I and -D only: Flink emits +U/-U for some of these, with the same
// final state.
//
// State is checkpointed per side and key group (l<kg>, r<kg>): a checkpoint rewrites the
// key groups that gained rows or whose rows' match counts changed since its base and
// reuses the others.

// joinConfig is a compiled planner.Join.
type joinConfig struct {
	typ          planner.JoinType
	keys         [2][]eval.Evaluator // per side, the key values in the types they compare in
	where        func(types.Row) (bool, error)
	widths       [2]int
	outer        [2]bool // whether each side's unmatched rows are emitted
	keyTypesDesc string
	// ttl is per side the STATE_TTL hint's or table.exec.state.ttl; 0: rows are kept
	// for ever.
	ttl [2]time.Duration
}

func compileJoin(n *planner.Join, env eval.Env, ttl time.Duration) (*joinConfig, error) {
	ttls := [2]time.Duration{max(ttl, 0), max(ttl, 0)}
	for s, hint := range [2]time.Duration{n.LeftTTL, n.RightTTL} {
		if hint > 0 {
			ttls[s] = hint
		}
	}
	if len(n.LeftKeys) == 0 || len(n.LeftKeys) != len(n.RightKeys) || len(n.KeyTypes) != len(n.LeftKeys) {
		return nil, fmt.Errorf("%w: join without matching equality keys", ErrUnsupportedPlan)
	}
	sides := [2]types.Schema{n.Left.Schema(), n.Right.Schema()}
	cfg := &joinConfig{
		typ:    n.Type,
		ttl:    ttls,
		widths: [2]int{len(sides[0]), len(sides[1])},
		outer:  [2]bool{n.Type.LeftOuter(), n.Type.RightOuter()},
	}
	if len(n.Out) != cfg.widths[0]+cfg.widths[1] {
		return nil, fmt.Errorf("%w: join has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), cfg.widths[0]+cfg.widths[1])
	}
	for s, cols := range [2][]int{n.LeftKeys, n.RightKeys} {
		for i, c := range cols {
			if c < 0 || c >= len(sides[s]) {
				return nil, fmt.Errorf("%w: join key column %d of %d", ErrUnsupportedPlan, c, len(sides[s]))
			}
			var e planner.Expr = &planner.ColumnRef{Index: c, Name: sides[s][c].Name, T: sides[s][c].Type}
			if !sides[s][c].Type.SameKind(n.KeyTypes[i]) {
				e = &planner.Cast{X: e, T: n.KeyTypes[i].Nullable()}
			}
			ev, err := eval.Compile(e, env)
			if err != nil {
				return nil, fmt.Errorf("join key %s: %w", e, err)
			}
			cfg.keys[s] = append(cfg.keys[s], ev)
		}
	}
	if n.Where != nil {
		f, err := eval.CompilePredicate(n.Where, env)
		if err != nil {
			return nil, fmt.Errorf("join condition %s: %w", n.Where, err)
		}
		cfg.where = f
	}
	return cfg, nil
}

// describeJoin describes what shapes a join's state, for state.Meta.CheckPlan.
func describeJoin(n *planner.Join) string {
	var b strings.Builder
	fmt.Fprintf(&b, "join %s keys=[", n.Type)
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
	fmt.Fprintf(&b, " rows with match counts and write times, state v%d", stateVersion)
	return b.String()
}

// joinRecord is one row kept by a join side, with the number of rows of the other side
// it joined (outer sides retract their null-padded row on the first) and when it was last
// written (processing time, Unix microseconds), for the TTL.
type joinRecord struct {
	row     types.Row
	matches int64
	written int64
}

// joinBucket is the rows of one side with one key.
type joinBucket struct {
	key  string
	kg   uint16
	recs []joinRecord // values, not pointers: one allocation per growth, little for the GC to scan
}

// joinSide is the state of one input.
type joinSide struct {
	buckets map[string]*joinBucket
	byKG    map[uint16][]*joinBucket // in order of creation
	rows    int64
	// changed holds the key groups changed since the last snapshot, written the
	// checkpoint that last wrote each key group.
	changed kgSet
	written map[uint16]uint64
}

func newJoinSide() *joinSide {
	return &joinSide{buckets: map[string]*joinBucket{}, byKG: map[uint16][]*joinBucket{}, written: map[uint16]uint64{}}
}

func (s *joinSide) bucket(key []byte) *joinBucket {
	if b := s.buckets[string(key)]; b != nil {
		return b
	}
	b := &joinBucket{key: string(key), kg: keyGroupOf(key)}
	s.buckets[b.key] = b
	s.byKG[b.kg] = append(s.byKG[b.kg], b)
	return b
}

// joinOp runs a regular join.
type joinOp struct {
	nopOperator
	cfg    *joinConfig
	clock  connectors.Clock
	sides  [2]*joinSide
	keyBuf []byte
}

func newJoinOp(cfg *joinConfig, clock connectors.Clock) *joinOp {
	return &joinOp{cfg: cfg, clock: clock, sides: [2]*joinSide{newJoinSide(), newJoinSide()}}
}

// expired reports whether rec outlived the TTL at now.
func (o *joinOp) expired(ttl time.Duration, rec *joinRecord, now int64) bool {
	return ttl > 0 && now-rec.written >= ttl.Microseconds()
}

// hasTTL reports whether either side's rows expire.
func (c *joinConfig) hasTTL() bool { return c.ttl[0] > 0 || c.ttl[1] > 0 }

// dropExpired removes the expired rows of b; it reports whether it removed any.
func (o *joinOp) dropExpired(side *joinSide, b *joinBucket, now int64) bool {
	ttl := o.cfg.ttl[0]
	if side == o.sides[1] {
		ttl = o.cfg.ttl[1]
	}
	if ttl <= 0 {
		return false
	}
	kept := b.recs[:0]
	for i := range b.recs {
		if rec := &b.recs[i]; !o.expired(ttl, rec, now) {
			kept = append(kept, *rec)
		}
	}
	if len(kept) == len(b.recs) {
		return false
	}
	side.rows -= int64(len(b.recs) - len(kept))
	clear(b.recs[len(kept):])
	b.recs = kept
	side.changed.set(b.kg)
	return true
}

// timerInterval makes the task sweep expired rows when the join has a TTL.
func (o *joinOp) timerInterval() time.Duration {
	var shortest time.Duration
	for _, ttl := range o.cfg.ttl {
		if ttl > 0 && (shortest == 0 || ttl < shortest) {
			shortest = ttl
		}
	}
	if shortest <= 0 {
		return 0
	}
	return min(max(shortest/4, time.Second), time.Minute)
}

// onTimer drops every expired row, and the keys and key groups left empty.
func (o *joinOp) onTimer(_ context.Context, now time.Time, _ *outbox) error {
	us := now.UnixMicro()
	for _, side := range o.sides {
		for kg, bs := range side.byKG {
			kept := bs[:0]
			for _, b := range bs {
				o.dropExpired(side, b, us)
				if len(b.recs) == 0 {
					delete(side.buckets, b.key)
					side.changed.set(kg)
					continue
				}
				kept = append(kept, b)
			}
			clear(bs[len(kept):])
			if len(kept) == 0 {
				delete(side.byKG, kg)
				continue
			}
			side.byKG[kg] = kept
		}
	}
	return nil
}

var _ multiInput = (*joinOp)(nil)

func (o *joinOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	return fmt.Errorf("%w: a join's batch without its input", ErrInternal)
}

// key encodes the join key of row of side s; ok is false when a key value is NULL.
func (o *joinOp) key(s int, row types.Row) (key []byte, ok bool, err error) {
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

// joined is the output row of left l and right r; a nil side is NULLs.
func (o *joinOp) joined(l, r types.Row) types.Row {
	row := make(types.Row, o.cfg.widths[0]+o.cfg.widths[1])
	if l != nil {
		copy(row, l)
	}
	if r != nil {
		copy(row[o.cfg.widths[0]:], r)
	}
	return row
}

// pair is the output row of a row of side s and a row of the other side.
func (o *joinOp) pair(s int, row, other types.Row) types.Row {
	if s == 0 {
		return o.joined(row, other)
	}
	return o.joined(other, row)
}

func (o *joinOp) processInput(ctx context.Context, s int, b batch, out *outbox) error {
	if s != 0 && s != 1 {
		return fmt.Errorf("%w: join input %d", ErrInternal, s)
	}
	me, other := o.sides[s], o.sides[1-s]
	var now int64
	if o.cfg.hasTTL() {
		now = o.clock.Now().UnixMicro()
	}
	for i, row := range b.rows {
		if k := b.kind(i); k == connectors.UpdateBefore || k == connectors.Delete {
			if err := o.retract(ctx, s, row, now, out); err != nil {
				return err
			}
			continue
		}
		key, ok, err := o.key(s, row)
		if err != nil {
			return err
		}
		var matches int64
		if ok {
			if ob := other.buckets[string(key)]; ob != nil {
				if o.cfg.hasTTL() {
					o.dropExpired(other, ob, now)
				}
				for r := range ob.recs {
					rec := &ob.recs[r]
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
					matches++
					if o.cfg.outer[1-s] {
						if rec.matches == 0 {
							if err := out.emit(ctx, connectors.Delete, o.pair(s, nil, rec.row)); err != nil {
								return err
							}
						}
						rec.matches++
						rec.written = now
						other.changed.set(ob.kg)
					}
					if err := out.emit(ctx, connectors.Insert, j); err != nil {
						return err
					}
				}
			}
		}
		if matches == 0 && o.cfg.outer[s] {
			if err := out.emit(ctx, connectors.Insert, o.pair(s, row, nil)); err != nil {
				return err
			}
		}
		if !ok {
			continue // never matches: not kept
		}
		bk := me.bucket(key)
		bk.recs = append(bk.recs, joinRecord{row: row, matches: matches, written: now})
		me.rows++
		me.changed.set(bk.kg)
	}
	return nil
}

// retract takes back row of side s (a -U or -D): it removes one equal row from the
// side's state and retracts every joined row it made (-D); a row of the other, outer
// side whose last match it was gets its null-padded row back (+I), and the row's own
// null-padded row is retracted when it had no match on an outer side. A row that is not
// in the state (expired, or its key NULL) retracts its null-padded row when its side is
// outer, as Flink's StreamingJoinOperator does.
func (o *joinOp) retract(ctx context.Context, s int, row types.Row, now int64, out *outbox) error {
	me, other := o.sides[s], o.sides[1-s]
	key, ok, err := o.key(s, row)
	if err != nil {
		return err
	}
	if !ok {
		if o.cfg.outer[s] {
			return out.emit(ctx, connectors.Delete, o.pair(s, row, nil))
		}
		return nil
	}
	if bk := me.buckets[string(key)]; bk != nil {
		if o.cfg.hasTTL() {
			o.dropExpired(me, bk, now)
		}
		if at := slices.IndexFunc(bk.recs, func(r joinRecord) bool { return rowsEqual(r.row, row) }); at >= 0 {
			bk.recs = slices.Delete(bk.recs, at, at+1)
			me.rows--
			me.changed.set(bk.kg)
		}
	}
	var matches int64
	if ob := other.buckets[string(key)]; ob != nil {
		if o.cfg.hasTTL() {
			o.dropExpired(other, ob, now)
		}
		for r := range ob.recs {
			rec := &ob.recs[r]
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
			matches++
			if err := out.emit(ctx, connectors.Delete, j); err != nil {
				return err
			}
			if o.cfg.outer[1-s] {
				rec.matches--
				rec.written = now
				other.changed.set(ob.kg)
				if rec.matches <= 0 {
					rec.matches = 0
					if err := out.emit(ctx, connectors.Insert, o.pair(s, nil, rec.row)); err != nil {
						return err
					}
				}
			}
		}
	}
	if matches == 0 && o.cfg.outer[s] {
		return out.emit(ctx, connectors.Delete, o.pair(s, row, nil))
	}
	return nil
}

func (o *joinOp) measureState() StateMetrics {
	return StateMetrics{Groups: o.sides[0].rows + o.sides[1].rows}
}

var joinSidePrefix = [2]string{"l", "r"}

func (o *joinOp) snapshotState(_ context.Context, w stateWriter) error {
	base := w.Base()
	for s, side := range o.sides {
		kgs := make([]uint16, 0, len(side.byKG))
		for kg := range side.byKG {
			kgs = append(kgs, kg)
		}
		slices.Sort(kgs)
		for _, kg := range kgs {
			key := kgKey(joinSidePrefix[s], kg)
			if at := side.written[kg]; base != 0 && at != 0 && at <= base && !side.changed.has(kg) {
				if err := w.Unchanged(key); err != nil {
					return err
				}
				continue
			}
			if err := w.Put(key, encodeJoinBuckets(side.byKG[kg])); err != nil {
				return err
			}
			side.written[kg] = w.ID()
		}
		side.changed.clear()
	}
	return nil
}

// encodeJoinBuckets writes the buckets of one key group: version, count, then each
// bucket's key and records (row, matches, written).
func encodeJoinBuckets(bs []*joinBucket) []byte {
	dst := []byte{stateVersion}
	dst = binary.AppendUvarint(dst, uint64(len(bs)))
	for _, b := range bs {
		dst = appendLenBytes(dst, []byte(b.key))
		dst = binary.AppendUvarint(dst, uint64(len(b.recs)))
		for _, r := range b.recs {
			dst = appendStateRow(dst, r.row)
			dst = binary.AppendVarint(dst, r.matches)
			dst = binary.AppendVarint(dst, r.written)
		}
	}
	return dst
}

func (o *joinOp) restoreState(r stateReader) error {
	o.sides = [2]*joinSide{newJoinSide(), newJoinSide()}
	return r.Scan(func(key string, value []byte) error {
		s := slices.Index(joinSidePrefix[:], key[:min(1, len(key))])
		prefix, kg, err := parseKGKey(key)
		if err != nil || s < 0 || prefix != joinSidePrefix[s] {
			return fmt.Errorf("malformed join state key %q", key)
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
			b := side.bucket(k)
			if b.kg != kg {
				return fmt.Errorf("state key %q: a join key of key group %d", key, b.kg)
			}
			for range m {
				row := d.row()
				if d.err == nil && len(row) != o.cfg.widths[s] {
					d.fail("a row of %d columns, want %d", len(row), o.cfg.widths[s])
				}
				b.recs = append(b.recs, joinRecord{row: row, matches: d.varint(), written: d.varint()})
				side.rows++
			}
		}
		if err := d.finish(); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		side.written[kg] = r.ID()
		return nil
	})
}

// unionOp passes the rows of every input on (UNION ALL).
type unionOp struct{ nopOperator }

func (unionOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	return out.emitBatch(ctx, b)
}
