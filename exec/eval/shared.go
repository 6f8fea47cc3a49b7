package eval

import (
	"strings"

	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Shared subexpressions
//
// A Calc often computes the same call in its filter and in a projection, or in several
// branches of a CASE (Nexmark q21: REGEXP_EXTRACT(url, ...) in WHERE and in the CASE,
// LOWER(channel) five times). CompileShared compiles such expressions together so that
// a deterministic named function called with the same arguments in several places is
// computed at most once per row. The value is kept in the row itself, in memo slots
// after its columns, so evaluators still hold no per-row state: the caller evaluates
// over a copy of each row extended by MemoWidth slots, cleared before each row. A
// shared call is still evaluated lazily, when the first expression that needs it gets
// there, so a call in a CASE branch that no row takes is never made, and one that
// fails fails where it would without sharing (its error is not kept).

// Shared is expressions compiled together over rows of Width columns.
type Shared struct {
	Evals []Evaluator // one per expression, over extended rows
	Width int         // the columns of the input rows
	// MemoWidth is how many slots the evaluators need after the row's columns: two per
	// shared call (a flag, NULL until computed, and the value). 0: rows need no
	// extension.
	MemoWidth int
}

// CompileShared compiles exprs over rows of width columns, sharing repeated calls.
func CompileShared(exprs []planner.Expr, width int, env Env) (*Shared, error) {
	counts := map[string]int{}
	for _, e := range exprs {
		countCalls(e, counts)
	}
	c := newCompiler(env)
	c.memo = map[string]int{}
	for key, n := range counts {
		if n > 1 {
			c.memo[key] = width + 2*len(c.memo)
		}
	}
	s := &Shared{Width: width, MemoWidth: 2 * len(c.memo)}
	for _, e := range exprs {
		n, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		s.Evals = append(s.Evals, n.eval)
	}
	return s, nil
}

// countCalls counts the shareable calls of e, by their text.
func countCalls(e planner.Expr, counts map[string]int) {
	switch e := e.(type) {
	case *planner.Call:
		if shareable(e) {
			counts[e.String()]++
		}
		for _, a := range e.Args {
			countCalls(a, counts)
		}
	case *planner.Cast:
		countCalls(e.X, counts)
	case *planner.Case:
		for _, w := range e.Whens {
			countCalls(w.Cond, counts)
			countCalls(w.Result, counts)
		}
		if e.Else != nil {
			countCalls(e.Else, counts)
		}
	case *planner.In:
		countCalls(e.X, counts)
		for _, x := range e.List {
			countCalls(x, counts)
		}
	}
}

// shareable is true for a call worth computing once: a deterministic named function
// (LOWER, REGEXP_EXTRACT, DATE_FORMAT ...), not an operator or a control form, which
// cost less than a memo slot.
func shareable(e *planner.Call) bool {
	if e.Func == "" || e.Func[0] < 'A' || e.Func[0] > 'Z' && e.Func[0] < 'a' || e.Func[0] > 'z' {
		return false
	}
	switch strings.ToUpper(e.Func) {
	case "AND", "OR", "NOT", "IF", "COALESCE", "IFNULL", "CURRENT_WATERMARK":
		return false
	}
	if strings.HasPrefix(strings.ToUpper(e.Func), "IS ") {
		return false
	}
	f, ok := funcs.Lookup(e.Func)
	return ok && f.Deterministic
}

// memoized wraps the evaluator of a shared call: the first use in a row computes it
// into the row's memo slots (flag at slot, value after it), later ones read it.
func memoized(ev Evaluator, slot int) Evaluator {
	return func(row types.Row) (types.Value, error) {
		if !row[slot].IsNull() {
			return row[slot+1], nil
		}
		v, err := ev(row)
		if err != nil {
			return v, err
		}
		row[slot], row[slot+1] = trueVal, v
		return v, nil
	}
}
