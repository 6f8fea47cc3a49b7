package funcs

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// requiredLiteral returns a string every match of pattern contains (the longest literal
// among the parts of its top-level sequence), or "" when there is none to rely on. A
// string without it cannot match, so the matcher need not run: Nexmark q21's
// REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) on urls without "channel_id=".
func requiredLiteral(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	best := ""
	for _, p := range parts {
		for p.Op == syntax.OpCapture && len(p.Sub) == 1 {
			p = p.Sub[0]
		}
		// U+FFFD also matches an invalid byte of the input, which Contains would miss.
		if p.Op == syntax.OpLiteral && p.Flags&syntax.FoldCase == 0 && !strings.ContainsRune(string(p.Rune), utf8.RuneError) {
			if s := string(p.Rune); len(s) > len(best) {
				best = s
			}
		}
	}
	return best
}

// mayMatch reports whether s can match a pattern whose required literal is lit.
func mayMatch(s, lit string) bool { return lit == "" || strings.Contains(s, lit) }
