package planner

import (
	"github.com/pipesql/pipesql/types"
)

// rewrite returns e with every sub-expression replaced by f's result, bottom-up: f sees
// nodes whose children were already rewritten. f returns its argument to keep a node.
// e itself is never modified, so bound expressions can be shared between plans.
func rewrite(e Expr, f func(Expr) Expr) Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case *Call:
		args := make([]Expr, len(x.Args))
		for i, a := range x.Args {
			args[i] = rewrite(a, f)
		}
		return f(&Call{Func: x.Func, Args: args, T: x.T})
	case *Cast:
		return f(&Cast{X: rewrite(x.X, f), T: x.T, Try: x.Try})
	case *Case:
		c := &Case{T: x.T, Whens: make([]CaseWhen, len(x.Whens))}
		for i, w := range x.Whens {
			c.Whens[i] = CaseWhen{Cond: rewrite(w.Cond, f), Result: rewrite(w.Result, f)}
		}
		c.Else = rewrite(x.Else, f)
		return f(c)
	case *In:
		in := &In{X: rewrite(x.X, f), Not: x.Not, List: make([]Expr, len(x.List))}
		for i, a := range x.List {
			in.List[i] = rewrite(a, f)
		}
		return f(in)
	}
	return f(e)
}

// visit calls f on e and every sub-expression, parents first.
func visit(e Expr, f func(Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch x := e.(type) {
	case *Call:
		for _, a := range x.Args {
			visit(a, f)
		}
	case *Cast:
		visit(x.X, f)
	case *Case:
		for _, w := range x.Whens {
			visit(w.Cond, f)
			visit(w.Result, f)
		}
		visit(x.Else, f)
	case *In:
		visit(x.X, f)
		for _, a := range x.List {
			visit(a, f)
		}
	}
}

// markUsed sets used[i] for every column e reads.
func markUsed(e Expr, used []bool) {
	visit(e, func(x Expr) {
		if c, ok := x.(*ColumnRef); ok {
			used[c.Index] = true
		}
	})
}

// hasColumnRefs reports whether e reads any column.
func hasColumnRefs(e Expr) bool {
	found := false
	visit(e, func(x Expr) {
		if _, ok := x.(*ColumnRef); ok {
			found = true
		}
	})
	return found
}

// remap renumbers the columns e reads: column i becomes newIndex[i].
func remap(e Expr, newIndex []int) Expr {
	return rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok {
			return &ColumnRef{Index: newIndex[c.Index], Name: c.Name, T: c.T}
		}
		return x
	})
}

// substitute replaces each column reference i in e by defs[i]: it inlines the
// projections of the node below into an expression over that node's output.
func substitute(e Expr, defs []Expr) Expr {
	return rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok {
			return defs[c.Index]
		}
		return x
	})
}

// nonDeterministic names the functions whose result differs between two calls with the
// same arguments: an expression with one of them must not be duplicated when Calcs merge.
var nonDeterministic = map[string]bool{
	"RAND": true, "RAND_INTEGER": true, "UUID": true, "PROCTIME": true, "NOW": true,
	"CURRENT_TIMESTAMP": true, "LOCALTIMESTAMP": true, "CURRENT_ROW_TIMESTAMP": true,
	"CURRENT_TIME": true, "LOCALTIME": true, "CURRENT_DATE": true, "UNIX_TIMESTAMP": true,
	"CURRENT_WATERMARK": true,
}

func isDeterministic(e Expr) bool {
	ok := true
	visit(e, func(x Expr) {
		if c, isCall := x.(*Call); isCall && nonDeterministic[c.Func] {
			// UNIX_TIMESTAMP with arguments parses its argument; without, it reads the clock.
			if c.Func != "UNIX_TIMESTAMP" || len(c.Args) == 0 {
				ok = false
			}
		}
	})
	return ok
}

// isTrivial reports whether an expression costs nothing to repeat.
func isTrivial(e Expr) bool {
	switch e.(type) {
	case *ColumnRef, *Literal:
		return true
	}
	return false
}

// and combines two filter conditions; either may be nil.
func and(a, b Expr) Expr {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	t := types.TypeBoolean.WithNotNull(a.Type().NotNull && b.Type().NotNull)
	return &Call{Func: "AND", Args: []Expr{a, b}, T: t}
}

// schemaOf returns the columns of exprs named names.
func schemaOf(exprs []Expr, names []string) types.Schema {
	s := make(types.Schema, len(exprs))
	for i, e := range exprs {
		s[i] = types.Column{Name: names[i], Type: e.Type()}
	}
	return s
}

// refsTo returns column references to every column of s.
func refsTo(s types.Schema) []Expr {
	refs := make([]Expr, len(s))
	for i, c := range s {
		refs[i] = &ColumnRef{Index: i, Name: c.Name, T: c.Type}
	}
	return refs
}
