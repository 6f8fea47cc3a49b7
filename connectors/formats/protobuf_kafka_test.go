package formats_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	sprotobuf "github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"google.golang.org/protobuf/proto"

	"github.com/pipesql/pipesql/connectors"
	_ "github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/connectors/formats/internal/pbtest"
	"github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/types"
)

const kafkaDeadline = 60 * time.Second

type testLog struct{ t testing.TB }

func (l testLog) Warn(msg string, args ...any) { l.t.Logf("WARN %s %v", msg, args) }
func (l testLog) Info(msg string, args ...any) { l.t.Logf("INFO %s %v", msg, args) }

var kafkaOrderSchema = types.Schema{
	{Name: "id", Type: types.TypeBigInt},
	{Name: "customer", Type: types.TypeString},
	{Name: "status", Type: types.TypeString},
}

func kafkaOptions(c *kafkatest.Cluster, topic string, extra map[string]string) map[string]string {
	opts := map[string]string{
		"connector":                         "kafka",
		"topic":                             topic,
		"properties.bootstrap.servers":      c.Bootstrap(),
		"scan.startup.mode":                 "earliest-offset",
		"scan.bounded.mode":                 "latest-offset",
		"properties.default.api.timeout.ms": "3000",
		"format":                            "protobuf",
		"protobuf.message-class-name":       "com.example.orders.Order",
		"protobuf.descriptor-file":          "testdata/protobuf/order.desc",
	}
	for k, v := range extra {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	return opts
}

func openProtobufSource(t *testing.T, c *kafkatest.Cluster, topic string, extra map[string]string) *kafka.Source {
	t.Helper()
	produce := make([]connectors.ProducedColumn, len(kafkaOrderSchema))
	for i, col := range kafkaOrderSchema {
		produce[i] = connectors.ProducedColumn{Name: col.Name, Type: col.Type}
	}
	ctx, cancel := context.WithTimeout(context.Background(), kafkaDeadline)
	defer cancel()
	src, err := kafka.Open(ctx, connectors.SourceConfig{
		TableInfo: connectors.TableInfo{Name: "orders", Options: kafkaOptions(c, topic, extra), Schema: kafkaOrderSchema},
		Produce:   produce,
		Settings:  map[string]string{"execution.checkpointing.interval": "1 min"},
		Log:       testLog{t},
	})
	if err != nil {
		t.Fatalf("open source: %v", err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// readAll polls src to its end (bounded) or its first error.
func readAll(t *testing.T, src *kafka.Source) ([]types.Row, error) {
	var rows []types.Row
	deadline := time.Now().Add(kafkaDeadline)
	for time.Now().Before(deadline) {
		batches, err := src.Poll(context.Background(), 100*time.Millisecond)
		for _, b := range batches {
			rows = append(rows, b.Rows...)
		}
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
	t.Fatalf("source did not end before the deadline; %d rows", len(rows))
	return nil, nil
}

// TestProtobufKafka writes orders with pipesql's Kafka sink, reads them with the
// generated code, and reads records written by the generated code with pipesql's
// source; a Click among the orders stops the source at its topic, partition and offset,
// or is skipped and counted with protobuf.ignore-parse-errors.
func TestProtobufKafka(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	ctx := context.Background()

	c.CreateTopic(t, "out", 1)
	sink, err := kafka.OpenSink(ctx, connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Options: kafkaOptions(c, "out", nil), Schema: kafkaOrderSchema},
		Input:     kafkaOrderSchema, Settings: map[string]string{}, Log: testLog{t},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var batch connectors.ChangeBatch
	for i := 0; i < 20; i++ {
		batch.Kinds = append(batch.Kinds, connectors.Insert)
		batch.Rows = append(batch.Rows, types.Row{types.BigIntValue(int64(i)), types.StringValue("c" + string(rune('a'+i))), types.StringValue("SHIPPED")})
	}
	if err := sink.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs := c.ReadAll(t, "out")
	if len(recs) != 20 {
		t.Fatalf("%d records, want 20", len(recs))
	}
	for i, r := range recs {
		var o pbtest.Order
		if err := proto.Unmarshal(r.Value, &o); err != nil {
			t.Fatalf("record %d: generated code cannot read it: %v", i, err)
		}
		want := &pbtest.Order{Id: int64(i), Customer: "c" + string(rune('a'+i)), Status: pbtest.Order_SHIPPED}
		if !proto.Equal(&o, want) {
			t.Errorf("record %d is %v, want %v", i, &o, want)
		}
	}

	c.CreateTopic(t, "in", 1)
	var rs []kafkatest.Record
	for i := 0; i < 5; i++ {
		if i == 3 {
			click, _ := proto.Marshal(&pbtest.Click{Id: "not-an-order", Url: "/"})
			rs = append(rs, kafkatest.Record{Value: click})
		}
		data, _ := proto.Marshal(&pbtest.Order{Id: int64(i), Customer: "x", Status: pbtest.Order_NEW})
		rs = append(rs, kafkatest.Record{Value: data})
	}
	c.Produce(t, "in", rs...)

	rows, err := readAll(t, openProtobufSource(t, c, "in", nil))
	var re *kafka.RecordError
	if !errors.As(err, &re) || re.Topic != "in" || re.Partition != 0 || re.Offset != 3 {
		t.Fatalf("error %v, want a record error at in/0/3", err)
	}
	if want := `field "id": protobuf field 1 (int64 id) arrived as length-delimited, not varint: the record is not a pipesql.test.Order message`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if len(rows) != 3 {
		t.Errorf("%d rows before the bad record, want 3", len(rows))
	}

	src := openProtobufSource(t, c, "in", map[string]string{"protobuf.ignore-parse-errors": "true"})
	rows, err = readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || src.Stats().Skipped != 1 {
		t.Fatalf("%d rows and %d skipped, want 5 and 1", len(rows), src.Stats().Skipped)
	}
	for i, r := range rows {
		if r[0].Int() != int64(i) || r[1].Str() != "x" || r[2].Str() != "NEW" {
			t.Errorf("row %d is %v", i, r)
		}
	}
}

// TestProtobufConfluentKafka: records confluent-kafka-go's serializer wrote are read by
// pipesql's Kafka source through the schema registry; one whose schema id the registry
// does not know stops the source at its offset, or is skipped and counted; what
// pipesql's sink writes (registered under the default subject <topic>-value) is read by
// confluent's deserializer into the generated type.
func TestProtobufConfluentKafka(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	reg := registrytest.New(t)
	cl, err := schemaregistry.NewClient(schemaregistry.NewConfig(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	ser, err := sprotobuf.NewSerializer(cl, serde.ValueSerde, sprotobuf.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	registry := map[string]string{
		"format": "protobuf-confluent", "protobuf-confluent.url": reg.URL,
		"protobuf.message-class-name": "", "protobuf.descriptor-file": "",
	}
	c.CreateTopic(t, "cin", 1)
	var rs []kafkatest.Record
	for i := 0; i < 5; i++ {
		if i == 2 {
			rs = append(rs, kafkatest.Record{Value: []byte{0, 0, 0, 0x30, 0x39, 0, 8, 1}}) // schema id 12345
		}
		data, err := ser.Serialize("cin", &pbtest.Order{Id: int64(i), Customer: "x", Status: pbtest.Order_SHIPPED})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, kafkatest.Record{Value: data})
	}
	c.Produce(t, "cin", rs...)
	rows, err := readAll(t, openProtobufSource(t, c, "cin", registry))
	var re *kafka.RecordError
	if !errors.As(err, &re) || re.Offset != 2 || !strings.Contains(err.Error(), "schema id 12345: ") {
		t.Fatalf("error %v, want a record error at offset 2 naming schema id 12345", err)
	}
	if len(rows) != 2 {
		t.Errorf("%d rows before the bad record, want 2", len(rows))
	}
	skip := map[string]string{"protobuf-confluent.ignore-parse-errors": "true"}
	for k, v := range registry {
		skip[k] = v
	}
	src := openProtobufSource(t, c, "cin", skip)
	if rows, err = readAll(t, src); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || src.Stats().Skipped != 1 || rows[4][0].Int() != 4 || rows[4][2].Str() != "SHIPPED" {
		t.Fatalf("rows %v, %d skipped; want 5 and 1", rows, src.Stats().Skipped)
	}

	c.CreateTopic(t, "cout", 1)
	sinkOpts := kafkaOptions(c, "cout", map[string]string{"format": "protobuf-confluent", "protobuf-confluent.url": reg.URL,
		"protobuf-confluent.proto-file":         "testdata/protobuf/order.proto",
		"protobuf-confluent.message-class-name": "pipesql.test.Order"})
	delete(sinkOpts, "protobuf.message-class-name")
	delete(sinkOpts, "protobuf.descriptor-file")
	sink, err := kafka.OpenSink(context.Background(), connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "cout", Options: sinkOpts, Schema: kafkaOrderSchema},
		Input:     kafkaOrderSchema, Settings: map[string]string{}, Log: testLog{t},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	batch := connectors.ChangeBatch{Kinds: []connectors.RowKind{connectors.Insert, connectors.Insert},
		Rows: []types.Row{{types.BigIntValue(1), types.StringValue("a"), types.StringValue("NEW")}, {types.BigIntValue(2), types.NullValue, types.NullValue}}}
	if err := sink.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// the subject is Confluent's TopicNameStrategy's, as the kafka connector defaults it
	if subjects, err := cl.GetAllSubjects(); err != nil || !slices.Contains(subjects, "cout-value") {
		t.Errorf("subjects %v (%v), want cout-value among them", subjects, err)
	}
	deser, err := sprotobuf.NewDeserializer(cl, serde.ValueSerde, sprotobuf.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	deser.ProtoRegistry.RegisterMessage((&pbtest.Order{}).ProtoReflect().Type())
	recs := c.ReadAll(t, "cout")
	want := []*pbtest.Order{{Id: 1, Customer: "a", Status: pbtest.Order_NEW}, {Id: 2}}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, r := range recs {
		got, err := deser.Deserialize("cout", r.Value)
		if err != nil {
			t.Fatalf("record %d: confluent's deserializer: %v", i, err)
		}
		if !proto.Equal(got.(proto.Message), want[i]) {
			t.Errorf("record %d is %v, want %v", i, got, want[i])
		}
	}
}
