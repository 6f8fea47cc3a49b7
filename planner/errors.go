package planner

import (
	"errors"
	"fmt"

	"github.com/pipesql/pipesql/parser"
)

// Sentinel errors. Every planner error that has a place in the script is a *parser.Error
// (file:line:col, message, source line) that also matches one of these with errors.Is, so
// that callers decide by kind, never by message text.
var (
	// ErrUnknownTable is returned when a statement names a table or view that does not exist.
	ErrUnknownTable = errors.New("unknown table")
	// ErrUnknownColumn is returned when an expression or option names a column that does not exist.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrAmbiguousColumn is returned when a column name matches more than one column.
	ErrAmbiguousColumn = errors.New("ambiguous column")
	// ErrUnknownFunction is returned when a query calls a function pipesql does not have.
	ErrUnknownFunction = errors.New("unknown function")
	// ErrUnknownConnector is returned when 'connector' names no registered connector.
	ErrUnknownConnector = errors.New("unknown connector")
	// ErrUnknownFormat is returned when a format option names no registered format.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrUnknownOption is returned when a WITH clause has a key its connector and format do not declare.
	ErrUnknownOption = errors.New("unknown option")
	// ErrMissingOption is returned when a required WITH option (or 'connector') is absent.
	ErrMissingOption = errors.New("missing required option")
	// ErrInvalidOption is returned when a WITH option's value does not read as its declared type.
	ErrInvalidOption = errors.New("invalid option value")
	// ErrUnknownSetting is returned by Session.Set for a key that looks like a misspelt known key.
	ErrUnknownSetting = errors.New("unknown setting")
	// ErrInvalidSetting is returned by Session.Set for a value a known key cannot take.
	ErrInvalidSetting = errors.New("invalid setting")
	// ErrAlreadyExists is returned when CREATE names an existing table or view.
	ErrAlreadyExists = errors.New("already exists")
	// ErrTypeMismatch is returned when an expression's type does not fit where it is used.
	ErrTypeMismatch = errors.New("type mismatch")
	// ErrNotGrouped is returned when an aggregating query selects a column it does not group by.
	ErrNotGrouped = errors.New("not grouped")
	// ErrMisplacedAggregate is returned for an aggregate call where none may be (WHERE,
	// GROUP BY, inside another aggregate, a column definition).
	ErrMisplacedAggregate = errors.New("misplaced aggregate")
	// ErrTimeAttribute is returned when a watermark or window needs a time attribute and
	// the column is not one.
	ErrTimeAttribute = errors.New("not a time attribute")
	// ErrUpdatingInput is returned when an updating changelog flows into a sink (or an
	// operator) that only accepts inserts.
	ErrUpdatingInput = errors.New("updating input not accepted")
	// ErrUnsupported is returned for valid Flink SQL that pipesql does not run (yet):
	// joins, set operations, OVER windows, session windows, ORDER BY on a stream...
	ErrUnsupported = errors.New("unsupported")
	// ErrInvalidStatement is returned when a statement is given to a method that does not
	// handle its kind (a SELECT to Apply, a CREATE TABLE to Plan).
	ErrInvalidStatement = errors.New("invalid statement")
)

// errAt returns the error for something wrong at pos: a *parser.Error (file:line:col,
// message) whose Kind is the sentinel, so that errors.Is(err, kind) holds.
func errAt(pos parser.Pos, kind error, format string, args ...any) error {
	e := parser.Errorf(pos, format, args...)
	e.Kind = kind
	return e
}

// wrapAt positions an error that has none (from a connector's Validate, a function's
// type inference), keeping it in the chain next to the sentinel kind.
func wrapAt(pos parser.Pos, kind error, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if msg != "" {
		msg += ": "
	}
	e := parser.Errorf(pos, "%s%v", msg, err)
	e.Kind = errors.Join(kind, err)
	return e
}

// kindError is an error without a position whose message is complete by itself and
// that matches the sentinel kind with errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func kindErrorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
