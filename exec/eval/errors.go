package eval

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupportedExpr is returned by Compile for an expression node it does not know.
	ErrUnsupportedExpr = errors.New("unsupported expression")
	// ErrNotPredicate is returned by CompilePredicate for an expression that is not BOOLEAN.
	ErrNotPredicate = errors.New("not a boolean expression")
	// ErrShortRow is returned when a row has fewer columns than a column reference needs:
	// the plan and the data disagree.
	ErrShortRow = errors.New("row has too few columns")
)

// ExprError is an error from compiling or evaluating an expression, carrying the
// expression's text as EXPLAIN prints it.
type ExprError struct {
	Expr string
	Err  error
}

func (e *ExprError) Error() string { return e.Expr + ": " + e.Err.Error() }
func (e *ExprError) Unwrap() error { return e.Err }

// wrap attaches expr to err unless an inner expression already did: the innermost
// failing expression is the useful one to show.
func wrap(expr fmt.Stringer, err error) error {
	var ee *ExprError
	if errors.As(err, &ee) {
		return err
	}
	return &ExprError{Expr: expr.String(), Err: err}
}
