package restart

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// failures feeds a strategy failures at the given offsets from t0 and returns the delays
// until the first refusal (-1 stands for it).
func failures(s Strategy, at ...time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range at {
		delay, ok := s.Failed(t0.Add(d))
		if !ok {
			return append(out, -1)
		}
		out = append(out, delay)
	}
	return out
}

func TestDefaults(t *testing.T) {
	s, err := FromSettings(nil, false, nil)
	if err != nil || s.String() != "none" {
		t.Fatalf("without checkpointing: %v, %v; want none", s, err)
	}
	s, err = FromSettings(nil, true, func() float64 { return 0.5 })
	if err != nil {
		t.Fatal(err)
	}
	// Flink 1.19+: exponential-delay, 1 s initial, x1.5, 1 min max; a jitter draw of 0.5
	// adds nothing.
	got := failures(s, 0, time.Second, 3*time.Second, 10*time.Second, 20*time.Second)
	want := []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond, 3375 * time.Millisecond, 5062500 * time.Microsecond}
	if !slices.Equal(got, want) {
		t.Fatalf("default exponential delays %v, want %v", got, want)
	}
	if !strings.Contains(s.String(), "exponential-delay") {
		t.Errorf("String() = %q", s)
	}
}

func TestFixedDelay(t *testing.T) {
	s, err := FromSettings(map[string]string{KeyType: "fixed-delay", KeyFixedDelayAttempts: "2", KeyFixedDelayDelay: "5 s"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failures(s, 0, time.Hour, 2*time.Hour), []time.Duration{5 * time.Second, 5 * time.Second, -1}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Flink's default: one attempt, 1 s.
	s, _ = FromSettings(map[string]string{KeyTypeLegacy: "fixeddelay"}, false, nil)
	if got, want := failures(s, 0, time.Hour), []time.Duration{time.Second, -1}; !slices.Equal(got, want) {
		t.Fatalf("defaults: got %v, want %v", got, want)
	}
}

func TestFailureRate(t *testing.T) {
	s, err := FromSettings(map[string]string{
		KeyType: "failure-rate", KeyFailureRateMax: "2", KeyFailureRateInterval: "1 min", KeyFailureRateDelay: "3 s",
	}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two failures in a minute are tolerated; the third within a minute of the first is not.
	got := failures(s, 0, 20*time.Second, 50*time.Second)
	if want := []time.Duration{3 * time.Second, 3 * time.Second, -1}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	s, _ = FromSettings(map[string]string{KeyType: "failure-rate", KeyFailureRateMax: "2"}, true, nil)
	// Spread out, failures never exceed the rate.
	got = failures(s, 0, 40*time.Second, 70*time.Second, 110*time.Second, 140*time.Second)
	for i, d := range got {
		if d != time.Second {
			t.Fatalf("failure %d: delay %v, want 1 s (all: %v)", i, d, got)
		}
	}
}

func TestExponentialDelay(t *testing.T) {
	s, err := FromSettings(map[string]string{
		KeyType: "exponential-delay", KeyExpInitialBackoff: "1 s", KeyExpMaxBackoff: "5 s",
		KeyExpMultiplier: "2", KeyExpJitter: "0", KeyExpResetThreshold: "10 min", KeyExpAttempts: "4",
	}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := failures(s, 0, 2*time.Second, 5*time.Second, 10*time.Second, 20*time.Second)
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, -1}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	// Running for reset-backoff-threshold after a restart starts the backoff over.
	s, _ = FromSettings(map[string]string{
		KeyType: "exponential-delay", KeyExpMultiplier: "2", KeyExpJitter: "0", KeyExpResetThreshold: "10 min", KeyExpAttempts: "2",
	}, true, nil)
	got = failures(s, 0, 5*time.Second, 5*time.Second+3*time.Second+10*time.Minute, 11*time.Minute)
	if want := []time.Duration{time.Second, 2 * time.Second, time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("with reset: got %v, want %v", got, want)
	}

	// Jitter moves a delay by at most jitter-factor of it, never below the initial backoff.
	for _, r := range []float64{0, 0.999999} {
		s := ExponentialDelay(ExponentialOptions{
			InitialBackoff: time.Second, MaxBackoff: time.Minute, Multiplier: 2, JitterFactor: 0.25,
			ResetThreshold: time.Hour, Rand: func() float64 { return r },
		})
		got := failures(s, 0, time.Minute)
		lo, hi := []time.Duration{time.Second, 1500 * time.Millisecond}, []time.Duration{1250 * time.Millisecond, 2500 * time.Millisecond}
		for i, d := range got {
			if d < lo[i] || d > hi[i] {
				t.Fatalf("rand %v: restart %d waits %v, want within [%v, %v]", r, i+1, d, lo[i], hi[i])
			}
		}
	}
}

func TestInvalidSettings(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]string
		key      string
	}{
		{map[string]string{KeyType: "sometimes"}, KeyType},
		{map[string]string{KeyType: "fixed-delay", KeyFixedDelayAttempts: "many"}, KeyFixedDelayAttempts},
		{map[string]string{KeyType: "fixed-delay", KeyFixedDelayDelay: "soon"}, KeyFixedDelayDelay},
		{map[string]string{KeyType: "failure-rate", KeyFailureRateMax: "0"}, KeyFailureRateMax},
		{map[string]string{KeyType: "exponential-delay", KeyExpMultiplier: "0.5"}, KeyExpMultiplier},
		{map[string]string{KeyType: "exponential-delay", KeyExpJitter: "2"}, KeyExpJitter},
		{map[string]string{KeyType: "exponential-delay", KeyExpMaxBackoff: "10 ms"}, KeyExpMaxBackoff},
	} {
		_, err := FromSettings(tc.settings, true, nil)
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%v: got %v, want ErrInvalidSettings naming %s", tc.settings, err, tc.key)
		}
	}
}
