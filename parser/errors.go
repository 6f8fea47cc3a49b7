package parser

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is returned (wrapped in an *Error) when a script does not follow the grammar:
// a misplaced or missing token, an unterminated string, comment or quoted identifier.
var ErrSyntax = errors.New("syntax error")

// ErrUnsupported is returned (wrapped in an *Error) when a script uses Flink syntax that
// pipesql recognizes but does not run, such as OVER windows or temporal joins.
var ErrUnsupported = errors.New("unsupported syntax")

// Error is an error at a position in a script. The parser returns it for every problem
// in the text; the planner reuses it for its own positioned errors.
type Error struct {
	Pos      Pos
	Msg      string
	LineText string // the source line holding Pos, without its newline; "" when unknown
	// Kind is ErrSyntax or ErrUnsupported for parser errors, so that callers can tell
	// them apart with errors.Is; nil for errors made with Errorf.
	Kind error
}

// Errorf returns an *Error at pos with a formatted message.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Error renders "file:line:col: msg" and, when the source line is known, the line and a
// caret under the column.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos.File != "" {
		b.WriteString(e.Pos.File)
		b.WriteByte(':')
	}
	fmt.Fprintf(&b, "%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	if e.LineText != "" {
		b.WriteByte('\n')
		b.WriteString(e.LineText)
		b.WriteByte('\n')
		// Keep tabs so that the caret lines up under the same column in a terminal.
		col := 1
		for _, r := range e.LineText {
			if col >= e.Pos.Col {
				break
			}
			if r == '\t' {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
			col++
		}
		for ; col < e.Pos.Col; col++ {
			b.WriteByte(' ')
		}
		b.WriteByte('^')
	}
	return b.String()
}

// Unwrap returns the kind of the error (ErrSyntax, ErrUnsupported or nil).
func (e *Error) Unwrap() error { return e.Kind }

// WithSource fills LineText from the whole script text src, which Pos.Offset indexes,
// and returns e. It leaves LineText alone when the offset is outside src.
func (e *Error) WithSource(src string) *Error {
	off := e.Pos.Offset
	if off < 0 || off > len(src) {
		return e
	}
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := strings.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += off
	}
	line := strings.TrimRight(src[start:end], "\r")
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "?")
	}
	e.LineText = line
	return e
}

func syntaxErr(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Kind: ErrSyntax}
}

func unsupportedErr(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Kind: ErrUnsupported}
}

// withSource attaches the source line to err when it is an *Error.
func withSource(err error, src string) error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.WithSource(src)
	}
	return err
}
