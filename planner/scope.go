package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// winProp marks the columns a window table function adds, so that GROUP BY window_start,
// window_end can be recognised as a window aggregation even after renaming.
type winProp int

const (
	noWinProp winProp = iota
	winStart
	winEnd
	winTime
)

var winPropNames = [...]string{"", "window_start", "window_end", "window_time"}

// scopeCol is one column visible to expressions.
type scopeCol struct {
	name  string
	quals []string // the table names and aliases that qualify it (t.col)
	t     types.Type
	win   winProp
	tvf   *windowInfo // the window function that made a window column
}

// scope is the columns an expression may reference: the output of a FROM clause.
type scope struct {
	cols []scopeCol
}

func (s *scope) schema() types.Schema {
	out := make(types.Schema, len(s.cols))
	for i, c := range s.cols {
		out[i] = types.Column{Name: c.name, Type: c.t}
	}
	return out
}

func (s *scope) names() []string {
	out := make([]string, len(s.cols))
	for i, c := range s.cols {
		out[i] = c.name
	}
	return out
}

// requalify returns the scope with every column answering to quals only.
func (s *scope) requalify(quals ...string) *scope {
	out := &scope{cols: make([]scopeCol, len(s.cols))}
	for i, c := range s.cols {
		c.quals = quals
		out.cols[i] = c
	}
	return out
}

func hasQual(c scopeCol, q string) bool {
	for _, x := range c.quals {
		if strings.EqualFold(x, q) {
			return true
		}
	}
	return false
}

// resolve finds the column an identifier names: col or qualifier.col. Names compare
// case-insensitively, an exact match winning, as types.Schema.Index does.
func (s *scope) resolve(id *parser.Ident) (int, error) {
	parts := id.Parts
	full := strings.Join(parts, ".")
	var qual, name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		qual, name = parts[0], parts[1]
		known := false
		for _, c := range s.cols {
			if hasQual(c, qual) {
				known = true
				break
			}
		}
		if !known {
			for _, c := range s.cols {
				if strings.EqualFold(c.name, qual) {
					return 0, errAt(id.At, ErrUnsupported, "unsupported: field access '%s' on column '%s'", full, c.name)
				}
			}
			return 0, errAt(id.At, ErrUnknownTable, "unknown table '%s' in column reference '%s'%s", qual, full, didYouMean(qual, s.quals()))
		}
	default:
		return 0, errAt(id.At, ErrUnsupported, "unsupported: column reference '%s' (write col or table.col)", full)
	}
	match := func(exact bool) []int {
		var hits []int
		for i, c := range s.cols {
			if qual != "" && !hasQual(c, qual) {
				continue
			}
			if (exact && c.name == name) || (!exact && strings.EqualFold(c.name, name)) {
				hits = append(hits, i)
			}
		}
		return hits
	}
	hits := match(true)
	if len(hits) == 0 {
		hits = match(false)
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return 0, errAt(id.At, ErrUnknownColumn, "unknown column '%s'%s", full, didYouMean(name, s.names()))
	}
	return 0, errAt(id.At, ErrAmbiguousColumn, "column '%s' is ambiguous", full)
}

func (s *scope) quals() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range s.cols {
		for _, q := range c.quals {
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}
