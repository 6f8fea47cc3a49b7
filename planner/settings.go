package planner

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	// Zone names must resolve on machines without a zoneinfo database (containers), so the
	// binary carries its own copy.
	_ "time/tzdata"

	"github.com/pipesql/pipesql/connectors"
)

// settingSpec declares one SET key pipesql understands. Keys not declared here are
// accepted as Flink accepts them (they may be meant for a connector or a later version),
// unless they are a likely typo of a declared key.
type settingSpec struct {
	Key     string
	Type    connectors.OptionType
	Enum    []string
	Default string
	// check validates the value beyond its type; nil when the type says it all.
	check func(value string) error
}

// Setting keys the planner itself reads.
const (
	SettingLocalTimeZone     = "table.local-time-zone"
	SettingSourceIdleTimeout = "table.exec.source.idle-timeout"
)

var settingSpecs = []settingSpec{
	{Key: SettingLocalTimeZone, Type: connectors.StringOption, Default: "default", check: checkTimeZone},
	{Key: SettingSourceIdleTimeout, Type: connectors.DurationOption, Default: "0 ms"},
	{Key: "table.exec.state.ttl", Type: connectors.DurationOption, Default: "0 ms"},
	{Key: "table.exec.mini-batch.enabled", Type: connectors.BoolOption, Default: "false"},
	{Key: "table.exec.mini-batch.allow-latency", Type: connectors.DurationOption, Default: "0 ms"},
	{Key: "table.exec.mini-batch.size", Type: connectors.IntOption, Default: "-1"},
	{Key: "table.exec.sink.not-null-enforcer", Type: connectors.EnumOption, Enum: []string{"ERROR", "DROP"}, Default: "ERROR"},
	{Key: "table.exec.resource.default-parallelism", Type: connectors.IntOption, Default: "-1"},
	{Key: "table.dml-sync", Type: connectors.BoolOption, Default: "false"},
	{Key: "table.display.max-column-width", Type: connectors.IntOption, Default: "30"},
	{Key: "execution.runtime-mode", Type: connectors.EnumOption, Enum: []string{"streaming", "batch", "automatic"}, Default: "streaming"},
	{Key: "execution.checkpointing.interval", Type: connectors.DurationOption},
	{Key: "execution.checkpointing.mode", Type: connectors.EnumOption, Enum: []string{"EXACTLY_ONCE", "AT_LEAST_ONCE"}, Default: "EXACTLY_ONCE"},
	{Key: "execution.checkpointing.timeout", Type: connectors.DurationOption, Default: "10 min"},
	{Key: "execution.checkpointing.min-pause", Type: connectors.DurationOption, Default: "0 ms"},
	{Key: "execution.checkpointing.max-concurrent-checkpoints", Type: connectors.IntOption, Default: "1"},
	{Key: "execution.checkpointing.tolerable-failed-checkpoints", Type: connectors.IntOption, Default: "0"},
	{Key: "execution.savepoint.path", Type: connectors.StringOption},
	{Key: "execution.savepoint.ignore-unclaimed-state", Type: connectors.BoolOption, Default: "false"},
	{Key: "execution.checkpointing.dir", Type: connectors.StringOption, Default: "./pipesql-checkpoints"},
	{Key: "execution.checkpointing.num-retained", Type: connectors.IntOption, Default: "1"},
	{Key: "execution.checkpointing.savepoint-dir", Type: connectors.StringOption},
	{Key: "state.savepoints.dir", Type: connectors.StringOption},
	{Key: "metrics.address", Type: connectors.StringOption},
	{Key: "state.checkpoints.dir", Type: connectors.StringOption},
	{Key: "state.checkpoints.num-retained", Type: connectors.IntOption, Default: "1"},
	{Key: "parallelism.default", Type: connectors.IntOption, Default: "1"},
	{Key: "pipeline.name", Type: connectors.StringOption},
	{Key: "pipeline.auto-watermark-interval", Type: connectors.DurationOption, Default: "200 ms"},
	{Key: "restart-strategy.type", Type: connectors.EnumOption, Enum: restartStrategies},
	{Key: "restart-strategy", Type: connectors.EnumOption, Enum: restartStrategies},
	{Key: "restart-strategy.fixed-delay.attempts", Type: connectors.IntOption, Default: "1"},
	{Key: "restart-strategy.fixed-delay.delay", Type: connectors.DurationOption, Default: "1 s"},
	{Key: "restart-strategy.failure-rate.max-failures-per-interval", Type: connectors.IntOption, Default: "1"},
	{Key: "restart-strategy.failure-rate.failure-rate-interval", Type: connectors.DurationOption, Default: "1 min"},
	{Key: "restart-strategy.failure-rate.delay", Type: connectors.DurationOption, Default: "1 s"},
	{Key: "restart-strategy.exponential-delay.initial-backoff", Type: connectors.DurationOption, Default: "1 s"},
	{Key: "restart-strategy.exponential-delay.max-backoff", Type: connectors.DurationOption, Default: "1 min"},
	{Key: "restart-strategy.exponential-delay.backoff-multiplier", Type: connectors.StringOption, Default: "1.5", check: checkPositiveFloat},
	{Key: "restart-strategy.exponential-delay.reset-backoff-threshold", Type: connectors.DurationOption, Default: "1 h"},
	{Key: "restart-strategy.exponential-delay.jitter-factor", Type: connectors.StringOption, Default: "0.1", check: checkPositiveFloat},
	{Key: "restart-strategy.exponential-delay.attempts-before-reset-backoff", Type: connectors.IntOption},
	{Key: "sql-client.execution.result-mode", Type: connectors.EnumOption, Enum: []string{"table", "changelog", "tableau"}, Default: "table"},
	{Key: "sql-client.execution.max-table-result.rows", Type: connectors.IntOption, Default: "1000000"},
	{Key: "sql-client.display.max-column-width", Type: connectors.IntOption, Default: "30"},
}

var restartStrategies = []string{
	"none", "off", "disable", "fixeddelay", "fixed-delay", "failurerate", "failure-rate",
	"exponentialdelay", "exponential-delay",
}

func findSetting(key string) (settingSpec, bool) {
	for _, s := range settingSpecs {
		if s.Key == key {
			return s, true
		}
	}
	return settingSpec{}, false
}

// settingKeys returns every declared key, for suggestions.
func settingKeys() []string {
	keys := make([]string, len(settingSpecs))
	for i, s := range settingSpecs {
		keys[i] = s.Key
	}
	return keys
}

// validateSetting checks key = value. Unknown keys pass unless they are within two edits
// of a declared key: then the user most likely misspelt it, and silently ignoring the
// setting would be worse than refusing it.
func validateSetting(key, value string) error {
	spec, ok := findSetting(key)
	if !ok {
		if c := closest(key, settingKeys(), 2); c != "" {
			return kindErrorf(ErrUnknownSetting, "unknown setting '%s': did you mean '%s'?", key, c)
		}
		return nil
	}
	err := checkOptionValue(spec.Type, spec.Enum, value)
	if err == nil && spec.check != nil {
		err = spec.check(value)
	}
	if err != nil {
		return kindErrorf(ErrInvalidSetting, "invalid value '%s' for setting '%s': %v", value, key, err)
	}
	return nil
}

// checkOptionValue checks that value reads as a value of type t (one of enum for EnumOption).
// The error says what was expected, without the key (callers add it).
func checkOptionValue(t connectors.OptionType, enum []string, value string) error {
	v := strings.TrimSpace(value)
	switch t {
	case connectors.BoolOption:
		if _, err := connectors.ParseBool(v); err != nil {
			return fmt.Errorf("expected true or false")
		}
	case connectors.IntOption:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("expected an integer")
		}
	case connectors.DurationOption:
		if _, err := connectors.ParseDuration(v); err != nil {
			return fmt.Errorf("expected a duration such as '30 s', '5 min', '1 h' or '500' (milliseconds)")
		}
	case connectors.EnumOption:
		for _, e := range enum {
			if strings.EqualFold(e, v) {
				return nil
			}
		}
		return fmt.Errorf("expected one of %s", strings.Join(enum, ", "))
	}
	return nil
}

func checkPositiveFloat(value string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || f < 0 {
		return fmt.Errorf("expected a non-negative number")
	}
	return nil
}

// customZone matches Flink's custom zone ids: GMT+8, GMT-08:00, UTC+05:30.
var customZone = regexp.MustCompile(`^(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?$`)

func checkTimeZone(value string) error {
	_, err := LoadTimeZone(value)
	return err
}

// LoadTimeZone resolves a table.local-time-zone value: a full IANA name such as
// 'Asia/Shanghai', 'UTC', or a custom id such as 'GMT+08:00'. 'default' is UTC: Flink
// takes the JVM's zone there, but a job should mean the same on every machine (funcs
// makes the same choice). Abbreviations such as 'PST' are refused, as Flink refuses them:
// they are ambiguous.
func LoadTimeZone(value string) (*time.Location, error) {
	v := strings.TrimSpace(value)
	switch {
	case v == "" || strings.EqualFold(v, "default") || v == "UTC" || v == "GMT" || v == "Z":
		return time.UTC, nil
	}
	if m := customZone.FindStringSubmatch(v); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
		}
		if h > 18 || mins > 59 {
			return nil, fmt.Errorf("time zone offset out of range in '%s'", v)
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(v, off), nil
	}
	// IANA names contain a slash (Europe/Berlin) except for a few historical aliases,
	// which time.LoadLocation would accept together with abbreviations like EST; take
	// only names with a slash so 'PST'-style ids are refused as Flink refuses them.
	if !strings.Contains(v, "/") {
		return nil, fmt.Errorf("unknown time zone '%s': use a full name such as 'America/Los_Angeles' or an offset such as 'GMT-08:00'", v)
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone '%s': use a full name such as 'America/Los_Angeles' or an offset such as 'GMT-08:00'", v)
	}
	return loc, nil
}

// sortedSettings returns m as sorted key/value pairs.
func sortedSettings(m map[string]string) [][2]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		out[i] = [2]string{k, m[k]}
	}
	return out
}
