package builtin

import (
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
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
