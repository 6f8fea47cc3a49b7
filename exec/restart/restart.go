package restart

import (
	"fmt"
	"math"
	"time"
)

// Strategy decides, failure after failure, whether a job restarts and after how long.
// It is used by one job at a time, from one goroutine.
type Strategy interface {
	// Failed records a failure that happened at now and returns how long to wait before
	// restarting, or ok false when the job must fail for good.
	Failed(now time.Time) (delay time.Duration, ok bool)
	// String names the strategy and its parameters, for logs and errors.
	String() string
}

// None returns the strategy that never restarts.
func None() Strategy { return none{} }

type none struct{}

func (none) Failed(time.Time) (time.Duration, bool) { return 0, false }
func (none) String() string                         { return "none" }

// FixedDelay returns a strategy that restarts attempts times, waiting delay before each
// restart; the failure after the last attempt fails the job.
func FixedDelay(attempts int, delay time.Duration) Strategy {
	return &fixedDelay{attempts: attempts, delay: delay}
}

type fixedDelay struct {
	attempts int
	delay    time.Duration
	failures int
}

func (s *fixedDelay) Failed(time.Time) (time.Duration, bool) {
	s.failures++
	if s.failures > s.attempts {
		return 0, false
	}
	return s.delay, true
}

func (s *fixedDelay) String() string {
	return fmt.Sprintf("fixed-delay (attempts %d, delay %s)", s.attempts, s.delay)
}

// FailureRate returns a strategy that restarts after delay unless more than
// maxFailures failures happened within interval, counting the one at hand.
func FailureRate(maxFailures int, interval, delay time.Duration) Strategy {
	return &failureRate{max: maxFailures, interval: interval, delay: delay}
}

type failureRate struct {
	max      int
	interval time.Duration
	delay    time.Duration
	// times holds the last max+1 failures, oldest first.
	times []time.Time
}

func (s *failureRate) Failed(now time.Time) (time.Duration, bool) {
	s.times = append(s.times, now)
	if len(s.times) > s.max+1 {
		s.times = s.times[len(s.times)-s.max-1:]
	}
	// As Flink's FailureRateRestartBackoffTimeStrategy: with max+1 failures recorded,
	// restart only if the oldest of them is more than one interval ago.
	if len(s.times) > s.max && now.Sub(s.times[0]) <= s.interval {
		return 0, false
	}
	return s.delay, true
}

func (s *failureRate) String() string {
	return fmt.Sprintf("failure-rate (max %d failures per %s, delay %s)", s.max, s.interval, s.delay)
}

// ExponentialOptions are the parameters of ExponentialDelay, with Flink's names.
type ExponentialOptions struct {
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
	// JitterFactor is the largest part of the backoff added or subtracted at random.
	JitterFactor float64
	// ResetThreshold is how long a job must run after its last restart for the backoff
	// and the attempts to start over.
	ResetThreshold time.Duration
	// AttemptsBeforeReset is how many restarts are allowed before the backoff resets; 0
	// means unlimited.
	AttemptsBeforeReset int
	// Rand returns a random number in [0, 1) for the jitter. Default: math/rand/v2.
	Rand func() float64
}

// ExponentialDelay returns a strategy whose delays grow exponentially, as Flink's
// ExponentialDelayRestartBackoffTimeStrategy.
func ExponentialDelay(o ExponentialOptions) Strategy {
	if o.Rand == nil {
		o.Rand = defaultRand
	}
	return &exponential{o: o}
}

type exponential struct {
	o        ExponentialOptions
	attempts int       // restarts since the last reset
	restart  time.Time // when the last restart happened (its failure plus its delay)
}

func (s *exponential) Failed(now time.Time) (time.Duration, bool) {
	if s.attempts > 0 && now.Sub(s.restart) >= s.o.ResetThreshold {
		s.attempts = 0
	}
	if s.o.AttemptsBeforeReset > 0 && s.attempts >= s.o.AttemptsBeforeReset {
		return 0, false
	}
	backoff := float64(s.o.InitialBackoff) * math.Pow(s.o.Multiplier, float64(s.attempts))
	if j := s.o.JitterFactor; j > 0 {
		backoff += backoff * j * (2*s.o.Rand() - 1)
	}
	// Clamped as Flink clamps it: never below the initial backoff (so the jitter of the
	// first restart only ever adds), never above the maximum.
	delay := time.Duration(math.Max(float64(s.o.InitialBackoff), math.Min(backoff, float64(s.o.MaxBackoff))))
	s.attempts++
	s.restart = now.Add(delay)
	return delay, true
}

func (s *exponential) String() string {
	attempts := "unlimited"
	if s.o.AttemptsBeforeReset > 0 {
		attempts = fmt.Sprint(s.o.AttemptsBeforeReset)
	}
	return fmt.Sprintf("exponential-delay (initial %s, max %s, multiplier %g, jitter %g, reset after %s, attempts %s)",
		s.o.InitialBackoff, s.o.MaxBackoff, s.o.Multiplier, s.o.JitterFactor, s.o.ResetThreshold, attempts)
}
