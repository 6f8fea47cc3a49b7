package exec

import (
	"context"
	"fmt"

	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// correlateOp runs a planner.Correlate (UNNEST): each input row is followed by the
// columns of each element of its collection, and keeps its change kind. Stateless. With
// replicate ($REPLICATE_ROWS$1) each input row is emitted as many times as arg says.
type correlateOp struct {
	nopOperator
	arg        eval.Evaluator
	inWidth    int
	width      int  // the columns the collection adds, ORDINALITY included
	rowElems   bool // the elements are ROWs, spread into their fields
	isMap      bool
	multiset   bool // each element as often as its count
	ordinality bool
	left       bool
	// replicate emits each input row arg times (INTERSECT ALL, EXCEPT ALL).
	replicate bool
}

func compileCorrelate(n *planner.Correlate, env eval.Env) (*correlateOp, error) {
	arg, err := eval.Compile(n.Arg, env)
	if err != nil {
		return nil, fmt.Errorf("UNNEST(%s): %w", n.Arg, err)
	}
	op := &correlateOp{arg: arg, inWidth: len(n.Input.Schema()), width: n.Width(), ordinality: n.Ordinality, left: n.Left, replicate: n.Replicate}
	t := n.Arg.Type()
	if n.Replicate {
		if !t.IsInteger() || op.width != 0 {
			return nil, fmt.Errorf("%w: $REPLICATE_ROWS$1 of %s adding %d columns", ErrUnsupportedPlan, t, op.width)
		}
		return op, nil
	}
	switch t.Kind {
	case types.Array:
		op.rowElems = t.Elem.Kind == types.Struct
	case types.Map:
		if t.Multiset {
			op.multiset, op.rowElems = true, t.Key.Kind == types.Struct
			break
		}
		op.isMap = true
	default:
		return nil, fmt.Errorf("%w: UNNEST of %s", ErrUnsupportedPlan, t)
	}
	return op, nil
}

func (c *correlateOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	for i, row := range b.rows {
		if len(row) != c.inWidth {
			return fmt.Errorf("%w: UNNEST input row of %d columns, want %d", ErrUnsupportedPlan, len(row), c.inWidth)
		}
		v, err := c.arg(row)
		if err != nil {
			return err
		}
		kind := b.kind(i)
		if c.replicate {
			for k := int64(0); !v.IsNull() && k < v.Int(); k++ {
				if err := out.emit(ctx, kind, c.make(row)); err != nil {
					return err
				}
			}
			continue
		}
		elems := v.Elems()
		if c.multiset {
			elems = multisetElems(v.Entries())
		}
		n := len(elems)
		if c.isMap {
			n = len(v.Entries())
		}
		if n == 0 {
			if c.left {
				if err := out.emit(ctx, kind, c.make(row)); err != nil {
					return err
				}
			}
			continue
		}
		for e := 0; e < n; e++ {
			r := c.make(row)
			cols := r[c.inWidth:]
			switch {
			case c.isMap:
				en := v.Entries()[e]
				cols[0], cols[1] = en.Key, en.Value
			case c.rowElems:
				// A NULL element gives NULL fields.
				copy(cols, elems[e].Elems())
			default:
				cols[0] = elems[e]
			}
			if c.ordinality {
				cols[len(cols)-1] = types.IntValue(types.Int, int64(e+1))
			}
			if err := out.emit(ctx, kind, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// multisetElems lists a multiset's elements, each as often as its count.
func multisetElems(entries []types.MapEntry) []types.Value {
	var out []types.Value
	for _, e := range entries {
		for range e.Value.Int() {
			out = append(out, e.Key)
		}
	}
	return out
}

// make returns a new output row holding row's columns and NULLs after them.
func (c *correlateOp) make(row types.Row) types.Row {
	r := make(types.Row, c.inWidth+c.width)
	copy(r, row)
	return r
}

var _ operator = (*correlateOp)(nil)
