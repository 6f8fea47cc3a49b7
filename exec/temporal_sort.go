package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Temporal sort and LIMIT
//
// temporalSortOp runs a planner.TemporalSort as Flink's RowTimeSortOperator does: rows
// wait until the watermark reaches their time, then the rows due are emitted sorted by
// the time and the other keys, rows equal in every key in arrival order. A row at or
// behind the watermark on arrival is late: dropped and counted, as window aggregates
// drop rows of fired windows. Its output is insert-only and in time order, so nothing it
// emits is late for the operators after it.
//
// limitOp runs a planner.Limit over an insert-only input: the first N rows, then nothing.

type temporalSortConfig struct {
	timeCol int
	keys    []planner.SortKey
	width   int
}

func compileTemporalSort(n *planner.TemporalSort, updating bool) (*opSpec, error) {
	if updating {
		return nil, fmt.Errorf("%w: temporal sort over an updating input", ErrUnsupportedPlan)
	}
	in := n.Input.Schema()
	if len(n.OrderBy) == 0 {
		return nil, fmt.Errorf("%w: temporal sort without keys", ErrUnsupportedPlan)
	}
	for _, k := range n.OrderBy {
		if k.Col < 0 || k.Col >= len(in) {
			return nil, fmt.Errorf("%w: temporal sort key column %d of %d", ErrUnsupportedPlan, k.Col, len(in))
		}
	}
	cfg := &temporalSortConfig{timeCol: n.OrderBy[0].Col, keys: n.OrderBy, width: len(in)}
	return &opSpec{name: "temporal sort", stateDesc: describeTemporalSort(n), build: func(_ *runEnv, m *opMetrics) (operator, error) {
		return &temporalSortOp{cfg: cfg, m: m, wm: NoWatermark}, nil
	}}, nil
}

type temporalSortOp struct {
	nopOperator
	cfg *temporalSortConfig
	m   *opMetrics

	// state
	wm      int64
	waiting []types.Row // in arrival order
	dirty   bool        // changed since the last snapshot
	written uint64      // checkpoint that last wrote the state
}

func (o *temporalSortOp) processBatch(_ context.Context, b batch, _ *outbox) error {
	late, bad := 0, 0
	lastLate := NoWatermark
	t := o.cfg.timeCol
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: temporal sort received %s", ErrRetraction, b.kind(i))
		}
		switch ts := row[t]; {
		case ts.IsNull():
			bad++
		case o.wm != NoWatermark && ts.Int() <= o.wm:
			late++
			lastLate = ts.Int()
		default:
			o.waiting = append(o.waiting, row)
			o.dirty = true
		}
	}
	o.m.late.add(late)
	if lastLate != NoWatermark {
		o.m.lastLate.Store(lastLate)
	}
	o.m.bad.add(bad)
	return nil
}

func (o *temporalSortOp) compare(a, b types.Row) int {
	return planner.CompareRows(o.cfg.keys, a, b)
}

func (o *temporalSortOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	t := o.cfg.timeCol
	var due, rest []types.Row
	for _, r := range o.waiting {
		if r[t].Int() <= wm {
			due = append(due, r)
		} else {
			rest = append(rest, r)
		}
	}
	o.dirty = true // the watermark is part of the state
	if len(due) == 0 {
		return nil
	}
	o.waiting = rest
	slices.SortStableFunc(due, o.compare)
	for _, r := range due {
		if err := out.emit(ctx, connectors.Insert, r); err != nil {
			return err
		}
	}
	return nil
}

func (o *temporalSortOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput {
		return o.processWatermark(ctx, MaxWatermark, out)
	}
	return nil
}

// The temporal sort's checkpointed state is one key, "s": version | watermark | row
// count | the waiting rows in arrival order.
const temporalSortKey = "s"

func (o *temporalSortOp) snapshotState(_ context.Context, w stateWriter) error {
	if base := w.Base(); base != 0 && o.written != 0 && o.written <= base && !o.dirty {
		return w.Unchanged(temporalSortKey)
	}
	dst := binary.AppendVarint([]byte{stateVersion}, o.wm)
	dst = binary.AppendUvarint(dst, uint64(len(o.waiting)))
	for _, r := range o.waiting {
		dst = appendStateRow(dst, r)
	}
	if err := w.Put(temporalSortKey, dst); err != nil {
		return err
	}
	o.written, o.dirty = w.ID(), false
	return nil
}

func (o *temporalSortOp) restoreState(r stateReader) error {
	o.wm, o.waiting, o.dirty, o.written = NoWatermark, nil, false, 0
	return r.Scan(func(key string, value []byte) error {
		if key != temporalSortKey {
			return fmt.Errorf("malformed temporal sort state key %q", key)
		}
		d := &stateDecoder{data: value}
		d.version()
		o.wm = d.varint()
		n := d.count(1)
		rows := make([]types.Row, 0, n)
		for range n {
			row := d.row()
			if d.err == nil && len(row) != o.cfg.width {
				d.fail("a row of %d columns, the plan's input has %d", len(row), o.cfg.width)
			}
			if d.err != nil {
				return fmt.Errorf("state key %q: %w", key, d.err)
			}
			rows = append(rows, row)
		}
		if err := d.finish(); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		o.waiting, o.written = rows, r.ID()
		return nil
	})
}

// describeTemporalSort describes what shapes a TemporalSort's state, for state.Meta.CheckPlan.
func describeTemporalSort(n *planner.TemporalSort) string {
	in := n.Input.Schema()
	var b strings.Builder
	b.WriteString("temporal sort keys=[")
	for i, k := range n.OrderBy {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d desc=%v%s", k.Col, k.Desc, k.NullsState())
	}
	b.WriteString("] row=[")
	for i, c := range in {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Type.WithoutTimeAttr().String())
	}
	fmt.Fprintf(&b, "] state v%d", stateVersion)
	return b.String()
}

func compileLimit(n *planner.Limit, updating bool) (*opSpec, error) {
	if updating {
		return nil, fmt.Errorf("%w: LIMIT over an updating input", ErrUnsupportedPlan)
	}
	desc := fmt.Sprintf("limit state v%d", stateVersion)
	return &opSpec{name: "limit", stateDesc: desc, build: func(*runEnv, *opMetrics) (operator, error) {
		return &limitOp{n: n.N}, nil
	}}, nil
}

type limitOp struct {
	nopOperator
	n    int64
	seen int64 // rows emitted (state)
}

func (o *limitOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: limit received %s", ErrRetraction, b.kind(i))
		}
		if o.seen >= o.n {
			return nil
		}
		if err := out.emit(ctx, connectors.Insert, row); err != nil {
			return err
		}
		o.seen++
	}
	return nil
}

// The limit's checkpointed state is one key, "n": version | rows emitted.
const limitKey = "n"

func (o *limitOp) snapshotState(_ context.Context, w stateWriter) error {
	return w.Put(limitKey, binary.AppendVarint([]byte{stateVersion}, o.seen))
}

func (o *limitOp) restoreState(r stateReader) error {
	o.seen = 0
	return r.Scan(func(key string, value []byte) error {
		if key != limitKey {
			return fmt.Errorf("malformed limit state key %q", key)
		}
		d := &stateDecoder{data: value}
		d.version()
		o.seen = d.varint()
		return d.finish()
	})
}
