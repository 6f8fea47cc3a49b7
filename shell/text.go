package shell

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The shell looks at SQL text in two places the parser cannot help with, because the
// text there is unfinished: tab completion (where is the cursor: in code, in a string,
// after which words?) and history (one line that means what several lines meant). Both
// need only the lexical rules the parser's lexer follows: quotes double to escape
// themselves, -- comments end at the line's end, /* */ comments do not nest.

// tokenKind is the kind of a sqlToken.
type tokenKind int

const (
	wordToken   tokenKind = iota // a bare word: keyword or identifier, as typed
	quotedToken                  // a `quoted identifier`, unquoted
	stringToken                  // a 'string literal' or "double-quoted" text, unquoted
	opToken                      // punctuation and operators, one character each
)

// sqlToken is a token of the shell's light scan of SQL text.
type sqlToken struct {
	kind tokenKind
	text string
}

func (t sqlToken) is(word string) bool {
	return t.kind == wordToken && strings.EqualFold(t.text, word)
}

func (t sqlToken) isOp(op string) bool { return t.kind == opToken && t.text == op }

// scanEnd says what a text ends inside.
type scanEnd int

const (
	endCode         scanEnd = iota
	endString               // inside '...'
	endQuotedIdent          // inside `...`
	endDoubleQuoted         // inside "..."
	endComment              // inside a -- or /* */ comment
)

// scanSQL splits src into tokens, skipping whitespace and comments, and says what src
// ends inside. When it ends inside a quoted token, open is that token's text so far
// (unescaped) and it is not in toks.
func scanSQL(src string) (toks []sqlToken, end scanEnd, open string) {
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			nl := strings.IndexByte(src[i:], '\n')
			if nl < 0 {
				return toks, endComment, ""
			}
			i += nl + 1
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			close := strings.Index(src[i+2:], "*/")
			if close < 0 {
				return toks, endComment, ""
			}
			i += 2 + close + 2
		case c == '\'' || c == '`' || c == '"':
			text, n, closed := scanQuoted(src[i:])
			if !closed {
				return toks, map[byte]scanEnd{'\'': endString, '`': endQuotedIdent, '"': endDoubleQuoted}[c], text
			}
			kind := stringToken
			if c == '`' {
				kind = quotedToken
			}
			toks = append(toks, sqlToken{kind, text})
			i += n
		default:
			r, w := utf8.DecodeRuneInString(src[i:])
			switch {
			case unicode.IsSpace(r):
				i += w
			case isWordRune(r):
				j := i
				for j < len(src) {
					r, w := utf8.DecodeRuneInString(src[j:])
					if !isWordRune(r) {
						break
					}
					j += w
				}
				toks = append(toks, sqlToken{wordToken, src[i:j]})
				i = j
			default:
				toks = append(toks, sqlToken{opToken, src[i : i+w]})
				i += w
			}
		}
	}
	return toks, endCode, ""
}

// scanQuoted reads a token quoted by src[0], whose quote doubles to escape itself. It
// returns the text between the quotes, unescaped, how many bytes the token takes, and
// whether its closing quote was found.
func scanQuoted(src string) (text string, n int, closed bool) {
	q := src[0]
	var b strings.Builder
	i := 1
	for i < len(src) {
		if src[i] == q {
			if i+1 < len(src) && src[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(src[i])
		i++
	}
	return b.String(), i, false
}

func isWordRune(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// HistoryLine turns a statement typed over several lines into one line that means the
// same, for the history: a history file holds one entry per line, and an entry recalled
// with the up arrow is edited as one line. Line breaks and the indentation after them
// become one space; a -- comment becomes a /* */ comment, since the line it ended with
// is gone. A line break inside a quoted string cannot be kept and becomes a space too:
// the recalled statement then differs in that string, which is rare enough to accept.
func HistoryLine(src string) string {
	var b strings.Builder
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			text := strings.TrimSpace(src[i+2 : i+end])
			text = strings.NewReplacer("*/", "* /", "/*", "/ *").Replace(text)
			b.WriteString("/* " + text + " */")
			i += end
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			} else {
				end += 2
			}
			b.WriteString(oneLine(src[i : i+2+end]))
			i += 2 + end
		case c == '\'' || c == '`' || c == '"':
			_, n, _ := scanQuoted(src[i:])
			b.WriteString(oneLine(src[i : i+n]))
			i += n
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			j := i
			for j < len(src) && strings.IndexByte(" \t\r\n", src[j]) >= 0 {
				j++
			}
			if strings.ContainsAny(src[i:j], "\r\n") {
				b.WriteByte(' ')
			} else {
				b.WriteString(src[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return strings.TrimSpace(b.String())
}

// oneLine replaces the line breaks of s with spaces.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
