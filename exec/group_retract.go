package exec

import (
	"fmt"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// A group aggregate over an updating input (planner.GroupAggregate.Retract), as Flink's
// GroupAggFunction with retraction: +I and +U rows are added to their group, -U and -D
// rows taken back (agg.NewRetracting's buffers). Each group also counts its rows, in one
// more COUNT(*) buffer after the aggregates: when the count falls to zero the group's
// last result is deleted (-D), and a later row starts it again with +I. A retraction
// for a group that has no rows is dropped, as Flink drops it.

// retractFuncs returns the Funcs of a retracting aggregate: one per call, then the
// row counter.
func retractFuncs(a *aggCalls) ([]agg.Func, error) {
	fs := make([]agg.Func, 0, len(a.calls)+1)
	for i, c := range a.calls {
		f, err := agg.NewRetracting(c, a.argTypes[i])
		if err != nil {
			return nil, fmt.Errorf("aggregate %s: %w", c.Name, err)
		}
		fs = append(fs, f)
	}
	rows, err := agg.NewRetracting(planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: types.TypeBigInt.WithNotNull(true)}, types.Type{})
	if err != nil {
		return nil, err
	}
	return append(fs, rows), nil
}

// groupRows is the number of rows in g (its counter buffer).
func groupRows(g *aggGroup) int64 {
	return g.bufs[len(g.bufs)-1].Result().Int()
}

// applyChange adds or retracts row (its key in o.keyBuf) and returns its group, nil when
// the row was a retraction of a group without rows.
func (o *groupAggOp) applyChange(k connectors.RowKind, row types.Row) (*aggGroup, error) {
	retract := k == connectors.UpdateBefore || k == connectors.Delete
	if retract {
		g := o.groups.index[string(o.keyBuf)]
		if g == nil || groupRows(g) == 0 {
			return nil, nil
		}
	}
	g := o.groups.get(o.keyBuf, row, o.cfg.keys, o.funcs)
	n := len(o.cfg.aggs.calls)
	if !retract {
		if err := o.cfg.aggs.add(g.bufs[:n], row); err != nil {
			return nil, err
		}
		return g, g.bufs[n].Add(countStar)
	}
	if err := o.cfg.aggs.retract(g.bufs[:n], row); err != nil {
		return nil, err
	}
	return g, g.bufs[n].(agg.Retracter).Retract(countStar)
}

// retract takes row back from the buffers of one group.
func (a *aggCalls) retract(bufs []agg.Buffer, row types.Row) error {
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
		r, ok := b.(agg.Retracter)
		if !ok {
			return fmt.Errorf("%w: aggregate %s cannot take back a row", ErrRetraction, a.calls[i].Name)
		}
		if err := r.Retract(v); err != nil {
			return fmt.Errorf("aggregate %s: %w", a.calls[i].Name, err)
		}
	}
	return nil
}
