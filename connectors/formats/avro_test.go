package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/types"
)

func ratOf(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func decType(p, s int) types.Type { return types.Type{Kind: types.Decimal, Prec: p, Scale: s} }

// allTypes is a table of every type the avro formats map, and a row of it.
var allTypes = types.Schema{
	{Name: "b", Type: types.TypeBoolean.WithNotNull(true)},
	{Name: "ti", Type: types.Type{Kind: types.TinyInt}},
	{Name: "si", Type: types.Type{Kind: types.SmallInt}},
	{Name: "i", Type: types.TypeInt},
	{Name: "l", Type: types.TypeBigInt},
	{Name: "f", Type: types.Type{Kind: types.Float}},
	{Name: "d", Type: types.TypeDouble},
	{Name: "s", Type: types.TypeString},
	{Name: "by", Type: types.Type{Kind: types.Bytes, Length: types.MaxLength}},
	{Name: "dec", Type: decType(10, 2)},
	{Name: "dt", Type: types.Type{Kind: types.Date}},
	{Name: "tm", Type: types.Type{Kind: types.Time}},
	{Name: "ts3", Type: types.TimestampType(3)},
	{Name: "ts6", Type: types.TimestampType(6)},
	{Name: "ltz", Type: types.TimestampLTZType(3)},
	{Name: "arr", Type: types.Type{Kind: types.Array, Elem: &types.TypeInt}},
	{Name: "m", Type: types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &types.TypeBigInt}},
	{Name: "r", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "x", Type: types.TypeString}, {Name: "y", Type: types.TypeInt.WithNotNull(true)}}}},
}

var allRow = types.Row{
	types.BoolValue(true),
	types.IntValue(types.TinyInt, -7),
	types.IntValue(types.SmallInt, 300),
	types.IntValue(types.Int, -123456),
	types.BigIntValue(1 << 40),
	types.FloatValue(1.5),
	types.DoubleValue(-0.25),
	types.StringValue("héllo"),
	types.BytesValue([]byte{0, 0xff, 7}),
	types.DecimalValue(ratOf("-12345.67")),
	types.DateValue(19797),                        // 2024-03-15
	types.TimeValue((12*3600 + 34*60 + 56) * 1e6), // 12:34:56
	types.TimestampValue(1710506096789000),        // 2024-03-15 12:34:56.789
	types.TimestampValue(1710506096789123),
	types.TimestampLTZValue(1710506096789000),
	types.ArrayValue([]types.Value{types.IntValue(types.Int, 1), types.NullValue, types.IntValue(types.Int, 3)}),
	types.MapValue([]types.MapEntry{{Key: types.StringValue("k"), Value: types.BigIntValue(9)}}),
	types.RowValue([]types.Value{types.NullValue, types.IntValue(types.Int, 5)}),
}

func produced(schema types.Schema) []connectors.ProducedColumn {
	cols := make([]connectors.ProducedColumn, len(schema))
	for i, c := range schema {
		cols[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	return cols
}

func checkAvroRow(t *testing.T, what string, got, want types.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d columns, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !types.Equal(got[i], want[i]) || got[i].IsNull() != want[i].IsNull() {
			t.Errorf("%s: column %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestAvroSchemaDerivation checks the derived schema against the one Flink's
// AvroSchemaConverter writes for the same table (written out by hand from its rules).
func TestAvroSchemaDerivation(t *testing.T) {
	got, err := avroSchemaJSON(allTypes[:3:3], true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"record","name":"org.apache.flink.avro.generated.record","fields":[` +
		`{"name":"b","type":"boolean"},` +
		`{"name":"ti","type":["null","int"],"default":null},` +
		`{"name":"si","type":["null","int"],"default":null}]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	nested, err := avroSchemaJSON(types.Schema{allTypes[9], allTypes[13], allTypes[17]}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{
		`{"logicalType":"decimal","precision":10,"scale":2,"type":"bytes"}`,
		`{"logicalType":"local-timestamp-micros","type":"long"}`,
		`"name":"org.apache.flink.avro.generated.record_r"`,
		`{"name":"y","type":"int"}`,
	} {
		if !strings.Contains(nested, part) {
			t.Errorf("schema %s lacks %s", nested, part)
		}
	}
	if _, err := avroSchemaJSON(types.Schema{{Name: "t", Type: types.Type{Kind: types.Time, Prec: 6}}}, true); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("TIME(6): %v", err)
	}
}

// TestAvroRoundTripHamba writes allRow with pipesql and reads it with hamba/avro (an
// independent implementation of the spec), then the other way round.
func TestAvroRoundTripHamba(t *testing.T) {
	enc, err := NewAvroEncoder(allTypes, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := enc.Encode(nil, allRow)
	if err != nil {
		t.Fatal(err)
	}
	schema, _, err := avroSchemaFor(allTypes, true)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := avro.Unmarshal(schema, data, &m); err != nil {
		t.Fatalf("hamba cannot read pipesql's record: %v", err)
	}
	ts := time.Date(2024, 3, 15, 12, 34, 56, 789e6, time.UTC)
	checks := map[string]any{
		"b": true, "ti": -7, "si": 300, "i": -123456, "l": int64(1 << 40), "f": float32(1.5), "d": -0.25,
		"s": "héllo", "by": []byte{0, 0xff, 7}, "dec": ratOf("-12345.67"),
		"dt": time.Date(2024, 3, 15, 0, 0, 0, 0, time.UTC), "tm": 12*time.Hour + 34*time.Minute + 56*time.Second,
		"ts3": ts, "ts6": ts.Add(123 * time.Microsecond), "ltz": ts,
		// hamba's generic values name the branch of a union of a complex type
		"arr": map[string]any{"array": []any{1, nil, 3}}, "m": map[string]any{"map": map[string]any{"k": int64(9)}},
		"r": map[string]any{avroRecordName + "_r": map[string]any{"x": nil, "y": 5}},
	}
	for k, want := range checks {
		got := m[k]
		if r, ok := got.(*big.Rat); ok {
			if r.Cmp(want.(*big.Rat)) != 0 {
				t.Errorf("%s: hamba read %v, want %v", k, r, want)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: hamba read %#v, want %#v", k, got, want)
		}
	}

	// hamba writes, pipesql reads.
	back, err := avro.Marshal(schema, m)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewAvroDecoder(produced(allTypes), nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, len(allTypes))
	if err := dec.Decode(back, row); err != nil {
		t.Fatal(err)
	}
	checkAvroRow(t, "hamba -> pipesql", row, allRow)
}

// TestAvroProjection reads 2 of the columns through NewProjectedDecoder: the others are
// skipped by their declared types.
func TestAvroProjection(t *testing.T) {
	enc, _ := NewAvroEncoder(allTypes, nil)
	data, _ := enc.Encode(nil, allRow)
	dec, err := connectors.NewProjectedDecoder(AvroFormat, allTypes, []connectors.ProducedColumn{
		{Name: "r", Type: allTypes[17].Type}, {Name: "s", Type: types.TypeString},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 2)
	if err := dec.Decode(data, row); err != nil {
		t.Fatal(err)
	}
	checkAvroRow(t, "projection", row, types.Row{allRow[17], allRow[7]})
}

// avroUser is a record of the evolution tests, for confluent-kafka-go's serializers.
type avroUser struct {
	Name   string    `avro:"name"`
	Amount *big.Rat  `avro:"amount"`
	TS     time.Time `avro:"ts"`
	Tags   []string  `avro:"tags"`
}

type avroUserV2 struct {
	avroUser `avro:",inline"`
	Age      int32 `avro:"age"`
}

const avroUserSchema = `{"type":"record","name":"User","namespace":"shop","fields":[
	{"name":"name","type":"string"},
	{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"tags","type":{"type":"array","items":"string"}}]}`

// avroUserSchemaV2 adds a field with a default: BACKWARD compatible.
var avroUserSchemaV2 = strings.Replace(avroUserSchema, `"string"}}]}`, `"string"}},{"name":"age","type":"int","default":-1}]}`, 1)

var userTable = types.Schema{
	{Name: "name", Type: types.TypeString},
	{Name: "amount", Type: decType(9, 2)},
	{Name: "ts", Type: types.TimestampType(3)},
	{Name: "tags", Type: types.Type{Kind: types.Array, Elem: &types.TypeString}},
}

// registryClient is a client of the registry at url (avro and protobuf tests).
func registryClient(t testing.TB, url string) schemaregistry.Client {
	t.Helper()
	c, err := schemaregistry.NewClient(schemaregistry.NewConfig(url))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func confluentSerializer(t *testing.T, c schemaregistry.Client) *avrov2.Serializer {
	t.Helper()
	conf := avrov2.NewSerializerConfig()
	conf.AutoRegisterSchemas = false
	conf.UseLatestVersion = true
	s, err := avrov2.NewSerializer(c, serde.ValueSerde, conf)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func avroConfluentOpts(url string, kv ...string) map[string]string {
	m := map[string]string{AvroConfluentURL: url}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestAvroConfluentInterop: records written by confluent-kafka-go's Avro serializer are
// read by pipesql, and what pipesql writes is read by its deserializer, against a
// registry speaking the REST API.
func TestAvroConfluentInterop(t *testing.T) {
	reg := registrytest.New(t)
	if _, err := reg.Register("users-value", registrytest.Avro, avroUserSchema); err != nil {
		t.Fatal(err)
	}
	client := registryClient(t, reg.URL)
	ser := confluentSerializer(t, client)
	ts := time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC)
	in := avroUser{Name: "ann", Amount: ratOf("12.50"), TS: ts, Tags: []string{"a", "b"}}
	payload, err := ser.Serialize("users", &in)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewAvroConfluentDecoder(produced(userTable), avroConfluentOpts(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, len(userTable))
	for range 3 {
		if err := dec.Decode(payload, row); err != nil {
			t.Fatal(err)
		}
	}
	checkAvroRow(t, "confluent -> pipesql", row, types.Row{
		types.StringValue("ann"), types.DecimalValue(ratOf("12.5")), types.TimestampValue(ts.UnixMicro()),
		types.ArrayValue([]types.Value{types.StringValue("a"), types.StringValue("b")}),
	})
	if n := reg.Requests("GET /schemas/ids/{id}"); n != 1 {
		t.Errorf("schema fetched %d times, want once", n)
	}

	// pipesql writes (registering the table's schema under its subject), confluent reads.
	enc, err := NewAvroConfluentEncoder(userTable, avroConfluentOpts(reg.URL, AvroConfluentSubject, "out-value"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	id := binary.BigEndian.Uint32(out[1:5])
	if _, text, ok := reg.Schema(int(id)); !ok || !strings.Contains(text, avroRecordName) {
		t.Fatalf("record's schema id %d: %q registered: %v", id, text, ok)
	}
	de, err := avrov2.NewDeserializer(registryClient(t, reg.URL), serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Name   *string    `avro:"name"`
		Amount **big.Rat  `avro:"amount"`
		TS     *time.Time `avro:"ts"`
		Tags   *[]*string `avro:"tags"`
	}
	if err := de.DeserializeInto("out", out, &back); err != nil {
		t.Fatalf("confluent cannot read pipesql's record: %v", err)
	}
	if *back.Name != "ann" || (*back.Amount).Cmp(ratOf("12.5")) != 0 || !back.TS.Equal(ts) || len(*back.Tags) != 2 || *(*back.Tags)[1] != "b" {
		t.Errorf("confluent read %v %v %v %v", *back.Name, *back.Amount, back.TS, *back.Tags)
	}
}

// TestAvroConfluentEvolution: a field added with a default (v2, BACKWARD compatible) is
// read by an old job (whose table lacks it) and a new one (whose table has it; v1
// records give NULL), and a new job's incompatible schema is refused by the registry.
func TestAvroConfluentEvolution(t *testing.T) {
	reg := registrytest.New(t)
	if _, err := reg.Register("users-value", registrytest.Avro, avroUserSchema); err != nil {
		t.Fatal(err)
	}
	client := registryClient(t, reg.URL)
	ts := time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC)
	v1, err := confluentSerializer(t, client).Serialize("users", &avroUser{Name: "v1", Amount: ratOf("1"), TS: ts, Tags: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register("users-value", registrytest.Avro, avroUserSchemaV2); err != nil {
		t.Fatalf("registering v2: %v", err)
	}
	client2 := registryClient(t, reg.URL)
	v2, err := confluentSerializer(t, client2).Serialize("users", &avroUserV2{avroUser{Name: "v2", Amount: ratOf("2"), TS: ts, Tags: []string{"x"}}, 42})
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(v1[1:5]) == binary.BigEndian.Uint32(v2[1:5]) {
		t.Fatal("v1 and v2 records carry the same schema id")
	}
	newTable := append(append(types.Schema{}, userTable...), types.Column{Name: "age", Type: types.TypeInt})
	oldJob, err := NewAvroConfluentDecoder(produced(userTable), avroConfluentOpts(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	newJob, err := NewAvroConfluentDecoder(produced(newTable), avroConfluentOpts(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	old := make(types.Row, 4)
	for _, rec := range [][]byte{v1, v2} {
		if err := oldJob.Decode(rec, old); err != nil {
			t.Fatalf("old job: %v", err)
		}
	}
	if old[0].Str() != "v2" || len(old[3].Elems()) != 1 {
		t.Errorf("old job read v2 as %v", old)
	}
	row := make(types.Row, 5)
	if err := newJob.Decode(v1, row); err != nil || row[0].Str() != "v1" || !row[4].IsNull() {
		t.Errorf("new job read v1 as %v, %v (age NULL)", row, err)
	}
	if err := newJob.Decode(v2, row); err != nil || row[0].Str() != "v2" || row[4].Int() != 42 {
		t.Errorf("new job read v2 as %v, %v", row, err)
	}

	// A job writing a NOT NULL column the old schema lacks: not BACKWARD compatible.
	bad := append(append(types.Schema{}, userTable...), types.Column{Name: "email", Type: types.TypeString.WithNotNull(true)})
	enc, err := NewAvroConfluentEncoder(bad, avroConfluentOpts(reg.URL, AvroConfluentSubject, "users-value"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = enc.Encode(nil, types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil), types.StringValue("e")})
	if err == nil || !strings.Contains(err.Error(), "refused the schema for subject users-value") || !strings.Contains(err.Error(), "incompatible") {
		t.Errorf("incompatible schema: %v", err)
	}
}

func TestAvroConfluentBadRecords(t *testing.T) {
	reg := registrytest.New(t)
	if _, err := reg.Register("users-value", registrytest.Avro, avroUserSchema); err != nil {
		t.Fatal(err)
	}
	good, err := confluentSerializer(t, registryClient(t, reg.URL)).Serialize("users",
		&avroUser{Name: "ann", Amount: ratOf("1"), TS: time.Unix(0, 0), Tags: []string{"t"}})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewAvroConfluentDecoder(produced(userTable), avroConfluentOpts(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	unknown := append([]byte{0, 0, 0, 0, 99}, good[5:]...)
	cases := []struct {
		name   string
		record []byte
		want   string
	}{
		{"unknown id", unknown, "schema id 99 is not in the schema registry at " + reg.URL},
		{"truncated", good[:len(good)-3], "truncated avro record"},
		{"wrong magic", append([]byte{1}, good[1:]...), "unknown magic byte 0x01"},
		{"short", []byte{0, 0}, "shorter than the 5-byte header"},
		{"trailing", append(append([]byte{}, good...), 0), "1 bytes after the end of the avro record"},
	}
	row := make(types.Row, len(userTable))
	for _, c := range cases {
		err := dec.Decode(c.record, row)
		if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a bad record saying %q", c.name, err, c.want)
		}
	}
	// The unknown id was asked for once and remembered.
	if err := dec.Decode(unknown, row); err == nil || reg.Requests("GET /schemas/ids/{id}") != 2 {
		t.Errorf("unknown id again: %v, %d requests", err, reg.Requests("GET /schemas/ids/{id}"))
	}
	// A writer type the table cannot read.
	wrong := types.Schema{{Name: "name", Type: types.TypeInt}}
	dec2, _ := NewAvroConfluentDecoder(produced(wrong), avroConfluentOpts(reg.URL))
	if err := dec2.Decode(good, make(types.Row, 1)); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), `field "name": type not supported by format: avro string cannot be read as INT`) {
		t.Errorf("string as INT: %v", err)
	}
	// A registry that is down is not a bad record.
	down := registrytest.New(t)
	dec3, _ := NewAvroConfluentDecoder(produced(userTable), avroConfluentOpts(down.URL))
	down.Close()
	if err := dec3.Decode(good, row); !errors.Is(err, ErrRegistryUnavailable) || errors.Is(err, ErrBadRecord) {
		t.Errorf("registry down: %v", err)
	}
}

func TestAvroConfluentOptions(t *testing.T) {
	reg := registrytest.New(t, registrytest.WithBasicAuth("u", "p"))
	if _, err := reg.Register("s", registrytest.Avro, avroUserSchema); err != nil {
		t.Fatal(err)
	}
	enc, err := NewAvroConfluentEncoder(userTable, avroConfluentOpts(reg.URL, AvroConfluentSubject, "s2",
		AvroConfluentBasicAuthSource, "USER_INFO", AvroConfluentBasicAuthUserInfo, "u:p"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Encode(nil, types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil)}); err != nil {
		t.Fatalf("with basic auth: %v", err)
	}
	noAuth, _ := NewAvroConfluentEncoder(userTable, avroConfluentOpts(reg.URL, AvroConfluentSubject, "s3"))
	if _, err := noAuth.Encode(nil, types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil)}); !errors.Is(err, ErrRegistryUnavailable) || !strings.Contains(err.Error(), "40101") {
		t.Errorf("without auth: %v", err)
	}
	bearer := registrytest.New(t, registrytest.WithBearerToken("tok"))
	benc, _ := NewAvroConfluentEncoder(userTable, avroConfluentOpts(bearer.URL, AvroConfluentSubject, "s",
		AvroConfluentBearerAuthSource, "STATIC_TOKEN", AvroConfluentBearerAuthToken, "tok"))
	if _, err := benc.Encode(nil, types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil)}); err != nil {
		t.Errorf("with a bearer token: %v", err)
	}
	for _, bad := range []map[string]string{
		{AvroConfluentSubject: "s"},
		avroConfluentOpts(reg.URL, AvroConfluentBasicAuthSource, "SASL_INHERIT"),
		avroConfluentOpts(reg.URL, AvroConfluentTruststorePassword, "x"),
		avroConfluentOpts(reg.URL, "properties.max.retries", "1"),
		avroConfluentOpts(reg.URL), // no subject to write under
	} {
		if _, err := NewAvroConfluentEncoder(userTable, bad); !errors.Is(err, connectors.ErrInvalidOption) {
			t.Errorf("options %v: %v, want an invalid option", bad, err)
		}
	}
	// Flink's fallback keys of url and subject.
	dep, err := NewAvroConfluentEncoder(userTable, map[string]string{AvroConfluentURLDeprecated: reg.URL,
		AvroConfluentSubjectDeprecated: "dep", AvroConfluentBasicAuthUserInfo: "u:p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dep.Encode(nil, types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil)}); err != nil {
		t.Fatalf("fallback keys: %v", err)
	}
	authed, err := schemaregistry.NewClient(schemaregistry.NewConfigWithBasicAuthentication(reg.URL, "u", "p"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authed.GetLatestSchemaMetadata("dep"); err != nil {
		t.Errorf("subject dep (schema-registry.subject): %v", err)
	}
	// An explicit schema is written as given.
	enc2, err := NewAvroConfluentEncoder(userTable, avroConfluentOpts(reg.URL, AvroConfluentSubject, "s",
		AvroConfluentBasicAuthUserInfo, "u:p", AvroConfluentSchema, avroUserSchema))
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc2.Encode(nil, types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil)})
	if err != nil || binary.BigEndian.Uint32(out[1:5]) != 1 {
		t.Errorf("explicit schema: id %v, %v; want the registered id 1", out[:5], err)
	}
}

// TestAvroConfluentTLS reaches an HTTPS registry through the truststore option.
func TestAvroConfluentTLS(t *testing.T) {
	reg := registrytest.New(t, registrytest.WithTLS())
	row := types.Row{types.StringValue("a"), types.DecimalValue(ratOf("1")), types.TimestampValue(0), types.ArrayValue(nil)}
	enc, err := NewAvroConfluentEncoder(userTable, avroConfluentOpts(reg.URL, AvroConfluentSubject, "s",
		AvroConfluentTruststoreLocation, reg.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	data, err := enc.Encode(nil, row)
	if err != nil {
		t.Fatalf("with the registry's CA: %v", err)
	}
	dec, err := NewAvroConfluentDecoder(produced(userTable), avroConfluentOpts(reg.URL, AvroConfluentTruststoreLocation, reg.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	back := make(types.Row, len(userTable))
	if err := dec.Decode(data, back); err != nil {
		t.Fatal(err)
	}
	checkAvroRow(t, "over TLS", back, row)
	untrusted, err := NewAvroConfluentEncoder(userTable, avroConfluentOpts(reg.URL, AvroConfluentSubject, "s2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusted.Encode(nil, row); !errors.Is(err, ErrRegistryUnavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v", err)
	}
}

// TestAvroConfluentReferences reads a record whose schema names a type registered under
// another subject (a schema reference).
func TestAvroConfluentReferences(t *testing.T) {
	reg := registrytest.New(t)
	address := `{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`
	customer := `{"type":"record","name":"Customer","namespace":"shop","fields":[
		{"name":"name","type":"string"},{"name":"home","type":"shop.Address"}]}`
	if _, err := reg.Register("shop.Address", registrytest.Avro, address); err != nil {
		t.Fatal(err)
	}
	id, err := reg.Register("customers-value", registrytest.Avro, customer,
		registrytest.Reference{Name: "shop.Address", Subject: "shop.Address", Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	cache := &avro.SchemaCache{}
	if _, err := parseAvroSchema(address, cache); err != nil {
		t.Fatal(err)
	}
	w, err := parseAvroSchema(customer, cache)
	if err != nil {
		t.Fatal(err)
	}
	body, err := avro.Marshal(w, map[string]any{"name": "ann", "home": map[string]any{"city": "Utrecht"}})
	if err != nil {
		t.Fatal(err)
	}
	record := append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
	table := types.Schema{
		{Name: "name", Type: types.TypeString},
		{Name: "home", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "city", Type: types.TypeString}}}},
	}
	dec, err := NewAvroConfluentDecoder(produced(table), avroConfluentOpts(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	row := make(types.Row, 2)
	if err := dec.Decode(record, row); err != nil {
		t.Fatal(err)
	}
	checkAvroRow(t, "references", row, types.Row{types.StringValue("ann"), types.RowValue([]types.Value{types.StringValue("Utrecht")})})
}

// TestAvroBlocks: arrays and maps written in several blocks, one with a negative count
// (followed by its size in bytes), read whole; an array block counting more than
// avroMaxItems elements is refused before anything is read.
func TestAvroBlocks(t *testing.T) {
	long := func(b []byte, n int64) []byte { return binary.AppendVarint(b, n) }
	str := func(b []byte, s string) []byte { return append(long(b, int64(len(s))), s...) }
	read := func(schema string, typ types.Type, data []byte) (types.Value, error) {
		t.Helper()
		dec, err := compileAvroDec(avro.MustParse(schema), typ)
		if err != nil {
			t.Fatal(err)
		}
		return dec(&avroReader{b: data})
	}

	arr := long(long(long(nil, 2), 1), 2) // a block of 2: 1, 2
	arr = long(long(long(arr, -1), 1), 3) // a block of 1 with its size (1 byte): 3
	arr = long(arr, 0)                    // the end
	got, err := read(`{"type":"array","items":"long"}`, types.Type{Kind: types.Array, Elem: &types.TypeBigInt}, arr)
	want := types.ArrayValue([]types.Value{types.BigIntValue(1), types.BigIntValue(2), types.BigIntValue(3)})
	if err != nil || got.String() != want.String() {
		t.Fatalf("array: %v, %v; want %v", got, err, want)
	}

	m := long(long(str(long(nil, 1), "a"), 1), -2)
	m = long(m, 4) // the second block's size: 2 entries of 2 bytes
	m = long(long(str(long(str(m, "b"), 2), "c"), 3), 0)
	got, err = read(`{"type":"map","values":"long"}`, types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &types.TypeBigInt}, m)
	wantM := types.MapValue([]types.MapEntry{{Key: types.StringValue("a"), Value: types.BigIntValue(1)},
		{Key: types.StringValue("b"), Value: types.BigIntValue(2)}, {Key: types.StringValue("c"), Value: types.BigIntValue(3)}})
	if err != nil || got.String() != wantM.String() {
		t.Fatalf("map: %v, %v; want %v", got, err, wantM)
	}

	_, err = read(`{"type":"array","items":"null"}`, types.Type{Kind: types.Array, Elem: &types.TypeBigInt}, long(nil, avroMaxItems+1))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("array of more than %d elements", avroMaxItems)) {
		t.Fatalf("a block of %d elements: %v", avroMaxItems+1, err)
	}
}
