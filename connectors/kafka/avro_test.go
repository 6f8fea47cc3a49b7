package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/internal/registrytest"
)

// avroEvent is eventSchema as confluent-kafka-go's serializers see it.
type avroEvent struct {
	ID   *int64  `avro:"id"`
	User *string `avro:"user"`
	N    *int32  `avro:"n"`
}

const avroEventSchema = `{"type":"record","name":"Event","fields":[
	{"name":"id","type":["null","long"],"default":null},
	{"name":"user","type":["null","string"],"default":null},
	{"name":"n","type":["null","int"],"default":null}]}`

func avroEventOf(id int) *avroEvent {
	row := eventRow(id)
	n, u, k := row[0].Int(), row[1].Str(), int32(row[2].Int())
	return &avroEvent{ID: &n, User: &u, N: &k}
}

func newRegistryClient(t *testing.T, url string) schemaregistry.Client {
	t.Helper()
	c, err := schemaregistry.NewClient(schemaregistry.NewConfig(url))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAvroConfluentSinkAndSource writes avro-confluent values and raw keys with the
// sink (registering the schema under the default subject '<topic>-value'), reads them
// back with confluent-kafka-go's deserializer and with the source.
func TestAvroConfluentSinkAndSource(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "out", 2)
	reg := registrytest.New(t)
	opts := map[string]string{
		"format": "", "value.format": "avro-confluent", "value.avro-confluent.url": reg.URL,
		"key.format": "raw", "key.fields": "user",
	}
	s := openSink(t, sinkConfig(c, newTestLog(t), "out", eventSchema, nil, opts), false)
	ctx := context.Background()
	if err := s.Write(ctx, inserts(0, 50)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if reg.Requests("POST /subjects/{subject}/versions") != 1 {
		t.Errorf("schema registered %d times, want once", reg.Requests("POST /subjects/{subject}/versions"))
	}
	md, err := newRegistryClient(t, reg.URL).GetLatestSchemaMetadata("out-value")
	if err != nil {
		t.Fatalf("subject out-value: %v", err)
	}
	de, err := avrov2.NewDeserializer(newRegistryClient(t, reg.URL), serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	recs := c.ReadAll(t, "out")
	if len(recs) != 50 {
		t.Fatalf("%d records, want 50", len(recs))
	}
	for _, r := range recs {
		var ev avroEvent
		if err := de.DeserializeInto("out", r.Value, &ev); err != nil {
			t.Fatalf("confluent cannot read the sink's record: %v", err)
		}
		want := avroEventOf(int(*ev.ID))
		if *ev.User != *want.User || *ev.N != *want.N || string(r.Key) != *want.User {
			t.Errorf("record key %q value %v %v %v (schema id %d)", r.Key, *ev.ID, *ev.User, *ev.N, md.ID)
		}
	}

	opts["scan.bounded.mode"] = "latest-offset"
	opts["value.fields-include"] = "ALL"
	src := openSource(t, sourceConfig(c, newTestLog(t), "out", opts))
	rd := newReader(t, src)
	rd.toEOF()
	rd.checkIDs(0, 50)
	for id, row := range rd.rows {
		if got, want := fmt.Sprint(row), fmt.Sprint(eventRow(int(id))); got != want {
			t.Errorf("row %s, want %s", got, want)
		}
	}
}

// TestAvroConfluentBadRecords reads records written by confluent-kafka-go's serializer
// with one bad record among them: the error names topic, partition and offset.
func TestAvroConfluentBadRecords(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	reg := registrytest.New(t)
	cases := []struct {
		topic string
		bad   func(good []byte) []byte
		want  string
	}{
		{"unknown-id", func(g []byte) []byte { return append([]byte{0, 0, 0, 0x10, 0}, g[5:]...) }, "schema id 4096 is not in the schema registry"},
		{"truncated", func(g []byte) []byte { return g[:len(g)-2] }, "truncated avro record"},
		{"magic", func(g []byte) []byte { return append([]byte{7}, g[1:]...) }, "unknown magic byte 0x07"},
	}
	for _, tc := range cases {
		t.Run(tc.topic, func(t *testing.T) {
			c.CreateTopic(t, tc.topic, 2)
			if _, err := reg.Register(tc.topic+"-value", registrytest.Avro, avroEventSchema); err != nil {
				t.Fatal(err)
			}
			conf := avrov2.NewSerializerConfig()
			conf.AutoRegisterSchemas, conf.UseLatestVersion = false, true
			ser, err := avrov2.NewSerializer(newRegistryClient(t, reg.URL), serde.ValueSerde, conf)
			if err != nil {
				t.Fatal(err)
			}
			var recs []kafkatest.Record
			for id := range 4 {
				v, err := ser.Serialize(tc.topic, avroEventOf(id))
				if err != nil {
					t.Fatal(err)
				}
				if id == 3 {
					v = tc.bad(v)
				}
				recs = append(recs, kafkatest.Record{Partition: 1, Value: v})
			}
			c.Produce(t, tc.topic, recs...)
			src := openSource(t, sourceConfig(c, newTestLog(t), tc.topic, map[string]string{
				"format": "avro-confluent", "avro-confluent.url": reg.URL, "scan.bounded.mode": "latest-offset",
			}))
			rd := newReader(t, src)
			deadline := time.Now().Add(testDeadline)
			var perr error
			for perr == nil && time.Now().Before(deadline) {
				perr = rd.poll()
			}
			var re *RecordError
			if !errors.As(perr, &re) || !errors.Is(perr, formats.ErrBadRecord) {
				t.Fatalf("poll: %v, want a RecordError for the bad record", perr)
			}
			if re.Topic != tc.topic || re.Partition != 1 || re.Offset != 3 || !strings.Contains(perr.Error(), tc.want) {
				t.Errorf("error %q, want topic %s partition 1 offset 3 and %q", perr, tc.topic, tc.want)
			}
			if !strings.Contains(perr.Error(), fmt.Sprintf("topic %s partition 1 offset 3", tc.topic)) {
				t.Errorf("error %q does not say where the record is", perr)
			}
			if len(rd.rows) != 3 {
				t.Errorf("%d good rows read before the bad one, want 3", len(rd.rows))
			}
		})
	}
}

const debeziumEventEnvelope = `{"type":"record","name":"Envelope","namespace":"db.shop.events","fields":[
	{"name":"before","type":["null",{"type":"record","name":"Value","fields":[
		{"name":"id","type":"long"},{"name":"user","type":["null","string"],"default":null},{"name":"n","type":"int"}]}],"default":null},
	{"name":"after","type":["null","Value"],"default":null},
	{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
		{"name":"connector","type":"string"},{"name":"ts_ms","type":"long"}]}},
	{"name":"op","type":"string"},
	{"name":"ts_ms","type":["null","long"],"default":null}]}`

type dbzEventValue struct {
	ID   int64   `avro:"id"`
	User *string `avro:"user"`
	N    int32   `avro:"n"`
}

type dbzEventEnvelope struct {
	Before *dbzEventValue `avro:"before"`
	After  *dbzEventValue `avro:"after"`
	Source struct {
		Connector string `avro:"connector"`
		TsMs      int64  `avro:"ts_ms"`
	} `avro:"source"`
	Op   string `avro:"op"`
	TsMs *int64 `avro:"ts_ms"`
}

// TestDebeziumAvroConfluentSource reads Debezium change events (written by
// confluent-kafka-go's serializer, with a tombstone after the delete) from a topic as a
// changelog: the final state after applying +I, -U, +U and -D is the table's.
func TestDebeziumAvroConfluentSource(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "cdc", 1)
	reg := registrytest.New(t)
	if _, err := reg.Register("cdc-value", registrytest.Avro, debeziumEventEnvelope); err != nil {
		t.Fatal(err)
	}
	conf := avrov2.NewSerializerConfig()
	conf.AutoRegisterSchemas, conf.UseLatestVersion = false, true
	ser, err := avrov2.NewSerializer(newRegistryClient(t, reg.URL), serde.ValueSerde, conf)
	if err != nil {
		t.Fatal(err)
	}
	val := func(id int64, user string, n int32) *dbzEventValue { return &dbzEventValue{ID: id, User: &user, N: n} }
	change := func(op string, before, after *dbzEventValue) []byte {
		ev := &dbzEventEnvelope{Before: before, After: after, Op: op}
		ev.Source.Connector = "postgresql"
		b, err := ser.Serialize("cdc", ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	c.Produce(t, "cdc",
		kafkatest.Record{Value: change("r", nil, val(1, "a", 10))},
		kafkatest.Record{Value: change("c", nil, val(2, "b", 20))},
		kafkatest.Record{Value: change("u", val(1, "a", 10), val(1, "a", 11))},
		kafkatest.Record{Value: change("d", val(2, "b", 20), nil)},
		kafkatest.Record{Key: []byte("2"), Value: nil}, // the tombstone after the delete
		kafkatest.Record{Value: change("c", nil, val(3, "c", 30))},
	)
	src := openSource(t, sourceConfig(c, newTestLog(t), "cdc", map[string]string{
		"format": "debezium-avro-confluent", "debezium-avro-confluent.url": reg.URL, "scan.bounded.mode": "latest-offset",
	}))
	var log []string
	state := map[string]int{}
	deadline := time.Now().Add(testDeadline)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no end of input; read %v", log)
		}
		bs, err := src.Poll(context.Background(), 100*time.Millisecond)
		for _, b := range bs {
			for i, row := range b.Rows {
				kind := connectors.Insert
				if b.Kinds != nil {
					kind = b.Kinds[i]
				}
				log = append(log, kind.String()+fmt.Sprint(row))
				if kind == connectors.Insert || kind == connectors.UpdateAfter {
					state[fmt.Sprint(row)]++
				} else {
					state[fmt.Sprint(row)]--
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := "+I[1 a 10] +I[2 b 20] -U[1 a 10] +U[1 a 11] -D[2 b 20] +I[3 c 30]"
	if got := strings.Join(log, " "); got != want {
		t.Errorf("changelog %s\n     want %s", got, want)
	}
	var final []string
	for r, n := range state {
		if n != 0 && n != 1 {
			t.Errorf("row %s counted %d times", r, n)
		}
		if n == 1 {
			final = append(final, r)
		}
	}
	sort.Strings(final)
	if got := strings.Join(final, " "); got != "[1 a 11] [3 c 30]" {
		t.Errorf("final state %s, want [1 a 11] [3 c 30]", got)
	}
}

// TestAvroConfluentKey writes the key with avro-confluent (its subject '<topic>-key')
// and reads it back as a key column, 'value.fields-include' = 'EXCEPT_KEY'.
func TestAvroConfluentKey(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "keyed", 1)
	reg := registrytest.New(t)
	opts := map[string]string{
		"format": "", "value.format": "json", "value.fields-include": "EXCEPT_KEY",
		"key.format": "avro-confluent", "key.avro-confluent.url": reg.URL, "key.fields": "id",
	}
	s := openSink(t, sinkConfig(c, newTestLog(t), "keyed", eventSchema, nil, opts), false)
	ctx := context.Background()
	if err := s.Write(ctx, inserts(0, 10)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := newRegistryClient(t, reg.URL).GetLatestSchemaMetadata("keyed-key"); err != nil {
		t.Fatalf("subject keyed-key: %v", err)
	}
	de, err := avrov2.NewDeserializer(newRegistryClient(t, reg.URL), serde.KeySerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.ReadAll(t, "keyed") {
		var k struct {
			ID *int64 `avro:"id"`
		}
		if err := de.DeserializeInto("keyed", r.Key, &k); err != nil || k.ID == nil {
			t.Fatalf("key %x: %v", r.Key, err)
		}
		if want := fmt.Sprintf(`{"user":"u%d","n":%d}`, *k.ID%7, *k.ID%100); string(r.Value) != want {
			t.Errorf("value %s, want %s", r.Value, want)
		}
	}
	opts["scan.bounded.mode"] = "latest-offset"
	rd := newReader(t, openSource(t, sourceConfig(c, newTestLog(t), "keyed", opts)))
	rd.toEOF()
	rd.checkIDs(0, 10)
	for id, row := range rd.rows {
		if got, want := fmt.Sprint(row), fmt.Sprint(eventRow(int(id))); got != want {
			t.Errorf("row %s, want %s", got, want)
		}
	}
}
