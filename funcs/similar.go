package funcs

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pipesql/pipesql/types"
)

// SIMILAR TO, as Calcite (and so Flink) defines it: SQL LIKE's % and _, with the regular
// expression operators | * + ? {m,n} ( ) and [...] character classes, matched against the
// whole string. Every other character is literal; an escape character makes the next one
// literal.

func init() {
	for _, op := range []string{"SIMILAR TO", "NOT SIMILAR TO"} {
		not := op == "NOT SIMILAR TO"
		def(op, 2, 3, sig{params: []param{pString}, ret: retType(types.TypeBoolean)}, "string "+op+" pattern [ESCAPE char]",
			"pattern match: LIKE's % and _ with | * + ? {m,n} ( ) and [...] of regular expressions, over the whole string",
			Func{operator: true, prepare: func(_ *Context, site Site) (Kernel, error) { return similarPrepare(site, not) }})
	}
}

func similarPrepare(site Site, not bool) (Kernel, error) {
	test := func(re *regexp.Regexp, s string) types.Value { return types.BoolValue(re.MatchString(s) != not) }
	pat, patConst := site.constant(1)
	esc, escConst := site.constant(2)
	hasEsc := len(site.Args) > 2
	if patConst && !pat.IsNull() && (!hasEsc || escConst && !esc.IsNull()) {
		re, err := compileSimilar(pat.Str(), esc.Str(), hasEsc)
		if err != nil {
			return Kernel{}, err
		}
		return Kernel{
			Call2: func(s, _ types.Value) (types.Value, error) { return test(re, s.Str()), nil },
			Call:  func(a []types.Value) (types.Value, error) { return test(re, a[0].Str()), nil },
		}, nil
	}
	return Kernel{Call: func(a []types.Value) (types.Value, error) {
		escape := ""
		if len(a) > 2 {
			escape = a[2].Str()
		}
		re, err := compileSimilar(a[1].Str(), escape, len(a) > 2)
		if err != nil {
			return types.NullValue, err
		}
		return test(re, a[0].Str()), nil
	}}, nil
}

// compileSimilar translates a SIMILAR TO pattern into an anchored regular expression.
func compileSimilar(pattern, escape string, hasEscape bool) (*regexp.Regexp, error) {
	var esc rune = -1
	if hasEscape {
		if utf8.RuneCountInString(escape) != 1 {
			return nil, invalidArg("SIMILAR TO escape must be one character, got %q", escape)
		}
		esc, _ = utf8.DecodeRuneInString(escape)
	}
	var b strings.Builder
	b.WriteString(`^(?s:`)
	inClass := false
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc:
			if i+1 == len(rs) {
				return nil, invalidArg("SIMILAR TO pattern %q ends with its escape character", pattern)
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case inClass:
			switch r {
			case ']':
				inClass = false
				b.WriteRune(r)
			case '\\', '[':
				b.WriteString(`\` + string(r))
			default:
				b.WriteRune(r) // ranges a-z and ^ after [ keep their meaning
			}
		case r == '[':
			inClass = true
			b.WriteRune(r)
		case r == '%':
			b.WriteString(`.*`)
		case r == '_':
			b.WriteString(`.`)
		case strings.ContainsRune("|*+?{}()", r):
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if inClass {
		return nil, invalidArg("SIMILAR TO pattern %q has an unclosed [", pattern)
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, invalidArg("invalid SIMILAR TO pattern %q: %v", pattern, err)
	}
	return re, nil
}
