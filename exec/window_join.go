package exec

import (
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

// Window joins
//
// A window join buffers the rows of both inputs (window table functions, so each row
// carries its window) by window end and key. When the watermark reaches a window's end
// (less the time column's tick, as a window aggregate fires), the window's rows are
// joined key by key, the pairs that meet the condition emitted, and for an outer side
// every row that joined nothing emitted null-padded; then the window is forgotten. A row
// whose window has fired already is late and dropped (counted), as in Flink. A row whose
// key has a NULL joins nothing: an outer side's is emitted null-padded at once. The output
// is append-only. State is checkpointed per open window (w<end>). A semi (anti) window
// join emits, when the window fires, each left row with (without) a match in it.

type windowJoinConfig struct {
	base    *joinConfig // keys, where, widths, outer
	end     [2]int      // the window_end column of each side
	tick    int64
	typeStr string
	// semi and anti emit the left rows with (without) a match; nullAware is NOT IN's
	// anti join (see planner/window_semi_join.go).
	semi, anti, nullAware bool
}

func compileWindowJoin(n *planner.WindowJoin, env eval.Env) (*windowJoinConfig, error) {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: n.Type, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		KeyTypes: n.KeyTypes, Where: n.Where, Condition: n.Condition, Out: n.Out}
	if n.Type.Semi() {
		// The pairs are only tested: compile them as an inner join's.
		j.Type, j.Out = planner.InnerJoin, append(append(types.Schema(nil), n.Left.Schema()...), n.Right.Schema()...)
		if n.NullAware && (n.Where != nil || len(n.LeftKeys) != 1) {
			return nil, fmt.Errorf("%w: a null-aware window anti join of %d keys with a condition", ErrUnsupportedPlan, len(n.LeftKeys))
		}
	}
	if len(j.LeftKeys) == 0 {
		// Without further keys every row of a window has the same key: its window end.
		j.LeftKeys, j.RightKeys, j.KeyTypes = []int{n.LeftEnd}, []int{n.RightEnd}, []types.Type{n.Left.Schema()[n.LeftEnd].Type.WithoutTimeAttr()}
	}
	base, err := compileJoin(j, env, 0)
	if err != nil {
		return nil, err
	}
	ls, rs := n.Left.Schema(), n.Right.Schema()
	if n.LeftEnd < 0 || n.LeftEnd >= len(ls) || n.RightEnd < 0 || n.RightEnd >= len(rs) {
		return nil, fmt.Errorf("%w: window join end columns %d, %d", ErrUnsupportedPlan, n.LeftEnd, n.RightEnd)
	}
	return &windowJoinConfig{base: base, end: [2]int{n.LeftEnd, n.RightEnd}, tick: 1000,
		semi: n.Type == planner.LeftSemiJoin, anti: n.Type == planner.LeftAntiJoin, nullAware: n.NullAware}, nil
}

func describeWindowJoin(n *planner.WindowJoin) string {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: n.Type, KeyTypes: n.KeyTypes}
	w := n.LeftWindow
	return strings.Replace(describeJoin(j), "join ", "window join ", 1) +
		fmt.Sprintf(" window=%s size=%d slide=%d offset=%d", w.Kind, w.Size, w.Slide, w.Offset)
}

// wjWindow is one open window: per key, the rows of each side.
type wjWindow struct {
	keys  map[string]*[2][]types.Row
	order []string // keys in order of arrival, for a deterministic output
}

type windowJoinOp struct {
	nopOperator
	cfg     *windowJoinConfig
	m       *opMetrics
	ops     *joinOp // key evaluation and pairs
	windows map[int64]*wjWindow
	wm      int64
	changed map[int64]bool // windows changed since the last snapshot
	written map[int64]uint64
}

func newWindowJoinOp(cfg *windowJoinConfig, m *opMetrics) *windowJoinOp {
	return &windowJoinOp{cfg: cfg, m: m, ops: newJoinOp(cfg.base, nil), windows: map[int64]*wjWindow{}, wm: NoWatermark,
		changed: map[int64]bool{}, written: map[int64]uint64{}}
}

var _ multiInput = (*windowJoinOp)(nil)

func (o *windowJoinOp) processBatch(context.Context, batch, *outbox) error {
	return fmt.Errorf("%w: a window join's batch without its input", ErrInternal)
}

func (o *windowJoinOp) fired(end int64) bool { return o.wm != NoWatermark && end-o.cfg.tick <= o.wm }

func (o *windowJoinOp) processInput(ctx context.Context, s int, b batch, out *outbox) error {
	if s != 0 && s != 1 {
		return fmt.Errorf("%w: window join input %d", ErrInternal, s)
	}
	late := 0
	for i, row := range b.rows {
		if k := b.kind(i); k != connectors.Insert {
			return fmt.Errorf("%w: window join received %s", ErrRetraction, k)
		}
		end := row[o.cfg.end[s]].Int()
		if o.fired(end) {
			late++
			continue
		}
		key, ok, err := o.ops.key(s, row)
		if err != nil {
			return err
		}
		if !ok && o.cfg.nullAware {
			key, ok = []byte(nullKey), true // NULL keys count within the window
		}
		if !ok {
			if o.cfg.anti && s == 0 {
				// No row can match a NULL key: the row is in an anti join's result.
				if err := out.emit(ctx, connectors.Insert, row); err != nil {
					return err
				}
				continue
			}
			if o.cfg.base.outer[s] {
				if err := out.emit(ctx, connectors.Insert, o.ops.pair(s, row, nil)); err != nil {
					return err
				}
			}
			continue
		}
		w := o.windows[end]
		if w == nil {
			w = &wjWindow{keys: map[string]*[2][]types.Row{}}
			o.windows[end] = w
		}
		rows := w.keys[string(key)]
		if rows == nil {
			rows = &[2][]types.Row{}
			w.keys[string(key)] = rows
			w.order = append(w.order, string(key))
		}
		rows[s] = append(rows[s], row)
		o.changed[end] = true
	}
	if o.m != nil {
		o.m.late.add(late)
	}
	return nil
}

func (o *windowJoinOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	o.wm = max(o.wm, wm)
	var ends []int64
	for end := range o.windows {
		if o.fired(end) {
			ends = append(ends, end)
		}
	}
	slices.Sort(ends)
	cfg := o.cfg.base
	for _, end := range ends {
		w := o.windows[end]
		if o.cfg.semi || o.cfg.anti {
			if err := o.fireSemi(ctx, w, out); err != nil {
				return err
			}
			delete(o.windows, end)
			o.changed[end] = true
			continue
		}
		for _, k := range w.order {
			rows := w.keys[k]
			matched := [2][]bool{make([]bool, len(rows[0])), make([]bool, len(rows[1]))}
			for li, l := range rows[0] {
				for ri, r := range rows[1] {
					j := o.ops.joined(l, r)
					if cfg.where != nil {
						pass, err := cfg.where(j)
						if err != nil {
							return err
						}
						if !pass {
							continue
						}
					}
					matched[0][li], matched[1][ri] = true, true
					if err := out.emit(ctx, connectors.Insert, j); err != nil {
						return err
					}
				}
			}
			for s := range 2 {
				if !cfg.outer[s] {
					continue
				}
				for i, row := range rows[s] {
					if !matched[s][i] {
						if err := out.emit(ctx, connectors.Insert, o.ops.pair(s, row, nil)); err != nil {
							return err
						}
					}
				}
			}
		}
		delete(o.windows, end)
		o.changed[end] = true
	}
	return nil
}

// fireSemi emits the left rows of a fired window that a semi join keeps (a match in the
// window) or an anti join keeps (none; for NOT IN, null-aware).
func (o *windowJoinOp) fireSemi(ctx context.Context, w *wjWindow, out *outbox) error {
	var right, nulls int
	if o.cfg.nullAware {
		for k, rows := range w.keys {
			right += len(rows[1])
			if k == nullKey {
				nulls = len(rows[1])
			}
		}
	}
	where := o.cfg.base.where
	for _, k := range w.order {
		rows := w.keys[k]
		for _, l := range rows[0] {
			var keep bool
			switch {
			case o.cfg.nullAware:
				keep = right == 0 || k != nullKey && nulls == 0 && len(rows[1]) == 0
			default:
				matched := false
				for _, r := range rows[1] {
					if where == nil {
						matched = true
						break
					}
					pass, err := where(o.ops.joined(l, r))
					if err != nil {
						return err
					}
					if pass {
						matched = true
						break
					}
				}
				keep = matched == o.cfg.semi
			}
			if keep {
				if err := out.emit(ctx, connectors.Insert, l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (o *windowJoinOp) measureState() StateMetrics {
	var n int64
	for _, w := range o.windows {
		for _, rows := range w.keys {
			n += int64(len(rows[0]) + len(rows[1]))
		}
	}
	return StateMetrics{Groups: n}
}

func windowJoinKey(end int64) string { return fmt.Sprintf("w%020d", uint64(end)+1<<63) }

func (o *windowJoinOp) snapshotState(_ context.Context, w stateWriter) error {
	base := w.Base()
	ends := make([]int64, 0, len(o.windows))
	for end := range o.windows {
		ends = append(ends, end)
	}
	slices.Sort(ends)
	for _, end := range ends {
		key := windowJoinKey(end)
		if at := o.written[end]; base != 0 && at != 0 && at <= base && !o.changed[end] {
			if err := w.Unchanged(key); err != nil {
				return err
			}
			continue
		}
		win := o.windows[end]
		dst := []byte{stateVersion}
		dst = binary.AppendVarint(dst, end)
		dst = binary.AppendUvarint(dst, uint64(len(win.order)))
		for _, k := range win.order {
			rows := win.keys[k]
			dst = appendLenBytes(dst, []byte(k))
			for s := range 2 {
				dst = binary.AppendUvarint(dst, uint64(len(rows[s])))
				for _, r := range rows[s] {
					dst = appendStateRow(dst, r)
				}
			}
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[end] = w.ID()
	}
	for end := range o.written {
		if o.windows[end] == nil {
			delete(o.written, end)
		}
	}
	clear(o.changed)
	return nil
}

func (o *windowJoinOp) restoreState(r stateReader) error {
	o.windows = map[int64]*wjWindow{}
	o.written = map[int64]uint64{}
	return r.Scan(func(key string, value []byte) error {
		if !strings.HasPrefix(key, "w") {
			return fmt.Errorf("malformed window join state key %q", key)
		}
		d := &stateDecoder{data: value}
		d.version()
		end := d.varint()
		n := d.count(2)
		win := &wjWindow{keys: map[string]*[2][]types.Row{}}
		for range n {
			k := string(d.lenBytes())
			rows := &[2][]types.Row{}
			for s := range 2 {
				m := d.count(1)
				for range m {
					row := d.row()
					if d.err == nil && len(row) != o.cfg.base.widths[s] {
						d.fail("a row of %d columns, want %d", len(row), o.cfg.base.widths[s])
					}
					rows[s] = append(rows[s], row)
				}
			}
			if d.err != nil {
				break
			}
			win.keys[k] = rows
			win.order = append(win.order, k)
		}
		if err := d.finish(); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		o.windows[end] = win
		o.written[end] = r.ID()
		return nil
	})
}
