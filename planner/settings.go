package planner

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
)

// Setting keys the planner itself reads (declared with every other key in package config).
const (
	SettingLocalTimeZone     = config.LocalTimeZone
	SettingSourceIdleTimeout = config.SourceIdleTimeout
)

// validateSetting checks key = value against the table of package config. It returns
// a warning for a key that is accepted without effect.
func validateSetting(key, value string) (string, error) {
	warning, err := config.Validate(key, value)
	switch {
	case errors.Is(err, config.ErrUnknownKey):
		return "", kindErrorf(ErrUnknownSetting, "%v", err)
	case err != nil:
		return "", kindErrorf(ErrInvalidSetting, "%v", err)
	}
	return warning, nil
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

// LoadTimeZone resolves a table.local-time-zone value (see config.LoadTimeZone).
func LoadTimeZone(value string) (*time.Location, error) { return config.LoadTimeZone(value) }

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
