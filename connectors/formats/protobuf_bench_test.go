package formats

import (
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	sprotobuf "github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats/internal/pbtest"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/types"
)

// benchEventProto is benchEvent (bench_test.go) as a protobuf BenchEvent.
func benchEventProto(b *testing.B) []byte {
	ts, err := time.Parse("2006-01-02 15:04:05.000", "2024-03-15 12:34:56.789")
	if err != nil {
		b.Fatal(err)
	}
	data, err := proto.Marshal(&pbtest.BenchEvent{EventId: "9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b", UserId: "user-00421337",
		App: "pipesql-demo", EventType: "page_view", Ts: timestamppb.New(ts), Country: "NL", Device: "android", DurationMs: 1234})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecodeProtobufVsJSON decodes the same event, 3 of its 8 fields, from JSON,
// from protobuf and from protobuf-confluent (written by Confluent's serializer; the
// schema fetched once) in the same run, and all 8 fields from protobuf; generated
// code's proto.Unmarshal of the whole message is the protobuf baseline.
func BenchmarkDecodeProtobufVsJSON(b *testing.B) {
	cols := []connectors.ProducedColumn{
		{Name: "user_id", Type: types.TypeString},
		{Name: "app", Type: types.TypeString},
		{Name: "ts", Type: types.TimestampType(3)},
	}
	pb := benchEventProto(b)
	run := func(b *testing.B, d connectors.Decoder, data []byte, width int) {
		row := make(types.Row, width)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Decode(data, row); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("json-3of8", func(b *testing.B) {
		d, err := NewJSONDecoder(cols, nil)
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, benchEvent, 3)
	})
	b.Run("protobuf-3of8", func(b *testing.B) {
		d, err := NewProtobufDecoder(cols, descOpts("pipesql.test.BenchEvent"))
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, pb, 3)
	})
	b.Run("protobuf-8of8", func(b *testing.B) {
		all := []connectors.ProducedColumn{{Name: "event_id", Type: types.TypeString}, cols[0], cols[1],
			{Name: "event_type", Type: types.TypeString}, cols[2], {Name: "country", Type: types.TypeString},
			{Name: "device", Type: types.TypeString}, {Name: "duration_ms", Type: types.TypeBigInt}}
		d, err := NewProtobufDecoder(all, descOpts("pipesql.test.BenchEvent"))
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, pb, len(all))
	})
	b.Run("protobuf-confluent-3of8", func(b *testing.B) {
		reg := registrytest.New(b)
		cl := registryClient(b, reg.URL)
		ser, err := sprotobuf.NewSerializer(cl, serde.ValueSerde, sprotobuf.NewSerializerConfig())
		if err != nil {
			b.Fatal(err)
		}
		var ev pbtest.BenchEvent
		if err := proto.Unmarshal(pb, &ev); err != nil {
			b.Fatal(err)
		}
		data, err := ser.Serialize("events", &ev)
		if err != nil {
			b.Fatal(err)
		}
		d, err := NewProtobufConfluentDecoder(cols, map[string]string{AvroConfluentURL: reg.URL})
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, data, 3)
	})
	b.Run("generated-unmarshal", func(b *testing.B) {
		var ev pbtest.BenchEvent
		b.SetBytes(int64(len(pb)))
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(pb, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
