package exec

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// The checkpointed state of the aggregation operators.
//
// Window aggregate, under its state id:
//
//	d<i>/c<seq>               the shared state (dictionary) of aggregate i, a chain of chunks
//	m                         version | watermark | window ends to fire (local, instant)
//	s<start>/<kg>             a slice's groups of key group kg (start: 16 hex digits, sign flipped)
//	r<start>/<kg>             a CUMULATE window's running accumulator, by window start
//
// Group aggregate: d<i>/... as above, and g<kg> for the groups of key group kg, each
// with the result it last emitted, so that the changelog continues with the right -U.
//
// Keys sort the shared state first, which restore needs: buffers of dictionary ids are
// checked against the dictionary.

const windowMetaKey = "m"

func sharedStates(n int) []sharedState {
	s := make([]sharedState, n)
	for i := range s {
		s[i].prefix = "d" + strconv.Itoa(i) + "/"
	}
	return s
}

func snapshotShared(w stateWriter, shared []sharedState, funcs []agg.Func) error {
	for i, f := range funcs {
		if err := shared[i].snapshot(w, f); err != nil {
			return fmt.Errorf("shared state of aggregate %d: %w", i, err)
		}
	}
	return nil
}

// restoreShared applies a "d<i>/..." key of checkpoint id; ok is false for other keys.
func restoreShared(id uint64, key string, value []byte, shared []sharedState, funcs []agg.Func) (ok bool, err error) {
	if !strings.HasPrefix(key, "d") {
		return false, nil
	}
	i, _, found := strings.Cut(key[1:], "/")
	n, perr := strconv.Atoi(i)
	if !found || perr != nil || n < 0 || n >= len(funcs) {
		return true, fmt.Errorf("state key %q: no such aggregate", key)
	}
	return true, shared[n].restore(funcs[n], id, key, value)
}

// slicePrefix is the key prefix of a window table: kind 's' (slice) or 'r' (running).
func slicePrefix(kind byte, start int64) string {
	return string(kind) + fmt.Sprintf("%016x", uint64(start)^1<<63) + "/"
}

func parseSlicePrefix(prefix string) (kind byte, start int64, err error) {
	if len(prefix) != 18 || prefix[17] != '/' || (prefix[0] != 's' && prefix[0] != 'r') {
		return 0, 0, fmt.Errorf("malformed window state key %q", prefix)
	}
	u, err := strconv.ParseUint(prefix[1:17], 16, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("malformed window state key %q", prefix)
	}
	return prefix[0], int64(u ^ 1<<63), nil
}

func (o *windowAggOp) snapshotState(_ context.Context, w stateWriter) error {
	if err := snapshotShared(w, o.shared, o.funcs); err != nil {
		return err
	}
	meta := []byte{stateVersion}
	meta = binary.AppendVarint(meta, o.wm)
	meta = binary.AppendUvarint(meta, uint64(len(o.ends)))
	for _, e := range o.ends {
		meta = binary.AppendVarint(meta, e.local)
		meta = binary.AppendVarint(meta, e.instant)
	}
	if err := w.Put(windowMetaKey, meta); err != nil {
		return err
	}
	for start, tbl := range o.slices {
		if err := snapshotTable(w, slicePrefix('s', start), tbl, false); err != nil {
			return err
		}
	}
	for start, tbl := range o.runs {
		if err := snapshotTable(w, slicePrefix('r', start), tbl, false); err != nil {
			return err
		}
	}
	return nil
}

func (o *windowAggOp) restoreState(r stateReader) error {
	var tr tableRestorer
	err := r.Scan(func(key string, value []byte) error {
		if ok, err := restoreShared(r.ID(), key, value, o.shared, o.funcs); ok {
			return err
		}
		if key == windowMetaKey {
			return o.restoreMeta(value)
		}
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if _, _, err := parseSlicePrefix(prefix); err != nil {
			return err
		}
		groups, err := decodeGroups(value, kg, o.funcs, false)
		if err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		tr.add(prefix, kg, groups)
		return nil
	})
	if err != nil {
		return err
	}
	for prefix := range tr.tables {
		kind, start, _ := parseSlicePrefix(prefix)
		tbl, err := tr.build(prefix, r.ID())
		if err != nil {
			return err
		}
		if kind == 's' {
			o.slices[start] = tbl
		} else {
			o.runs[start] = tbl
		}
	}
	o.cached = false
	return nil
}

func (o *windowAggOp) restoreMeta(value []byte) error {
	d := &stateDecoder{data: value}
	d.version()
	wm := d.varint()
	n := d.count(2)
	ends := make(endHeap, 0, n)
	for range n {
		ends = append(ends, windowEnd{local: d.varint(), instant: d.varint()})
	}
	if err := d.finish(); err != nil {
		return fmt.Errorf("state key %q: %w", windowMetaKey, err)
	}
	o.wm = wm
	o.ends = ends
	heap.Init(&o.ends)
	o.scheduled = make(map[int64]bool, n)
	for _, e := range ends {
		o.scheduled[e.local] = true
	}
	return nil
}

const groupAggPrefix = "g"

func (o *groupAggOp) snapshotState(_ context.Context, w stateWriter) error {
	if err := snapshotShared(w, o.shared, o.funcs); err != nil {
		return err
	}
	return snapshotTable(w, groupAggPrefix, o.groups, true)
}

func (o *groupAggOp) restoreState(r stateReader) error {
	var tr tableRestorer
	err := r.Scan(func(key string, value []byte) error {
		if ok, err := restoreShared(r.ID(), key, value, o.shared, o.funcs); ok {
			return err
		}
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if prefix != groupAggPrefix {
			return fmt.Errorf("malformed group aggregate state key %q", key)
		}
		groups, err := decodeGroups(value, kg, o.funcs, true)
		if err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		tr.add(prefix, kg, groups)
		return nil
	})
	if err != nil {
		return err
	}
	tbl, err := tr.build(groupAggPrefix, r.ID())
	if err != nil {
		return err
	}
	o.groups = tbl
	return nil
}

// describeWindowAgg describes what shapes a window aggregate's state, for
// state.Meta.CheckPlan: equal descriptions can take over each other's state.
func describeWindowAgg(n *planner.WindowAggregate) string {
	w := n.Window
	var b strings.Builder
	fmt.Fprintf(&b, "window aggregate %s size=%s slide=%s offset=%s", w.Kind, w.Size, w.Slide, w.Offset)
	if w.ProcTime {
		b.WriteString(" proctime")
	}
	in := n.Input.Schema()
	if w.TimeCol >= 0 && w.TimeCol < len(in) && in[w.TimeCol].Type.Kind == types.TimestampLTZ && w.Location != nil {
		fmt.Fprintf(&b, " zone=%s", w.Location)
	}
	describeAggState(&b, in, n.Keys, n.Aggs)
	return b.String()
}

func describeGroupAgg(n *planner.GroupAggregate) string {
	var b strings.Builder
	b.WriteString("group aggregate")
	if n.Retract {
		b.WriteString(" retracting")
	}
	describeAggState(&b, n.Input.Schema(), n.Keys, n.Aggs)
	return b.String()
}

func describeAggState(b *strings.Builder, in types.Schema, keys []int, aggs []planner.AggCall) {
	b.WriteString(" keys=[")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		if k >= 0 && k < len(in) {
			b.WriteString(in[k].Type.WithoutTimeAttr().String())
		}
	}
	b.WriteString("] aggregates=[")
	for i, a := range aggs {
		if i > 0 {
			b.WriteString(", ")
		}
		arg := "*"
		if a.Arg >= 0 && a.Arg < len(in) {
			arg = in[a.Arg].Type.WithoutTimeAttr().String()
		}
		distinct := ""
		if a.Distinct {
			distinct = "DISTINCT "
		}
		fmt.Fprintf(b, "%s(%s%s)", a.Func, distinct, arg)
		if a.Filter >= 0 {
			b.WriteString(" FILTER")
		}
		if a.State != "" {
			fmt.Fprintf(b, " as %s", a.State)
		}
	}
	fmt.Fprintf(b, "] state v%d", stateVersion)
}
