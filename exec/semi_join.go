package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Semi and anti joins
//
// A semi join (x IN (SELECT ...), EXISTS) keeps both inputs in state by key, as a regular
// join does, each left row with the number of right rows it matched. A left row is
// emitted once: when it arrives and a match is there, or when its first match arrives.
// An anti join (NOT EXISTS) emits a left row when it arrives without a match and deletes
// it (-D) when its first match arrives, so its output is updating. A left row whose key
// has a NULL never matches: a semi join drops it, an anti join emits it for good; a right
// one is not kept. The state is a regular join's (the same layout and checkpoint code).

func compileSemiJoin(n *planner.SemiJoin, env eval.Env) (*joinConfig, error) {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: planner.InnerJoin, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		KeyTypes: n.KeyTypes, Where: n.Where, Condition: n.Condition,
		Out: append(append(types.Schema(nil), n.Left.Schema()...), n.Right.Schema()...)}
	cfg, err := compileJoin(j, env, 0)
	if err != nil {
		return nil, err
	}
	if len(n.Out) != cfg.widths[0] {
		return nil, fmt.Errorf("%w: semi join has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), cfg.widths[0])
	}
	return cfg, nil
}

func describeSemiJoin(n *planner.SemiJoin) string {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: planner.InnerJoin, KeyTypes: n.KeyTypes}
	kind := "semi join "
	if n.Anti {
		kind = "anti join "
	}
	return strings.Replace(describeJoin(j), "join InnerJoin ", kind, 1)
}

// semiJoinOp runs a semi or anti join on a regular join's state.
type semiJoinOp struct {
	*joinOp
	anti bool
}

func newSemiJoinOp(cfg *joinConfig, anti bool) *semiJoinOp {
	return &semiJoinOp{joinOp: newJoinOp(cfg, nil), anti: anti}
}

var _ multiInput = (*semiJoinOp)(nil)

// matches reports whether the joined row of left l and right r meets the condition.
func (o *semiJoinOp) matches(l, r types.Row) (bool, error) {
	if o.cfg.where == nil {
		return true, nil
	}
	return o.cfg.where(o.joined(l, r))
}

func (o *semiJoinOp) processInput(ctx context.Context, s int, b batch, out *outbox) error {
	if s != 0 && s != 1 {
		return fmt.Errorf("%w: semi join input %d", ErrInternal, s)
	}
	me, other := o.sides[s], o.sides[1-s]
	for i, row := range b.rows {
		if k := b.kind(i); k != connectors.Insert {
			return fmt.Errorf("%w: semi join received %s", ErrRetraction, k)
		}
		key, ok, err := o.key(s, row)
		if err != nil {
			return err
		}
		if !ok {
			if s == 0 && o.anti {
				if err := out.emit(ctx, connectors.Insert, row); err != nil {
					return err
				}
			}
			continue // never matches: not kept
		}
		ob := other.buckets[string(key)]
		if s == 0 {
			var n int64
			if ob != nil {
				for r := range ob.recs {
					m, err := o.matches(row, ob.recs[r].row)
					if err != nil {
						return err
					}
					if m {
						n++
					}
				}
			}
			if (n > 0) != o.anti {
				if err := out.emit(ctx, connectors.Insert, row); err != nil {
					return err
				}
			}
			bk := me.bucket(key)
			bk.recs = append(bk.recs, joinRecord{row: row, matches: n})
			me.rows++
			me.changed.set(bk.kg)
			continue
		}
		if ob != nil {
			for r := range ob.recs {
				rec := &ob.recs[r]
				m, err := o.matches(rec.row, row)
				if err != nil {
					return err
				}
				if !m {
					continue
				}
				if rec.matches == 0 {
					kind := connectors.Insert
					if o.anti {
						kind = connectors.Delete
					}
					if err := out.emit(ctx, kind, rec.row); err != nil {
						return err
					}
				}
				rec.matches++
				other.changed.set(ob.kg)
			}
		}
		bk := me.bucket(key)
		bk.recs = append(bk.recs, joinRecord{row: row})
		me.rows++
		me.changed.set(bk.kg)
	}
	return nil
}
