package kafka

import "time"

// Clock is where the connector reads the time and waits: discovery intervals, retry
// backoff, periodic commits. Tests may inject their own.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d, as time.NewTimer does.
	NewTimer(d time.Duration) Timer
}

// Timer fires once on C unless stopped.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// WallClock is the Clock of the machine.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (WallClock) NewTimer(d time.Duration) Timer { return wallTimer{time.NewTimer(d)} }

type wallTimer struct{ t *time.Timer }

func (t wallTimer) C() <-chan time.Time { return t.t.C }
func (t wallTimer) Stop() bool          { return t.t.Stop() }
