package exec

import (
	"context"
	"fmt"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// groupAggConfig is a compiled planner.GroupAggregate.
type groupAggConfig struct {
	keys  []int
	aggs  *aggCalls
	width int
	// miniBatch (table.exec.mini-batch.enabled) emits one change per group per input
	// batch instead of one per input row.
	miniBatch bool
	// retract: the input is updating (group_retract.go).
	retract bool
}

func compileGroupAgg(n *planner.GroupAggregate, miniBatch bool) (*groupAggConfig, error) {
	in := n.Input.Schema()
	for _, k := range n.Keys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("%w: group key column %d of %d", ErrUnsupportedPlan, k, len(in))
		}
	}
	aggs, err := compileAggCalls(n.Aggs, in)
	if err != nil {
		return nil, err
	}
	width := len(n.Keys) + len(n.Aggs)
	if len(n.Out) != width {
		return nil, fmt.Errorf("%w: group aggregate has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), width)
	}
	return &groupAggConfig{keys: n.Keys, aggs: aggs, width: width, miniBatch: miniBatch, retract: n.Retract}, nil
}

// groupAggOp is a non-windowed GROUP BY. It emits an updating changelog as Flink's
// GroupAggFunction does: +I when a group first gets a result, then -U (the previous
// result) and +U (the new one) when it changes; no pair when the new result equals the
// previous one.
type groupAggOp struct {
	nopOperator
	cfg   *groupAggConfig
	funcs []agg.Func

	// state
	groups *aggTable

	keyBuf  []byte
	changed []*aggGroup // groups changed in this batch (mini-batch)
	inBatch map[*aggGroup]bool

	shared []sharedState // how each aggregate's shared state is checkpointed
}

func newGroupAggOp(cfg *groupAggConfig) (*groupAggOp, error) {
	funcs, err := cfg.aggs.funcs()
	if cfg.retract {
		funcs, err = retractFuncs(cfg.aggs) // group_retract.go
	}
	if err != nil {
		return nil, err
	}
	return &groupAggOp{
		cfg: cfg, funcs: funcs, groups: newAggTable(), inBatch: map[*aggGroup]bool{},
		shared: sharedStates(len(funcs)),
	}, nil
}

func (o *groupAggOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	for i, row := range b.rows {
		k := b.kind(i)
		if k != connectors.Insert && !o.cfg.retract {
			// The planner plans a retracting aggregate over an updating input.
			return fmt.Errorf("%w: group aggregate received %s", ErrRetraction, k)
		}
		o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.keys)
		var g *aggGroup
		if o.cfg.retract {
			var err error
			if g, err = o.applyChange(k, row); err != nil {
				return err
			}
			if g == nil {
				continue // a retraction for a group without rows
			}
		} else {
			g = o.groups.get(o.keyBuf, row, o.cfg.keys, o.funcs)
			if err := o.cfg.aggs.add(g.bufs, row); err != nil {
				return err
			}
		}
		if !o.cfg.miniBatch {
			if err := o.emitChange(ctx, g, out); err != nil {
				return err
			}
			continue
		}
		if !o.inBatch[g] {
			o.inBatch[g] = true
			o.changed = append(o.changed, g)
		}
	}
	for _, g := range o.changed {
		if err := o.emitChange(ctx, g, out); err != nil {
			return err
		}
		delete(o.inBatch, g)
	}
	o.changed = o.changed[:0]
	return nil
}

// emitChange emits the change of g's result since the last emission.
func (o *groupAggOp) emitChange(ctx context.Context, g *aggGroup, out *outbox) error {
	if o.cfg.retract && groupRows(g) == 0 {
		// Every row of the group was retracted: the group is gone.
		if g.last != nil {
			if err := out.emit(ctx, connectors.Delete, g.last); err != nil {
				return err
			}
			g.last = nil
		}
		return nil
	}
	row := make(types.Row, o.cfg.width)
	copy(row, g.key)
	for i, b := range g.bufs[:len(o.cfg.aggs.calls)] {
		row[len(o.cfg.keys)+i] = b.Result()
	}
	prev := g.last
	switch {
	case prev == nil:
		if err := out.emit(ctx, connectors.Insert, row); err != nil {
			return err
		}
	case rowsEqual(prev, row):
		return nil
	default:
		if err := out.emit(ctx, connectors.UpdateBefore, prev); err != nil {
			return err
		}
		if err := out.emit(ctx, connectors.UpdateAfter, row); err != nil {
			return err
		}
	}
	g.last = row
	return nil
}
