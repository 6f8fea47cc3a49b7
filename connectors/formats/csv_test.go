package formats

import (
	"errors"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

var csvSchema = types.Schema{
	{Name: "id", Type: types.TypeBigInt},
	{Name: "name", Type: types.TypeString},
	{Name: "score", Type: tDec},
	{Name: "ts", Type: tTS3},
	{Name: "tags", Type: types.Type{Kind: types.Array, Elem: ptr(types.TypeString)}},
}

func allCols(s types.Schema) []connectors.ProducedColumn {
	cols := make([]connectors.ProducedColumn, len(s))
	for i, c := range s {
		cols[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	return cols
}

func TestCSVDecode(t *testing.T) {
	d, err := NewCSVDecoder(allCols(csvSchema), map[string]string{CSVNullLiteral: "n/a"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line string
		want types.Row
	}{
		{"1,alice,12.5,2024-01-02 03:04:05.6,a;b\n", types.Row{types.BigIntValue(1), types.StringValue("alice"), dec("12.50"),
			types.TimestampValue(ts("2024-01-02 03:04:05.6")), types.ArrayValue([]types.Value{types.StringValue("a"), types.StringValue("b")})}},
		{`2,"smith, ""bob""",n/a,2024-01-02 03:04:05,` + "\r\n", types.Row{types.BigIntValue(2), types.StringValue(`smith, "bob"`), {},
			types.TimestampValue(ts("2024-01-02 03:04:05")), types.ArrayValue(nil)}},
		{` 3 ,,0,2024-01-02 03:04,n/a`, types.Row{types.BigIntValue(3), types.StringValue(""), dec("0"),
			types.TimestampValue(ts("2024-01-02 03:04:00")), {}}},
	}
	for _, c := range cases {
		row := make(types.Row, len(csvSchema))
		if err := d.Decode([]byte(c.line), row); err != nil {
			t.Errorf("Decode(%q): %v", c.line, err)
			continue
		}
		for i := range row {
			if !sameValue(row[i], c.want[i]) {
				t.Errorf("Decode(%q) column %s: got %v, want %v", c.line, csvSchema[i].Name, row[i], c.want[i])
			}
		}
	}
}

func TestCSVDecodeErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{"", "empty record"},
		{"1,a,1.0,2024-01-01 00:00:00", "row length mismatch: 5 fields expected but was 4"},
		{"x,a,1.0,2024-01-01 00:00:00,", `field "id": cannot parse "x" as BIGINT`},
		{"1,a,1.0,2024-01-01T00:00:00,", `field "ts": cannot parse "2024-01-01T00:00:00" as TIMESTAMP(3)`},
		{`1,"a,1.0,2024-01-01 00:00:00,`, "unterminated quoted value"},
		{`1,"a"b,1.0,2024-01-01 00:00:00,`, `unexpected 'b' after a closing quote`},
	}
	for _, ignore := range []string{"false", "true"} {
		d, _ := NewCSVDecoder(allCols(csvSchema), map[string]string{CSVIgnoreParseErrors: ignore})
		for _, c := range cases {
			row := make(types.Row, len(csvSchema))
			err := d.Decode([]byte(c.line), row)
			if ignore == "true" && strings.HasPrefix(c.want, "row length") {
				// with ignore-parse-errors a short row is read with NULLs, as Flink does
				if err != nil || !row[4].IsNull() || row[0].Int() != 1 {
					t.Errorf("short row with ignore-parse-errors: %v %v", row, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Decode(%q): %v, want error containing %q", c.line, err, c.want)
				continue
			}
			if errors.Is(err, connectors.ErrSkipped) != (ignore == "true") {
				t.Errorf("Decode(%q) ignore=%s: ErrSkipped mismatch in %v", c.line, ignore, err)
			}
		}
	}
}

func TestCSVOptions(t *testing.T) {
	cols := allCols(types.Schema{{Name: "a", Type: types.TypeString}, {Name: "b", Type: types.TypeInt}})
	d, err := NewCSVDecoder(cols, map[string]string{CSVFieldDelimiter: `\t`, CSVQuoteCharacter: "'", CSVAllowComments: "true", CSVEscapeCharacter: `\\`})
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 2)
	if err := d.Decode([]byte("'x\ty'\t5"), row); err != nil || row[0].Str() != "x\ty" || row[1].Int() != 5 {
		t.Errorf("tab and quote: %v %v", row, err)
	}
	if err := d.Decode([]byte(`a\	b	6`), row); err != nil || row[0].Str() != "a\tb" || row[1].Int() != 6 {
		t.Errorf("escape: %v %v", row, err)
	}
	err = d.Decode([]byte("# a comment"), row)
	if !errors.Is(err, ErrComment) || !errors.Is(err, connectors.ErrSkipped) {
		t.Errorf("comment: %v", err)
	}
	noQuote, _ := NewCSVDecoder(cols, map[string]string{CSVDisableQuoteCharacter: "true"})
	if err := noQuote.Decode([]byte(`"x",1`), row); err != nil || row[0].Str() != `"x"` {
		t.Errorf("disabled quoting: %v %v", row, err)
	}
	for _, bad := range []map[string]string{
		{CSVFieldDelimiter: ";;"},
		{CSVDisableQuoteCharacter: "true", CSVQuoteCharacter: "'"},
		{CSVAllowComments: "maybe"},
		{CSVQuoteCharacter: ","},
	} {
		if _, err := NewCSVDecoder(cols, bad); !errors.Is(err, connectors.ErrInvalidOption) {
			t.Errorf("options %v: %v, want ErrInvalidOption", bad, err)
		}
	}
	if _, err := NewCSVDecoder(allCols(types.Schema{{Name: "m", Type: tMapSI}}), nil); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("MAP column: %v", err)
	}
}

// TestCSVProjection reads by position through connectors.NewProjectedDecoder: the plan
// wants ts and id (in that order) of a five-column table.
func TestCSVProjection(t *testing.T) {
	produce := []connectors.ProducedColumn{{Name: "ts", Type: tTS3}, {Name: "id", Type: types.TypeBigInt}, {Name: "m", Type: types.TypeString, MetadataKey: "file.path"}}
	d, err := connectors.NewProjectedDecoder(CSVFormat, csvSchema, produce, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 2)
	// name holds a value that would not parse as anything: it is never converted
	if err := d.Decode([]byte("7,\"unused, really\",not-a-decimal,2024-05-06 07:08:09,x"), row); err != nil {
		t.Fatal(err)
	}
	if row[0].Int() != ts("2024-05-06 07:08:09") || row[1].Int() != 7 {
		t.Errorf("got %v", row)
	}
	jd, err := connectors.NewProjectedDecoder(JSONFormat, csvSchema, produce, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := jd.Decode([]byte(`{"id":7,"score":"bad","ts":"2024-05-06 07:08:09"}`), row); err != nil {
		t.Fatal(err)
	}
	if row[0].Int() != ts("2024-05-06 07:08:09") || row[1].Int() != 7 {
		t.Errorf("json: got %v", row)
	}
}

func TestCSVEncodeRoundTrip(t *testing.T) {
	e, err := NewCSVEncoder(csvSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := []types.Row{
		{types.BigIntValue(1), types.StringValue("plain"), dec("1.5"), types.TimestampValue(ts("2024-01-02 03:04:05.678")),
			types.ArrayValue([]types.Value{types.StringValue("x"), types.StringValue("y")})},
		{types.BigIntValue(-2), types.StringValue(`with, comma and "quotes"`), {}, types.TimestampValue(ts("2024-01-02 00:00:00")), types.ArrayValue(nil)},
		{types.BigIntValue(3), types.StringValue(" padded "), dec("0.001"), {}, {}},
	}
	var out []byte
	for _, r := range rows {
		if out, err = e.Encode(out, r); err != nil {
			t.Fatal(err)
		}
	}
	want := "1,plain,1.50,2024-01-02 03:04:05.678,x;y\n" +
		"-2,\"with, comma and \"\"quotes\"\"\",,2024-01-02 00:00:00,\n" +
		"3,\" padded \",0.00,,\n"
	if string(out) != want {
		t.Errorf("Encode:\n got %q\nwant %q", out, want)
	}
	d, _ := NewCSVDecoder(allCols(csvSchema), map[string]string{CSVNullLiteral: ""})
	for i, line := range strings.SplitAfter(strings.TrimSuffix(string(out), "\n"), "\n") {
		row := make(types.Row, len(csvSchema))
		if err := d.Decode([]byte(line), row); err != nil {
			t.Fatalf("decode %q: %v", line, err)
		}
		for j := range row {
			want := rows[i][j]
			if j == 2 && i == 2 {
				want = dec("0") // DECIMAL(10, 2) rounds 0.001
			}
			if j == 4 && i == 1 {
				want = types.NullValue // an empty array is written as an empty field, read back as NULL
			}
			if !sameValue(row[j], want) {
				t.Errorf("line %d column %s: got %v, want %v", i, csvSchema[j].Name, row[j], want)
			}
		}
	}
}

func FuzzCSVDecode(f *testing.F) {
	for _, s := range []string{"1,a,1.5,2024-01-01 00:00:00,x;y", `"a""b",",",,`, `"`, `\`, "# c", ",,,,,,"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, escape bool) {
		opts := map[string]string{CSVNullLiteral: "null"}
		if escape {
			opts[CSVEscapeCharacter] = `\\`
			opts[CSVAllowComments] = "true"
		}
		d, err := NewCSVDecoder(allCols(csvSchema), opts)
		if err != nil {
			t.Fatal(err)
		}
		row := make(types.Row, len(csvSchema))
		if err := d.Decode(data, row); err != nil {
			if !errors.Is(err, ErrBadRecord) && !errors.Is(err, ErrComment) {
				t.Fatalf("error %v wraps neither ErrBadRecord nor ErrComment", err)
			}
			return
		}
		e, _ := NewCSVEncoder(csvSchema, opts)
		if _, err := e.Encode(nil, row); err != nil {
			t.Fatalf("re-encode %v: %v", row, err)
		}
	})
}
