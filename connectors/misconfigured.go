package connectors

import "errors"

// ErrMisconfigured is matched (errors.Is) by a connector's error when its table does not
// fit what it reads or writes: the database table is missing, a column is missing or
// has a type that does not map. Restarting cannot help, so the runtime fails the job
// at once instead of restarting it under its restart strategy.
var ErrMisconfigured = errors.New("the table does not fit the connector's data")

// Misconfigured marks err as ErrMisconfigured, keeping its message and its chain.
func Misconfigured(err error) error {
	if err == nil {
		return nil
	}
	return misconfigured{err}
}

type misconfigured struct{ err error }

func (m misconfigured) Error() string        { return m.err.Error() }
func (m misconfigured) Unwrap() error        { return m.err }
func (m misconfigured) Is(target error) bool { return target == ErrMisconfigured }
