package builtin

import (
	"context"
	"math/big"
	"sort"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/conntest"
	"github.com/pipesql/pipesql/types"
)

func TestPartitionPathsAndTimes(t *testing.T) {
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "dt", Type: types.TypeString}, {Name: "hr", Type: types.TypeInt}}
	spec := func(opts map[string]string) *partitionSpec {
		o := map[string]string{"connector": "filesystem", "path": "/x", "format": "json"}
		for k, v := range opts {
			o[k] = v
		}
		p, err := newPartitionSpec(connectors.TableInfo{Name: "t", Options: o, Schema: schema, PartitionKeys: []string{"dt", "hr"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := spec(map[string]string{"sink.partition-commit.trigger": "partition-time", "partition.time-extractor.timestamp-pattern": "$dt $hr:00:00",
		"partition.time-extractor.timestamp-formatter": "yyyy/MM/dd H:mm:ss", "sink.partition-commit.watermark-time-zone": "Asia/Shanghai"})
	row := types.Row{types.BigIntValue(1), types.StringValue("2024/05/01"), types.IntValue(types.Int, 9)}
	path := p.path(row, schema)
	if path != "dt=2024%2F05%2F01/hr=9" {
		t.Fatalf("path %q", path)
	}
	if vals := p.values(path); vals[0] != "2024/05/01" || vals[1] != "9" {
		t.Fatalf("values %q", vals)
	}
	if null := p.path(types.Row{types.BigIntValue(1), types.StringValue(""), types.Value{}}, schema); null != "dt=__DEFAULT_PARTITION__/hr=__DEFAULT_PARTITION__" {
		t.Fatalf("null path %q", null)
	}
	// 09:00 in Shanghai is 01:00 UTC
	utc1 := time.Date(2024, 5, 1, 1, 0, 0, 0, time.UTC).UnixMicro()
	for _, c := range []struct {
		wm   int64
		want bool
	}{{utc1, false}, {utc1 + 1, true}, {utc1 - 3600_000_000, false}} {
		got, err := p.committable(path, time.Time{}, time.Time{}, c.wm)
		if err != nil || got != c.want {
			t.Errorf("watermark %s: committable %v, %v; want %v", time.UnixMicro(c.wm).UTC(), got, err, c.want)
		}
	}
	// the default extractor reads the first value, a date alone being midnight
	d := spec(map[string]string{"sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 d"})
	if micros, err := d.partitionTime("dt=2024-5-1/hr=3"); err != nil || micros != time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).UnixMicro() {
		t.Errorf("default extractor: %d, %v", micros, err)
	}
	if _, err := d.partitionTime("dt=soon/hr=3"); err == nil {
		t.Error("an unreadable partition time gave no error")
	}
	f, err := parseJavaTimeFormat("yyyyMMdd'T'HH")
	if err != nil {
		t.Fatal(err)
	}
	if micros, err := f.parse("20240501T07"); err != nil || micros != time.Date(2024, 5, 1, 7, 0, 0, 0, time.UTC).UnixMicro() {
		t.Errorf("yyyyMMdd'T'HH: %d, %v", micros, err)
	}
	if _, err := parseJavaTimeFormat("yyyy-MM-dd EEE"); err == nil {
		t.Error("a day-of-week letter was accepted")
	}
}

// TestPartitionKeyTypesRoundTrip: partition keys of every scalar kind are written into
// the path and read back as the same values.
func TestPartitionKeyTypesRoundTrip(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Prec: 6, Scale: 2}
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "i", Type: types.TypeInt}, {Name: "d", Type: types.TypeDate},
		{Name: "ts", Type: types.TimestampType(3)}, {Name: "b", Type: types.TypeBoolean}, {Name: "x", Type: dec}, {Name: "s", Type: types.TypeString}}
	keys := []string{"i", "d", "ts", "b", "x", "s"}
	dir := t.TempDir()
	sink, err := newFileSink(connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: schema, PartitionKeys: keys, Options: map[string]string{"connector": "filesystem", "path": dir, "format": "json"}},
		Input:     schema, Log: &conntest.Logger{},
	}, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	r := new(big.Rat).SetFrac64(-1234, 100)
	want := []types.Row{
		{types.BigIntValue(1), types.IntValue(types.Int, -7), types.DateValue(19844), types.TimestampValue(1714557600_123000), types.BoolValue(true), types.DecimalValue(r), types.StringValue("a/b=c d")},
		{types.BigIntValue(2), types.Value{}, types.Value{}, types.Value{}, types.Value{}, types.Value{}, types.Value{}},
	}
	ctx := context.Background()
	if err := sink.Write(ctx, connectors.ChangeBatch{Kinds: make([]connectors.RowKind, 2), Rows: want}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	var produce []connectors.ProducedColumn
	for _, c := range schema {
		produce = append(produce, connectors.ProducedColumn{Name: c.Name, Type: c.Type})
	}
	src, err := newFileSource(connectors.SourceConfig{
		TableInfo: connectors.TableInfo{Name: "in", Schema: schema, PartitionKeys: keys, Options: map[string]string{"connector": "filesystem", "path": dir, "format": "json"}},
		Produce:   produce, Log: &conntest.Logger{},
	}, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, src)
	sort.Slice(got, func(a, b int) bool { return got[a][0].Int() < got[b][0].Int() })
	if len(got) != 2 {
		t.Fatalf("read %d rows", len(got))
	}
	for i := range want {
		if conntest.RowKey(got[i]) != conntest.RowKey(want[i]) {
			t.Errorf("row %d: read %s, wrote %s", i, conntest.RowKey(got[i]), conntest.RowKey(want[i]))
		}
	}
}
