package builtin

import (
	"errors"
	"fmt"
)

var (
	// ErrUpdatingInput is returned by a sink that only takes inserts (filesystem) when
	// its input has updates or deletes, as Flink's "doesn't support consuming update
	// and delete changes".
	ErrUpdatingInput = errors.New("doesn't support consuming update and delete changes")
	// ErrBadState is returned when a source is restored from state it cannot read:
	// written by another connector or a newer version, or corrupted.
	ErrBadState = errors.New("cannot restore source state")
	// ErrBadOptions is returned when a table's options do not fit together or do not fit
	// its columns, such as datagen's fields.x.kind for a column x that does not exist.
	ErrBadOptions = errors.New("invalid table options")
	// ErrNoFiles is returned by the filesystem source when its path does not exist.
	ErrNoFiles = errors.New("path not found")
)

// RecordError is a record a filesystem source could not read, with where it is: the
// table, the file and the 1-based line. Err is the format's decode error, which names
// the field and shows the start of the record.
type RecordError struct {
	Table  string
	Path   string
	Line   int64
	Offset int64 // byte offset of the record in the file
	Err    error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("filesystem source %s: %s:%d: %v", e.Table, e.Path, e.Line, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// tableError prefixes what went wrong with the connector, direction and table.
func tableError(connector, dir, table string, err error) error {
	return fmt.Errorf("%s %s %s: %w", connector, dir, table, err)
}
