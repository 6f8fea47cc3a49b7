package funcs

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pipesql/pipesql/types"
)

// maxResultBytes bounds what REPEAT, LPAD and RPAD build, so that a typo in a length
// is an error rather than an attempt to allocate gigabytes.
const maxResultBytes = 64 << 20

var (
	strRet  = retType(types.TypeString)
	intRet  = retType(types.TypeInt)
	pStrInt = []param{pString, pInteger}
)

func str(s string) types.Value { return types.StringValue(s) }

// runeRange returns s from rune index start (0-based) to end (exclusive), clamped.
func runeRange(s string, start, end int) string {
	if start < 0 {
		start = 0
	}
	if end <= start {
		return ""
	}
	i, n := 0, 0
	for n < start && i < len(s) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	j := i
	for n < end && j < len(s) {
		_, size := utf8.DecodeRuneInString(s[j:])
		j += size
		n++
	}
	return s[i:j]
}

// substringSQL is Flink's SUBSTRING: 1-based, a negative start counts from the end, 0
// is the first character; a negative length is NULL.
func substringSQL(s string, pos, length int64) types.Value {
	if length < 0 {
		return types.NullValue
	}
	n := int64(utf8.RuneCountInString(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
		if start >= n {
			return str("")
		}
	case pos < 0:
		start = n + pos
		if start < 0 {
			return str("")
		}
	}
	end := n
	if n-start >= length {
		end = start + length
	}
	return str(runeRange(s, int(start), int(end)))
}

// trimChars removes the runes of set from the chosen ends of s.
func trimChars(s, set string, leading, trailing bool) string {
	in := func(r rune) bool { return strings.ContainsRune(set, r) }
	if leading {
		s = strings.TrimLeftFunc(s, in)
	}
	if trailing {
		s = strings.TrimRightFunc(s, in)
	}
	return s
}

// runeIndex is the 1-based character position of sub in s at or after character from
// (1-based), 0 when absent.
func runeIndex(s, sub string, from int64) int64 {
	if from < 1 {
		from = 1
	}
	offset := len(runeRange(s, 0, int(from-1)))
	if offset > len(s) || from-1 > int64(utf8.RuneCountInString(s)) {
		return 0
	}
	i := strings.Index(s[offset:], sub)
	if i < 0 {
		return 0
	}
	return from + int64(utf8.RuneCountInString(s[offset:offset+i]))
}

// pad is Flink's LPAD/RPAD: NULL for a negative length or empty pad, the string cut to
// length when longer.
func pad(s string, length int64, padding string, left bool) (types.Value, error) {
	if length < 0 || padding == "" {
		return types.NullValue, nil
	}
	if length > maxResultBytes {
		return types.NullValue, invalidArg("padded length %d is over the limit of %d characters", length, maxResultBytes)
	}
	n := int(length)
	rs := []rune(s)
	if len(rs) >= n {
		return str(string(rs[:n])), nil
	}
	pr := []rune(padding)
	fill := make([]rune, 0, n-len(rs))
	for len(fill) < n-len(rs) {
		fill = append(fill, pr[len(fill)%len(pr)])
	}
	if left {
		return str(string(fill) + s), nil
	}
	return str(s + string(fill)), nil
}

// initcap is Calcite's INITCAP: ASCII letters and digits form words; the first letter of
// a word is upper-cased, the rest lower-cased.
func initcap(s string) string {
	b := []byte(s)
	start := true
	for i, c := range b {
		isDigit := c >= '0' && c <= '9'
		isUpper := c >= 'A' && c <= 'Z'
		isLower := c >= 'a' && c <= 'z'
		switch {
		case start && isLower:
			b[i] = c - 32
			start = false
		case start && (isDigit || isUpper):
			start = false
		case !start && isUpper:
			b[i] = c + 32
		case !start && !isDigit && !isLower:
			start = true
		}
	}
	return string(b)
}

// javaHashCode is Java's String.hashCode over UTF-16 code units.
func javaHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// regexCache holds patterns that vary per row, so that a column of a few distinct
// patterns compiles each once.
var regexCache boundedCache[*regexp.Regexp]

func compileRegex(pattern string) (*regexp.Regexp, error) {
	return regexCache.get(pattern, func(p string) (*regexp.Regexp, error) {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, invalidArg("bad regular expression %q: %v", p, err)
		}
		return re, nil
	})
}

// regexArg compiles the regular expression argument i once when it is constant. A bad
// constant pattern is an error at bind time; a bad per-row pattern gives NULL, as in
// Flink, which logs and returns null.
func regexArg(site Site, i int) (func(types.Value) (*regexp.Regexp, bool), error) {
	if c, ok := site.constant(i); ok && !c.IsNull() {
		re, err := compileRegex(c.Str())
		if err != nil {
			return nil, err
		}
		return func(types.Value) (*regexp.Regexp, bool) { return re, true }, nil
	}
	return func(v types.Value) (*regexp.Regexp, bool) {
		re, err := compileRegex(v.Str())
		return re, err == nil
	}, nil
}

func digestFunc(name string, h func() hash.Hash, bits string) {
	def(name, 1, 1, sig{params: []param{pStrBytes}, ret: strRet}, name+"(string)",
		"the "+bits+" hash of string as "+fmt.Sprint(h().Size()*2)+" hexadecimal digits",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				d := h()
				d.Write([]byte(a.Str()))
				return str(hex.EncodeToString(d.Sum(nil))), nil
			}}, nil
		}})
}

// stringsOf returns how each argument of a site prints when a string function is given
// a non-string (pipesql is more lenient than Flink here and converts as CAST does).
func stringsOf(ctx *Context, site Site, n int) []func(types.Value) string {
	out := make([]func(types.Value) string, n)
	for i := range out {
		t := site.arg(i)
		if isStrKind(t.Kind) || t.Kind == types.Null {
			out[i] = types.Value.Str
		} else {
			out[i] = toStringFunc(t, ctx.loc())
		}
	}
	return out
}

func concatPrepare(ctx *Context, site Site) (Kernel, error) {
	conv := stringsOf(ctx, site, len(site.Args))
	k := Kernel{Call: func(a []types.Value) (types.Value, error) {
		var b strings.Builder
		for i, v := range a {
			b.WriteString(conv[min(i, len(conv)-1)](v))
		}
		return str(b.String()), nil
	}}
	if len(conv) == 2 {
		c0, c1 := conv[0], conv[1]
		k.Call2 = func(x, y types.Value) (types.Value, error) { return str(c0(x) + c1(y)), nil }
	}
	return k, nil
}

func init() {
	unaryStr := func(name, doc string, f func(string) string) {
		def(name, 1, 1, sig{params: []param{pString}, ret: retArg(0)}, name+"(string)", doc,
			Func{prepare: func(*Context, Site) (Kernel, error) {
				return Kernel{Call1: func(a types.Value) (types.Value, error) { return str(f(a.Str())), nil }}, nil
			}})
	}
	unaryStr("LOWER", "string in lower case", strings.ToLower)
	unaryStr("UPPER", "string in upper case", func(s string) string {
		u := strings.ToUpper(s)
		if strings.ContainsRune(u, 'ß') {
			u = strings.ReplaceAll(u, "ß", "SS") // as Java's toUpperCase
		}
		return u
	})
	unaryStr("INITCAP", "each word with its first letter in upper case and the rest in lower case", initcap)
	unaryStr("REVERSE", "string reversed", func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	})
	def("TRIM", 1, 1, sig{params: []param{pString}, ret: retArg(0)}, "TRIM([BOTH | LEADING | TRAILING] [chars FROM] string)",
		"string without leading and trailing spaces (or the given chars)",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) { return str(strings.Trim(a.Str(), " ")), nil }}, nil
		}})
	for _, t := range []struct {
		name              string
		leading, trailing bool
	}{{"TRIM_BOTH", true, true}, {"TRIM_LEADING", true, false}, {"TRIM_TRAILING", false, true}} {
		leading, trailing := t.leading, t.trailing
		def(t.name, 2, 2, sig{params: []param{pString, pString}, ret: retArg(1)}, t.name+"(chars, string)",
			"TRIM("+strings.TrimPrefix(t.name, "TRIM_")+" chars FROM string): string without the given characters at its ends",
			Func{prepare: func(*Context, Site) (Kernel, error) {
				return Kernel{Call2: func(chars, s types.Value) (types.Value, error) {
					return str(trimChars(s.Str(), chars.Str(), leading, trailing)), nil
				}}, nil
			}})
	}
	for _, t := range []struct {
		name              string
		leading, trailing bool
	}{{"LTRIM", true, false}, {"RTRIM", false, true}} {
		leading, trailing := t.leading, t.trailing
		def(t.name, 1, 2, sig{params: []param{pString, pString}, ret: retArg(0)}, t.name+"(string[, chars])",
			"string without spaces (or the given chars) at its "+map[bool]string{true: "start", false: "end"}[leading],
			Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
				set := " "
				if len(a) > 1 {
					set = a[1].Str()
				}
				return str(trimChars(a[0].Str(), set, leading, trailing)), nil
			}})
	}
	cl := def("CHAR_LENGTH", 1, 1, sig{params: []param{pString}, ret: intRet}, "CHAR_LENGTH(string)",
		"the number of characters in string", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				return types.IntValue(types.Int, int64(utf8.RuneCountInString(a.Str()))), nil
			}}, nil
		}})
	alias("CHARACTER_LENGTH", cl)

	def("CONCAT", 1, -1, sig{params: []param{pAny}, ret: strRet}, "CONCAT(string1, string2, ...)",
		"the arguments joined; NULL if any is NULL", Func{prepare: concatPrepare})
	def("||", 2, 2, sig{params: []param{pAny}, ret: strRet}, "string1 || string2",
		"concatenation; NULL if either is NULL", Func{operator: true, prepare: concatPrepare})
	def("CONCAT_WS", 2, -1, sig{params: []param{pAny}, ret: strRet, ownNull: true}, "CONCAT_WS(separator, string1, string2, ...)",
		"the arguments joined by separator, skipping NULL arguments; NULL if separator is NULL",
		Func{nullSafe: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			conv := stringsOf(ctx, site, len(site.Args))
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				if a[0].IsNull() {
					return types.NullValue, nil
				}
				sep := conv[0](a[0])
				var b strings.Builder
				first := true
				for i, v := range a[1:] {
					if v.IsNull() {
						continue
					}
					if !first {
						b.WriteString(sep)
					}
					first = false
					b.WriteString(conv[min(i+1, len(conv)-1)](v))
				}
				return str(b.String()), nil
			}}, nil
		}})

	sub := def("SUBSTRING", 2, 3, sig{params: []param{pString, pInteger}, ret: strRet, mayBeNull: true}, "SUBSTRING(string, start[, length])",
		"length characters of string from 1-based position start (negative: from the end), to the end without length",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{
				Call2: func(s, start types.Value) (types.Value, error) {
					return substringSQL(s.Str(), start.Int(), math.MaxInt32), nil
				},
				Call: func(a []types.Value) (types.Value, error) {
					n := int64(math.MaxInt32)
					if len(a) > 2 {
						n = a[2].Int()
					}
					return substringSQL(a[0].Str(), a[1].Int(), n), nil
				},
			}, nil
		}})
	alias("SUBSTR", sub)

	def("REPLACE", 3, 3, sig{params: []param{pString}, ret: strRet}, "REPLACE(string, search, replacement)",
		"string with every occurrence of search replaced", Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			return str(strings.ReplaceAll(a[0].Str(), a[1].Str(), a[2].Str())), nil
		}})
	def("REPEAT", 2, 2, sig{params: pStrInt, ret: strRet}, "REPEAT(string, n)", "string repeated n times",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(s, n types.Value) (types.Value, error) {
				if n.Int() <= 0 {
					return str(""), nil
				}
				if n.Int() > maxResultBytes || int64(len(s.Str()))*n.Int() > maxResultBytes {
					return types.NullValue, invalidArg("REPEAT result longer than %d bytes", maxResultBytes)
				}
				return str(strings.Repeat(s.Str(), int(n.Int()))), nil
			}}, nil
		}})
	def("LEFT", 2, 2, sig{params: pStrInt, ret: strRet}, "LEFT(string, n)", "the first n characters of string",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(s, n types.Value) (types.Value, error) {
				return str(runeRange(s.Str(), 0, int(min(n.Int(), math.MaxInt32)))), nil
			}}, nil
		}})
	def("RIGHT", 2, 2, sig{params: pStrInt, ret: strRet}, "RIGHT(string, n)", "the last n characters of string",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(s, n types.Value) (types.Value, error) {
				count := int64(utf8.RuneCountInString(s.Str()))
				if n.Int() <= 0 {
					return str(""), nil
				}
				return str(runeRange(s.Str(), int(max(count-n.Int(), 0)), int(count))), nil
			}}, nil
		}})
	for _, p := range []struct {
		name string
		left bool
	}{{"LPAD", true}, {"RPAD", false}} {
		left := p.left
		def(p.name, 3, 3, sig{params: []param{pString, pInteger, pString}, ret: strRet, mayBeNull: true}, p.name+"(string, length, pad)",
			"string padded with pad on the "+map[bool]string{true: "left", false: "right"}[left]+" (or cut) to length characters",
			Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
				return pad(a[0].Str(), a[1].Int(), a[2].Str(), left)
			}})
	}
	def("POSITION", 2, 2, sig{params: []param{pString}, ret: intRet}, "POSITION(string1 IN string2)",
		"1-based position of string1 in string2, 0 if absent", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(sub, s types.Value) (types.Value, error) {
				return types.IntValue(types.Int, runeIndex(s.Str(), sub.Str(), 1)), nil
			}}, nil
		}})
	def("LOCATE", 2, 3, sig{params: []param{pString, pString, pInteger}, ret: intRet}, "LOCATE(string1, string2[, start])",
		"1-based position of string1 in string2 at or after start, 0 if absent",
		Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			from := int64(1)
			if len(a) > 2 {
				from = a[2].Int()
			}
			return types.IntValue(types.Int, runeIndex(a[1].Str(), a[0].Str(), from)), nil
		}})
	def("INSTR", 2, 2, sig{params: []param{pString}, ret: intRet}, "INSTR(string1, string2)",
		"1-based position of string2 in string1, 0 if absent", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(s, sub types.Value) (types.Value, error) {
				return types.IntValue(types.Int, runeIndex(s.Str(), sub.Str(), 1)), nil
			}}, nil
		}})
	def("SPLIT_INDEX", 3, 3, sig{params: []param{pString, kinds("a STRING or a character code",
		types.Char, types.Varchar, types.TinyInt, types.SmallInt, types.Int, types.BigInt), pInteger}, ret: strRet, mayBeNull: true},
		"SPLIT_INDEX(string, separator, index)",
		"the 0-based index-th part of string split by separator; NULL when there is no such part",
		Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			s, idx := a[0].Str(), a[2].Int()
			var sep string
			if isIntKind(a[1].Kind()) {
				c := a[1].Int()
				if c < 1 || c > 255 {
					return types.NullValue, nil
				}
				sep = string(rune(c))
			} else if sep = a[1].Str(); sep == "" {
				sep = " "
			}
			if idx < 0 || s == "" {
				return types.NullValue, nil
			}
			parts := strings.SplitN(s, sep, int(min(idx+2, math.MaxInt32)))
			if idx >= int64(len(parts)) {
				return types.NullValue, nil
			}
			return str(parts[idx]), nil
		}})

	def("REGEXP_EXTRACT", 2, 3, sig{params: []param{pString, pString, pInteger}, ret: strRet, mayBeNull: true},
		"REGEXP_EXTRACT(string, regex[, group])",
		"group (default 0, the whole match) of the first match of regex in string; NULL without a match",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			re, err := regexArg(site, 1)
			if err != nil {
				return Kernel{}, err
			}
			lit := "" // a constant pattern's required literal: without it, no match
			if c, ok := site.constant(1); ok && !c.IsNull() {
				lit = requiredLiteral(c.Str())
			}
			extract := func(s, pat types.Value, group int64) (types.Value, error) {
				if !mayMatch(s.Str(), lit) {
					return types.NullValue, nil
				}
				r, ok := re(pat)
				if !ok {
					return types.NullValue, nil
				}
				m := r.FindStringSubmatchIndex(s.Str())
				if m == nil || group < 0 || group > int64(r.NumSubexp()) || m[2*group] < 0 {
					return types.NullValue, nil
				}
				return str(s.Str()[m[2*group]:m[2*group+1]]), nil
			}
			return Kernel{
				Call2: func(s, pat types.Value) (types.Value, error) { return extract(s, pat, 0) },
				Call: func(a []types.Value) (types.Value, error) {
					g := int64(0)
					if len(a) > 2 {
						g = a[2].Int()
					}
					return extract(a[0], a[1], g)
				},
			}, nil
		}})
	def("REGEXP_REPLACE", 3, 3, sig{params: []param{pString}, ret: strRet, mayBeNull: true},
		"REGEXP_REPLACE(string, regex, replacement)",
		"string with every match of regex replaced by replacement, taken literally",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			re, err := regexArg(site, 1)
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				r, ok := re(a[1])
				if !ok {
					return types.NullValue, nil
				}
				// Flink quotes the replacement (Matcher.quoteReplacement): no $1 references.
				return str(r.ReplaceAllLiteralString(a[0].Str(), a[2].Str())), nil
			}}, nil
		}})
	def("REGEXP", 2, 2, sig{params: []param{pString}, ret: retType(types.TypeBoolean)}, "REGEXP(string, regex)",
		"TRUE if some substring of string matches regex", Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			re, err := regexArg(site, 1)
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call2: func(s, pat types.Value) (types.Value, error) {
				r, ok := re(pat)
				if !ok || pat.Str() == "" {
					return types.BoolValue(false), nil
				}
				return types.BoolValue(r.MatchString(s.Str())), nil
			}}, nil
		}})

	for _, op := range []string{"LIKE", "NOT LIKE"} {
		not := op == "NOT LIKE"
		def(op, 2, 3, sig{params: []param{pString}, ret: retType(types.TypeBoolean)}, "string "+op+" pattern [ESCAPE char]",
			"pattern match: % is any characters, _ one character", Func{operator: true, prepare: func(_ *Context, site Site) (Kernel, error) {
				return likePrepare(site, not)
			}})
	}

	digestFunc("MD5", md5.New, "MD5")
	digestFunc("SHA1", sha1.New, "SHA-1")
	digestFunc("SHA224", sha256.New224, "SHA-224")
	digestFunc("SHA256", sha256.New, "SHA-256")
	digestFunc("SHA384", sha512.New384, "SHA-384")
	digestFunc("SHA512", sha512.New, "SHA-512")
	def("SHA2", 2, 2, sig{params: []param{pStrBytes, pInteger}, ret: strRet, mayBeNull: true}, "SHA2(string, bits)",
		"the SHA-2 hash (bits 224, 256, 384 or 512) of string in hexadecimal",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(s, bits types.Value) (types.Value, error) {
				var h hash.Hash
				switch bits.Int() {
				case 224:
					h = sha256.New224()
				case 256:
					h = sha256.New()
				case 384:
					h = sha512.New384()
				case 512:
					h = sha512.New()
				default:
					return types.NullValue, nil
				}
				h.Write([]byte(s.Str()))
				return str(hex.EncodeToString(h.Sum(nil))), nil
			}}, nil
		}})
	def("HASH_CODE", 1, 1, sig{params: []param{pString}, ret: retType(types.TypeInt.WithNotNull(true)), ownNull: true},
		"HASH_CODE(string)", "the absolute value of Java's String.hashCode of string; -2147483648 for NULL",
		Func{nullSafe: true, prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				if a.IsNull() {
					return types.IntValue(types.Int, math.MinInt32), nil
				}
				h := javaHashCode(a.Str())
				if h < 0 {
					h = -h // Math.abs: MIN_VALUE stays negative
				}
				return types.IntValue(types.Int, int64(h)), nil
			}}, nil
		}})
	def("TO_BASE64", 1, 1, sig{params: []param{pStrBytes}, ret: strRet}, "TO_BASE64(string)",
		"string's bytes in base64", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				return str(base64.StdEncoding.EncodeToString([]byte(a.Str()))), nil
			}}, nil
		}})
	def("FROM_BASE64", 1, 1, sig{params: []param{pStrBytes}, ret: strRet}, "FROM_BASE64(string)",
		"base64 decoded", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				b, err := base64.StdEncoding.DecodeString(a.Str())
				if err != nil {
					return types.NullValue, invalidArg("FROM_BASE64: %v", err)
				}
				return str(string(b)), nil
			}}, nil
		}})
	def("ASCII", 1, 1, sig{params: []param{pString}, ret: intRet}, "ASCII(string)",
		"the code of the first character of string, 0 for an empty string",
		Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				r, _ := utf8.DecodeRuneInString(a.Str())
				if a.Str() == "" {
					r = 0
				}
				return types.IntValue(types.Int, int64(r)), nil
			}}, nil
		}})
	def("CHR", 1, 1, sig{params: []param{pInteger}, ret: strRet}, "CHR(integer)",
		"the character whose code is integer modulo 256", Func{prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				if a.Int() < 0 {
					return str(""), nil
				}
				return str(string(rune(a.Int() & 0xFF))), nil
			}}, nil
		}})
	def("UUID", 0, 0, sig{ret: retType(types.TypeString.WithNotNull(true)), ownNull: true}, "UUID()",
		"a random (version 4) UUID", Func{volatile: true, Impl: func(*Context, []types.Value) (types.Value, error) {
			var u [16]byte
			if _, err := rand.Read(u[:]); err != nil {
				return types.NullValue, err
			}
			u[6] = u[6]&0x0f | 0x40
			u[8] = u[8]&0x3f | 0x80
			return str(fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])), nil
		}})
}

func likePrepare(site Site, not bool) (Kernel, error) {
	test := func(m *likeMatcher, s string) types.Value { return types.BoolValue(m.match(s) != not) }
	pat, patConst := site.constant(1)
	esc, escConst := site.constant(2)
	hasEsc := len(site.Args) > 2
	if patConst && !pat.IsNull() && (!hasEsc || escConst && !esc.IsNull()) {
		m, err := compileLike(pat.Str(), esc.Str(), hasEsc)
		if err != nil {
			return Kernel{}, err
		}
		return Kernel{
			Call2: func(s, _ types.Value) (types.Value, error) { return test(m, s.Str()), nil },
			Call:  func(a []types.Value) (types.Value, error) { return test(m, a[0].Str()), nil },
		}, nil
	}
	return Kernel{Call: func(a []types.Value) (types.Value, error) {
		escape := ""
		if len(a) > 2 {
			escape = a[2].Str()
		}
		m, err := compileLike(a[1].Str(), escape, len(a) > 2)
		if err != nil {
			return types.NullValue, err
		}
		return test(m, a[0].Str()), nil
	}}, nil
}
