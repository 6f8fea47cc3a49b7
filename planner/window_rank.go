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
//
// Directly after a window table function (OverTVF) the rows come as they arrive: each is
// buffered with its window until the watermark passes the window's end (window_time <=
// watermark), then the window is ranked and its state dropped; a row whose window has
// already been ranked is late and dropped, as Flink's WindowRank does. ROW_NUMBER = 1
// ordered by the table function's time attribute is Flink's WindowDeduplicate (Dedup):
// ascending keeps the first row of each window and key, descending the last.

// WindowRank is a Rank over the rows of each window of a window aggregate.
type WindowRank struct {
	Rank            // Input, Type, Start, End, PartitionBy, OrderBy, RankNumber, Out
	Window   Window // the window aggregate's window, for EXPLAIN
	StartCol int    // input columns of window_start and window_end
	EndCol   int
	// OverTVF: the input is a window table function's rows, ranked when the watermark
	// passes window_time (TimeCol, an input column); else a window aggregate's.
	OverTVF bool
	TimeCol int
	// Dedup: a WindowDeduplicate, ROW_NUMBER 1 to 1 ordered by the time attribute
	// (OrderBy[0] descending keeps the last row).
	Dedup bool
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
	if n.Dedup {
		keep := "FirstRow"
		if n.OrderBy[0].Desc {
			keep = "LastRow"
		}
		var part []string
		for _, k := range n.PartitionBy {
			if k != n.StartCol && k != n.EndCol {
				part = append(part, in[k].Name)
			}
		}
		return fmt.Sprintf("WindowDeduplicate(window=[%s], keep=[%s], partitionKeys=[%s], orderKey=[%s], order=[ROWTIME])",
			win, keep, strings.Join(part, ", "), in[n.OrderBy[0].Col].Name)
	}
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

// windowColumn traces column col of n down to a WindowAggregate's or a
// WindowTableFunction's window columns: it returns that node, its window, and 0 for
// window_start, 1 for window_end, 2 for window_time, -1 for the table function's time
// attribute (its input's time column).
func windowColumn(n Node, col int) (Node, Window, int, bool) {
	for {
		switch x := n.(type) {
		case *Calc:
			c, ok := x.Projections[col].(*ColumnRef)
			if !ok {
				return nil, Window{}, 0, false
			}
			n, col = x.Input, c.Index
		case *WindowAggregate:
			at := col - len(x.Keys) - len(x.Aggs)
			return x, x.Window, at, at >= 0 && at < 3
		case *WindowTableFunction:
			width := len(x.Input.Schema())
			if col == x.Window.TimeCol {
				return x, x.Window, -1, true
			}
			at := col - width
			return x, x.Window, at, at >= 0 && at < 3
		default:
			return nil, Window{}, 0, false
		}
	}
}

// windowPartitioned reports whether part holds window_start and window_end of one
// event-time window table function below in: a deduplication of its rows is then a
// WindowDeduplicate (planned through asWindowRank), not a Deduplicate.
func windowPartitioned(in Node, part []int) bool {
	var start, end Node
	for _, k := range part {
		a, w, at, ok := windowColumn(in, k)
		if _, tvf := a.(*WindowTableFunction); !ok || !tvf || w.ProcTime {
			continue
		}
		switch at {
		case 0:
			start = a
		case 1:
			end = a
		}
	}
	return start != nil && start == end
}

// asWindowRank returns r as a WindowRank when its partition holds window_start and
// window_end of one event-time window aggregate or window table function, else nil.
func asWindowRank(r *Rank) *WindowRank {
	if r.Strategy != AppendFastStrategy {
		return nil
	}
	start, end := -1, -1
	var src Node
	var win Window
	for _, k := range r.PartitionBy {
		a, w, at, ok := windowColumn(r.Input, k)
		if !ok || src != nil && a != src {
			continue
		}
		switch at {
		case 0:
			start, src, win = k, a, w
		case 1:
			end, src, win = k, a, w
		}
	}
	if start < 0 || end < 0 || win.ProcTime {
		return nil
	}
	w := &WindowRank{Rank: *r, Window: win, StartCol: start, EndCol: end, TimeCol: -1}
	w.Out = append(types.Schema(nil), r.Input.Schema()...)
	if _, ok := src.(*WindowTableFunction); ok {
		// The window's rows arrive as they come: window_time tells when it is complete.
		w.OverTVF = true
		for i := range r.Input.Schema() {
			if a, _, at, ok := windowColumn(r.Input, i); ok && a == src && at == 2 {
				w.TimeCol = i
				break
			}
		}
		if calc, ok := r.Input.(*Calc); ok && w.TimeCol < 0 {
			// Not selected (QUALIFY's subquery selects only the select list): the Calc
			// that planTopN built below the rank passes it on as a hidden column.
			for i, c := range calc.Input.Schema() {
				if a, _, at, ok := windowColumn(calc.Input, i); ok && a == src && at == 2 {
					w.TimeCol = len(calc.Projections)
					calc.Projections = append(calc.Projections, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
					calc.Out = append(calc.Out, c)
					w.Out = append(w.Out, c)
					break
				}
			}
		}
		if w.TimeCol < 0 {
			return nil // window_time is not below the rank: it cannot tell when to rank
		}
		if r.Type == RowNumber && r.Start == 1 && r.End == 1 && len(r.OrderBy) == 1 {
			a, _, at, ok := windowColumn(r.Input, r.OrderBy[0].Col)
			w.Dedup = ok && a == src && (at == -1 || at == 2)
		}
	}
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
	if x.OverTVF {
		inUsed[x.TimeCol] = true
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	w := *x
	w.Input, w.PartitionBy, w.OrderBy = in, remapInts(x.PartitionBy, m), nil
	w.StartCol, w.EndCol = m[x.StartCol], m[x.EndCol]
	if x.OverTVF {
		w.TimeCol = m[x.TimeCol]
	}
	for _, k := range x.OrderBy {
		k.Col = m[k.Col]
		w.OrderBy = append(w.OrderBy, k)
	}
	w.Out = append(types.Schema(nil), in.Schema()...)
	mapping := append([]int(nil), m...)
	if x.RankNumber {
		mapping = append(mapping, len(w.Out))
		w.Out = append(w.Out, x.Out[width])
	}
	return &w, mapping, nil
}
