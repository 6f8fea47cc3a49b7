package connectors

import (
	"errors"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"300000": 300 * time.Second, "5 min": 5 * time.Minute, "30s": 30 * time.Second, "1 h": time.Hour,
		"2 days": 48 * time.Hour, "10ms": 10 * time.Millisecond, " 7 SECONDS ": 7 * time.Second, "1m30s": 90 * time.Second,
		"0": 0,
	}
	for in, want := range good {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "min", "5 fortnights", "-5 s", "99999999999999999999 d", "9223372036854775807 d"} {
		if _, err := ParseDuration(in); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("ParseDuration(%q): %v, want ErrInvalidOption", in, err)
		}
	}
}

func TestParseMemorySize(t *testing.T) {
	good := map[string]int64{"128MB": 128 << 20, "100b": 100, "1 kb": 1024, "2g": 2 << 30, "42": 42}
	for in, want := range good {
		if got, err := ParseMemorySize(in); err != nil || got != want {
			t.Errorf("ParseMemorySize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "5 parsecs", "99999999999 tb"} {
		if _, err := ParseMemorySize(in); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("ParseMemorySize(%q): %v, want ErrInvalidOption", in, err)
		}
	}
}

func TestOptions(t *testing.T) {
	specs := []OptionSpec{
		{Key: "rows-per-second", Type: IntOption, Default: "10000"},
		{Key: "fields.#.kind", Type: EnumOption, Default: "random"},
		{Key: "flag", Type: BoolOption},
	}
	o := NewOptions("t", map[string]string{"fields.a.b.kind": "sequence", "flag": "TRUE", "bad": "x"}, specs)
	if n, set, err := o.Int("rows-per-second"); n != 10000 || !set || err != nil {
		t.Errorf("default: %v %v %v", n, set, err)
	}
	if v := o.String("fields.a.b.kind"); v != "sequence" {
		t.Errorf("column with a dot: %q", v)
	}
	if v := o.String("fields.other.kind"); v != "random" {
		t.Errorf("wildcard default: %q", v)
	}
	if b, err := o.Bool("flag"); !b || err != nil {
		t.Errorf("bool: %v %v", b, err)
	}
	_, _, err := NewOptions("t", map[string]string{"rows-per-second": "many"}, specs).Int("rows-per-second")
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Key != "rows-per-second" || err.Error() != "table t: option 'rows-per-second' = 'many': invalid option value: not an integer" {
		t.Errorf("error: %v", err)
	}
	if _, ok := FindSpec(specs, "fields..kind"); ok {
		t.Error("'#' matched an empty column name")
	}
	if got := FormatOptions(map[string]string{"json.a": "1", "value.json.b": "2", "jsonc": "3"}, "", "json"); len(got) != 1 || got["a"] != "1" {
		t.Errorf("FormatOptions: %v", got)
	}
}
