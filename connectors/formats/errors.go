package formats

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/pipesql/pipesql/connectors"
)

var (
	// ErrBadRecord is returned (inside a *DecodeError) when a record cannot be decoded:
	// it is not valid JSON or CSV, or a field cannot be converted to its column's type.
	ErrBadRecord = errors.New("bad record")
	// ErrComment is returned (inside a *DecodeError that also wraps connectors.ErrSkipped)
	// for a CSV comment line when csv.allow-comments is true: it holds no row.
	ErrComment = errors.New("comment line")
	// ErrUnsupportedType is returned by NewDecoder and NewEncoder when a column's type
	// cannot be read or written by the format, such as MAP in CSV.
	ErrUnsupportedType = errors.New("type not supported by format")
	// ErrMapNullKey is returned by the JSON encoder when a MAP has a NULL key and
	// json.map-null-key.mode is FAIL.
	ErrMapNullKey = errors.New("map has a null key")
)

// snippetLen is how much of a bad record an error shows: enough to recognise the
// record, not so much that one bad record floods a log.
const snippetLen = 100

// DecodeError describes a record that could not be decoded: which field (a path such
// as "ts", "payload.items[2]", or "" for the whole record), what was wrong, and the
// start of the record. It wraps ErrBadRecord and, when the format ignores parse
// errors, connectors.ErrSkipped.
type DecodeError struct {
	Field   string
	Err     error
	Snippet string
	Skipped bool
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString("field \"")
		b.WriteString(e.Field)
		b.WriteString("\": ")
	}
	b.WriteString(e.Err.Error())
	b.WriteString("; record: ")
	b.WriteString(e.Snippet)
	return b.String()
}

// Unwrap lets errors.Is find ErrBadRecord, connectors.ErrSkipped (when skipped) and the cause.
func (e *DecodeError) Unwrap() []error {
	if e.Skipped {
		return []error{ErrBadRecord, connectors.ErrSkipped, e.Err}
	}
	return []error{ErrBadRecord, e.Err}
}

// Snippet returns the start of a record, at most about 100 bytes, cut on a character
// boundary and with control characters made visible, for error messages.
func Snippet(data []byte) string {
	cut := len(data) > snippetLen
	if cut {
		n := snippetLen
		for n > 0 && !utf8.RuneStart(data[n]) {
			n--
		}
		data = data[:n]
	}
	var b strings.Builder
	for _, r := range string(data) {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString("?")
		default:
			b.WriteRune(r)
		}
	}
	if cut {
		b.WriteString("...")
	}
	return b.String()
}
