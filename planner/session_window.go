package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
)

// SESSION windows
//
// TABLE(SESSION(TABLE t [PARTITION BY k, ...], DESCRIPTOR(ts), gap)) grouped by
// window_start, window_end and the partition keys, and the legacy GROUP BY SESSION(ts,
// gap), k with SESSION_START/SESSION_END/SESSION_ROWTIME, plan as a WindowAggregate
// whose Window is a Session of Size gap: per key, a row opens the session [ts, ts + gap),
// sessions that overlap merge (a row can bridge two), and a session is emitted when the
// watermark passes its end. The keys of the aggregation are the keys sessions are kept
// by, so a window TVF's PARTITION BY must name the GROUP BY keys.

// sessionPartition resolves the PARTITION BY columns of a SESSION window TVF.
func sessionPartition(w *parser.WindowTVF, s *scope) ([]int, error) {
	var out []int
	for _, c := range w.PartitionBy {
		i, err := s.resolve(&parser.Ident{At: w.At, Parts: []string{c}})
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// checkSessionKeys refuses a session window aggregation whose group keys are not the
// keys its sessions are kept by.
func checkSessionKeys(sel *parser.Select, ctx *aggContext) error {
	w := ctx.window
	if w == nil || w.win.Kind != SessionWindow || w.legacyArgs != nil {
		return nil
	}
	want := map[int]bool{}
	for _, i := range w.partition {
		want[i] = true
	}
	got := map[int]bool{}
	for _, k := range ctx.keys {
		if c, ok := k.(*ColumnRef); ok && want[c.Index] {
			got[c.Index] = true
			continue
		}
		return errAt(sel.At, ErrUnsupported, "unsupported: a SESSION window aggregation grouped by %s, which is not a PARTITION BY column of the SESSION window: group by window_start, window_end and exactly the PARTITION BY columns", ExplainExpr(k))
	}
	if len(got) != len(want) {
		var names []string
		for _, i := range w.partition {
			if !got[i] {
				names = append(names, ctx.input.cols[i].name)
			}
		}
		return errAt(sel.At, ErrUnsupported, "unsupported: a SESSION window aggregation not grouped by its PARTITION BY column %s: group by window_start, window_end and exactly the PARTITION BY columns", strings.Join(names, ", "))
	}
	return nil
}

// checkBareSession refuses a SESSION window table function that no window aggregation
// consumes: its rows would need the session they end up in, known only when it closes.
func checkBareSession(sel *parser.Select, from *relation, aggregating bool) error {
	if aggregating || from.tvf == nil || from.tvf.win.win.Kind != SessionWindow {
		return nil
	}
	return errAt(sel.At, ErrUnsupported, "unsupported: a SESSION window table function without a window aggregation (GROUP BY window_start, window_end, ...) over it")
}

// sessionStates keeps the COUNT(DISTINCT) of values that would need a dictionary (strings)
// in a value set in a session window: merging sessions merges their buffers, and a value
// set merges and checkpoints on its own, where bitmaps of dictionary ids would need the
// shared dictionary checkpointed with them.
func sessionStates(w Window, aggs []AggCall) {
	if w.Kind != SessionWindow {
		return
	}
	for i := range aggs {
		if aggs[i].State == StateRoaringDict {
			aggs[i].State = StateDistinctValues
		}
	}
}
