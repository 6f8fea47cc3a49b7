package restart

import (
	"fmt"
	"math/rand/v2"

	"github.com/pipesql/pipesql/config"
)

// Setting keys, as Flink names them (declared in package config).
const (
	KeyType       = config.RestartType
	KeyTypeLegacy = config.RestartTypeOld

	KeyFixedDelayAttempts = config.FixedDelayAttempts
	KeyFixedDelayDelay    = config.FixedDelayDelay

	KeyFailureRateMax      = config.FailureRateMax
	KeyFailureRateInterval = config.FailureRateInterval
	KeyFailureRateDelay    = config.FailureRateDelay

	KeyExpInitialBackoff = config.ExpInitialBackoff
	KeyExpMaxBackoff     = config.ExpMaxBackoff
	KeyExpMultiplier     = config.ExpMultiplier
	KeyExpJitter         = config.ExpJitter
	KeyExpResetThreshold = config.ExpResetThreshold
	KeyExpAttempts       = config.ExpAttemptsBeforeReset
)

func defaultRand() float64 { return rand.Float64() }

// FromSettings builds the strategy the settings (a job's SET options) configure, with
// the defaults of package config's table. With no restart-strategy.type (nor
// restart-strategy) set, it is exponential-delay when checkpointing is enabled and none
// otherwise, as in Flink. rnd supplies the jitter of exponential-delay; nil uses
// math/rand/v2. Only the keys of the strategy chosen are read.
func FromSettings(settings map[string]string, checkpointing bool, rnd func() float64) (Strategy, error) {
	v := config.Read(settings)
	kind := v.Enum(KeyType)
	if kind == "" {
		kind = "none"
		if checkpointing {
			kind = "exponential-delay"
		}
	}
	var s Strategy
	switch kind {
	case "none", "off", "disable":
		s = None()
	case "fixed-delay", "fixeddelay":
		s = FixedDelay(v.Int(KeyFixedDelayAttempts), v.Duration(KeyFixedDelayDelay))
	case "failure-rate", "failurerate":
		s = FailureRate(v.Int(KeyFailureRateMax), v.Duration(KeyFailureRateInterval), v.Duration(KeyFailureRateDelay))
	case "exponential-delay", "exponentialdelay":
		o := ExponentialOptions{
			InitialBackoff:      v.Duration(KeyExpInitialBackoff),
			MaxBackoff:          v.Duration(KeyExpMaxBackoff),
			Multiplier:          v.Float(KeyExpMultiplier),
			JitterFactor:        v.Float(KeyExpJitter),
			ResetThreshold:      v.Duration(KeyExpResetThreshold),
			AttemptsBeforeReset: v.Int(KeyExpAttempts),
			Rand:                rnd,
		}
		if v.Err() == nil && o.MaxBackoff < o.InitialBackoff {
			v.Fail(KeyExpMaxBackoff, fmt.Sprintf("is below %s (%s)", KeyExpInitialBackoff, o.InitialBackoff))
		}
		s = ExponentialDelay(o)
	}
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	return s, nil
}
