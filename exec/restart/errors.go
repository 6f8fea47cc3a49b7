package restart

import "errors"

// ErrInvalidSettings is returned by FromSettings when a restart-strategy setting has a
// value it cannot use: an unknown strategy, a malformed number or duration, a value out
// of range. The error names the key and the value.
var ErrInvalidSettings = errors.New("invalid restart strategy setting")
