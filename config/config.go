package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Type is the type of a key's value.
type Type int

const (
	String   Type = iota
	Int           // a decimal integer
	Bool          // true or false
	Duration      // '5 min', '300000' (milliseconds), '30s', '1 h'
	Enum          // one of Key.Enum, any case
	Float         // a decimal number
	Dir           // a local directory: '/x', 'file:///x' or 'file:/x' (see LocalDir)
)

func (t Type) String() string {
	return [...]string{"string", "int", "bool", "duration", "enum", "float", "directory"}[t]
}

// Component names the part of pipesql that reads a key.
type Component string

const (
	Planner Component = "planner"
	Exec    Component = "exec"
	Restart Component = "exec/restart"
	Engine  Component = "engine"
	Shell   Component = "shell"
)

// Key declares one configuration key: what SET 'key' = 'value' and --set key=value
// accept, and how the components read it.
type Key struct {
	Name string
	// Aliases are older names of the key that Flink still reads (state.checkpoints.dir
	// for execution.checkpointing.dir). A reader takes Name when it is set, else the
	// first alias set.
	Aliases []string
	Type    Type
	Enum    []string // the values of an Enum key
	// Default is the value a reader gets when the key is not set, "" when it has none.
	Default string
	// Shown is the default as the README shows it, when Default alone would mislead
	// ("off", "exponential-delay with checkpoints, else none"); "" shows Default.
	Shown string
	// ReadBy is the component that reads the key; "" when none does.
	ReadBy Component
	// NoEffect says why a key pipesql accepts (because Flink job files set it) has no
	// effect in pipesql; "" when the key has an effect. Setting such a key warns.
	NoEffect string
	// Doc is what the key does, for the README.
	Doc string
	// Check validates a value beyond its type; nil when the type says it all. Its
	// error says what was expected, without the key.
	Check func(value string) error
}

// HasEffect reports whether setting the key changes what pipesql does.
func (k *Key) HasEffect() bool { return k.NoEffect == "" }

var (
	byName = map[string]*Key{} // names and aliases
	names  []string            // names and aliases, for suggestions
)

func init() {
	for i := range keys {
		k := &keys[i]
		for _, n := range append([]string{k.Name}, k.Aliases...) {
			if _, dup := byName[n]; dup {
				panic("config: key declared twice: " + n)
			}
			byName[n] = k
			names = append(names, n)
		}
		if k.Default != "" {
			if err := k.check(k.Default); err != nil {
				panic(fmt.Sprintf("config: default of %s: %v", k.Name, err))
			}
		}
	}
	sort.Strings(names)
}

// Lookup returns the key declared under name or one of its aliases.
func Lookup(name string) (*Key, bool) {
	k, ok := byName[name]
	return k, ok
}

// Keys returns every declared key, in the order of the table.
func Keys() []*Key {
	out := make([]*Key, len(keys))
	for i := range keys {
		out[i] = &keys[i]
	}
	return out
}

// Names returns every declared name and alias, sorted.
func Names() []string { return append([]string(nil), names...) }

// must returns the declared key name; a reader asking for an undeclared key is a bug.
func must(name string) *Key {
	k, ok := byName[name]
	if !ok {
		panic("config: undeclared key " + name)
	}
	return k
}

// check validates v as a value of k.
func (k *Key) check(v string) error {
	v = strings.TrimSpace(v)
	switch k.Type {
	case Bool:
		if _, err := ParseBool(v); err != nil {
			return err
		}
	case Int:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("expected an integer")
		}
	case Float:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("expected a number")
		}
	case Duration:
		if _, err := ParseDuration(v); err != nil {
			return fmt.Errorf("expected a duration such as '30 s', '5 min', '1 h' or '500' (milliseconds)")
		}
	case Enum:
		if k.enumValue(v) == "" {
			return fmt.Errorf("expected one of %s", strings.Join(k.Enum, ", "))
		}
	case Dir:
		if _, err := LocalDir(v); err != nil {
			return err
		}
	}
	if k.Check != nil {
		return k.Check(v)
	}
	return nil
}

// enumValue returns the member of k.Enum that v names (any case), or "".
func (k *Key) enumValue(v string) string {
	for _, e := range k.Enum {
		if strings.EqualFold(e, strings.TrimSpace(v)) {
			return e
		}
	}
	return ""
}

// Error says which key has a value that cannot be read, and what was expected.
type Error struct {
	Key, Value string
	Err        error
}

func (e *Error) Error() string { return fmt.Sprintf("%s = '%s': %v", e.Key, e.Value, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Values reads typed values from a job's settings (key -> value as SET them), taking
// defaults from the table. A value that does not read as its key's type (settings
// that did not pass through Validate) yields the default, and Err returns the first
// such error.
type Values struct {
	settings map[string]string
	err      error
}

// Read returns the values of settings.
func Read(settings map[string]string) *Values { return &Values{settings: settings} }

// Err returns the first value that did not read, as an *Error naming its key.
func (v *Values) Err() error { return v.err }

// Fail records an error about the key name (the first one is kept), for checks that
// span several keys.
func (v *Values) Fail(name, why string) {
	if v.err == nil {
		set, value, _ := v.lookup(must(name))
		v.err = &Error{Key: set, Value: value, Err: errors.New(why)}
	}
}

// IsSet reports whether the key or one of its aliases is set.
func (v *Values) IsSet(name string) bool {
	_, _, ok := v.lookup(must(name))
	return ok
}

// lookup returns the name under which k is set and its value.
func (v *Values) lookup(k *Key) (string, string, bool) {
	for _, n := range append([]string{k.Name}, k.Aliases...) {
		if s, ok := v.settings[n]; ok {
			return n, strings.TrimSpace(s), true
		}
	}
	return k.Name, k.Default, false
}

// raw returns the value of key name (set or default) after checking it, and whether it
// is non-empty.
func (v *Values) raw(name string, t Type) (string, bool) {
	k := must(name)
	if k.Type != t {
		panic(fmt.Sprintf("config: %s is a %s, read as a %s", name, k.Type, t))
	}
	set, s, _ := v.lookup(k)
	if s == "" {
		s = k.Default // set empty: as if not set
	}
	if s == "" {
		return "", false
	}
	if err := k.check(s); err != nil {
		if v.err == nil {
			v.err = &Error{Key: set, Value: s, Err: err}
		}
		s = k.Default
	}
	return s, s != ""
}

// String returns the value of a String key.
func (v *Values) String(name string) string {
	s, _ := v.raw(name, String)
	return s
}

// Int returns the value of an Int key, 0 when it has none.
func (v *Values) Int(name string) int {
	s, ok := v.raw(name, Int)
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(s)
	return n
}

// Float returns the value of a Float key, 0 when it has none.
func (v *Values) Float(name string) float64 {
	s, ok := v.raw(name, Float)
	if !ok {
		return 0
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// Bool returns the value of a Bool key, false when it has none.
func (v *Values) Bool(name string) bool {
	s, ok := v.raw(name, Bool)
	if !ok {
		return false
	}
	b, _ := ParseBool(s)
	return b
}

// Duration returns the value of a Duration key, 0 when it has none.
func (v *Values) Duration(name string) time.Duration {
	s, ok := v.raw(name, Duration)
	if !ok {
		return 0
	}
	d, _ := ParseDuration(s)
	return d
}

// Enum returns the value of an Enum key spelt as the table declares it, "" when it has
// none.
func (v *Values) Enum(name string) string {
	s, ok := v.raw(name, Enum)
	if !ok {
		return ""
	}
	return must(name).enumValue(s)
}

// Dir returns the value of a Dir key as a cleaned local path (see LocalDir), "" when
// it has none.
func (v *Values) Dir(name string) string {
	s, ok := v.raw(name, Dir)
	if !ok {
		return ""
	}
	d, _ := LocalDir(s)
	return d
}

// Checks shared by the table.

func atLeast(least int64) func(string) error {
	return func(v string) error {
		if n, _ := strconv.ParseInt(v, 10, 64); n < least {
			return fmt.Errorf("must be at least %d", least)
		}
		return nil
	}
}

func positiveDuration(v string) error {
	if d, _ := ParseDuration(v); d <= 0 {
		return fmt.Errorf("must be positive")
	}
	return nil
}

// between checks least <= v, and v <= most when most > least.
func between(least, most float64) func(string) error {
	return func(v string) error {
		f, _ := strconv.ParseFloat(v, 64)
		switch {
		case most > least && (f < least || f > most):
			return fmt.Errorf("must be between %g and %g", least, most)
		case f < least:
			return fmt.Errorf("must be at least %g", least)
		}
		return nil
	}
}

func timeZone(v string) error {
	_, err := LoadTimeZone(v)
	return err
}

// haType accepts Flink's NONE and refuses the high-availability services pipesql does
// not have, so that a job file written for a Flink HA cluster does not run believing
// it has one.
func haType(v string) error {
	switch t := strings.ToUpper(strings.TrimSpace(v)); t {
	case "NONE":
		return nil
	case "ZOOKEEPER", "KUBERNETES":
		return fmt.Errorf("pipesql has no %s high availability: a job runs in one process and resumes from its latest checkpoint when it is started again (by systemd, a Kubernetes Deployment ...); set NONE or remove the setting (high availability on Kafka is not built yet)", strings.ToLower(t))
	default:
		return fmt.Errorf("expected NONE (pipesql runs a job in one process; high availability on Kafka is not built yet)")
	}
}
