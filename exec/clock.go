package exec

import "time"

// Clock is where the runtime reads the time: periodic watermarks, idle splits and
// processing-time windows. Tests inject a clock they move by hand.
type Clock interface {
	Now() time.Time
	// NewTicker returns a ticker that fires every d, as time.NewTicker does.
	NewTicker(d time.Duration) Ticker
}

// Ticker delivers ticks on C until Stop.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// WallClock is the Clock of the machine.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// NewTicker returns a time.Ticker.
func (WallClock) NewTicker(d time.Duration) Ticker { return wallTicker{time.NewTicker(d)} }

type wallTicker struct{ t *time.Ticker }

func (t wallTicker) C() <-chan time.Time { return t.t.C }
func (t wallTicker) Stop()               { t.t.Stop() }
