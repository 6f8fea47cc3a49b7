package exec

import (
	"context"
	"fmt"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// calcProgram is a compiled planner.Calc: a filter and projections. It is stateless, so
// one program serves every run; the source task runs it fused with the scan, and a Calc
// elsewhere runs as its own operator.
type calcProgram struct {
	filter func(types.Row) (bool, error) // nil: every row passes
	projs  []eval.Evaluator
	// cols[i] is the input column projection i copies, -1 when it computes something:
	// copying a column needs no call.
	cols []int
	// identity is true when the projections return the input row unchanged, so rows that
	// pass the filter are passed on as they are.
	identity bool
	inWidth  int
	// memoWidth is the memo slots of calls shared by the filter and projections
	// (eval.CompileShared): each row is evaluated as a copy extended by them. 0: none.
	memoWidth int
}

func compileCalc(n *planner.Calc, env eval.Env) (*calcProgram, error) {
	p := &calcProgram{inWidth: len(n.Input.Schema())}
	if n.Filter != nil {
		f, err := eval.CompilePredicate(n.Filter, env)
		if err != nil {
			return nil, fmt.Errorf("filter %s: %w", n.Filter, err)
		}
		p.filter = f
	}
	p.identity = len(n.Projections) == p.inWidth
	for i, e := range n.Projections {
		col := -1
		if c, ok := e.(*planner.ColumnRef); ok {
			if c.Index < 0 || c.Index >= p.inWidth {
				return nil, fmt.Errorf("%w: projection %s reads column %d of %d", ErrUnsupportedPlan, c, c.Index, p.inWidth)
			}
			col = c.Index
		}
		if col != i {
			p.identity = false
		}
		ev, err := eval.Compile(e, env)
		if err != nil {
			return nil, fmt.Errorf("projection %s: %w", e, err)
		}
		p.projs = append(p.projs, ev)
		p.cols = append(p.cols, col)
	}
	return p, p.share(n, env)
}

// share recompiles the filter and projections together when they repeat a call, so
// that each row computes it once.
func (p *calcProgram) share(n *planner.Calc, env eval.Env) error {
	exprs := append([]planner.Expr(nil), n.Projections...)
	if n.Filter != nil {
		exprs = append(exprs, n.Filter)
	}
	s, err := eval.CompileShared(exprs, p.inWidth, env)
	if err != nil || s.MemoWidth == 0 {
		return err
	}
	p.memoWidth = s.MemoWidth
	p.projs = s.Evals[:len(n.Projections)]
	if n.Filter != nil {
		f := s.Evals[len(n.Projections)]
		p.filter = func(row types.Row) (bool, error) {
			v, err := f(row)
			return err == nil && !v.IsNull() && v.Bool(), err
		}
	}
	return nil
}

// apply filters and projects rows (with their kinds, nil when all inserts). Output rows
// of a batch share one backing array, so a batch costs two allocations, not one per row.
func (p *calcProgram) apply(rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	return p.applyTo(rows, kinds, nil)
}

// calcScratch is memory a Calc's output may reuse from batch to batch when its rows die
// before the next batch: a source task's Calc whose rows only a later Calc of the same
// task reads (Nexmark's computed dateTime before the views' filters).
type calcScratch struct {
	rows    []types.Row
	backing []types.Value
}

// applyTo is apply writing its output into s (nil: fresh memory), which it overwrites.
func (p *calcProgram) applyTo(rows []types.Row, kinds []connectors.RowKind, s *calcScratch) ([]types.Row, []connectors.RowKind, error) {
	if p.identity && p.filter == nil {
		return rows, kinds, nil
	}
	out := rows[:0:0]
	var outKinds []connectors.RowKind
	if kinds != nil {
		outKinds = make([]connectors.RowKind, 0, len(rows))
	}
	var backing []types.Value
	width := len(p.projs)
	if s != nil {
		if need := width * len(rows); cap(s.backing) < need {
			s.backing = make([]types.Value, need)
		}
		if cap(s.rows) < len(rows) {
			s.rows = make([]types.Row, 0, len(rows))
		}
		out, backing = s.rows[:0], s.backing[:width*len(rows)]
	}
	var ext types.Row // the row and its memo slots
	if p.memoWidth > 0 {
		ext = make(types.Row, p.inWidth+p.memoWidth)
	}
	for i, in := range rows {
		row := in
		if ext != nil {
			copy(ext, in)
			clear(ext[p.inWidth:])
			row = ext
		}
		if p.filter != nil {
			ok, err := p.filter(row)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue
			}
		}
		if p.identity {
			if out == nil {
				out = make([]types.Row, 0, len(rows)-i)
			}
			out = append(out, in)
		} else {
			if len(backing) < width {
				backing = make([]types.Value, width*max(len(rows)-i, 1))
			}
			r := backing[:width:width]
			backing = backing[width:]
			for j, ev := range p.projs {
				if c := p.cols[j]; c >= 0 {
					r[j] = row[c]
					continue
				}
				v, err := ev(row)
				if err != nil {
					return nil, nil, err
				}
				r[j] = v
			}
			if out == nil {
				out = make([]types.Row, 0, len(rows)-i)
			}
			out = append(out, r)
		}
		if kinds != nil {
			outKinds = append(outKinds, kinds[i])
		}
	}
	return out, outKinds, nil
}

// calcOp runs a Calc as its own operator (a Calc after an aggregate).
type calcOp struct {
	nopOperator
	prog *calcProgram
}

func (c *calcOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	rows, kinds, err := c.prog.apply(b.rows, b.kinds)
	if err != nil {
		return err
	}
	return out.emitBatch(ctx, batch{rows: rows, kinds: kinds})
}
