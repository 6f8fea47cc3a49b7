package builtin

import (
	"bytes"
	"context"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/conntest"
	"github.com/pipesql/pipesql/types"
)

func printConfig(opts map[string]string, schema types.Schema) connectors.SinkConfig {
	all := map[string]string{"connector": "print"}
	for k, v := range opts {
		all[k] = v
	}
	return connectors.SinkConfig{TableInfo: connectors.TableInfo{Name: "p", Options: all, Schema: schema}, Input: schema, Updating: true, Log: &conntest.Logger{}}
}

// Not parallel: SetPrintOutput is process-wide.
func TestPrintSink(t *testing.T) {
	var out, errOut bytes.Buffer
	restore := SetPrintOutput(&out, &errOut)
	defer restore()

	schema := types.Schema{{Name: "day", Type: types.TypeDate}, {Name: "app", Type: types.TypeString},
		{Name: "dau", Type: types.TypeBigInt}, {Name: "ts", Type: types.TimestampType(3)}}
	rows := connectors.ChangeBatch{
		Kinds: []connectors.RowKind{connectors.Insert, connectors.UpdateBefore, connectors.UpdateAfter, connectors.Delete},
		Rows: []types.Row{
			{types.DateValue(19723), types.StringValue("app1"), types.BigIntValue(42), types.TimestampValue(1_704_067_200_000_000)},
			{types.DateValue(19723), types.StringValue("app1"), types.BigIntValue(42), {}},
			{types.DateValue(19723), {}, types.BigIntValue(43), types.TimestampValue(1_704_067_201_500_000)},
			{types.DateValue(19723), types.StringValue("app2"), types.BigIntValue(1), {}},
		},
	}
	plain, err := newPrintSink(printConfig(nil, schema))
	if err != nil {
		t.Fatal(err)
	}
	named, err := newPrintSink(printConfig(map[string]string{"print-identifier": "dau", "standard-error": "true", "sink.parallelism": "1"}, schema))
	if err != nil {
		t.Fatal(err)
	}
	conntest.TestSink(t, plain, []connectors.ChangeBatch{rows})
	conntest.TestSink(t, named, []connectors.ChangeBatch{{Rows: rows.Rows[:1]}})

	want := "+I[2024-01-01, app1, 42, 2024-01-01T00:00]\n" +
		"-U[2024-01-01, app1, 42, null]\n" +
		"+U[2024-01-01, null, 43, 2024-01-01T00:00:01.500]\n" +
		"-D[2024-01-01, app2, 1, null]\n"
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := errOut.String(); got != "dau> +I[2024-01-01, app1, 42, 2024-01-01T00:00]\n" {
		t.Errorf("stderr: %q", got)
	}
	if _, err := newPrintSink(printConfig(map[string]string{"standard-error": "sometimes"}, schema)); err == nil {
		t.Error("standard-error 'sometimes' accepted")
	}
}

func TestBlackhole(t *testing.T) {
	f, _ := connectors.Lookup("blackhole")
	sink, err := f.NewSink(context.Background(), printConfig(nil, types.Schema{{Name: "x", Type: types.TypeInt}}))
	if err != nil {
		t.Fatal(err)
	}
	batch := connectors.ChangeBatch{Kinds: []connectors.RowKind{connectors.Insert, connectors.Delete},
		Rows: []types.Row{{types.IntValue(types.Int, 1)}, {types.IntValue(types.Int, 2)}}}
	conntest.TestSink(t, sink, []connectors.ChangeBatch{batch, batch, batch})
	if n := sink.(*blackholeSink).Rows(); n != 6 {
		t.Errorf("blackhole took %d rows, want 6", n)
	}
}
