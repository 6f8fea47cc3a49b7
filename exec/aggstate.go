package exec

import (
	"fmt"

	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// aggCalls is the compiled aggregate calls of an aggregation node. Funcs hold state
// shared by their buffers (a string dictionary), so each run makes its own with funcs.
type aggCalls struct {
	calls    []planner.AggCall
	argTypes []types.Type
	args     []int // input column of each call's argument, -1 for COUNT(*)
	filters  []int // input column of each call's FILTER condition, -1 when none
}

func compileAggCalls(calls []planner.AggCall, in types.Schema) (*aggCalls, error) {
	a := &aggCalls{calls: calls}
	for _, c := range calls {
		var argType types.Type
		if c.Arg >= 0 {
			if c.Arg >= len(in) {
				return nil, fmt.Errorf("%w: aggregate %s reads column %d of %d", ErrUnsupportedPlan, c.Name, c.Arg, len(in))
			}
			argType = in[c.Arg].Type
		}
		if c.Filter >= len(in) {
			return nil, fmt.Errorf("%w: aggregate %s filters on column %d of %d", ErrUnsupportedPlan, c.Name, c.Filter, len(in))
		}
		// Compile once now so that an aggregate that cannot run is a plan-time error.
		if _, err := agg.New(c, argType); err != nil {
			return nil, fmt.Errorf("aggregate %s: %w", c.Name, err)
		}
		a.argTypes = append(a.argTypes, argType)
		a.args = append(a.args, c.Arg)
		a.filters = append(a.filters, c.Filter)
	}
	return a, nil
}

// funcs returns fresh Funcs for one run.
func (a *aggCalls) funcs() ([]agg.Func, error) {
	fs := make([]agg.Func, len(a.calls))
	for i, c := range a.calls {
		f, err := agg.New(c, a.argTypes[i])
		if err != nil {
			return nil, fmt.Errorf("aggregate %s: %w", c.Name, err)
		}
		fs[i] = f
	}
	return fs, nil
}

// countStar is what COUNT(*) adds for each row: any non-NULL value.
var countStar = types.BoolValue(true)

// add adds row to the buffers of one group.
func (a *aggCalls) add(bufs []agg.Buffer, row types.Row) error {
	for i, b := range bufs {
		if f := a.filters[i]; f >= 0 {
			if v := row[f]; v.IsNull() || !v.Bool() {
				continue
			}
		}
		v := countStar
		if c := a.args[i]; c >= 0 {
			v = row[c]
		}
		if err := b.Add(v); err != nil {
			return fmt.Errorf("aggregate %s: %w", a.calls[i].Name, err)
		}
	}
	return nil
}

// aggGroup is the buffers of one group key.
type aggGroup struct {
	k    string    // the encoded key
	key  types.Row // the key values, to emit
	bufs []agg.Buffer
	// last is the result a GroupAggregate last emitted for the group, nil before the first.
	last types.Row
	// kg is the key group the group is checkpointed in, seq its position in its table.
	kg  uint16
	seq uint32
}

// aggTable is the groups of one window slice (or of all time, for GroupAggregate), in
// the order their keys first appeared, so that output order does not depend on map
// iteration.
type aggTable struct {
	index map[string]*aggGroup
	order []*aggGroup
	ckpt  tableCheckpoint
}

func newAggTable() *aggTable { return &aggTable{index: map[string]*aggGroup{}} }

// get returns the group of the encoded key k, creating it (with new buffers and the key
// values from row) when absent. Looking up with string(k) does not allocate. The group's
// key group is marked as touched, for the next incremental checkpoint.
func (t *aggTable) get(k []byte, row types.Row, keyCols []int, funcs []agg.Func) *aggGroup {
	if g := t.index[string(k)]; g != nil {
		t.ckpt.touched.set(g.kg)
		return g
	}
	g := &aggGroup{k: string(k), key: keyValues(row, keyCols), bufs: make([]agg.Buffer, len(funcs)), kg: keyGroupOf(k)}
	for i, f := range funcs {
		g.bufs[i] = f.NewBuffer()
	}
	t.add(g)
	return g
}

// add appends a group the table does not have.
func (t *aggTable) add(g *aggGroup) {
	t.index[g.k] = g
	t.order = append(t.order, g)
	t.ckpt.added(g, len(t.order)-1)
}

// mergeFrom adds every group of other into t. Groups t lacks are moved, not copied, when
// move is true (other is discarded afterwards).
func (t *aggTable) mergeFrom(other *aggTable, funcs []agg.Func, move bool) error {
	for _, g := range other.order {
		mine := t.index[g.k]
		if mine == nil {
			if move {
				t.add(g)
				continue
			}
			mine = &aggGroup{k: g.k, key: g.key, bufs: make([]agg.Buffer, len(funcs)), kg: g.kg}
			for i, f := range funcs {
				mine.bufs[i] = f.NewBuffer()
			}
			t.add(mine)
		}
		t.ckpt.touched.set(mine.kg)
		for i, b := range mine.bufs {
			if err := b.Merge(g.bufs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
