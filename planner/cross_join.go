package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
)

// Lists of tables in FROM and CROSS JOIN
//
// FROM a, b WHERE a.k = b.k AND ... (or FROM a CROSS JOIN b WHERE ...) is a join whose
// condition is in WHERE. Flink's optimizer pushes the conjuncts of WHERE that read both
// sides into the join (FlinkFilterJoinRule), so the join is planned from them as if they
// were its ON condition: a regular Join by the equalities, an IntervalJoin when they bound
// the time attributes, a WindowJoin over window table functions on both sides, a temporal
// join for FOR SYSTEM_TIME AS OF. pipesql does the same by rewriting the FROM before it is
// planned: the tables of a chain of cross joins are joined left to right, and each join
// takes as its ON condition the conjuncts of WHERE that read its right table and a table
// before it (and no later one). The other conjuncts stay in WHERE. A join that gets no
// conjunct stays a cross join, which pipesql refuses (Flink runs one on a single task;
// pipesql runs equi-joins only).

// joinWhere returns from with the conjuncts of where that join its tables moved into
// ON conditions, and the rest of where (nil when nothing is left).
func (p *planner) joinWhere(from parser.TableExpr, where parser.Expr, env *cteEnv) (parser.TableExpr, parser.Expr, error) {
	if from == nil || where == nil || !hasCrossJoin(from) {
		return from, where, nil
	}
	conds := conjuncts(where)
	used := make([]bool, len(conds))
	out, err := p.attachWhere(from, conds, used, env)
	if err != nil {
		return nil, nil, err
	}
	var rest []parser.Expr
	for i, c := range conds {
		if !used[i] {
			rest = append(rest, c)
		}
	}
	return out, andAll(rest), nil
}

// hasCrossJoin reports whether te is a cross join (not of UNNEST), or has one on its
// left spine.
func hasCrossJoin(te parser.TableExpr) bool {
	j, ok := te.(*parser.Join)
	if !ok {
		return false
	}
	return isCross(j) || hasCrossJoin(j.Left)
}

// isCross reports whether j is a cross join of tables (not CROSS JOIN UNNEST).
func isCross(j *parser.Join) bool {
	_, unnest := j.Right.(*parser.Unnest)
	return !unnest && strings.EqualFold(j.Kind, "CROSS")
}

// attachWhere rewrites the cross joins of te; used marks the conjuncts moved into one.
func (p *planner) attachWhere(te parser.TableExpr, conds []parser.Expr, used []bool, env *cteEnv) (parser.TableExpr, error) {
	j, ok := te.(*parser.Join)
	if !ok {
		return te, nil
	}
	if !isCross(j) {
		left, err := p.attachWhere(j.Left, conds, used, env)
		if err != nil {
			return nil, err
		}
		out := *j
		out.Left = left
		return &out, nil
	}
	// The chain ((t0 x t1) x t2) ...: its tables, left to right.
	var tables []parser.TableExpr
	for x := te; ; {
		cj, ok := x.(*parser.Join)
		if !ok || !isCross(cj) {
			tables = append(tables, x)
			break
		}
		tables = append(tables, cj.Right)
		x = cj.Left
	}
	for i, k := 0, len(tables)-1; i < k; i, k = i+1, k-1 {
		tables[i], tables[k] = tables[k], tables[i]
	}
	first, err := p.attachWhere(tables[0], conds, used, env)
	if err != nil {
		return nil, err
	}
	tables[0] = first
	// Each table's columns in the scope of the whole chain, to see which tables a
	// conjunct reads.
	all := &scope{}
	var owner []int // owner[i] is the table of column i
	for t, x := range tables {
		s, err := p.fromScope(x, env)
		if err != nil {
			return nil, err
		}
		all.cols = append(all.cols, s.cols...)
		for range s.cols {
			owner = append(owner, t)
		}
	}
	on := make([][]parser.Expr, len(tables))
	for i, c := range conds {
		if used[i] {
			continue
		}
		x, err := (&binder{scope: all, clause: "WHERE"}).bind(c)
		if err != nil {
			continue // the WHERE clause reports it (or plans it: a subquery)
		}
		lo, hi := len(tables), -1
		visit(x, func(e Expr) {
			if ref, ok := e.(*ColumnRef); ok {
				lo, hi = min(lo, owner[ref.Index]), max(hi, owner[ref.Index])
			}
		})
		if lo < hi {
			on[hi] = append(on[hi], c)
			used[i] = true
		}
	}
	out := tables[0]
	for t := 1; t < len(tables); t++ {
		j := &parser.Join{At: out.Pos(), Kind: "CROSS", Left: out, Right: tables[t]}
		if len(on[t]) > 0 {
			j.Kind, j.On = "INNER", andAll(on[t])
		}
		out = j
	}
	return out, nil
}

// fromScope is the scope of a FROM item: the columns it shows, by their qualifiers.
func (p *planner) fromScope(te parser.TableExpr, env *cteEnv) (*scope, error) {
	if tn, ok := te.(*parser.TableName); ok && tn.AsOf != nil {
		plain := *tn
		plain.AsOf = nil // its columns: the temporal join plans it as what it is
		te = &plain
	}
	rel, err := p.planFrom(te, env)
	if err != nil {
		return nil, err
	}
	return rel.scope, nil
}

// withJoinWhere returns sel with joinWhere applied to its FROM and WHERE (sel itself when
// nothing moves).
func (p *planner) withJoinWhere(sel *parser.Select, env *cteEnv) (*parser.Select, error) {
	from, where, err := p.joinWhere(sel.From, sel.Where, env)
	if err != nil || from == sel.From {
		return sel, err
	}
	out := *sel
	out.From, out.Where = from, where
	return &out, nil
}
