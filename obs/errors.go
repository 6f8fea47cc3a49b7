package obs

import "errors"

var (
	// ErrLogOptions is returned by NewLogger when the log format or level is not one it
	// knows; the error names the value and the valid ones.
	ErrLogOptions = errors.New("invalid log option")

	// ErrListen is returned by Serve when it cannot listen on the metrics address (in
	// use, malformed, not an address of this machine); the error names the address.
	ErrListen = errors.New("cannot serve metrics")
)
