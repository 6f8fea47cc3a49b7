package funcs

import (
	"regexp"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	for pattern, want := range map[string]string{
		"(&|^)channel_id=([^&]*)": "channel_id=",
		"abc":                     "abc",
		"(abc)d+xy":               "abc",
		"a|b":                     "",
		"(?i)channel_id=(.*)":     "",
		"x*":                      "",
		"(ab)?cd":                 "cd",
		"[0-9]+":                  "",
	} {
		if got := requiredLiteral(pattern); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", pattern, got, want)
		}
	}
	// A string without the literal never matches: the check agrees with the matcher.
	inputs := []string{"", "channel_id=1", "x&channel_id=7&y", "channel_id", "CHANNEL_ID=3", "abcdxy", "abcd", "cd", "abxcd"}
	for _, pattern := range []string{"(&|^)channel_id=([^&]*)", "(abc)d+xy", "(ab)?cd"} {
		re, lit := regexp.MustCompile(pattern), requiredLiteral(pattern)
		for _, s := range inputs {
			if re.MatchString(s) && !mayMatch(s, lit) {
				t.Errorf("%q matches %q, which lacks %q", pattern, s, lit)
			}
		}
	}
}
