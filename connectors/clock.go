package connectors

import "time"

// Clock is where the runtime and the connectors read the time and wait: periodic
// watermarks, idle splits, processing-time windows, datagen's throttle, discovery
// intervals, retry backoff, periodic commits, file rolling. The runtime passes its Clock
// to every source and sink it opens (SourceConfig.Clock, SinkConfig.Clock), so a test
// that injects one clock moves all of them.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d, as time.NewTimer does.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d, as time.NewTicker does.
	NewTicker(d time.Duration) Ticker
}

// Timer fires once on C unless stopped.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Ticker delivers ticks on C until Stop.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// ClockOr returns c, or the wall clock when c is nil (a runtime that sets none).
func ClockOr(c Clock) Clock {
	if c == nil {
		return WallClock{}
	}
	return c
}

// WallClock is the Clock of the machine.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (WallClock) NewTimer(d time.Duration) Timer { return wallTimer{time.NewTimer(d)} }

// NewTicker returns a time.Ticker.
func (WallClock) NewTicker(d time.Duration) Ticker { return wallTicker{time.NewTicker(d)} }

type wallTimer struct{ t *time.Timer }

func (t wallTimer) C() <-chan time.Time { return t.t.C }
func (t wallTimer) Stop() bool          { return t.t.Stop() }

type wallTicker struct{ t *time.Ticker }

func (t wallTicker) C() <-chan time.Time { return t.t.C }
func (t wallTicker) Stop()               { t.t.Stop() }
