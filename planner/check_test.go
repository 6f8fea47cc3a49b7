package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/types"
)

// checkPlan verifies the invariants exec relies on, for every plan the golden tests
// produce: each column reference and column index is in range of the node's input and
// agrees with it in name and type, each node's schema has one column per output, and the
// time columns of watermarks and windows are time attributes.
func checkPlan(n Node) error {
	for _, c := range n.Children() {
		if err := checkPlan(c); err != nil {
			return err
		}
	}
	var in types.Schema
	if kids := n.Children(); len(kids) == 1 {
		in = kids[0].Schema()
	}
	checkExpr := func(e Expr) error {
		var err error
		visit(e, func(x Expr) {
			switch r := x.(type) {
			case *ColumnRef:
				switch {
				case r.Index < 0 || r.Index >= len(in):
					err = fmt.Errorf("%s: column $%d out of range of %d inputs", n.Explain(), r.Index, len(in))
				case !strings.EqualFold(r.Name, in[r.Index].Name):
					err = fmt.Errorf("%s: column $%d is named %s, the input calls it %s", n.Explain(), r.Index, r.Name, in[r.Index].Name)
				case r.T.Kind != in[r.Index].Type.Kind:
					err = fmt.Errorf("%s: column %s is %s, the input has %s", n.Explain(), r.Name, r.T, in[r.Index].Type)
				}
			case *slotRef:
				err = fmt.Errorf("%s: unresolved aggregation slot", n.Explain())
			}
		})
		return err
	}
	col := func(i int, what string) error {
		if i < 0 || i >= len(in) {
			return fmt.Errorf("%s: %s column %d out of range of %d inputs", n.Explain(), what, i, len(in))
		}
		return nil
	}
	aggs := func(keys []int, calls []AggCall, out types.Schema, extra int) error {
		for _, k := range keys {
			if err := col(k, "key"); err != nil {
				return err
			}
		}
		for _, a := range calls {
			if a.Arg >= 0 {
				if err := col(a.Arg, "argument"); err != nil {
					return err
				}
			}
			if a.State == "" || a.Name == "" {
				return fmt.Errorf("%s: aggregate without state kind or name", n.Explain())
			}
		}
		if len(out) != len(keys)+len(calls)+extra {
			return fmt.Errorf("%s: %d output columns for %d keys and %d aggregates", n.Explain(), len(out), len(keys), len(calls))
		}
		return nil
	}
	timeCol := func(w Window) error {
		if err := col(w.TimeCol, "time"); err != nil {
			return err
		}
		want := types.RowTime
		if w.ProcTime {
			want = types.ProcTime
		}
		if in[w.TimeCol].Type.TimeAttr != want {
			return fmt.Errorf("%s: window time column %s is %s, not a time attribute of the window's kind", n.Explain(), in[w.TimeCol].Name, typeString(in[w.TimeCol].Type))
		}
		if w.Location == nil {
			return fmt.Errorf("%s: window without location", n.Explain())
		}
		return nil
	}
	switch x := n.(type) {
	case *TableSourceScan:
		if len(x.Produce) != len(x.Out) {
			return fmt.Errorf("%s: %d produced columns, %d in schema", n.Explain(), len(x.Produce), len(x.Out))
		}
	case *Calc:
		if len(x.Projections) != len(x.Out) {
			return fmt.Errorf("%s: %d projections, %d in schema", n.Explain(), len(x.Projections), len(x.Out))
		}
		for _, p := range append(append([]Expr(nil), x.Projections...), x.Filter) {
			if err := checkExpr(p); err != nil {
				return err
			}
		}
	case *WatermarkAssigner:
		if err := col(x.RowtimeCol, "rowtime"); err != nil {
			return err
		}
		if in[x.RowtimeCol].Type.TimeAttr != types.RowTime {
			return fmt.Errorf("%s: rowtime column is %s", n.Explain(), typeString(in[x.RowtimeCol].Type))
		}
		return checkExpr(x.Expr)
	case *WindowAggregate:
		if err := timeCol(x.Window); err != nil {
			return err
		}
		return aggs(x.Keys, x.Aggs, x.Out, 3)
	case *GroupAggregate:
		return aggs(x.Keys, x.Aggs, x.Out, 0)
	case *WindowTableFunction:
		if err := timeCol(x.Window); err != nil {
			return err
		}
		if len(x.Out) != len(in)+3 {
			return fmt.Errorf("%s: %d columns over %d inputs", n.Explain(), len(x.Out), len(in))
		}
	case *Sink:
		if len(x.Out) != len(in) || len(x.Written) != len(x.Out) {
			return fmt.Errorf("%s: writes %d columns of %d inputs (%d described)", n.Explain(), len(x.Out), len(in), len(x.Written))
		}
		for i := range x.Out {
			if !assignable(in[i].Type, x.Out[i].Type) {
				return fmt.Errorf("%s: column %s gets %s", n.Explain(), x.Out[i].Name, in[i].Type)
			}
		}
	case *Values:
		for _, r := range x.Rows {
			if len(r) != len(x.Out) {
				return fmt.Errorf("%s: a row of %d values", n.Explain(), len(r))
			}
		}
	case *tableRef:
		return fmt.Errorf("unexpanded %s", n.Explain())
	}
	return nil
}
