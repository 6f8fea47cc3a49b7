package jdbc

import (
	"errors"

	"github.com/pipesql/pipesql/connectors"
)

var (
	// ErrBadOptions is returned when a jdbc table's options do not fit together or a
	// value cannot be used (an unsupported url, a partitioned scan without its bounds).
	ErrBadOptions = errors.New("invalid jdbc options")
	// ErrNoTable is returned when the table named by 'table-name' does not exist in the
	// database.
	ErrNoTable = errors.New("table does not exist")
	// ErrSchemaMismatch is returned when a column of the declared table is missing from
	// the database table or has a type that does not map onto the declared one.
	ErrSchemaMismatch = errors.New("column does not match the database table")
	// ErrUpdatingInput is returned when an updating changelog goes to a jdbc table
	// declared without a PRIMARY KEY: without one there is no row to update or delete.
	ErrUpdatingInput = errors.New("an updating input needs a PRIMARY KEY on the jdbc table")
	// ErrUnreachable is returned when the database cannot be reached when the table is
	// opened; the job restarts under its restart strategy.
	ErrUnreachable = errors.New("database unreachable")
	// ErrUnsupportedType is returned for a column type the connector cannot read or
	// write yet (ARRAY, MAP, ROW, INTERVAL).
	ErrUnsupportedType = errors.New("unsupported column type")
)

// misconfigured marks a table check's failure (ErrNoTable, ErrSchemaMismatch,
// ErrUnsupportedType, ErrBadOptions) as connectors.ErrMisconfigured, so that the job
// fails at once rather than restarting into the same error; other errors (the database
// failing while it is asked) are left as they are.
func misconfigured(err error) error {
	for _, e := range []error{ErrNoTable, ErrSchemaMismatch, ErrUnsupportedType, ErrBadOptions, ErrUpdatingInput} {
		if errors.Is(err, e) {
			return connectors.Misconfigured(err)
		}
	}
	return err
}
