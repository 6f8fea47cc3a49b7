package formats

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats/internal/pbtest"
	"github.com/pipesql/pipesql/types"
)

var (
	tItem = types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "sku", Type: types.TypeString}, {Name: "qty", Type: types.TypeInt}}}
	tAddr = types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "city", Type: types.TypeString}, {Name: "zip", Type: types.TypeString}}}
	tLTZ6 = types.TimestampLTZType(6)
)

// orderSchema is a table over every field of pbtest.Order.
var orderSchema = types.Schema{
	{Name: "id", Type: types.TypeBigInt},
	{Name: "customer", Type: types.TypeString},
	{Name: "amount", Type: types.TypeDouble},
	{Name: "status", Type: types.TypeString},
	{Name: "items", Type: types.Type{Kind: types.Array, Elem: ptr(tItem)}},
	{Name: "tags", Type: tMapSI},
	{Name: "ship_to", Type: tAddr},
	{Name: "codes", Type: types.Type{Kind: types.Array, Elem: ptr(types.TypeBigInt)}},
	{Name: "payload", Type: tBytes},
	{Name: "created", Type: tLTZ6},
	{Name: "email", Type: types.TypeString},
	{Name: "phone", Type: types.TypeString},
	{Name: "small", Type: types.TypeBigInt},
	{Name: "delta", Type: types.TypeBigInt},
	{Name: "f32", Type: types.TypeInt},
	{Name: "ratio", Type: tFloat},
	{Name: "urgent", Type: types.TypeBoolean},
	{Name: "notes", Type: types.Type{Kind: types.Array, Elem: ptr(types.TypeString)}},
	{Name: "stock", Type: types.Type{Kind: types.Map, Key: ptr(types.TypeBigInt), Elem: ptr(tItem)}},
	{Name: "events", Type: types.Type{Kind: types.Array, Elem: ptr(types.TimestampType(6))}},
}

func columnsOf(s types.Schema) []connectors.ProducedColumn {
	out := make([]connectors.ProducedColumn, len(s))
	for i, c := range s {
		out[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	return out
}

// descOpts reads pbtest's messages from the descriptor set protoc wrote.
func descOpts(message string, extra ...string) map[string]string {
	o := map[string]string{ProtobufMessageClassName: message, ProtobufDescriptorFile: "testdata/protobuf/order.desc"}
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i]] = extra[i+1]
	}
	return o
}

// randomOrder builds an Order with each field set or not, using generated code only.
func randomOrder(r *rand.Rand, id int64) *pbtest.Order {
	o := &pbtest.Order{Id: id, Customer: []string{"", "ann", "bob", "zoë ✓"}[r.IntN(4)],
		Status: pbtest.Order_Status(r.IntN(3)), Small: r.Uint32(), Delta: r.Int64N(1<<40) - 1<<39,
		F32: r.Uint32() >> 1, Ratio: float32(r.IntN(1000)) / 8, Urgent: r.IntN(2) == 0}
	if r.IntN(2) == 0 {
		a := float64(r.IntN(100000)) / 100
		o.Amount = &a
	}
	for i := r.IntN(3); i > 0; i-- {
		o.Items = append(o.Items, &pbtest.Order_Item{Sku: "sku-" + string(rune('a'+r.IntN(26))), Qty: r.Int32N(50) - 10})
	}
	if n := r.IntN(3); n > 0 {
		o.Tags = map[string]int32{}
		for i := 0; i < n; i++ {
			o.Tags[string(rune('k'+i))] = r.Int32()
		}
	}
	if r.IntN(2) == 0 {
		o.ShipTo = &pbtest.Address{City: "Utrecht", Zip: []string{"", "3511"}[r.IntN(2)]}
	}
	for i := r.IntN(4); i > 0; i-- {
		o.Codes = append(o.Codes, r.Int64()-r.Int64())
	}
	if r.IntN(2) == 0 {
		o.Payload = []byte{0, 1, byte(r.IntN(256))}
	}
	if r.IntN(2) == 0 {
		o.Created = &timestamppb.Timestamp{Seconds: 1_700_000_000 + r.Int64N(1e6), Nanos: r.Int32N(1e6) * 1000}
	}
	switch r.IntN(3) {
	case 1:
		o.Contact = &pbtest.Order_Email{Email: "a@b.c"}
	case 2:
		o.Contact = &pbtest.Order_Phone{Phone: ""}
	}
	for i := r.IntN(3); i > 0; i-- {
		o.Notes = append(o.Notes, strings.Repeat("n", i))
	}
	for i := r.IntN(3); i > 0; i-- {
		o.Events = append(o.Events, &timestamppb.Timestamp{Seconds: r.Int64N(4e9) - 2e9, Nanos: r.Int32N(1e6) * 1000})
	}
	if r.IntN(2) == 0 {
		o.Stock = map[int64]*pbtest.Order_Item{int64(r.IntN(9)) - 4: {Sku: "s", Qty: 2}, 100: {}}
	}
	return o
}

func itemRow(it *pbtest.Order_Item) types.Value {
	return types.RowValue([]types.Value{types.StringValue(it.GetSku()), types.IntValue(types.Int, int64(it.GetQty()))})
}

// orderRow is what pipesql must read from o: Flink's protobuf type mapping, computed
// from the generated struct. Maps are in key order (proto.MarshalOptions.Deterministic).
func orderRow(o *pbtest.Order) types.Row {
	null := types.NullValue
	row := types.Row{
		types.BigIntValue(o.Id), types.StringValue(o.Customer), null, types.StringValue(o.Status.String()),
		null, null, null, null, types.BytesValue(o.Payload), null, null, null,
		types.BigIntValue(int64(o.Small)), types.BigIntValue(o.Delta), types.IntValue(types.Int, int64(int32(o.F32))),
		types.FloatValue(float64(o.Ratio)), types.BoolValue(o.Urgent), null, null, null,
	}
	if o.Amount != nil {
		row[2] = types.DoubleValue(*o.Amount)
	}
	items := []types.Value{}
	for _, it := range o.Items {
		items = append(items, itemRow(it))
	}
	row[4] = types.ArrayValue(items)
	keys := make([]string, 0, len(o.Tags))
	for k := range o.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tags := []types.MapEntry{}
	for _, k := range keys {
		tags = append(tags, types.MapEntry{Key: types.StringValue(k), Value: types.IntValue(types.Int, int64(o.Tags[k]))})
	}
	row[5] = types.MapValue(tags)
	if o.ShipTo != nil {
		row[6] = types.RowValue([]types.Value{types.StringValue(o.ShipTo.City), types.StringValue(o.ShipTo.Zip)})
	}
	codes := []types.Value{}
	for _, c := range o.Codes {
		codes = append(codes, types.BigIntValue(c))
	}
	row[7] = types.ArrayValue(codes)
	if o.Created != nil {
		row[9] = types.TimestampLTZValue(o.Created.AsTime().UnixMicro())
	}
	switch c := o.Contact.(type) {
	case *pbtest.Order_Email:
		row[10] = types.StringValue(c.Email)
	case *pbtest.Order_Phone:
		row[11] = types.StringValue(c.Phone)
	}
	notes := []types.Value{}
	for _, n := range o.Notes {
		notes = append(notes, types.StringValue(n))
	}
	row[17] = types.ArrayValue(notes)
	sk := make([]int64, 0, len(o.Stock))
	for k := range o.Stock {
		sk = append(sk, k)
	}
	sort.Slice(sk, func(i, j int) bool { return sk[i] < sk[j] })
	stock := []types.MapEntry{}
	for _, k := range sk {
		stock = append(stock, types.MapEntry{Key: types.BigIntValue(k), Value: itemRow(o.Stock[k])})
	}
	row[18] = types.MapValue(stock)
	events := []types.Value{}
	for _, e := range o.Events {
		events = append(events, types.TimestampValue(e.AsTime().UnixMicro()))
	}
	row[19] = types.ArrayValue(events)
	return row
}

func checkPBRow(t *testing.T, what string, got, want types.Row, schema types.Schema) {
	t.Helper()
	for i := range want {
		if !sameValue(got[i], want[i]) {
			t.Errorf("%s: column %s = %v, want %v", what, schema[i].Name, got[i], want[i])
		}
	}
}

// TestProtobufRoundTripGenerated reads messages marshalled by protoc-generated Go code,
// writes the rows back, and unmarshals them into the generated type: both directions
// against an implementation that shares none of pipesql's wire code.
func TestProtobufRoundTripGenerated(t *testing.T) {
	for _, src := range []struct{ name, key, value string }{
		{"descriptor-file", ProtobufDescriptorFile, "testdata/protobuf/order.desc"},
		{"proto-file", ProtobufProtoFile, "testdata/protobuf/order.proto"},
	} {
		t.Run(src.name, func(t *testing.T) {
			opts := map[string]string{ProtobufMessageClassName: "pipesql.test.Order", src.key: src.value}
			dec, err := NewProtobufDecoder(columnsOf(orderSchema), opts)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := NewProtobufEncoder(orderSchema, opts)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			row := make(types.Row, len(orderSchema))
			for i := 0; i < 300; i++ {
				o := randomOrder(r, int64(i))
				data, err := proto.MarshalOptions{Deterministic: true}.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				if err := dec.Decode(data, row); err != nil {
					t.Fatalf("order %d: %v", i, err)
				}
				checkPBRow(t, "order "+o.String(), row, orderRow(o), orderSchema)
				out, err := enc.Encode(nil, row)
				if err != nil {
					t.Fatalf("encode order %d: %v", i, err)
				}
				back := new(pbtest.Order)
				if err := proto.Unmarshal(out, back); err != nil {
					t.Fatalf("generated code cannot read what pipesql wrote for order %d: %v", i, err)
				}
				if !proto.Equal(back, o) {
					t.Fatalf("order %d written by pipesql reads back as\n%v\nwant\n%v", i, back, o)
				}
			}
		})
	}
}

// TestProtobufProjection reads two columns in another order than the message's; the
// other fields are skipped on the wire.
func TestProtobufProjection(t *testing.T) {
	cols := []connectors.ProducedColumn{
		{Name: "ship_to", Type: tAddr}, {Name: "status", Type: types.TypeInt}, {Name: "unused", Type: types.TypeNull},
	}
	d, err := NewProtobufDecoder(cols, descOpts("com.example.orders.Order")) // the Java class name
	if err != nil {
		t.Fatal(err)
	}
	o := &pbtest.Order{Id: 9, Status: pbtest.Order_SHIPPED, ShipTo: &pbtest.Address{City: "Gouda"}, Notes: []string{"x"}}
	data, _ := proto.Marshal(o)
	row := make(types.Row, 3)
	if err := d.Decode(data, row); err != nil {
		t.Fatal(err)
	}
	want := types.Row{types.RowValue([]types.Value{types.StringValue("Gouda"), types.StringValue("")}), types.IntValue(types.Int, 2), types.NullValue}
	checkPBRow(t, "projection", row, want, types.Schema{{Name: "ship_to"}, {Name: "status"}, {Name: "unused"}})
}

// TestProtobufWrongMessage reads a Click where an Order is expected: field 1 is a
// string in Click and an int64 in Order, so the record is refused, naming the field.
func TestProtobufWrongMessage(t *testing.T) {
	click, _ := proto.Marshal(&pbtest.Click{Id: "c-1", Url: "https://example.com"})
	order, _ := proto.Marshal(&pbtest.Order{Id: 1, Customer: "ann"})
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"click", click, `field "id": protobuf field 1 (int64 id) arrived as length-delimited, not varint: the record is not a pipesql.test.Order message`},
		{"truncated", order[:len(order)-2], `field "customer": protobuf field 2: unexpected EOF: the record is not a pipesql.test.Order message`},
		{"garbage", []byte{0xff, 0xff, 0xff}, "not a pipesql.test.Order message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ignore := range []bool{false, true} {
				opts := descOpts("pipesql.test.Order")
				if ignore {
					opts[ProtobufIgnoreParseErrors] = "true"
				}
				d, err := NewProtobufDecoder(columnsOf(orderSchema[:2]), opts)
				if err != nil {
					t.Fatal(err)
				}
				err = d.Decode(c.data, make(types.Row, 2))
				if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want ErrBadRecord with %q", err, c.want)
				}
				if errors.Is(err, connectors.ErrSkipped) != ignore {
					t.Errorf("ignore-parse-errors %v: skipped is %v", ignore, !ignore)
				}
				if !strings.Contains(err.Error(), "record: 0x") {
					t.Errorf("error %v does not show the record", err)
				}
			}
		})
	}
}

// TestProtobufDefaults reads a proto2 message with declared defaults with and without
// protobuf.read-default-values.
func TestProtobufDefaults(t *testing.T) {
	inner := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "x", Type: types.TypeInt}}}
	schema := types.Schema{{Name: "a", Type: types.TypeInt}, {Name: "b", Type: types.TypeString}, {Name: "c", Type: types.TypeBigInt},
		{Name: "inner", Type: inner}, {Name: "nums", Type: tArrInt}}
	data, _ := proto.Marshal(&pbtest.Legacy{C: proto.Int64(5)})
	for _, c := range []struct {
		readDefaults string
		want         types.Row
	}{
		{"false", types.Row{types.NullValue, types.NullValue, types.BigIntValue(5), types.NullValue, types.ArrayValue([]types.Value{})}},
		{"true", types.Row{types.IntValue(types.Int, 10), types.StringValue(""), types.BigIntValue(5),
			types.RowValue([]types.Value{types.IntValue(types.Int, 7)}), types.ArrayValue([]types.Value{})}},
	} {
		// the Java class of a nested message in a file without java options
		d, err := NewProtobufDecoder(columnsOf(schema), descOpts("pipesql.test2.LegacyOuterClass$Legacy", ProtobufReadDefaultValues, c.readDefaults))
		if err != nil {
			t.Fatal(err)
		}
		row := make(types.Row, len(schema))
		if err := d.Decode(data, row); err != nil {
			t.Fatal(err)
		}
		checkPBRow(t, "read-default-values "+c.readDefaults, row, c.want, schema)
	}
	// Written: NULL leaves a field unset, and the generated code sees its default.
	enc, err := NewProtobufEncoder(schema, descOpts("pipesql.test2.Legacy"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc.Encode(nil, types.Row{types.NullValue, types.StringValue("b"), types.BigIntValue(1), types.NullValue,
		types.ArrayValue([]types.Value{types.IntValue(types.Int, 3), types.NullValue})})
	if err != nil {
		t.Fatal(err)
	}
	var l pbtest.Legacy
	if err := proto.Unmarshal(out, &l); err != nil {
		t.Fatal(err)
	}
	if l.A != nil || l.GetA() != 10 || l.GetB() != "b" || l.GetC() != 1 || l.Inner != nil || len(l.Nums) != 2 || l.Nums[1] != 0 {
		t.Errorf("pipesql wrote %v", &l)
	}
}

// TestProtobufNullElements writes NULL elements and values, which protobuf cannot hold,
// as defaults (strings as protobuf.write-null-string-literal), as Flink does.
func TestProtobufNullElements(t *testing.T) {
	schema := types.Schema{{Name: "notes", Type: types.Type{Kind: types.Array, Elem: ptr(types.TypeString)}}, {Name: "tags", Type: tMapSI},
		{Name: "items", Type: types.Type{Kind: types.Array, Elem: ptr(tItem)}}}
	enc, err := NewProtobufEncoder(schema, descOpts("pipesql.test.Order", ProtobufWriteNullStringLiteral, "<null>"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc.Encode(nil, types.Row{
		types.ArrayValue([]types.Value{types.StringValue("a"), types.NullValue}),
		types.MapValue([]types.MapEntry{{Key: types.StringValue("k"), Value: types.NullValue}}),
		types.ArrayValue([]types.Value{types.NullValue, types.RowValue([]types.Value{types.NullValue, types.IntValue(types.Int, 4)})}),
	})
	if err != nil {
		t.Fatal(err)
	}
	var o pbtest.Order
	if err := proto.Unmarshal(out, &o); err != nil {
		t.Fatal(err)
	}
	want := &pbtest.Order{Notes: []string{"a", "<null>"}, Tags: map[string]int32{"k": 0},
		Items: []*pbtest.Order_Item{{}, {Qty: 4}}}
	if !proto.Equal(&o, want) {
		t.Errorf("wrote %v, want %v", &o, want)
	}
}

// TestProtobufOneofLastWins: when a row sets two members of a oneof, the one later in
// the schema is written (Flink sets them in schema order); when a record carries two,
// the later on the wire is read.
func TestProtobufOneofLastWins(t *testing.T) {
	schema := types.Schema{{Name: "email", Type: types.TypeString}, {Name: "phone", Type: types.TypeString}}
	enc, err := NewProtobufEncoder(schema, descOpts("pipesql.test.Order"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := enc.Encode(nil, types.Row{types.StringValue("e"), types.StringValue("p")})
	var o pbtest.Order
	if err := proto.Unmarshal(out, &o); err != nil || o.GetPhone() != "p" || o.GetEmail() != "" {
		t.Fatalf("wrote %v (%v), want phone p only", &o, err)
	}
	a, _ := proto.Marshal(&pbtest.Order{Contact: &pbtest.Order_Phone{Phone: "p"}})
	b, _ := proto.Marshal(&pbtest.Order{Contact: &pbtest.Order_Email{Email: "e"}})
	d, _ := NewProtobufDecoder(columnsOf(schema), descOpts("pipesql.test.Order"))
	row := make(types.Row, 2)
	if err := d.Decode(append(a, b...), row); err != nil {
		t.Fatal(err)
	}
	if row[0].Str() != "e" || !row[1].IsNull() {
		t.Errorf("read %v, want the email only", row)
	}
}

// TestProtobufConfigErrors: a table whose message or columns do not match says which
// option or column is wrong and what is closest.
func TestProtobufConfigErrors(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.proto")
	os.WriteFile(bad, []byte("syntax = \"proto3\";\nmessage M {\n  int64 id = 1\n}\n"), 0o644)
	cases := []struct {
		name string
		cols types.Schema
		opts map[string]string
		want string
	}{
		{"no-message", orderSchema[:1], map[string]string{ProtobufDescriptorFile: "testdata/protobuf/order.desc"}, "the message is required"},
		{"no-source", orderSchema[:1], map[string]string{ProtobufMessageClassName: "a.B"}, "set 'protobuf.descriptor-file'"},
		{"both-sources", orderSchema[:1], descOpts("a.B", ProtobufProtoFile, "x.proto"), "not both"},
		{"unknown-message", orderSchema[:1], descOpts("pipesql.test.Ordr"), "no message 'pipesql.test.Ordr': did you mean 'pipesql.test.Order'?"},
		{"missing-file", orderSchema[:1], descOpts("a.B", ProtobufDescriptorFile, filepath.Join(tmp, "none.desc")), "no such file"},
		{"not-a-set", orderSchema[:1], descOpts("a.B", ProtobufDescriptorFile, "testdata/protobuf/order.proto"), "is not a FileDescriptorSet"},
		{"syntax-error", orderSchema[:1], map[string]string{ProtobufMessageClassName: "M", ProtobufProtoFile: bad}, "bad.proto:4:1"},
		{"unknown-column", types.Schema{{Name: "custome", Type: types.TypeString}}, descOpts("pipesql.test.Order"),
			"column custome: message pipesql.test.Order has no field 'custome': did you mean 'customer'?"},
		{"wrong-type", types.Schema{{Name: "id", Type: types.TypeString}}, descOpts("pipesql.test.Order"),
			"column id: protobuf field id is int64, read as BIGINT, not STRING"},
		{"nested-wrong-type", types.Schema{{Name: "items", Type: types.Type{Kind: types.Array, Elem: ptr(types.Type{Kind: types.Struct,
			Fields: []types.Field{{Name: "qty", Type: types.TypeString}}})}}}, descOpts("pipesql.test.Order"),
			"column items.qty: protobuf field qty is int32, read as INT, not STRING"},
		{"map-as-row", types.Schema{{Name: "tags", Type: tAddr}}, descOpts("pipesql.test.Order"), "is map, read as MAP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewProtobufDecoder(columnsOf(c.cols), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("decoder: %v, want %q", err, c.want)
			}
			_, err = NewProtobufEncoder(c.cols, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("encoder: %v, want %q", err, c.want)
			}
		})
	}
}

// TestProtobufGroups reads and writes proto2 groups (delimited by start and end tags,
// not by a length) as ROWs.
func TestProtobufGroups(t *testing.T) {
	line := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "text", Type: types.TypeString}}}
	schema := types.Schema{{Name: "c", Type: types.TypeBigInt}, {Name: "line", Type: types.Type{Kind: types.Array, Elem: ptr(line)}},
		{Name: "note", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "n", Type: types.TypeInt}}}}}
	o := &pbtest.Legacy{C: proto.Int64(1), Line: []*pbtest.Legacy_Line{{Text: proto.String("a")}, {}}, Note: &pbtest.Legacy_Note{N: proto.Int32(5)}}
	data, _ := proto.Marshal(o)
	opts := descOpts("pipesql.test2.Legacy")
	d, err := NewProtobufDecoder(columnsOf(schema), opts)
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 3)
	if err := d.Decode(data, row); err != nil {
		t.Fatal(err)
	}
	want := types.Row{types.BigIntValue(1),
		types.ArrayValue([]types.Value{types.RowValue([]types.Value{types.StringValue("a")}), types.RowValue([]types.Value{types.NullValue})}),
		types.RowValue([]types.Value{types.IntValue(types.Int, 5)})}
	checkPBRow(t, "groups", row, want, schema)
	enc, err := NewProtobufEncoder(schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	var back pbtest.Legacy
	if err := proto.Unmarshal(out, &back); err != nil || !proto.Equal(&back, o) {
		t.Errorf("wrote %v (%v), want %v", &back, err, o)
	}
}
