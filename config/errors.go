package config

import "errors"

var (
	// ErrUnknownKey is returned by Validate for a key pipesql does not declare that is
	// a likely typo of one it does, or not a Flink key at all.
	ErrUnknownKey = errors.New("unknown setting")
	// ErrInvalidValue is returned by Validate (inside an *Error) for a value a declared
	// key cannot take.
	ErrInvalidValue = errors.New("invalid setting")
)
