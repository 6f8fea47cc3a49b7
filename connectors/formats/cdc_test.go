package formats

import (
	"errors"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// decodeCDC decodes one record of format into "kind(row)" strings.
func decodeCDC(t *testing.T, f *connectors.FormatFactory, opts map[string]string, meta []string, data string) ([]string, error) {
	t.Helper()
	cols := []connectors.ProducedColumn{{Name: "id", Type: types.TypeInt}, {Name: "name", Type: types.TypeString}}
	dec, err := f.NewDecoder(cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	if meta != nil {
		ts := make([]types.Type, len(meta))
		for i := range ts {
			ts[i] = types.TypeString
		}
		if err := dec.(connectors.MetadataDecoder).SetMetadata(meta, ts); err != nil {
			return nil, err
		}
	}
	rows, kinds, err := dec.(connectors.ChangeDecoder).DecodeChanges([]byte(data), nil, nil)
	var out []string
	for i, r := range rows {
		out = append(out, kinds[i].String()+types.RowValue(r).String())
	}
	return out, err
}

func TestCDCDecoders(t *testing.T) {
	for _, c := range []struct {
		f    *connectors.FormatFactory
		opts map[string]string
		meta []string
		in   string
		want string // the rows, or the error's text
	}{
		{DebeziumJSONFormat, nil, nil, `{"before":null,"after":{"id":1,"name":"a"},"op":"c"}`, "+I(1, a)"},
		{DebeziumJSONFormat, nil, nil, `{"before":null,"after":{"id":1,"name":"a"},"op":"r"}`, "+I(1, a)"},
		{DebeziumJSONFormat, nil, nil, `{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u"}`, "-U(1, a) +U(1, b)"},
		{DebeziumJSONFormat, nil, nil, `{"before":{"id":1,"name":"b"},"after":null,"op":"d"}`, "-D(1, b)"},
		{DebeziumJSONFormat, nil, nil, ``, ""},
		{DebeziumJSONFormat, nil, []string{"source.table", "source.database"},
			`{"before":null,"after":{"id":2,"name":"x"},"op":"c","source":{"db":"inv","table":"t"}}`, "+I(2, x, t, inv)"},
		{DebeziumJSONFormat, map[string]string{"schema-include": "true"}, nil,
			`{"schema":{},"payload":{"before":null,"after":{"id":3,"name":"s"},"op":"c"}}`, "+I(3, s)"},
		{DebeziumJSONFormat, nil, nil, `{"schema":{},"payload":{"op":"c"}}`, "set 'debezium-json.schema-include' = 'true'"},
		{DebeziumJSONFormat, nil, nil, `{"before":null,"after":{"id":1,"name":"b"},"op":"u"}`, "REPLICA IDENTITY"},
		{DebeziumJSONFormat, nil, nil, `{"after":{"id":1},"op":"x"}`, `unknown operation "x"`},
		{DebeziumJSONFormat, nil, nil, `{"op":"c"}`, `field "after": not an object`},
		{CanalJSONFormat, nil, nil, `{"type":"INSERT"}`, ""},
		{CanalJSONFormat, nil, nil, `{"type":"INSERT","data":{"id":1}}`, `field "data": not an array`},
		{MaxwellJSONFormat, nil, nil, `{"type":"update","data":{"id":1}}`, "an update needs 'old'"},
		{DebeziumJSONFormat, nil, nil, `{"after":{"id":"one"},"op":"c"}`, `field "after.id"`},
		{DebeziumJSONFormat, nil, []string{"schema"}, `{}`, "schema-include"},
		{CanalJSONFormat, nil, nil, `{"data":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"type":"INSERT","database":"d","table":"t"}`, "+I(1, a) +I(2, b)"},
		{CanalJSONFormat, nil, nil, `{"data":[{"id":1,"name":"b"}],"old":[{"name":"a"}],"type":"UPDATE"}`, "-U(1, a) +U(1, b)"},
		{CanalJSONFormat, nil, nil, `{"data":[{"id":1,"name":"b"}],"type":"DELETE"}`, "-D(1, b)"},
		{CanalJSONFormat, nil, nil, `{"data":null,"type":"CREATE","isDdl":true,"sql":"CREATE TABLE t"}`, ""},
		{CanalJSONFormat, map[string]string{"table.include": "t.*"}, nil, `{"data":[{"id":1}],"type":"INSERT","table":"other"}`, ""},
		{CanalJSONFormat, map[string]string{"database.include": "inv"}, []string{"database"}, `{"data":[{"id":1}],"type":"INSERT","database":"inv"}`, "+I(1, NULL, inv)"},
		{CanalJSONFormat, nil, nil, `{"data":[{"id":1}],"type":"UPDATE"}`, "an UPDATE needs 'old'"},
		{MaxwellJSONFormat, nil, nil, `{"type":"insert","data":{"id":1,"name":"a"}}`, "+I(1, a)"},
		{MaxwellJSONFormat, nil, nil, `{"type":"update","data":{"id":1,"name":"b"},"old":{"name":"a"}}`, "-U(1, a) +U(1, b)"},
		{MaxwellJSONFormat, nil, nil, `{"type":"delete","data":{"id":1,"name":"b"}}`, "-D(1, b)"},
		{MaxwellJSONFormat, nil, nil, `{"type":"truncate"}`, `unknown type "truncate"`},
	} {
		got, err := decodeCDC(t, c.f, c.opts, c.meta, c.in)
		text := strings.Join(got, " ")
		if err != nil {
			text = err.Error()
		}
		if !strings.Contains(text, c.want) || c.want == "" && text != "" {
			t.Errorf("%s %s:\ngot  %s\nwant %s", c.f.Name, c.in, text, c.want)
		}
		if err != nil && errors.Is(err, connectors.ErrSkipped) {
			t.Errorf("%s %s: skipped without ignore-parse-errors", c.f.Name, c.in)
		}
	}
	_, err := decodeCDC(t, DebeziumJSONFormat, map[string]string{"ignore-parse-errors": "true"}, nil, `{"op":`)
	if !errors.Is(err, connectors.ErrSkipped) {
		t.Errorf("a bad record with ignore-parse-errors: %v, want it skipped", err)
	}
}
