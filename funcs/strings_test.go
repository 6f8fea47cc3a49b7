package funcs

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestStringFunctions(t *testing.T) {
	runCases(t, ctxIn(nil), []valueCase{
		{"LOWER", []types.Value{s("HeLLo")}, s("hello"), nil},
		{"UPPER", []types.Value{s("straße")}, s("STRASSE"), nil},
		{"UPPER", []types.Value{null}, null, nil},
		{"CONCAT", []types.Value{s("AA"), s("BB"), s("CC")}, s("AABBCC"), nil},
		{"CONCAT", []types.Value{s("a"), null}, null, nil},
		{"CONCAT", []types.Value{s("n="), i32(5)}, s("n=5"), nil},
		{"||", []types.Value{s("a"), s("b")}, s("ab"), nil},
		{"CONCAT_WS", []types.Value{s("~"), s("AA"), null, s("BB"), s(""), s("CC")}, s("AA~BB~~CC"), nil},
		{"CONCAT_WS", []types.Value{null, s("AA")}, null, nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(2)}, s("ello"), nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(2), i32(3)}, s("ell"), nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(0), i32(2)}, s("He"), nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(-3)}, s("llo"), nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(-9)}, s(""), nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(9)}, s(""), nil},
		{"SUBSTRING", []types.Value{s("Hello"), i32(2), i32(-1)}, null, nil},
		{"SUBSTR", []types.Value{s("日本語テキスト"), i32(3), i32(2)}, s("語テ"), nil},
		{"TRIM", []types.Value{s("  a b  ")}, s("a b"), nil},
		{"TRIM", []types.Value{s("\ta\t")}, s("\ta\t"), nil},
		{"LTRIM", []types.Value{s("  a  ")}, s("a  "), nil},
		{"RTRIM", []types.Value{s("  a  ")}, s("  a"), nil},
		{"RTRIM", []types.Value{s("axxyx"), s("xy")}, s("a"), nil},
		{"TRIM_BOTH", []types.Value{s("x"), s("xxaxx")}, s("a"), nil},
		{"TRIM_LEADING", []types.Value{s("xy"), s("xyaxy")}, s("axy"), nil},
		{"TRIM_TRAILING", []types.Value{s("xy"), s("xyaxy")}, s("xya"), nil},
		{"CHAR_LENGTH", []types.Value{s("héllo")}, i32(5), nil},
		{"CHARACTER_LENGTH", []types.Value{s("")}, i32(0), nil},
		{"REPLACE", []types.Value{s("ababab"), s("abab"), s("z")}, s("zab"), nil},
		{"REPLACE", []types.Value{s("hello world"), s("world"), s("flink")}, s("hello flink"), nil},
		{"REGEXP_EXTRACT", []types.Value{s("foothebar"), s("foo(.*?)(bar)"), i32(2)}, s("bar"), nil},
		{"REGEXP_EXTRACT", []types.Value{s("foothebar"), s("foo(.*?)(bar)")}, s("foothebar"), nil},
		{"REGEXP_EXTRACT", []types.Value{s("foothebar"), s("foo(.*?)(bar)"), i32(3)}, null, nil},
		{"REGEXP_EXTRACT", []types.Value{s("xyz"), s("a(b)")}, null, nil},
		{"REGEXP_EXTRACT", []types.Value{s("abc"), s("(")}, null, nil}, // a bad per-row pattern is NULL
		{"REGEXP_REPLACE", []types.Value{s("foobar"), s("oo|ar"), s("")}, s("fb"), nil},
		{"REGEXP_REPLACE", []types.Value{s("a1b22"), s(`\d+`), s("$0#")}, s("a$0#b$0#"), nil},
		{"REGEXP", []types.Value{s("abc"), s("b")}, tru, nil},
		{"REGEXP", []types.Value{s("abc"), s("")}, fals, nil},
		{"SPLIT_INDEX", []types.Value{s("a,b,,c"), s(","), i32(2)}, s(""), nil},
		{"SPLIT_INDEX", []types.Value{s("a,b,,c"), s(","), i32(3)}, s("c"), nil},
		{"SPLIT_INDEX", []types.Value{s("a,b,,c"), s(","), i32(4)}, null, nil},
		{"SPLIT_INDEX", []types.Value{s("a-!-b"), s("-!-"), i32(1)}, s("b"), nil},
		{"SPLIT_INDEX", []types.Value{s("a,b"), s(","), i32(-1)}, null, nil},
		{"SPLIT_INDEX", []types.Value{s(""), s(","), i32(0)}, null, nil},
		{"SPLIT_INDEX", []types.Value{s("a b"), s(""), i32(1)}, s("b"), nil},
		{"SPLIT_INDEX", []types.Value{s("a|b"), i32('|'), i32(1)}, s("b"), nil},
		{"POSITION", []types.Value{s("lo"), s("hello")}, i32(4), nil},
		{"POSITION", []types.Value{s("x"), s("hello")}, i32(0), nil},
		{"POSITION", []types.Value{s("語"), s("日本語")}, i32(3), nil},
		{"LOCATE", []types.Value{s("l"), s("hello"), i32(4)}, i32(4), nil},
		{"INSTR", []types.Value{s("hello"), s("l")}, i32(3), nil},
		{"INITCAP", []types.Value{s("hello wORLD 9index x$$aaA")}, s("Hello World 9index X$$Aaa"), nil},
		{"LPAD", []types.Value{s("hi"), i32(4), s("??")}, s("??hi"), nil},
		{"LPAD", []types.Value{s("hi"), i32(5), s("ab")}, s("abahi"), nil},
		{"LPAD", []types.Value{s("hi"), i32(1), s("??")}, s("h"), nil},
		{"LPAD", []types.Value{s("hi"), i32(-1), s("??")}, null, nil},
		{"LPAD", []types.Value{s("hi"), i32(4), s("")}, null, nil},
		{"RPAD", []types.Value{s("hi"), i32(4), s("??")}, s("hi??"), nil},
		{"RPAD", []types.Value{s("hi"), i32(0), s("?")}, s(""), nil},
		{"REVERSE", []types.Value{s("héllo")}, s("olléh"), nil},
		{"MD5", []types.Value{s("")}, s("d41d8cd98f00b204e9800998ecf8427e"), nil},
		{"SHA256", []types.Value{s("abc")}, s("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), nil},
		{"SHA2", []types.Value{s("abc"), i32(224)}, s("23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"), nil},
		{"HASH_CODE", []types.Value{s("hello")}, i32(99162322), nil},
		{"HASH_CODE", []types.Value{s("polygenelubricants")}, i32(math.MinInt32), nil},
		{"HASH_CODE", []types.Value{s("😀")}, i32(1772899), nil},
		{"HASH_CODE", []types.Value{null}, i32(math.MinInt32), nil},
		{"REPEAT", []types.Value{s("ab"), i32(3)}, s("ababab"), nil},
		{"REPEAT", []types.Value{s("ab"), i32(-1)}, s(""), nil},
		{"REPEAT", []types.Value{s("ab"), i64(math.MaxInt64)}, null, ErrInvalidArgument},
		{"LPAD", []types.Value{s("a"), i64(math.MaxInt32), s("x")}, null, ErrInvalidArgument},
		{"LEFT", []types.Value{s("hello"), i32(2)}, s("he"), nil},
		{"LEFT", []types.Value{s("hello"), i32(-2)}, s(""), nil},
		{"RIGHT", []types.Value{s("hello"), i32(2)}, s("lo"), nil},
		{"RIGHT", []types.Value{s("hello"), i32(9)}, s("hello"), nil},
		{"TO_BASE64", []types.Value{s("hello world")}, s("aGVsbG8gd29ybGQ="), nil},
		{"FROM_BASE64", []types.Value{s("aGVsbG8gd29ybGQ=")}, s("hello world"), nil},
		{"FROM_BASE64", []types.Value{s("!!")}, null, ErrInvalidArgument},
		{"ASCII", []types.Value{s("abc")}, i32(97), nil},
		{"CHR", []types.Value{i32(353)}, s("a"), nil},
	})
	got, err := call(t, ctxIn(nil), "UUID")
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(got.Str()) {
		t.Errorf("UUID() = %s, %v", show(got), err)
	}
}

func TestLike(t *testing.T) {
	cases := []struct {
		s, pattern, escape string
		want               bool
	}{
		{"abc", "abc", "", true},
		{"abc", "ab", "", false},
		{"abc", "a%", "", true},
		{"abc", "%c", "", true},
		{"abc", "%b%", "", true},
		{"abc", "%", "", true},
		{"", "%", "", true},
		{"", "_", "", false},
		{"abc", "a_c", "", true},
		{"abc", "a__c", "", false},
		{"a\nc", "a_c", "", false}, // _ is Java's '.', which does not match a line terminator
		{"a\nc", "a%c", "", true},
		{"héllo", "h_llo", "", true},
		{"abcabc", "%b%c", "", true},
		{"abcbd", "a%b_", "", true},
		{"aaaaaaaaaaaaaaaaaaaaaaaaab", "%a%a%a%a%b", "", true},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaa", "%a%a%a%a%b", "", false},
		{"50%", "50!%", "!", true},
		{"50x", "50!%", "!", false},
		{"a_b", "a\\_b", "\\", true},
		{"axb", "a\\_b", "\\", false},
		{"a\\b", "a\\\\b", "\\", true},
		{"a\\b", "a\\b", "", true}, // no ESCAPE: backslash is ordinary
		{"a.c", "a.c", "", true},
		{"abc", "a.c", "", false},
		{"(x)", "(%)", "", true},
	}
	ctx := ctxIn(nil)
	for _, c := range cases {
		args := []types.Value{s(c.s), s(c.pattern)}
		if c.escape != "" {
			args = append(args, s(c.escape))
		}
		runCases(t, ctx, []valueCase{
			{"LIKE", args, types.BoolValue(c.want), nil},
			{"NOT LIKE", args, types.BoolValue(!c.want), nil},
		})
		// The constant-pattern kernel must agree with the per-row one.
		f, _ := Lookup("LIKE")
		k, err := f.Bind(ctx, siteOf(args))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := k.Call(args); got.Bool() != c.want {
			t.Errorf("%q LIKE %q (constant) = %v", c.s, c.pattern, got.Bool())
		}
	}
	runCases(t, ctx, []valueCase{
		{"LIKE", []types.Value{null, s("%")}, null, nil},
		{"LIKE", []types.Value{s("a"), null}, null, nil},
		{"LIKE", []types.Value{s("a"), s("a!x"), s("!")}, null, ErrInvalidArgument},
	})
}

// TestLikeAgreesWithRegex checks the matcher against the regular expression Flink builds.
func TestLikeAgreesWithRegex(t *testing.T) {
	patterns := []string{"%", "_", "a%", "%a", "%a%", "a_b%", "%ab%ba%", "__", "%_%", "a%b%c", "%%b"}
	inputs := []string{"", "a", "b", "ab", "ba", "abba", "aab", "acbxc", "abc", "xaby", "bbbb", "ababab"}
	for _, p := range patterns {
		m, err := compileLike(p, "", false)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile("^" + strings.NewReplacer("%", "(?s:.*)", "_", ".").Replace(p) + "$")
		for _, in := range inputs {
			if got, want := m.match(in), re.MatchString(in); got != want {
				t.Errorf("%q LIKE %q = %v, regex says %v", in, p, got, want)
			}
		}
	}
}
