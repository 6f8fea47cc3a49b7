package restart

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// Setting keys, as Flink names them.
const (
	KeyType       = "restart-strategy.type"
	KeyTypeLegacy = "restart-strategy"

	KeyFixedDelayAttempts = "restart-strategy.fixed-delay.attempts"
	KeyFixedDelayDelay    = "restart-strategy.fixed-delay.delay"

	KeyFailureRateMax      = "restart-strategy.failure-rate.max-failures-per-interval"
	KeyFailureRateInterval = "restart-strategy.failure-rate.failure-rate-interval"
	KeyFailureRateDelay    = "restart-strategy.failure-rate.delay"

	KeyExpInitialBackoff = "restart-strategy.exponential-delay.initial-backoff"
	KeyExpMaxBackoff     = "restart-strategy.exponential-delay.max-backoff"
	KeyExpMultiplier     = "restart-strategy.exponential-delay.backoff-multiplier"
	KeyExpJitter         = "restart-strategy.exponential-delay.jitter-factor"
	KeyExpResetThreshold = "restart-strategy.exponential-delay.reset-backoff-threshold"
	KeyExpAttempts       = "restart-strategy.exponential-delay.attempts-before-reset-backoff"
)

func defaultRand() float64 { return rand.Float64() }

// FromSettings builds the strategy the settings (a job's SET options) configure. With no
// restart-strategy.type (nor restart-strategy) set, it is exponential-delay when
// checkpointing is enabled and none otherwise, as in Flink. rnd supplies the jitter of
// exponential-delay; nil uses math/rand/v2.
func FromSettings(settings map[string]string, checkpointing bool, rnd func() float64) (Strategy, error) {
	r := reader{settings: settings}
	kind, ok := settings[KeyType]
	key := KeyType
	if !ok {
		kind, ok = settings[KeyTypeLegacy]
		key = KeyTypeLegacy
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	if !ok || kind == "" {
		kind = "none"
		if checkpointing {
			kind = "exponential-delay"
		}
	}
	switch kind {
	case "none", "off", "disable":
		return None(), r.err
	case "fixed-delay", "fixeddelay":
		attempts := r.int(KeyFixedDelayAttempts, 1, 0)
		delay := r.duration(KeyFixedDelayDelay, time.Second)
		return FixedDelay(attempts, delay), r.err
	case "failure-rate", "failurerate":
		maxFailures := r.int(KeyFailureRateMax, 1, 1)
		interval := r.duration(KeyFailureRateInterval, time.Minute)
		delay := r.duration(KeyFailureRateDelay, time.Second)
		if r.err == nil && interval <= 0 {
			r.fail(KeyFailureRateInterval, settings[KeyFailureRateInterval], "must be positive")
		}
		return FailureRate(maxFailures, interval, delay), r.err
	case "exponential-delay", "exponentialdelay":
		o := ExponentialOptions{
			InitialBackoff:      r.duration(KeyExpInitialBackoff, time.Second),
			MaxBackoff:          r.duration(KeyExpMaxBackoff, time.Minute),
			Multiplier:          r.float(KeyExpMultiplier, 1.5, 1, 0),
			JitterFactor:        r.float(KeyExpJitter, 0.1, 0, 1),
			ResetThreshold:      r.duration(KeyExpResetThreshold, time.Hour),
			AttemptsBeforeReset: r.int(KeyExpAttempts, 0, 1),
			Rand:                rnd,
		}
		if r.err == nil && o.MaxBackoff < o.InitialBackoff {
			r.fail(KeyExpMaxBackoff, settings[KeyExpMaxBackoff], fmt.Sprintf("is below %s (%s)", KeyExpInitialBackoff, o.InitialBackoff))
		}
		return ExponentialDelay(o), r.err
	}
	return nil, fmt.Errorf("%w: %s = '%s': expected none, fixed-delay, failure-rate or exponential-delay",
		ErrInvalidSettings, key, settings[key])
}

// reader reads settings, keeping the first error.
type reader struct {
	settings map[string]string
	err      error
}

func (r *reader) fail(key, value, why string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s = '%s': %s", ErrInvalidSettings, key, value, why)
	}
}

func (r *reader) duration(key string, def time.Duration) time.Duration {
	v, ok := r.settings[key]
	if !ok {
		return def
	}
	d, err := connectors.ParseDuration(v)
	if err != nil {
		r.fail(key, v, "expected a duration such as '10 s' or '1 min'")
		return def
	}
	if d < 0 {
		r.fail(key, v, "must not be negative")
		return def
	}
	return d
}

// int reads an integer of at least least.
func (r *reader) int(key string, def, least int) int {
	v, ok := r.settings[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
		r.fail(key, v, "expected an integer")
		return def
	case n < least:
		r.fail(key, v, fmt.Sprintf("must be at least %d", least))
		return def
	}
	return n
}

// float reads a number of at least least and, when most > 0, at most most.
func (r *reader) float(key string, def, least, most float64) float64 {
	v, ok := r.settings[key]
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err != nil:
		r.fail(key, v, "expected a number")
		return def
	case f < least || most > 0 && f > most:
		if most > 0 {
			r.fail(key, v, fmt.Sprintf("must be between %g and %g", least, most))
		} else {
			r.fail(key, v, fmt.Sprintf("must be at least %g", least))
		}
		return def
	}
	return f
}
