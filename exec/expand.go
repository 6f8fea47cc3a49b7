package exec

import (
	"context"
	"fmt"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// expandOp runs a planner.Expand (GROUPING SETS, ROLLUP, CUBE): each input row is
// emitted once per grouping set, with the same kind, the keys outside the set NULL and
// the set's grouping id last. It is stateless.
type expandOp struct {
	nopOperator
	width int
	keys  []int
	sets  [][]bool
	ids   []types.Value
}

func compileExpand(n *planner.Expand) (*expandOp, error) {
	width := len(n.Input.Schema())
	if len(n.Out) != width+1 {
		return nil, fmt.Errorf("%w: expand has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), width+1)
	}
	op := &expandOp{width: width, keys: n.Keys, sets: n.Sets}
	for _, k := range n.Keys {
		if k < 0 || k >= width {
			return nil, fmt.Errorf("%w: expand key column %d of %d", ErrUnsupportedPlan, k, width)
		}
	}
	for s, set := range n.Sets {
		if len(set) != len(n.Keys) {
			return nil, fmt.Errorf("%w: grouping set %d has %d keys, want %d", ErrUnsupportedPlan, s, len(set), len(n.Keys))
		}
		op.ids = append(op.ids, types.IntValue(types.BigInt, n.GroupingID(s)))
	}
	return op, nil
}

func (o *expandOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	for i, row := range b.rows {
		kind := b.kind(i)
		backing := make([]types.Value, (o.width+1)*len(o.sets))
		for s, set := range o.sets {
			r := backing[s*(o.width+1) : (s+1)*(o.width+1) : (s+1)*(o.width+1)]
			copy(r, row)
			for j, in := range set {
				if !in {
					r[o.keys[j]] = types.NullValue
				}
			}
			r[o.width] = o.ids[s]
			if err := out.emit(ctx, kind, r); err != nil {
				return err
			}
		}
	}
	return nil
}

var _ operator = (*expandOp)(nil)
