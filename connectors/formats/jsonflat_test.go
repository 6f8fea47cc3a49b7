package formats

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// TestJSONFlatMatchesFullParser decodes random records, valid and broken, both with
// decodeFlat and with the full parser: wherever decodeFlat accepts a record, the full
// parser must accept it too and give the same row.
func TestJSONFlatMatchesFullParser(t *testing.T) {
	cols := []connectors.ProducedColumn{
		{Name: "s", Type: types.TypeString},
		{Name: "i", Type: types.TypeBigInt},
		{Name: "n", Type: types.Type{Kind: types.TinyInt}},
		{Name: "b", Type: types.TypeBoolean},
		{Name: "x", Type: types.TypeNull}, // not wanted
		{Name: "t", Type: types.TimestampType(3)},
		{Name: "d", Type: types.TypeDouble},
		{Name: "m", Type: tDec},
	}
	keys := []string{"s", "i", "n", "b", "x", "t", "d", "m", "other", `s\u0041`, `\"`, ""}
	values := []string{`"abc"`, `"a\"b"`, `"a\\"`, `"\\\""`, `""`, `"12"`, `12`, `-7`, `007`, `1e3`, `1.5`, `-`, `-0`,
		`127`, `128`, `99999999999999999999`, `1-2`, `true`, `false`, `null`, `nul`, `tru`, `+1`, `NaN`, `-inf`, `inf`,
		`{"a":[1,2,{"b":"}"}]}`, `[]`, `{}`, `[1,]`, `{"a"}`, `"2024-05-01 10:00:00.000"`, `"2024-05-01T10:00"`,
		`"héllo ✓"`, "\"tab\there\"", `12.50`, `1e400`}
	for _, ignore := range []bool{false, true} {
		for _, missing := range []bool{false, true} {
			if ignore && missing {
				continue
			}
			opts := map[string]string{JSONIgnoreParseErrors: boolText(ignore), JSONFailOnMissingField: boolText(missing)}
			dec, err := NewJSONDecoder(cols, opts)
			if err != nil {
				t.Fatal(err)
			}
			full, _ := NewJSONDecoder(cols, opts)
			full.(*jsonDecoder).flat = false
			if !dec.(*jsonDecoder).flat {
				t.Fatal("decoder of scalar columns does not take the flat path")
			}
			rng := rand.New(rand.NewPCG(7, 11))
			accepted := 0
			for n := range 60000 {
				rec := randomRecord(rng, keys, values)
				got := make(types.Row, len(cols))
				want := make(types.Row, len(cols))
				if !dec.(*jsonDecoder).decodeFlat([]byte(rec), got) {
					continue
				}
				accepted++
				if err := full.Decode([]byte(rec), want); err != nil {
					t.Fatalf("case %d: flat path accepts %s, the full parser fails: %v", n, rec, err)
				}
				for c := range got {
					if !sameValue(got[c], want[c]) {
						t.Fatalf("case %d: %s: column %s is %v by the flat path, %v by the full parser", n, rec, cols[c].Name, got[c], want[c])
					}
				}
			}
			if !missing && accepted < 5000 {
				t.Errorf("flat path accepted only %d records", accepted)
			}
			t.Logf("ignore-parse-errors %v, fail-on-missing-field %v: %d records on the flat path", ignore, missing, accepted)
		}
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// randomRecord builds an object of random keys and values with random white space,
// then sometimes breaks it by inserting or deleting a byte.
func randomRecord(rng *rand.Rand, keys, values []string) string {
	var b strings.Builder
	ws := func() {
		for rng.IntN(4) == 0 {
			b.WriteByte(" \t\r\n"[rng.IntN(4)])
		}
	}
	ws()
	b.WriteByte('{')
	for f := range rng.IntN(10) {
		if f > 0 {
			ws()
			b.WriteByte(',')
		}
		ws()
		b.WriteString(`"` + keys[rng.IntN(len(keys))] + `"`)
		ws()
		b.WriteByte(':')
		ws()
		b.WriteString(values[rng.IntN(len(values))])
	}
	ws()
	b.WriteByte('}')
	ws()
	s := b.String()
	if rng.IntN(3) == 0 {
		p := rng.IntN(len(s) + 1)
		if rng.IntN(2) == 0 && p < len(s) {
			s = s[:p] + s[p+1:]
		} else {
			s = s[:p] + string(`{}[],:"\ 0a`[rng.IntN(11)]) + s[p:]
		}
	}
	return s
}
