package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	// Zone names must resolve on machines without a zoneinfo database (containers), so
	// the binary carries its own copy.
	_ "time/tzdata"
)

// ParseBool reads 'true' or 'false' (any case), as Flink's boolean options.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("expected true or false")
}

// ParseDuration reads a duration the way Flink's TimeUtils.parseDuration does: a number
// followed by an optional unit (d, h, min, s, ms, us/µs, ns and their long forms, such as
// '5 min', '30s', '1 h', '2 days'); a bare number is milliseconds. Go's own forms
// ('1m30s') are accepted too.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty duration")
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errors.New("a duration must start with a number")
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, errors.New("duration number out of range")
	}
	var mult time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		mult = time.Millisecond
	case "d", "day", "days":
		mult = 24 * time.Hour
	case "h", "hour", "hours":
		mult = time.Hour
	case "min", "m", "minute", "minutes":
		mult = time.Minute
	case "s", "sec", "secs", "second", "seconds":
		mult = time.Second
	case "us", "µs", "micro", "micros", "microsecond", "microseconds":
		mult = time.Microsecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		mult = time.Nanosecond
	default:
		if d, err := time.ParseDuration(strings.ReplaceAll(t, " ", "")); err == nil && d >= 0 {
			return d, nil
		}
		return 0, fmt.Errorf("unknown duration unit %q (use d, h, min, s, ms, us or ns)", unit)
	}
	if n > int64(math.MaxInt64/mult) {
		return 0, errors.New("duration out of range")
	}
	return time.Duration(n) * mult, nil
}

// customZone matches Flink's custom zone ids: GMT+8, GMT-08:00, UTC+05:30.
var customZone = regexp.MustCompile(`^(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?$`)

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

// uriScheme matches the start of a URI with an authority: s3://, hdfs://, file://.
var uriScheme = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):`)

// LocalDir reads a checkpoint or savepoint directory as Flink writes one: a path
// ('/x', 'relative/x') or a file URI ('file:///x', 'file:/x', 'file://localhost/x'),
// all of which name the same local directory; the result is a cleaned path, "" for "".
// A file URI with another host, or another file system (s3://, hdfs://), is refused:
// pipesql reads and writes checkpoints on the local file system only.
func LocalDir(value string) (string, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return "", nil
	}
	m := uriScheme.FindStringSubmatch(v)
	if m == nil {
		return filepath.Clean(v), nil
	}
	if !strings.EqualFold(m[1], "file") {
		return "", fmt.Errorf("expected a local directory: the %s file system is not supported, pipesql keeps checkpoints on the local file system", m[1])
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("expected a local directory: %v", err)
	}
	if u.Host != "" && !strings.EqualFold(u.Hostname(), "localhost") {
		return "", fmt.Errorf("expected a local directory: '%s' names the host '%s', and pipesql keeps checkpoints on the local file system (use file:///path)", v, u.Host)
	}
	p := u.Path
	if u.Opaque != "" { // file:relative/dir
		p = u.Opaque
	}
	if p == "" {
		return "", fmt.Errorf("expected a local directory: '%s' has no path", v)
	}
	return filepath.Clean(p), nil
}
