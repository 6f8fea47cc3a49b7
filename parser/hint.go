package parser

// Hints
//
// Flink reads hints in two places: table hints right after a table name, in FROM or in
// INSERT INTO (OPTIONS('k' = 'v'), the dynamic table options that override or add to the
// table's WITH options for that one read or write), and query hints right after SELECT
// (the join hints, LOOKUP, STATE_TTL). pipesql runs OPTIONS and STATE_TTL (kept on the
// Select, applied by the planner to its joins) and refuses every other hint by name. The lexer keeps each /*+ ... */ as a token of its own, so a hint anywhere else
// is an error as well: no hint is ever dropped the way comments are.

import "github.com/pipesql/pipesql/config"

// queryHints are the hints Flink knows besides OPTIONS, with why pipesql refuses them.
var queryHints = []struct{ name, why string }{
	{"BROADCAST", "a join strategy hint: pipesql runs each join kind one way"},
	{"SHUFFLE_HASH", "a join strategy hint: pipesql runs each join kind one way"},
	{"SHUFFLE_MERGE", "a join strategy hint: pipesql runs each join kind one way"},
	{"NEST_LOOP", "a join strategy hint: pipesql runs each join kind one way"},
	{"LOOKUP", "a lookup join hint: set the lookup options in the table's WITH clause"},
	{"STATE_TTL", "a query hint: write it right after SELECT"},
}

// queryHint returns why pipesql refuses the query hint name, or false for an unknown name.
func queryHint(name string) (string, bool) {
	for _, h := range queryHints {
		if h.name == name {
			return h.why, true
		}
	}
	return "", false
}

// parseHint parses the items of the hint token t, NAME[(...)] [, ...]. After a table
// name (table true) it returns the 'key' = 'value' options of its OPTIONS items in the
// order written; every other item is an error at its name.
func (p *parser) parseHint(t token, table bool) ([]Option, error) {
	// The text between /*+ and */ starts three columns after the hint: /*+ holds no newline.
	inner := Pos{File: t.pos.File, Line: t.pos.Line, Col: t.pos.Col + 3, Offset: t.pos.Offset + 3}
	toks, err := lex(p.file, t.val, inner)
	if err != nil {
		return nil, err
	}
	q := newParser(p.file, toks)
	if q.peek().kind == tokEOF {
		return nil, syntaxErr(t.pos, "empty hint: expected a hint such as OPTIONS('key' = 'value')")
	}
	var opts []Option
	for {
		name := q.peek()
		if name.kind != tokWord {
			return nil, q.errExpected("a hint name")
		}
		q.i++
		switch why, known := queryHint(name.val); {
		case name.val == "OPTIONS" && table:
			list, err := q.parseOptions()
			if err != nil {
				return nil, err
			}
			if len(list) == 0 {
				return nil, syntaxErr(name.pos, "empty OPTIONS hint: expected 'key' = 'value'")
			}
			opts = append(opts, list...)
		case name.val == "OPTIONS":
			return nil, syntaxErr(name.pos, "OPTIONS is a table hint: write it right after the table name")
		case name.val == "STATE_TTL" && !table:
			list, err := q.parseOptions()
			if err != nil {
				return nil, err
			}
			if len(list) == 0 {
				return nil, syntaxErr(name.pos, "empty STATE_TTL hint: expected 'table or alias' = 'duration'")
			}
			opts = append(opts, list...)
		case known:
			return nil, unsupportedErr(name.pos, "unsupported: hint %s (%s)", name.val, why)
		default:
			return nil, unknownHint(name)
		}
		if q.acceptOp(",") {
			continue
		}
		if q.peek().kind != tokEOF {
			return nil, q.errExpected("','", "*/")
		}
		return opts, nil
	}
}

// parseTableHints parses the hints that follow a table name at p.i, if any.
func (p *parser) parseTableHints() ([]Option, error) {
	var opts []Option
	for p.peek().kind == tokHint {
		list, err := p.parseHint(p.next(), true)
		if err != nil {
			return nil, err
		}
		opts = append(opts, list...)
	}
	return opts, nil
}

// unknownHint names the closest hint Flink knows.
func unknownHint(t token) error {
	names := []string{"OPTIONS"}
	for _, h := range queryHints {
		names = append(names, h.name)
	}
	if best := config.Closest(t.val, names, 2); best != "" {
		return syntaxErr(t.pos, "unknown hint %s: did you mean %s?", t.text, best)
	}
	return syntaxErr(t.pos, "unknown hint %s: expected %s", t.text, orList(names))
}
