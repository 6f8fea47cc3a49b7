package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// orderMessages returns a builder of pipesql.test.Order messages from the descriptor set
// protoc wrote (connectors/formats/testdata/protobuf), through Google's dynamicpb.
func orderMessages(t *testing.T) func(name string, fields map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../connectors/formats/testdata/protobuf/order.desc")
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatal(err)
	}
	return func(name string, fields map[string]any) []byte {
		d, err := files.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			t.Fatal(err)
		}
		md := d.(protoreflect.MessageDescriptor)
		m := dynamicpb.NewMessage(md)
		for k, v := range fields {
			fd := md.Fields().ByName(protoreflect.Name(k))
			switch v := v.(type) {
			case map[string]any:
				sub := m.Mutable(fd).Message()
				for sk, sv := range v {
					sub.Set(fd.Message().Fields().ByName(protoreflect.Name(sk)), protoreflect.ValueOf(sv))
				}
			case protoreflect.EnumNumber:
				m.Set(fd, protoreflect.ValueOfEnum(v))
			default:
				m.Set(fd, protoreflect.ValueOf(v))
			}
		}
		data, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
}

// TestProtobufJob runs a job through the binary that reads protobuf Orders (the message
// named by its Java class, compiled from order.proto when the job starts) and writes
// JSON: nested fields and enums are read as Flink maps them, and a Click among the
// orders is skipped with protobuf.ignore-parse-errors.
func TestProtobufJob(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "pb-in", 2)
	c.CreateTopic(t, "pb-out", 1)
	msg := orderMessages(t)
	var rs []kafkatest.Record
	for i := range 20 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 2), Value: msg("pipesql.test.Order", map[string]any{
			"id": int64(i), "customer": fmt.Sprintf("c%d", i), "status": protoreflect.EnumNumber(i % 3),
			"ship_to": map[string]any{"city": fmt.Sprintf("city%d", i%4)},
		})})
		if i == 7 {
			rs = append(rs, kafkatest.Record{Partition: 1, Value: msg("pipesql.test.Click", map[string]any{"id": "not an order"})})
		}
	}
	c.Produce(t, "pb-in", rs...)
	protoPath, err := filepath.Abs("../../connectors/formats/testdata/protobuf/order.proto")
	if err != nil {
		t.Fatal(err)
	}
	job := writeJob(t, fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, customer STRING, status STRING, ship_to ROW<city STRING, zip STRING>) WITH (
  'connector' = 'kafka', 'topic' = 'pb-in', 'properties.bootstrap.servers' = '%[1]s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'protobuf', 'protobuf.message-class-name' = 'com.example.orders.Order',
  'protobuf.proto-file' = '%[2]s', 'protobuf.ignore-parse-errors' = 'true'
);
CREATE TABLE shipped (id BIGINT, customer STRING, city STRING) WITH (
  'connector' = 'kafka', 'topic' = 'pb-out', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json'
);
INSERT INTO shipped SELECT id, customer, ship_to.city FROM orders WHERE status = 'SHIPPED';
`, c.Bootstrap(), protoPath))
	r := pipesql(t, "run", job)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	got := map[int64]string{}
	for _, rec := range c.ReadAll(t, "pb-out") {
		var v struct {
			ID       int64  `json:"id"`
			Customer string `json:"customer"`
			City     string `json:"city"`
		}
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			t.Fatalf("output %q: %v", rec.Value, err)
		}
		got[v.ID] = v.Customer + "/" + v.City
	}
	want := map[int64]string{}
	for i := range 20 {
		if i%3 == 2 { // SHIPPED
			want[int64(i)] = fmt.Sprintf("c%d/city%d", i, i%4)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("wrote %v, want %v", got, want)
	}
	if !strings.Contains(r.stderr, "protobuf field 1 (int64 id) arrived as length-delimited") {
		t.Errorf("the skipped Click is not logged with its reason:\n%s", r.stderr)
	}
}
