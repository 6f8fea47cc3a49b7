package formats

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/types"
)

// debeziumEnvelope is the schema Debezium's AvroConverter registers for a MySQL table
// inventory.customers (id INT, first_name VARCHAR, email VARCHAR NULL).
const debeziumEnvelope = `{"type":"record","name":"Envelope","namespace":"dbserver1.inventory.customers","fields":[
 {"name":"before","type":["null",{"type":"record","name":"Value","fields":[
   {"name":"id","type":"int"},{"name":"first_name","type":"string"},
   {"name":"email","type":["null","string"],"default":null}]}],"default":null},
 {"name":"after","type":["null","Value"],"default":null},
 {"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.mysql","fields":[
   {"name":"version","type":"string"},{"name":"connector","type":"string"},{"name":"ts_ms","type":"long"},
   {"name":"db","type":"string"},{"name":"table","type":["null","string"],"default":null}]}},
 {"name":"op","type":"string"},
 {"name":"ts_ms","type":["null","long"],"default":null},
 {"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[
   {"name":"id","type":"string"},{"name":"total_order","type":"long"},{"name":"data_collection_order","type":"long"}]}],"default":null}]}`

type dbzValue struct {
	ID        int32   `avro:"id"`
	FirstName string  `avro:"first_name"`
	Email     *string `avro:"email"`
}

type dbzSource struct {
	Version   string  `avro:"version"`
	Connector string  `avro:"connector"`
	TsMs      int64   `avro:"ts_ms"`
	DB        string  `avro:"db"`
	Table     *string `avro:"table"`
}

type dbzBlock struct {
	ID                  string `avro:"id"`
	TotalOrder          int64  `avro:"total_order"`
	DataCollectionOrder int64  `avro:"data_collection_order"`
}

type dbzEnvelope struct {
	Before      *dbzValue `avro:"before"`
	After       *dbzValue `avro:"after"`
	Source      dbzSource `avro:"source"`
	Op          string    `avro:"op"`
	TsMs        *int64    `avro:"ts_ms"`
	Transaction *dbzBlock `avro:"transaction"`
}

func dbzChange(op string, before, after *dbzValue) *dbzEnvelope {
	table := "customers"
	ts := int64(1710506096789)
	return &dbzEnvelope{Before: before, After: after, Op: op, TsMs: &ts,
		Source: dbzSource{Version: "2.5.0.Final", Connector: "mysql", TsMs: ts, DB: "inventory", Table: &table}}
}

// TestDebeziumAvroConfluent reads change events written by confluent-kafka-go's Avro
// serializer with Debezium's envelope schema: the final state of the changelog (+I,
// -U, +U, -D applied in order) must be the table after the changes, computed here.
func TestDebeziumAvroConfluent(t *testing.T) {
	reg := registrytest.New(t)
	if _, err := reg.Register("dbserver1.inventory.customers-value", registrytest.Avro, debeziumEnvelope); err != nil {
		t.Fatal(err)
	}
	ser := confluentSerializer(t, registryClient(t, reg.URL))
	email := "ann@example.com"
	ann := &dbzValue{ID: 1, FirstName: "Ann", Email: &email}
	bob := &dbzValue{ID: 2, FirstName: "Bob"}
	ann2 := &dbzValue{ID: 1, FirstName: "Anne", Email: &email}
	cy := &dbzValue{ID: 3, FirstName: "Cy"}
	var records [][]byte
	for _, ev := range []*dbzEnvelope{
		dbzChange("c", nil, ann), dbzChange("c", nil, bob), dbzChange("u", ann, ann2),
		dbzChange("d", bob, nil), nil /* tombstone */, dbzChange("r", nil, cy),
	} {
		if ev == nil {
			records = append(records, nil)
			continue
		}
		b, err := ser.Serialize("dbserver1.inventory.customers", ev)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, b)
	}
	table := types.Schema{
		{Name: "id", Type: types.TypeInt.WithNotNull(true)},
		{Name: "first_name", Type: types.TypeString},
		{Name: "email", Type: types.TypeString},
	}
	// Through NewProjectedDecoder, as sources build it: email is not wanted.
	dec, err := connectors.NewProjectedDecoder(DebeziumAvroConfluentFormat, table, []connectors.ProducedColumn{
		{Name: "first_name", Type: types.TypeString}, {Name: "id", Type: types.TypeInt.WithNotNull(true)},
	}, avroConfluentOpts(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	cd, ok := dec.(connectors.ChangeDecoder)
	if !ok {
		t.Fatal("the projected decoder is not a ChangeDecoder")
	}
	var rows []types.Row
	var kinds []connectors.RowKind
	for _, rec := range records {
		if rows, kinds, err = cd.DecodeChanges(rec, rows, kinds); err != nil {
			t.Fatal(err)
		}
	}
	var log []string
	state := map[string]int{}
	for i, r := range rows {
		log = append(log, kinds[i].String()+fmt.Sprint(r))
		switch kinds[i] {
		case connectors.Insert, connectors.UpdateAfter:
			state[fmt.Sprint(r)]++
		default:
			state[fmt.Sprint(r)]--
		}
	}
	if got, want := strings.Join(log, " "), "+I[Ann 1] +I[Bob 2] -U[Ann 1] +U[Anne 1] -D[Bob 2] +I[Cy 3]"; got != want {
		t.Errorf("changelog %s\n     want %s", got, want)
	}
	var final []string
	for r, n := range state {
		if n < 0 || n > 1 {
			t.Errorf("row %s has count %d", r, n)
		}
		if n == 1 {
			final = append(final, r)
		}
	}
	sort.Strings(final)
	// the table after the changes: Ann renamed Anne, Bob deleted, Cy read
	if got := strings.Join(final, " "); got != "[Anne 1] [Cy 3]" {
		t.Errorf("final state %s", got)
	}

	// Bad changes.
	full, _ := NewDebeziumAvroConfluentDecoder(produced(table), avroConfluentOpts(reg.URL))
	fcd := full.(connectors.ChangeDecoder)
	noBefore, _ := ser.Serialize("dbserver1.inventory.customers", dbzChange("u", nil, ann2))
	if _, _, err := fcd.DecodeChanges(noBefore, nil, nil); !errors.Is(err, ErrUpdateWithoutBefore) || !errors.Is(err, ErrBadRecord) {
		t.Errorf("update without before: %v", err)
	}
	badOp, _ := ser.Serialize("dbserver1.inventory.customers", dbzChange("x", nil, ann))
	if _, _, err := fcd.DecodeChanges(badOp, nil, nil); err == nil || !strings.Contains(err.Error(), `unknown operation "x"`) {
		t.Errorf("op x: %v", err)
	}
	if _, _, err := fcd.DecodeChanges(records[0][:len(records[0])-4], nil, nil); !errors.Is(err, errAvroTruncated) {
		t.Errorf("truncated: %v", err)
	}
	// A plain avro-confluent record (no envelope) has no op.
	plain, err := NewAvroConfluentEncoder(table, avroConfluentOpts(reg.URL, AvroConfluentSubject, "plain-value"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plain.Encode(nil, types.Row{types.IntValue(types.Int, 1), types.StringValue("x"), types.NullValue})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := fcd.DecodeChanges(p, nil, nil); err == nil || !strings.Contains(err.Error(), "not a Debezium change event") {
		t.Errorf("a record without an envelope: %v", err)
	}
}

// TestAvroConnectTimeNames: Kafka Connect's Debezium time types carry no Avro logical
// type, only a connect.name; MicroTimestamp and NanoTimestamp are not milliseconds.
func TestAvroConnectTimeNames(t *testing.T) {
	w, err := parseAvroSchema(`{"type":"record","name":"Value","fields":[
		{"name":"ms","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.Timestamp"}},
		{"name":"us","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}},
		{"name":"ns","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.NanoTimestamp"}},
		{"name":"tm","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTime"}}]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	us := int64(1710506096789123) // 2024-03-15 12:34:56.789123
	data, err := avro.Marshal(w, map[string]any{"ms": us / 1000, "us": us, "ns": us*1000 + 456, "tm": int64(45296789123)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := compileAvroRecord(w, []types.Field{
		{Name: "ms", Type: types.TimestampType(3)}, {Name: "us", Type: types.TimestampType(6)},
		{Name: "ns", Type: types.TimestampType(6)}, {Name: "tm", Type: types.Type{Kind: types.Time, Prec: 6}},
	})
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 4)
	var r avroReader
	if err := avroDecodeBody(rec, &r, data, data, row, false); err != nil {
		t.Fatal(err)
	}
	checkAvroRow(t, "debezium times", row, types.Row{types.TimestampValue(us - 123), types.TimestampValue(us),
		types.TimestampValue(us), types.TimeValue(45296789123)})
}
