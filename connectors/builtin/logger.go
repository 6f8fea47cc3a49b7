package builtin

import "time"

// clock is the time source of datagen's throttle and timestamps and of the filesystem
// source's directory monitor. The runtime passes none, so connectors use the wall
// clock; tests set a fake one on the source so that they never sleep.
type clock interface {
	Now() time.Time
	// After delivers the time once d has passed.
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// discardLogger stands in when a runtime passes no logger, which the contract forbids
// but which must not turn a skipped record into a panic.
type discardLogger struct{}

func (discardLogger) Warn(string, ...any) {}
func (discardLogger) Info(string, ...any) {}
