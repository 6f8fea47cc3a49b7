package formats

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	sprotobuf "github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats/internal/pbtest"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/types"
)

// sortMaps orders the entries of the MAP columns of row by key, as orderRow does:
// Confluent's serializer writes maps in Go's map order.
func sortMaps(row types.Row) {
	for i, v := range row {
		if v.Kind() == types.Map {
			e := v.Entries()
			sort.Slice(e, func(a, b int) bool { return types.Compare(e[a].Key, e[b].Key) < 0 })
			row[i] = types.MapValue(e)
		}
	}
}

// TestProtobufConfluentReadsConfluentSerializer reads what confluent-kafka-go's protobuf
// serializer writes (it registers order.proto under orders-value); a Click, another
// message of the same schema, is refused naming the type that does not match.
func TestProtobufConfluentReadsConfluentSerializer(t *testing.T) {
	reg := registrytest.New(t)
	ser, err := sprotobuf.NewSerializer(registryClient(t, reg.URL), serde.ValueSerde, sprotobuf.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{AvroConfluentURL: reg.URL}
	dec, err := NewProtobufConfluentDecoder(columnsOf(orderSchema), opts)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	row := make(types.Row, len(orderSchema))
	for i := 0; i < 200; i++ {
		o := randomOrder(r, int64(i))
		data, err := ser.Serialize("orders", o)
		if err != nil {
			t.Fatal(err)
		}
		if err := dec.Decode(data, row); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		sortMaps(row)
		checkPBRow(t, "order "+o.String(), row, orderRow(o), orderSchema)
	}
	if n := reg.Requests("GET /schemas/ids/{id}"); n != 1 {
		t.Errorf("%d fetches of the schema by id, want 1 (cached)", n)
	}

	// A nested message (indexes [0 0]) is found by its message indexes.
	item, err := ser.Serialize("items", &pbtest.Order_Item{Sku: "s-1", Qty: 3})
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := NewProtobufConfluentDecoder(columnsOf(types.Schema{{Name: "sku", Type: types.TypeString}, {Name: "qty", Type: types.TypeInt}}), opts)
	row2 := make(types.Row, 2)
	if err := d2.Decode(item, row2); err != nil || row2[0].Str() != "s-1" || row2[1].Int() != 3 {
		t.Errorf("nested message read as %v (%v)", row2, err)
	}

	click, err := ser.Serialize("orders", &pbtest.Click{Id: "c", Url: "/"})
	if err != nil {
		t.Fatal(err)
	}
	err = dec.Decode(click, row)
	if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "message pipesql.test.Click: ") ||
		!strings.Contains(err.Error(), "column id: protobuf field id is string, read as STRING, not BIGINT") {
		t.Errorf("a Click read as an Order: %v", err)
	}
}

// TestProtobufConfluentWritesForConfluentDeserializer: what pipesql writes with
// order.proto is read by confluent-kafka-go's deserializer into the generated type.
func TestProtobufConfluentWritesForConfluentDeserializer(t *testing.T) {
	reg := registrytest.New(t)
	enc, err := NewProtobufConfluentEncoder(orderSchema, map[string]string{AvroConfluentURL: reg.URL, AvroConfluentSubject: "orders-value",
		ProtobufProtoFile: "testdata/protobuf/order.proto", ProtobufMessageClassName: "pipesql.test.Order"})
	if err != nil {
		t.Fatal(err)
	}
	deser, err := sprotobuf.NewDeserializer(registryClient(t, reg.URL), serde.ValueSerde, sprotobuf.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := deser.ProtoRegistry.RegisterMessage((&pbtest.Order{}).ProtoReflect().Type()); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200; i++ {
		o := randomOrder(r, int64(i))
		data, err := enc.Encode(nil, orderRow(o))
		if err != nil {
			t.Fatal(err)
		}
		got, err := deser.Deserialize("orders", data)
		if err != nil {
			t.Fatalf("order %d: confluent's deserializer: %v", i, err)
		}
		if !proto.Equal(got.(proto.Message), o) {
			t.Fatalf("order %d reads back as %v, want %v", i, got, o)
		}
	}
}

// TestProtobufConfluentDerivedSchema writes with the schema derived from the table;
// protoc compiles the registered schema and confluent's deserializer reads the records
// into a message of protoc's descriptor.
func TestProtobufConfluentDerivedSchema(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc (Debian's protobuf-compiler) is not installed")
	}
	reg := registrytest.New(t)
	schema := types.Schema{
		{Name: "id", Type: types.TypeBigInt.WithNotNull(true)},
		{Name: "name", Type: types.TypeString},
		{Name: "ts", Type: tLTZ6},
		{Name: "addr", Type: tAddr},
		{Name: "items", Type: types.Type{Kind: types.Array, Elem: ptr(tItem)}},
		{Name: "tags", Type: tMapSI},
	}
	enc, err := NewProtobufConfluentEncoder(schema, map[string]string{AvroConfluentURL: reg.URL, AvroConfluentSubject: "t-value"})
	if err != nil {
		t.Fatal(err)
	}
	row := types.Row{types.BigIntValue(7), types.NullValue, types.TimestampLTZValue(1_700_000_000_123_456),
		types.RowValue([]types.Value{types.StringValue("Delft"), types.NullValue}),
		types.ArrayValue([]types.Value{types.RowValue([]types.Value{types.StringValue("a"), types.IntValue(types.Int, 2)})}),
		types.MapValue([]types.MapEntry{{Key: types.StringValue("k"), Value: types.IntValue(types.Int, 9)}})}
	data, err := enc.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := reg.Schema(1)
	if !ok {
		t.Fatal("no schema registered")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "row.proto"), []byte(text), 0o644)
	desc := filepath.Join(dir, "row.desc")
	if out, err := exec.Command(protoc, "-I", dir, "--include_imports", "--descriptor_set_out="+desc, "row.proto").CombinedOutput(); err != nil {
		t.Fatalf("protoc cannot compile the derived schema:\n%s\n%s", text, out)
	}
	raw, _ := os.ReadFile(desc)
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName("Row")
	if err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
	deser, _ := sprotobuf.NewDeserializer(registryClient(t, reg.URL), serde.ValueSerde, sprotobuf.NewDeserializerConfig())
	if err := deser.DeserializeInto("t", data, msg); err != nil {
		t.Fatal(err)
	}
	fields := msg.Descriptor().Fields()
	get := func(name string) protoreflect.Value { return msg.Get(fields.ByName(protoreflect.Name(name))) }
	if get("id").Int() != 7 || msg.Has(fields.ByName("name")) {
		t.Errorf("id %v, name set %v", get("id"), msg.Has(fields.ByName("name")))
	}
	ts := get("ts").Message()
	if ts.Get(ts.Descriptor().Fields().ByName("seconds")).Int() != 1_700_000_000 || ts.Get(ts.Descriptor().Fields().ByName("nanos")).Int() != 123_456_000 {
		t.Errorf("ts %v", ts)
	}
	addr := get("addr").Message()
	if addr.Get(addr.Descriptor().Fields().ByName("city")).String() != "Delft" || addr.Has(addr.Descriptor().Fields().ByName("zip")) {
		t.Errorf("addr %v", addr)
	}
	if l := get("items").List(); l.Len() != 1 || l.Get(0).Message().Get(l.Get(0).Message().Descriptor().Fields().ByName("qty")).Int() != 2 {
		t.Errorf("items %v", l)
	}
	if m := get("tags").Map(); m.Len() != 1 || m.Get(protoreflect.ValueOfString("k").MapKey()).Int() != 9 {
		t.Errorf("tags %v", m)
	}

	// pipesql reads it back, and a newer column absent from the writer's schema is NULL.
	wider := append(append(types.Schema{}, schema...), types.Column{Name: "added", Type: types.TypeString})
	dec, err := NewProtobufConfluentDecoder(columnsOf(wider), map[string]string{AvroConfluentURL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	back := make(types.Row, len(wider))
	if err := dec.Decode(data, back); err != nil {
		t.Fatal(err)
	}
	checkPBRow(t, "derived", back, append(row, types.NullValue), wider)
}

// TestProtobufConfluentBadRecords: a record without the magic byte, one with an id the
// registry does not know, one whose schema is Avro; each is a bad record (skipped with
// ignore-parse-errors).
func TestProtobufConfluentBadRecords(t *testing.T) {
	reg := registrytest.New(t)
	avroID, err := reg.Register("a-value", "AVRO", `{"type":"record","name":"R","fields":[{"name":"id","type":"long"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"json", []byte(`{"id":1}`), "does not start with Confluent's magic byte 0 but 0x7b"},
		{"short", []byte{0, 0, 1}, "too short for Confluent's wire format"},
		{"unknown-id", []byte{0, 0, 0, 3, 0xe7, 0, 8, 1}, "schema id 999: not in the schema registry at " + reg.URL},
		{"avro-schema", []byte{0, 0, 0, 0, byte(avroID), 0, 8, 1}, "the registry's schema is AVRO, not PROTOBUF"},
	}
	for _, c := range cases {
		for _, ignore := range []string{"false", "true"} {
			dec, err := NewProtobufConfluentDecoder(columnsOf(orderSchema[:1]), map[string]string{AvroConfluentURL: reg.URL, ProtobufIgnoreParseErrors: ignore})
			if err != nil {
				t.Fatal(err)
			}
			err = dec.Decode(c.data, make(types.Row, 1))
			if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want a bad record saying %q", c.name, err, c.want)
			}
			if errors.Is(err, connectors.ErrSkipped) != (ignore == "true") {
				t.Errorf("%s: ignore-parse-errors %s, skipped %v", c.name, ignore, errors.Is(err, connectors.ErrSkipped))
			}
		}
	}
	// An unknown id is asked for once and remembered.
	dec, err := NewProtobufConfluentDecoder(columnsOf(orderSchema[:1]), map[string]string{AvroConfluentURL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	unknown := []byte{0, 0, 0, 3, 0xe6, 0, 8, 1}
	before := reg.Requests("GET /schemas/ids/{id}")
	for range 3 {
		if err := dec.Decode(unknown, make(types.Row, 1)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("unknown id 998: %v", err)
		}
	}
	if n := reg.Requests("GET /schemas/ids/{id}") - before; n != 1 {
		t.Errorf("unknown id decoded 3 times: %d registry requests, want 1", n)
	}
	// An unreachable registry is not a bad record: ignore-parse-errors must not skip
	// records while it is down.
	down, err := NewProtobufConfluentDecoder(columnsOf(orderSchema[:1]), map[string]string{AvroConfluentURL: "http://127.0.0.1:1", ProtobufIgnoreParseErrors: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := down.Decode([]byte{0, 0, 0, 0, 1, 0, 8, 1}, make(types.Row, 1)); !errors.Is(err, ErrRegistryUnavailable) || errors.Is(err, connectors.ErrSkipped) || errors.Is(err, ErrBadRecord) {
		t.Errorf("registry down: %v, want ErrRegistryUnavailable, not skipped", err)
	}
	if _, err := NewProtobufConfluentEncoder(orderSchema[:1], map[string]string{AvroConfluentURL: reg.URL}); err == nil ||
		!strings.Contains(err.Error(), "protobuf-confluent.subject") {
		t.Errorf("encoder without a subject: %v", err)
	}
	if _, err := NewProtobufConfluentEncoder(types.Schema{{Name: "d", Type: types.TypeDate}}, map[string]string{AvroConfluentURL: reg.URL, AvroConfluentSubject: "s"}); err == nil ||
		!strings.Contains(err.Error(), "column d: ") {
		t.Errorf("a DATE column: %v", err)
	}
}

// TestProtobufConfluentReferences reads a record whose schema imports another file,
// registered under its own subject and named by the schema's references; the second
// message of the file is chosen by the record's message indexes.
func TestProtobufConfluentReferences(t *testing.T) {
	reg := registrytest.New(t)
	if _, err := reg.Register("common/address.proto", "PROTOBUF",
		"syntax = \"proto3\";\npackage common;\nmessage Address { string city = 1; }\n"); err != nil {
		t.Fatal(err)
	}
	id, err := reg.Register("shipments-value", "PROTOBUF",
		"syntax = \"proto3\";\nimport \"common/address.proto\";\nmessage Other { bool b = 1; }\nmessage Shipment { int64 id = 1; common.Address to = 2; }\n",
		registrytest.Reference{Name: "common/address.proto", Subject: "common/address.proto", Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	addr := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "Ede")
	body := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 5)
	body = protowire.AppendBytes(protowire.AppendTag(body, 2, protowire.BytesType), addr)
	record := append([]byte{0, 0, 0, 0, byte(id), 2, 2}, body...) // indexes [1]: count 1, index 1 (zig-zag)
	dec, err := NewProtobufConfluentDecoder(columnsOf(types.Schema{{Name: "id", Type: types.TypeBigInt},
		{Name: "to", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "city", Type: types.TypeString}}}}}),
		map[string]string{AvroConfluentURL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 2)
	if err := dec.Decode(record, row); err != nil {
		t.Fatal(err)
	}
	if row[0].Int() != 5 || row[1].Elems()[0].Str() != "Ede" {
		t.Errorf("read %v", row)
	}
}
