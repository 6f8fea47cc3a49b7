package config

import (
	"fmt"
	"strings"
)

// flinkNamespaces are the first segments of Flink's configuration keys. An undeclared
// key under one of them is most likely a Flink setting pipesql has no use for (a job
// file written for Flink sets many), so it is accepted with a warning; an undeclared
// key elsewhere is refused.
var flinkNamespaces = []string{
	"akka", "blob", "client", "cluster", "env", "execution", "external-resources",
	"fs", "heartbeat", "high-availability", "historyserver", "io", "jobmanager",
	"jobstore", "kubernetes", "metrics", "parallelism", "pekko", "pipeline", "python",
	"queryable-state", "resourcemanager", "rest", "restart-strategy", "s3", "security",
	"slot", "slotmanager", "sql-client", "sql-gateway", "state", "table", "taskmanager",
	"web", "yarn",
}

// typoDistance is how close an undeclared key must be to a declared one to be taken
// for its misspelling. It is small because Flink has many keys that differ from
// pipesql's by a few characters.
const typoDistance = 2

// Validate checks SET key = value. It returns a warning for a key that is accepted but
// has no effect in pipesql, and an error for:
//   - a declared key with a value it cannot take (ErrInvalidValue, saying what was
//     expected);
//   - an undeclared key within two edits of a declared one (ErrUnknownKey, naming it);
//   - an undeclared key outside Flink's namespaces (ErrUnknownKey, naming the closest
//     declared key when one is near).
//
// An undeclared key under a Flink namespace (table., execution., taskmanager. ...) is
// accepted with a warning that pipesql does not know it.
func Validate(key, value string) (warning string, err error) {
	k, ok := Lookup(key)
	if ok {
		if err := k.check(value); err != nil {
			return "", &invalidValue{key: key, value: value, err: err}
		}
		if !k.HasEffect() {
			return fmt.Sprintf("setting '%s' has no effect in pipesql: %s", key, k.NoEffect), nil
		}
		return "", nil
	}
	if c := Closest(key, names, typoDistance); c != "" {
		return "", fmt.Errorf("%w '%s': did you mean '%s'?", ErrUnknownKey, key, c)
	}
	ns, _, _ := strings.Cut(key, ".")
	for _, n := range flinkNamespaces {
		if ns == n {
			return fmt.Sprintf("setting '%s' is not known to pipesql and has no effect", key), nil
		}
	}
	if c := Closest(key, names, SuggestionDistance(key)); c != "" {
		return "", fmt.Errorf("%w '%s': did you mean '%s'?", ErrUnknownKey, key, c)
	}
	return "", fmt.Errorf("%w '%s': not a key pipesql or Flink reads (Flink's keys start with table., execution., pipeline., state. ...)", ErrUnknownKey, key)
}

// invalidValue is ErrInvalidValue for one key and value.
type invalidValue struct {
	key, value string
	err        error
}

func (e *invalidValue) Error() string {
	return fmt.Sprintf("invalid value '%s' for setting '%s': %v", e.value, e.key, e.err)
}

func (e *invalidValue) Is(target error) bool { return target == ErrInvalidValue }

func (e *invalidValue) Unwrap() error { return e.err }
