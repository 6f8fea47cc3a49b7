package shell

import (
	"errors"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/state"
)

// ErrUser is matched (errors.Is) by errors in what the user wrote (SQL, options, flags)
// and by a job's refusal of saved state that no longer matches it (another plan, or
// another input than the checkpoint read): the errors that are the user's to resolve,
// for which pipesql exits with code 2.
var ErrUser = errors.New("user error")

// userErr marks an error as the user's without changing its message.
type userErr struct{ err error }

func (e userErr) Error() string        { return e.err.Error() }
func (e userErr) Unwrap() error        { return e.err }
func (e userErr) Is(target error) bool { return target == ErrUser }

// UserError marks err as the user's: it matches ErrUser, with err's message.
func UserError(err error) error { return userErr{err} }

// userError marks the failures of a job that are the user's to resolve: a job that
// cannot take over its saved state, because its plan changed or its sources read
// another input (--fresh starts it over).
func userError(err error) error {
	if errors.Is(err, state.ErrPlanMismatch) || errors.Is(err, connectors.ErrInputMismatch) {
		return userErr{err}
	}
	return err
}
