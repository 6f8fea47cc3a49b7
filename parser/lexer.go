package parser

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind says what a token is.
type tokKind uint8

const (
	tokEOF     tokKind = iota // end of the statement
	tokWord                   // unquoted identifier or keyword
	tokQuoted                 // `quoted identifier`
	tokString                 // 'string literal'
	tokDQuoted                // "double quoted": not valid Flink SQL, kept so that the error can say so
	tokNumber                 // 42, 3.14, 1e3, .5
	tokOp                     // punctuation and operators
	tokHint                   // /*+ hint */: val is the text between /*+ and */
	tokIllegal                // a character that starts no token
)

// token is one lexical token with its place in the script.
type token struct {
	kind tokKind
	text string // as written in the source
	val  string // words: upper case; quoted identifiers and strings: unescaped; others: text
	pos  Pos
	end  int // byte offset just past the token
}

// is reports whether t is the keyword w (upper case) written as a bare word.
func (t token) is(w string) bool { return t.kind == tokWord && t.val == w }

// isOp reports whether t is the operator or punctuation op.
func (t token) isOp(op string) bool { return t.kind == tokOp && t.text == op }

// describe renders t for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString, tokDQuoted, tokQuoted, tokHint:
		s := t.text
		if utf8.RuneCountInString(s) > 40 {
			r := []rune(s)
			s = string(r[:37]) + "..."
		}
		return s
	}
	return "'" + t.text + "'"
}

// lexer turns a script into tokens. SQL tokens are short and have no modes apart from
// quotes and comments, so one switch on the first character does the work that state
// functions do in text/template/parse/lex.go.
type lexer struct {
	file string
	src  string
	off  int
	line int
	col  int
	toks []token
	base int    // the byte offset of src in the whole script
	last Pos    // position just past the last token, where an end-of-input error points
	err  *Error // an unterminated block comment
}

// lex returns the tokens of src, whose first byte is at position base, followed by a
// tokEOF token. Comments are dropped, except hints: a block comment that opens with
// /*+ is a tokHint, so that the parser applies or refuses it and never loses it.
// Unterminated strings, quoted identifiers and block comments are errors; other stray characters become tokIllegal tokens so that
// text which is only sliced (like an unquoted SET value) does not fail to lex.
func lex(file, src string, base Pos) ([]token, error) {
	if base.Line == 0 {
		base = Pos{File: file, Line: 1, Col: 1}
	}
	l := &lexer{file: file, src: src, line: base.Line, col: base.Col, base: base.Offset}
	baseOff := base.Offset
	l.last = l.pos(baseOff)
	for {
		l.skipSpaceAndComments(baseOff)
		if l.err != nil {
			return nil, l.err
		}
		if l.off >= len(l.src) {
			break
		}
		start := l.pos(baseOff)
		startOff := l.off
		kind, val, err := l.next(start)
		if err != nil {
			return nil, err
		}
		t := token{kind: kind, text: l.src[startOff:l.off], val: val, pos: start, end: baseOff + l.off}
		l.toks = append(l.toks, t)
		l.last = l.pos(baseOff)
	}
	eof := l.last
	l.toks = append(l.toks, token{kind: tokEOF, pos: eof, end: eof.Offset})
	return l.toks, nil
}

func (l *lexer) pos(baseOff int) Pos {
	return Pos{File: l.file, Line: l.line, Col: l.col, Offset: baseOff + l.off}
}

// advance moves past one rune, keeping line and column up to date.
func (l *lexer) advance() rune {
	r, w := utf8.DecodeRuneInString(l.src[l.off:])
	l.off += w
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
	return r
}

func (l *lexer) peek(n int) byte {
	if l.off+n < len(l.src) {
		return l.src[l.off+n]
	}
	return 0
}

func (l *lexer) skipSpaceAndComments(baseOff int) {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.advance()
		case c == '-' && l.peek(1) == '-':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.advance()
			}
		case c == '/' && l.peek(1) == '*' && l.peek(2) != '+':
			start := l.pos(baseOff)
			l.advance()
			l.advance()
			for {
				if l.off >= len(l.src) {
					l.err = syntaxErr(start, "unterminated comment: expected */")
					return
				}
				if l.src[l.off] == '*' && l.peek(1) == '/' {
					l.advance()
					l.advance()
					break
				}
				l.advance()
			}
		default:
			if r, _ := utf8.DecodeRuneInString(l.src[l.off:]); r != utf8.RuneError && unicode.IsSpace(r) {
				l.advance()
				continue
			}
			return
		}
	}
}

// twoCharOps are the operators of two characters; every other operator is one character.
var twoCharOps = map[string]bool{"<>": true, "<=": true, ">=": true, "!=": true, "||": true, "=>": true}

const oneCharOps = "(),;.*+-/%=<>[]"

func (l *lexer) next(start Pos) (tokKind, string, error) {
	c := l.src[l.off]
	switch {
	case c == '\'':
		s, err := l.quoted('\'', start, "unterminated string literal: expected closing '")
		return tokString, s, err
	case c == '`':
		s, err := l.quoted('`', start, "unterminated quoted identifier: expected closing `")
		return tokQuoted, s, err
	case c == '"':
		s, err := l.quoted('"', start, `unterminated double-quoted string: expected closing "`)
		return tokDQuoted, s, err
	case c == '/' && l.peek(1) == '*' && l.peek(2) == '+':
		l.advance()
		l.advance()
		l.advance()
		s := l.off
		for {
			if l.off >= len(l.src) {
				return tokHint, "", syntaxErr(start, "unterminated hint: expected */")
			}
			if c := l.src[l.off]; c == '\'' || c == '`' || c == '"' {
				// A quoted string or name in a hint may hold */.
				if _, err := l.quoted(c, l.pos(l.base), "unterminated quote in hint: expected closing "+string(c)); err != nil {
					return tokHint, "", err
				}
				continue
			}
			if l.src[l.off] == '*' && l.peek(1) == '/' {
				break
			}
			l.advance()
		}
		val := l.src[s:l.off]
		l.advance()
		l.advance()
		return tokHint, val, nil
	case c >= '0' && c <= '9' || c == '.' && l.peek(1) >= '0' && l.peek(1) <= '9':
		s := l.off
		l.number()
		return tokNumber, l.src[s:l.off], nil
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.off:])
	if r == '_' || unicode.IsLetter(r) {
		s := l.off
		for l.off < len(l.src) {
			r, _ := utf8.DecodeRuneInString(l.src[l.off:])
			if r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) {
				l.advance()
				continue
			}
			break
		}
		return tokWord, strings.ToUpper(l.src[s:l.off]), nil
	}
	if l.off+1 < len(l.src) && twoCharOps[l.src[l.off:l.off+2]] {
		l.advance()
		l.advance()
		return tokOp, l.src[l.off-2 : l.off], nil
	}
	if strings.IndexByte(oneCharOps, c) >= 0 {
		l.advance()
		return tokOp, string(c), nil
	}
	l.advance()
	return tokIllegal, "", nil
}

// quoted scans a quoted token whose quote character doubles to escape itself.
func (l *lexer) quoted(q byte, start Pos, unterminated string) (string, error) {
	l.advance()
	var b strings.Builder
	for {
		if l.off >= len(l.src) {
			return "", syntaxErr(start, "%s", unterminated)
		}
		c := l.src[l.off]
		if c == q {
			if l.peek(1) == q {
				b.WriteByte(q)
				l.advance()
				l.advance()
				continue
			}
			l.advance()
			return b.String(), nil
		}
		s := l.off
		l.advance()
		b.WriteString(l.src[s:l.off])
	}
}

// number scans digits [. digits] [e [+-] digits].
func (l *lexer) number() {
	digits := func() {
		for l.off < len(l.src) && l.src[l.off] >= '0' && l.src[l.off] <= '9' {
			l.advance()
		}
	}
	digits()
	if l.peek(0) == '.' && !(l.peek(1) == '.') {
		l.advance()
		digits()
	}
	if c := l.peek(0); c == 'e' || c == 'E' {
		n := 1
		if s := l.peek(1); s == '+' || s == '-' {
			n = 2
		}
		if d := l.peek(n); d >= '0' && d <= '9' {
			for i := 0; i < n; i++ {
				l.advance()
			}
			digits()
		}
	}
}
