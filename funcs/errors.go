package funcs

import (
	"errors"
	"fmt"

	"github.com/pipesql/pipesql/types"
)

var (
	// ErrUnknownFunction is returned when a name is neither a scalar function nor an operator.
	ErrUnknownFunction = errors.New("unknown function")
	// ErrArgumentCount is returned by Infer when a call has too few or too many arguments.
	ErrArgumentCount = errors.New("wrong number of arguments")
	// ErrArgumentType is returned by Infer when an argument's type does not fit the function.
	ErrArgumentType = errors.New("wrong argument type")
	// ErrUnsupportedCast is returned when no CAST exists between two types (CanCast is false).
	ErrUnsupportedCast = errors.New("unsupported cast")
	// ErrCastFailed is returned when a value cannot be converted, e.g. CAST('abc' AS INT).
	// TRY_CAST turns it into NULL.
	ErrCastFailed = errors.New("cast failed")
	// ErrDivisionByZero is returned when an exact number (integer or DECIMAL) is divided by zero.
	ErrDivisionByZero = errors.New("division by zero")
	// ErrInvalidArgument is returned when an argument value is outside what the function
	// accepts: an unknown time unit, a bad date pattern, a LIKE pattern ending in its escape.
	ErrInvalidArgument = errors.New("invalid argument")
)

// SignatureError says why a call does not fit a function's signature. Arg is the 1-based
// position of the offending argument, 0 when the call as a whole is wrong (argument count).
type SignatureError struct {
	Func string
	Arg  int
	Msg  string // the whole sentence, e.g. "LOWER expects a STRING as its 1st argument, got INT"
	Err  error  // ErrArgumentCount or ErrArgumentType
}

func (e *SignatureError) Error() string { return e.Msg }
func (e *SignatureError) Unwrap() error { return e.Err }

// CastError is a value that could not be converted to the target type.
type CastError struct {
	Input  string // the value as text, e.g. abc
	To     types.Type
	Reason string // optional detail, e.g. "overflow"
}

func (e *CastError) Error() string {
	msg := fmt.Sprintf("cannot parse %q as %s", e.Input, e.To.Nullable())
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Unwrap lets errors.Is(err, ErrCastFailed) identify cast failures.
func (e *CastError) Unwrap() error { return ErrCastFailed }

func argError(f string, arg int, want string, got types.Type) error {
	return &SignatureError{
		Func: f, Arg: arg, Err: ErrArgumentType,
		Msg: fmt.Sprintf("%s expects %s as its %s argument, got %s", f, want, ordinal(arg), got.Nullable()),
	}
}

func countError(f *Func, got int) error {
	var want string
	switch {
	case f.MaxArgs == f.MinArgs:
		want = plural(f.MinArgs, "argument")
	case f.MaxArgs < 0:
		want = "at least " + plural(f.MinArgs, "argument")
	default:
		want = fmt.Sprintf("%d to %d arguments", f.MinArgs, f.MaxArgs)
	}
	return &SignatureError{
		Func: f.Name, Err: ErrArgumentCount,
		Msg: fmt.Sprintf("%s takes %s, got %d; usage: %s", f.Name, want, got, f.Syntax),
	}
}

func invalidArg(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
