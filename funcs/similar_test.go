package funcs

import (
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestSimilarTo(t *testing.T) {
	cases := []struct {
		s, pat string
		want   bool
	}{
		{"abc", "abc", true},
		{"abc", "a%", true},
		{"abc", "_b_", true},
		{"abc", "b", false}, // the whole string, unlike a regex search
		{"abc", "%(b|d)%", true},
		{"abd", "a(b|c)(c|d)", true},
		{"aaa", "a*", true},
		{"", "a*", true},
		{"ab", "a+b?", true},
		{"aab", "a{2}b", true},
		{"ab", "a{2}b", false},
		{"a7", "[a-c][0-9]", true},
		{"d7", "[a-c][0-9]", false},
		{"x.y", "x.y", true}, // . is literal
		{"xzy", "x.y", false},
		{"a$^b", "a$^b", true},
		{"a\\b", "a\\b", true},
		{"a%", "a#%", true}, // with ESCAPE '#'
		{"ab", "a#%", false},
	}
	f, ok := Lookup("SIMILAR TO")
	if !ok {
		t.Fatal("no SIMILAR TO")
	}
	for _, c := range cases {
		args := []types.Value{types.StringValue(c.s), types.StringValue(c.pat)}
		if c.pat == "a#%" {
			args = append(args, types.StringValue("#"))
		}
		got, err := f.Impl(nil, args)
		if err != nil {
			t.Fatalf("%q SIMILAR TO %q: %v", c.s, c.pat, err)
		}
		if got.Bool() != c.want {
			t.Errorf("%q SIMILAR TO %q = %v, want %v", c.s, c.pat, got.Bool(), c.want)
		}
	}
	for _, pat := range []string{"[ab", "a(", "ab#"} {
		if _, err := compileSimilar(pat, "#", true); err == nil {
			t.Errorf("pattern %q compiled", pat)
		}
	}
}
