package formats

import (
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/types"
)

// benchEventSchema is the table of benchEvent.
var benchEventSchema = types.Schema{
	{Name: "event_id", Type: types.TypeString},
	{Name: "user_id", Type: types.TypeString},
	{Name: "app", Type: types.TypeString},
	{Name: "event_type", Type: types.TypeString},
	{Name: "ts", Type: types.TimestampType(3)},
	{Name: "country", Type: types.TypeString},
	{Name: "device", Type: types.TypeString},
	{Name: "duration_ms", Type: types.TypeInt},
}

// BenchmarkAvroConfluentDecode decodes the same event (benchEvent's 8 fields) as json
// and as avro-confluent (written by pipesql's encoder, its schema fetched from a
// registry once), reading 3 of the fields and all 8, in the same run.
func BenchmarkAvroConfluentDecode(b *testing.B) {
	reg := registrytest.New(b)
	opts := map[string]string{AvroConfluentURL: reg.URL, AvroConfluentSubject: "events-value"}
	jsonDec, err := NewJSONDecoder(produced(benchEventSchema), nil)
	if err != nil {
		b.Fatal(err)
	}
	row := make(types.Row, len(benchEventSchema))
	if err := jsonDec.Decode(benchEvent, row); err != nil {
		b.Fatal(err)
	}
	enc, err := NewAvroConfluentEncoder(benchEventSchema, opts)
	if err != nil {
		b.Fatal(err)
	}
	avroEvent, err := enc.Encode(nil, row)
	if err != nil {
		b.Fatal(err)
	}
	three := []connectors.ProducedColumn{
		{Name: "user_id", Type: types.TypeString},
		{Name: "app", Type: types.TypeString},
		{Name: "ts", Type: types.TimestampType(3)},
	}
	run := func(name string, f *connectors.FormatFactory, cols []connectors.ProducedColumn, record []byte) {
		b.Run(name, func(b *testing.B) {
			dec, err := connectors.NewProjectedDecoder(f, benchEventSchema, cols, opts)
			if f == JSONFormat {
				dec, err = connectors.NewProjectedDecoder(f, benchEventSchema, cols, nil)
			}
			if err != nil {
				b.Fatal(err)
			}
			out := make(types.Row, len(cols))
			if err := dec.Decode(record, out); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(record)))
			b.ReportAllocs()
			for b.Loop() {
				if err := dec.Decode(record, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("json-3of8", JSONFormat, three, benchEvent)
	run("avro-confluent-3of8", AvroConfluentFormat, three, avroEvent)
	run("json-8of8", JSONFormat, produced(benchEventSchema), benchEvent)
	run("avro-confluent-8of8", AvroConfluentFormat, produced(benchEventSchema), avroEvent)
}

func TestAvroBenchEventRoundTrip(t *testing.T) {
	reg := registrytest.New(t)
	opts := map[string]string{AvroConfluentURL: reg.URL, AvroConfluentSubject: "events-value"}
	jsonDec, _ := NewJSONDecoder(produced(benchEventSchema), nil)
	row := make(types.Row, len(benchEventSchema))
	if err := jsonDec.Decode(benchEvent, row); err != nil {
		t.Fatal(err)
	}
	enc, _ := NewAvroConfluentEncoder(benchEventSchema, opts)
	data, err := enc.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := NewAvroConfluentDecoder(produced(benchEventSchema), opts)
	back := make(types.Row, len(benchEventSchema))
	if err := dec.Decode(data, back); err != nil {
		t.Fatal(err)
	}
	checkAvroRow(t, "bench event", back, row)
}
