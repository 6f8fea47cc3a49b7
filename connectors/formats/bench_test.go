package formats

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// benchEvent is a ~200-byte event of 8 fields, of which the DAU job reads 3.
var benchEvent = []byte(`{"event_id":"9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b","user_id":"user-00421337",` +
	`"app":"pipesql-demo","event_type":"page_view","ts":"2024-03-15 12:34:56.789",` +
	`"country":"NL","device":"android","duration_ms":1234}`)

// BenchmarkJSONDecode3of8 decodes 3 of the 8 fields of benchEvent with the json format
// and, as the baseline in the same run, with encoding/json into a struct of the same
// 3 fields plus time.Parse of the timestamp, and with the full parser alone (no
// decodeFlat).
func BenchmarkJSONDecode3of8(b *testing.B) {
	for _, flat := range []bool{true, false} {
		name := "pipesql"
		if !flat {
			name = "pipesql_full_parser" // without decodeFlat: fastjson's tree
		}
		b.Run(name, func(b *testing.B) {
			d, err := NewJSONDecoder([]connectors.ProducedColumn{
				{Name: "user_id", Type: types.TypeString},
				{Name: "app", Type: types.TypeString},
				{Name: "ts", Type: types.TimestampType(3)},
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
			d.(*jsonDecoder).flat = flat
			row := make(types.Row, 3)
			b.SetBytes(int64(len(benchEvent)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Decode(benchEvent, row); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("encoding_json", func(b *testing.B) {
		var ev struct {
			UserID string `json:"user_id"`
			App    string `json:"app"`
			TS     string `json:"ts"`
		}
		b.SetBytes(int64(len(benchEvent)))
		b.ReportAllocs()
		for b.Loop() {
			if err := json.Unmarshal(benchEvent, &ev); err != nil {
				b.Fatal(err)
			}
			if _, err := time.Parse("2006-01-02 15:04:05.000", ev.TS); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestBenchEventSize(t *testing.T) {
	if n := len(benchEvent); n < 180 || n > 230 {
		t.Errorf("benchEvent is %d bytes, want about 200", n)
	}
}
