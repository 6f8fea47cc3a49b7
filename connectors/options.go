package connectors

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/pipesql/pipesql/config"
)

// ErrInvalidOption is returned (inside an *OptionError) when an option's value cannot be
// read as its declared type or is out of range.
var ErrInvalidOption = errors.New("invalid option value")

// OptionError says which option of which table is wrong, like fs.PathError says which file.
type OptionError struct {
	Table string // "" when not known
	Key   string
	Value string
	Err   error
}

func (e *OptionError) Error() string {
	msg := fmt.Sprintf("option '%s' = '%s': %v", e.Key, e.Value, e.Err)
	if e.Table != "" {
		return "table " + e.Table + ": " + msg
	}
	return msg
}

func (e *OptionError) Unwrap() error { return e.Err }

// Options reads a table's WITH options, falling back to the defaults declared by specs.
// Keys are matched exactly, as Flink does; a spec key may contain '#' for a column name
// (fields.#.kind), which matches any non-empty text. Every typed getter returns an
// *OptionError wrapping ErrInvalidOption when the value does not parse.
type Options struct {
	Table string
	Raw   map[string]string
	Specs []OptionSpec
}

// NewOptions returns a reader of the options of table.
func NewOptions(table string, raw map[string]string, specs []OptionSpec) Options {
	return Options{Table: table, Raw: raw, Specs: specs}
}

// Get returns the value of key as written, else its declared default. ok is false when
// the key is neither set nor has a default.
func (o Options) Get(key string) (value string, ok bool) {
	if v, set := o.Raw[key]; set {
		return v, true
	}
	if s, found := FindSpec(o.Specs, key); found && s.Default != "" {
		return s.Default, true
	}
	return "", false
}

// IsSet reports whether the user wrote key (defaults do not count).
func (o Options) IsSet(key string) bool {
	_, set := o.Raw[key]
	return set
}

// String returns the value of key or its default, "" when neither.
func (o Options) String(key string) string {
	v, _ := o.Get(key)
	return v
}

func (o Options) fail(key, value string, err error) error {
	return &OptionError{Table: o.Table, Key: key, Value: value, Err: err}
}

// Bool returns key as a boolean (false when unset without a default).
func (o Options) Bool(key string) (bool, error) {
	v, ok := o.Get(key)
	if !ok {
		return false, nil
	}
	b, err := ParseBool(v)
	if err != nil {
		return false, o.fail(key, v, err)
	}
	return b, nil
}

// Int returns key as an integer; set is false when the key is unset without a default.
func (o Options) Int(key string) (n int64, set bool, err error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, true, o.fail(key, v, fmt.Errorf("%w: not an integer", ErrInvalidOption))
	}
	return n, true, nil
}

// Float returns key as a floating point number; set is false when unset without a default.
func (o Options) Float(key string) (f float64, set bool, err error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false, nil
	}
	f, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) {
		return 0, true, o.fail(key, v, fmt.Errorf("%w: not a number", ErrInvalidOption))
	}
	return f, true, nil
}

// Duration returns key as a duration (see ParseDuration); set is false when unset
// without a default.
func (o Options) Duration(key string) (d time.Duration, set bool, err error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false, nil
	}
	d, err = ParseDuration(v)
	if err != nil {
		return 0, true, o.fail(key, v, err)
	}
	return d, true, nil
}

// MemorySize returns key as a number of bytes (see ParseMemorySize); set is false when
// unset without a default.
func (o Options) MemorySize(key string) (n int64, set bool, err error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false, nil
	}
	n, err = ParseMemorySize(v)
	if err != nil {
		return 0, true, o.fail(key, v, err)
	}
	return n, true, nil
}

// Enum returns key lower-cased after checking it is one of allowed (case-insensitive).
func (o Options) Enum(key string, allowed ...string) (string, error) {
	v, ok := o.Get(key)
	if !ok {
		return "", nil
	}
	for _, a := range allowed {
		if strings.EqualFold(a, strings.TrimSpace(v)) {
			return a, nil
		}
	}
	return "", o.fail(key, v, fmt.Errorf("%w: expected one of %s", ErrInvalidOption, strings.Join(allowed, ", ")))
}

// FindSpec returns the spec whose key matches key; '#' in a spec key matches any
// non-empty text (a column name may contain dots, so it is not limited to one segment).
func FindSpec(specs []OptionSpec, key string) (OptionSpec, bool) {
	for _, s := range specs {
		if s.Key == key {
			return s, true
		}
	}
	for _, s := range specs {
		if strings.Contains(s.Key, "#") && matchKey(s.Key, key) {
			return s, true
		}
	}
	return OptionSpec{}, false
}

// matchKey matches a pattern with '#' wildcards (each at least one byte) against key.
func matchKey(pattern, key string) bool {
	i := strings.IndexByte(pattern, '#')
	if i < 0 {
		return pattern == key
	}
	prefix, rest := pattern[:i], pattern[i+1:]
	if !strings.HasPrefix(key, prefix) {
		return false
	}
	key = key[len(prefix):]
	for n := 1; n <= len(key); n++ {
		if matchKey(rest, key[n:]) {
			return true
		}
	}
	return false
}

// FormatOptions returns the options of format name from a table's options: the keys
// that start with prefix+name+"." ('json.ignore-parse-errors' for prefix "" and name
// "json", 'value.json.fail-on-missing-field' for prefix "value."), with that removed.
func FormatOptions(tableOptions map[string]string, prefix, name string) map[string]string {
	p := prefix + name + "."
	out := map[string]string{}
	for k, v := range tableOptions {
		if strings.HasPrefix(k, p) {
			out[k[len(p):]] = v
		}
	}
	return out
}

// ParseBool reads 'true' or 'false' (any case), as Flink's boolean options (see
// config.ParseBool); the error wraps ErrInvalidOption.
func ParseBool(s string) (bool, error) {
	b, err := config.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrInvalidOption, err)
	}
	return b, nil
}

// ParseDuration reads a duration the way Flink's TimeUtils.parseDuration does ('5 min',
// '30s', '1 h', '2 days'; a bare number is milliseconds; see config.ParseDuration); the
// error wraps ErrInvalidOption.
func ParseDuration(s string) (time.Duration, error) {
	d, err := config.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalidOption, err)
	}
	return d, nil
}

// ParseMemorySize reads a size the way Flink's MemorySize does: a number followed by an
// optional unit (b, k/kb, m/mb, g/gb, t/tb and their long forms, powers of 1024); a bare
// number is bytes.
func ParseMemorySize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: a memory size must start with a number", ErrInvalidOption)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: memory size out of range", ErrInvalidOption)
	}
	unit := strings.ToLower(strings.TrimFunc(t[i:], unicode.IsSpace))
	var shift uint
	switch unit {
	case "", "b", "bytes":
	case "k", "kb", "kibibytes":
		shift = 10
	case "m", "mb", "mebibytes":
		shift = 20
	case "g", "gb", "gibibytes":
		shift = 30
	case "t", "tb", "tebibytes":
		shift = 40
	default:
		return 0, fmt.Errorf("%w: unknown memory unit %q (use b, kb, mb, gb or tb)", ErrInvalidOption, unit)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%w: memory size out of range", ErrInvalidOption)
	}
	return n << shift, nil
}
