package exec

import (
	"context"
	"fmt"
	"slices"
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
//
// Over updating inputs a -U or -D takes back one equal row of its side. A left row's
// retraction deletes (-D) its output row when it was in the result; a right row's takes
// one match from each left row it matched, and a left row that loses its last match
// leaves a semi join's result (-D) or enters an anti join's (+I). A +U is an insert.
//
// NOT IN's null-aware anti join keeps NULL keys too, under the key of NULL: a left row
// qualifies while the right side is empty, or when its key is not NULL, no right row has
// it and no right key is NULL. The first right row deletes the emitted rows with a NULL
// key, the first NULL right key every emitted row, any other right row the emitted rows of
// its key.

func compileSemiJoin(n *planner.SemiJoin, env eval.Env) (*joinConfig, error) {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: planner.InnerJoin, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		KeyTypes: n.KeyTypes, Where: n.Where, Condition: n.Condition,
		Out: append(append(types.Schema(nil), n.Left.Schema()...), n.Right.Schema()...)}
	cfg, err := compileJoin(j, env, 0)
	if err != nil {
		return nil, err
	}
	if n.NullAware && (n.Where != nil || len(n.LeftKeys) != 1) {
		return nil, fmt.Errorf("%w: a null-aware anti join of %d keys with a condition", ErrUnsupportedPlan, len(n.LeftKeys))
	}
	if len(n.Out) != cfg.widths[0] {
		return nil, fmt.Errorf("%w: semi join has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), cfg.widths[0])
	}
	return cfg, nil
}

func describeSemiJoin(n *planner.SemiJoin) string {
	j := &planner.Join{Left: n.Left, Right: n.Right, Type: planner.InnerJoin, KeyTypes: n.KeyTypes}
	kind := "semi join "
	switch {
	case n.NullAware:
		kind = "null-aware anti join "
	case n.Anti:
		kind = "anti join "
	}
	return strings.Replace(describeJoin(j), "join InnerJoin ", kind, 1)
}

// semiJoinOp runs a semi or anti join on a regular join's state.
type semiJoinOp struct {
	*joinOp
	anti, nullAware bool
}

func newSemiJoinOp(cfg *joinConfig, n *planner.SemiJoin) *semiJoinOp {
	return &semiJoinOp{joinOp: newJoinOp(cfg, nil), anti: n.Anti, nullAware: n.NullAware}
}

// nullKey is the bucket key of the rows with a NULL key in a null-aware anti join.
var nullKey = string(appendKey(nil, types.NullValue))

// qualifies reports whether a left row of a null-aware anti join is in the result when
// the right side has right rows, nulls of them with a NULL key.
func qualifies(rec *joinRecord, isNull bool, right, nulls int64) bool {
	return right == 0 || !isNull && nulls == 0 && rec.matches == 0
}

func (o *semiJoinOp) processNullAware(ctx context.Context, s int, b batch, out *outbox) error {
	left, right := o.sides[0], o.sides[1]
	nulls := func() int64 {
		if nb := right.buckets[nullKey]; nb != nil {
			return int64(len(nb.recs))
		}
		return 0
	}
	for i, row := range b.rows {
		if k := b.kind(i); k != connectors.Insert {
			return fmt.Errorf("%w: anti join received %s", ErrRetraction, k)
		}
		key, ok, err := o.key(s, row)
		if err != nil {
			return err
		}
		if !ok {
			key = []byte(nullKey)
		}
		if s == 0 {
			rec := joinRecord{row: row}
			if ok {
				if rb := right.buckets[string(key)]; rb != nil {
					rec.matches = int64(len(rb.recs))
				}
			}
			if qualifies(&rec, !ok, right.rows, nulls()) {
				if err := out.emit(ctx, connectors.Insert, row); err != nil {
					return err
				}
			}
			bk := left.bucket(key)
			bk.recs = append(bk.recs, rec)
			left.rows++
			left.changed.set(bk.kg)
			continue
		}
		rowsBefore, nullsBefore := right.rows, nulls()
		bk := right.bucket(key)
		bk.recs = append(bk.recs, joinRecord{row: row})
		right.rows++
		right.changed.set(bk.kg)
		// The left rows this right row may take out of the result: all of them when it is
		// the first right row or the first NULL key, else those of its key.
		var buckets []*joinBucket
		if rowsBefore == 0 || !ok && nullsBefore == 0 {
			for _, lb := range left.buckets {
				buckets = append(buckets, lb)
			}
		} else if lb := left.buckets[string(key)]; ok && lb != nil {
			buckets = append(buckets, lb)
		}
		for _, lb := range buckets {
			isNull := lb.key == nullKey
			for r := range lb.recs {
				rec := &lb.recs[r]
				before := qualifies(rec, isNull, rowsBefore, nullsBefore)
				if ok && !isNull && lb.key == string(key) {
					rec.matches++
					left.changed.set(lb.kg)
				}
				if before && !qualifies(rec, isNull, right.rows, nulls()) {
					if err := out.emit(ctx, connectors.Delete, rec.row); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
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
	if o.nullAware {
		return o.processNullAware(ctx, s, b, out)
	}
	me, other := o.sides[s], o.sides[1-s]
	for i, row := range b.rows {
		if k := b.kind(i); k == connectors.UpdateBefore || k == connectors.Delete {
			if err := o.retractRow(ctx, s, row, out); err != nil {
				return err
			}
			continue
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

// retractRow takes back one row of side s (a -U or -D) from an updating input.
func (o *semiJoinOp) retractRow(ctx context.Context, s int, row types.Row, out *outbox) error {
	me, other := o.sides[s], o.sides[1-s]
	key, ok, err := o.key(s, row)
	if err != nil {
		return err
	}
	if !ok { // a NULL key: never kept; only an anti join emitted the left row
		if s == 0 && o.anti {
			return out.emit(ctx, connectors.Delete, row)
		}
		return nil
	}
	bk := me.buckets[string(key)]
	if bk == nil {
		return nil
	}
	at := slices.IndexFunc(bk.recs, func(r joinRecord) bool { return rowsEqual(r.row, row) })
	if at < 0 {
		return nil // not in the state: nothing to take back
	}
	rec := bk.recs[at]
	bk.recs = slices.Delete(bk.recs, at, at+1)
	me.rows--
	me.changed.set(bk.kg)
	if s == 0 {
		if (rec.matches > 0) != o.anti {
			return out.emit(ctx, connectors.Delete, rec.row)
		}
		return nil
	}
	ob := other.buckets[string(key)]
	if ob == nil {
		return nil
	}
	for r := range ob.recs {
		lrec := &ob.recs[r]
		m, err := o.matches(lrec.row, rec.row)
		if err != nil {
			return err
		}
		if !m || lrec.matches == 0 {
			continue
		}
		lrec.matches--
		other.changed.set(ob.kg)
		if lrec.matches == 0 {
			kind := connectors.Delete
			if o.anti {
				kind = connectors.Insert
			}
			if err := out.emit(ctx, kind, lrec.row); err != nil {
				return err
			}
		}
	}
	return nil
}
