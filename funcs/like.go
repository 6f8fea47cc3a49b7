package funcs

import (
	"strings"
	"unicode/utf8"
)

// likeMatcher is a compiled SQL LIKE pattern: % matches any run of characters, _ any one
// character but a line terminator (Flink turns _ into Java regex '.'), an escape
// character makes the next %, _ or escape literal.
type likeMatcher struct {
	toks []likeTok
	// Fast forms for patterns without _: exact, prefix%, %suffix, %infix%.
	kind likeKind
	lit  string
}

type likeKind uint8

const (
	likeGeneral likeKind = iota
	likeExact
	likePrefix
	likeSuffix
	likeContains
	likeAll
)

type likeTok struct {
	any  bool   // %
	one  bool   // _
	text string // a literal run
}

func compileLike(pattern, escape string, hasEscape bool) (*likeMatcher, error) {
	var esc rune = -1
	if hasEscape {
		if utf8.RuneCountInString(escape) != 1 {
			return nil, invalidArg("LIKE escape must be one character, got %q", escape)
		}
		esc, _ = utf8.DecodeRuneInString(escape)
	}
	m := &likeMatcher{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			m.toks = append(m.toks, likeTok{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		r, size := utf8.DecodeRuneInString(pattern[i:])
		i += size
		switch {
		case r == esc:
			next, nsize := utf8.DecodeRuneInString(pattern[i:])
			if i >= len(pattern) || (next != '_' && next != '%' && next != esc) {
				return nil, invalidArg("invalid escape sequence in LIKE pattern %q at %d", pattern, i-size)
			}
			lit.WriteRune(next)
			i += nsize
		case r == '%':
			flush()
			if n := len(m.toks); n == 0 || !m.toks[n-1].any {
				m.toks = append(m.toks, likeTok{any: true})
			}
		case r == '_':
			flush()
			m.toks = append(m.toks, likeTok{one: true})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	m.classify()
	return m, nil
}

func (m *likeMatcher) classify() {
	t := m.toks
	isText := func(i int) bool { return i < len(t) && !t[i].any && !t[i].one }
	switch {
	case len(t) == 0:
		m.kind = likeExact
	case len(t) == 1 && t[0].any:
		m.kind = likeAll
	case len(t) == 1 && isText(0):
		m.kind, m.lit = likeExact, t[0].text
	case len(t) == 2 && isText(0) && t[1].any:
		m.kind, m.lit = likePrefix, t[0].text
	case len(t) == 2 && t[0].any && isText(1):
		m.kind, m.lit = likeSuffix, t[1].text
	case len(t) == 3 && t[0].any && isText(1) && t[2].any:
		m.kind, m.lit = likeContains, t[1].text
	}
}

func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029'
}

func (m *likeMatcher) match(s string) bool {
	switch m.kind {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(s, m.lit)
	case likeContains:
		return strings.Contains(s, m.lit)
	case likeAll:
		return true
	}
	// Greedy matching that backtracks to the last %: each % is retried one character
	// further on, which is enough because a later % can absorb anything an earlier one
	// gives up.
	toks := m.toks
	ti, si := 0, 0
	starTi, starSi := -1, 0
	for {
		if ti < len(toks) {
			t := toks[ti]
			switch {
			case t.any:
				if ti == len(toks)-1 {
					return true
				}
				starTi, starSi = ti, si
				ti++
				continue
			case t.one:
				if si < len(s) {
					r, size := utf8.DecodeRuneInString(s[si:])
					if !isLineTerminator(r) {
						si += size
						ti++
						continue
					}
				}
			default:
				if strings.HasPrefix(s[si:], t.text) {
					si += len(t.text)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starTi < 0 || starSi >= len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[starSi:])
		starSi += size
		ti, si = starTi+1, starSi
	}
}

// MatchLike returns whether a string matches the SQL LIKE pattern (% and _, escaped
// by a backslash), as SHOW TABLES ... LIKE filters names.
func MatchLike(pattern string) (func(string) bool, error) {
	m, err := compileLike(pattern, `\`, true)
	if err != nil {
		return nil, err
	}
	return m.match, nil
}
