package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/types"
)

// Window Top-N
//
// A Top-N whose partition holds the window_start and window_end of a window aggregate
// below it is Flink's WindowRank: the window aggregate emits each window's rows all at
// once when the watermark passes the window's end, so the rank is computed once per
// window, when they have arrived, and its result is insert-only (no row of a window ever
// changes rank). It keeps the input's time attributes, so window_time stays one.

// WindowRank is a Rank over the rows of each window of a window aggregate.
type WindowRank struct {
	Rank            // Input, Type, Start, End, PartitionBy, OrderBy, RankNumber, Out
	Window   Window // the window aggregate's window, for EXPLAIN
	StartCol int    // input columns of window_start and window_end
	EndCol   int
}

var _ Node = (*WindowRank)(nil)

func (n *WindowRank) Children() []Node     { return []Node{n.Input} }
func (n *WindowRank) Schema() types.Schema { return n.Out }

func (n *WindowRank) Explain() string {
	in := n.Input.Schema()
	w := n.Window
	win := fmt.Sprintf("%s(win_start=[%s], win_end=[%s]", w.Kind, in[n.StartCol].Name, in[n.EndCol].Name)
	switch w.Kind {
	case Hop:
		win += ", slide=[" + formatDuration(w.Slide) + "]"
	case Cumulate:
		win += ", step=[" + formatDuration(w.Slide) + "]"
	}
	if w.Kind == SessionWindow {
		win += ", gap=[" + formatDuration(w.Size) + "]"
	} else {
		win += ", size=[" + formatDuration(w.Size) + "]"
	}
	win += ")"
	var part []string
	for _, k := range n.PartitionBy {
		if k != n.StartCol && k != n.EndCol {
			part = append(part, in[k].Name)
		}
	}
	order := make([]string, len(n.OrderBy))
	for i, k := range n.OrderBy {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		order[i] = in[k.Col].Name + " " + dir
	}
	return fmt.Sprintf("WindowRank(window=[%s], rankType=[%s], rankRange=[rankStart=%d, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s])",
		win, n.Type, n.Start, n.End, strings.Join(part, ", "), strings.Join(order, ", "), names(n.Out))
}

// windowColumn traces column col of n down to a WindowAggregate's window columns: it
// returns the aggregate and 0 for window_start, 1 for window_end, 2 for window_time.
func windowColumn(n Node, col int) (*WindowAggregate, int, bool) {
	for {
		switch x := n.(type) {
		case *Calc:
			c, ok := x.Projections[col].(*ColumnRef)
			if !ok {
				return nil, 0, false
			}
			n, col = x.Input, c.Index
		case *WindowAggregate:
			at := col - len(x.Keys) - len(x.Aggs)
			return x, at, at >= 0 && at < 3
		default:
			return nil, 0, false
		}
	}
}

// asWindowRank returns r as a WindowRank when its partition holds window_start and
// window_end of one event-time window aggregate, else nil.
func asWindowRank(r *Rank) *WindowRank {
	if r.Strategy != AppendFastStrategy {
		return nil
	}
	start, end := -1, -1
	var agg *WindowAggregate
	for _, k := range r.PartitionBy {
		a, at, ok := windowColumn(r.Input, k)
		if !ok || agg != nil && a != agg {
			continue
		}
		switch at {
		case 0:
			start, agg = k, a
		case 1:
			end, agg = k, a
		}
	}
	if start < 0 || end < 0 || agg.Window.ProcTime {
		return nil
	}
	w := &WindowRank{Rank: *r, Window: agg.Window, StartCol: start, EndCol: end}
	w.Out = append(types.Schema(nil), r.Input.Schema()...)
	if r.RankNumber {
		w.Out = append(w.Out, r.Out[len(r.Out)-1])
	}
	return w
}

// pruneWindowRank keeps the columns the parent uses, the keys and the order.
func (o *optimizer) pruneWindowRank(x *WindowRank, used []bool) (Node, []int, error) {
	width := len(x.Input.Schema())
	inUsed := append([]bool(nil), used[:width]...)
	for _, k := range x.PartitionBy {
		inUsed[k] = true
	}
	for _, k := range x.OrderBy {
		inUsed[k.Col] = true
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	w := *x
	w.Input, w.PartitionBy, w.OrderBy = in, remapInts(x.PartitionBy, m), nil
	w.StartCol, w.EndCol = m[x.StartCol], m[x.EndCol]
	for _, k := range x.OrderBy {
		w.OrderBy = append(w.OrderBy, SortKey{Col: m[k.Col], Desc: k.Desc})
	}
	w.Out = append(types.Schema(nil), in.Schema()...)
	mapping := append([]int(nil), m...)
	if x.RankNumber {
		mapping = append(mapping, len(w.Out))
		w.Out = append(w.Out, x.Out[width])
	}
	return &w, mapping, nil
}
