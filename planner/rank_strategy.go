package planner

import (
	"fmt"
	"strings"
)

// UpdateFastStrategy
//
// Flink ranks an updating input with UpdateFastStrategy when the input has a unique key
// and the ORDER BY column only moves in the rank's direction as the input updates: the
// result of a COUNT, MAX or APPROX_COUNT_DISTINCT (only growing) ordered DESC, or of a
// MIN (only shrinking) ordered ASC, of a GroupAggregate over an insert-only input, whose
// group keys are the unique key. pipesql plans and prints the strategy as Flink does and
// runs it as it runs RetractStrategy, keeping every row of a partition, which gives the
// same changelog.

// rankUniqueKey returns the columns of r's input that hold the group keys of the
// GroupAggregate below it, when its first ORDER BY column is monotonic in its direction.
func rankUniqueKey(r *Rank) ([]int, bool) {
	if len(r.OrderBy) != 1 {
		return nil, false // ties of a second column could move either way
	}
	agg, col, ok := groupAggColumn(r.Input, r.OrderBy[0].Col)
	if !ok || agg.Retract || col < len(agg.Keys) {
		return nil, false
	}
	switch agg.Aggs[col-len(agg.Keys)].Func {
	case AggCount, AggMax, AggApproxCountDi:
		if !r.OrderBy[0].Desc {
			return nil, false
		}
	case AggMin:
		if r.OrderBy[0].Desc {
			return nil, false
		}
	default:
		return nil, false
	}
	// Every group key must reach the rank's input.
	var key []int
	for k := range agg.Keys {
		found := -1
		for c := range r.Input.Schema() {
			if a, at, ok := groupAggColumn(r.Input, c); ok && a == agg && at == k {
				found = c
				break
			}
		}
		if found < 0 {
			return nil, false
		}
		key = append(key, found)
	}
	return key, true
}

// groupAggColumn traces column col of n through Calcs to a GroupAggregate's output.
func groupAggColumn(n Node, col int) (*GroupAggregate, int, bool) {
	for {
		switch x := n.(type) {
		case *Calc:
			c, ok := x.Projections[col].(*ColumnRef)
			if !ok {
				return nil, 0, false
			}
			n, col = x.Input, c.Index
		case *GroupAggregate:
			return x, col, true
		default:
			return nil, 0, false
		}
	}
}

// strategyText is the strategy as Flink's EXPLAIN prints it.
func (n *Rank) strategyText() string {
	if n.Strategy != UpdateFastStrategy {
		return n.Strategy.String()
	}
	keys := make([]string, len(n.UniqueKey))
	for i, k := range n.UniqueKey {
		keys[i] = fmt.Sprint(k)
	}
	return fmt.Sprintf("UpdateFastStrategy[%s]", strings.Join(keys, ","))
}
