package registrytest

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
)

const (
	userV1 = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}`
	// userV2 adds a field with a default: BACKWARD compatible with userV1.
	userV2 = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},
		{"name":"age","type":"int","default":0}]}`
	// userBad adds a field without a default: not BACKWARD compatible with userV1.
	userBad = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},
		{"name":"email","type":"string"}]}`
)

// client is confluent-kafka-go's registry client, the independent implementation of
// the protocol this server must satisfy.
func client(t *testing.T, conf *schemaregistry.Config) schemaregistry.Client {
	t.Helper()
	conf.MaxRetries = 0
	c, err := schemaregistry.NewClient(conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// code is the registry error code of err (0: not a registry error).
func code(err error) int {
	var re *rest.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func TestRegisterAndFetch(t *testing.T) {
	s := New(t)
	c := client(t, schemaregistry.NewConfig(s.URL))

	id, err := c.Register("users-value", schemaregistry.SchemaInfo{Schema: userV1}, false)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.GetBySubjectAndID("", id)
	if err != nil || info.Schema != userV1 || info.SchemaType != "" {
		t.Fatalf("GetBySubjectAndID(%d) = %+v, %v", id, info, err)
	}
	// The same schema under another subject has the same id; with different whitespace too.
	other, err := c.Register("other-value", schemaregistry.SchemaInfo{Schema: strings.ReplaceAll(userV1, ",", ", ")}, false)
	if err != nil || other != id {
		t.Fatalf("same schema under another subject: id %d, %v; want %d", other, err, id)
	}
	id2, err := c.Register("users-value", schemaregistry.SchemaInfo{Schema: userV2}, false)
	if err != nil || id2 == id {
		t.Fatalf("evolved schema: id %d, %v", id2, err)
	}
	latest, err := c.GetLatestSchemaMetadata("users-value")
	if err != nil || latest.ID != id2 || latest.Version != 2 || latest.Subject != "users-value" {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	v1, err := c.GetSchemaMetadata("users-value", 1)
	if err != nil || v1.ID != id || v1.Schema != userV1 {
		t.Fatalf("version 1 = %+v, %v", v1, err)
	}
	versions, err := c.GetAllVersions("users-value")
	if err != nil || len(versions) != 2 || versions[0] != 1 || versions[1] != 2 {
		t.Fatalf("versions = %v, %v", versions, err)
	}
	subjects, err := c.GetAllSubjects()
	if err != nil || strings.Join(subjects, ",") != "other-value,users-value" {
		t.Fatalf("subjects = %v, %v", subjects, err)
	}
	// Lookup (POST /subjects/{s}) of a registered schema and of one that is not.
	found, err := c.GetID("users-value", schemaregistry.SchemaInfo{Schema: userV1}, false)
	if err != nil || found != id {
		t.Fatalf("lookup = %d, %v; want %d", found, err, id)
	}
	if _, err := c.GetID("users-value", schemaregistry.SchemaInfo{Schema: userBad}, false); code(err) != CodeSchemaNotFound {
		t.Fatalf("lookup of an unregistered schema: %v, want code %d", err, CodeSchemaNotFound)
	}
	// Types other than Avro carry their schemaType.
	pid, err := c.Register("p-value", schemaregistry.SchemaInfo{Schema: `syntax = "proto3"; message M { int32 a = 1; }`, SchemaType: "PROTOBUF"}, false)
	if err != nil {
		t.Fatal(err)
	}
	pinfo, err := c.GetBySubjectAndID("p-value", pid)
	if err != nil || pinfo.SchemaType != "PROTOBUF" {
		t.Fatalf("protobuf schema = %+v, %v", pinfo, err)
	}
}

func TestErrors(t *testing.T) {
	s := New(t)
	c := client(t, schemaregistry.NewConfig(s.URL))
	if _, err := c.GetBySubjectAndID("", 99); code(err) != CodeSchemaNotFound {
		t.Errorf("unknown id: %v, want code %d", err, CodeSchemaNotFound)
	}
	if _, err := c.GetLatestSchemaMetadata("nope"); code(err) != CodeSubjectNotFound {
		t.Errorf("unknown subject: %v, want code %d", err, CodeSubjectNotFound)
	}
	if _, err := c.Register("s", schemaregistry.SchemaInfo{Schema: `{"type":"recrod"}`}, false); code(err) != CodeInvalidSchema {
		t.Errorf("invalid schema: %v, want code %d", err, CodeInvalidSchema)
	}
	if _, err := c.Register("s", schemaregistry.SchemaInfo{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSchemaMetadata("s", 7); code(err) != CodeVersionNotFound {
		t.Errorf("unknown version: %v, want code %d", err, CodeVersionNotFound)
	}
	if _, err := c.GetCompatibility("s"); code(err) != CodeNoSubjectLevel {
		t.Errorf("subject without a level: %v, want code %d", err, CodeNoSubjectLevel)
	}
	// The error body is the registry's, with its content type.
	resp, err := http.Get(s.URL + "/schemas/ids/42")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != contentType {
		t.Errorf("GET unknown id: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestCompatibility(t *testing.T) {
	s := New(t)
	c := client(t, schemaregistry.NewConfig(s.URL))
	if _, err := c.Register("u", schemaregistry.SchemaInfo{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.TestCompatibility("u", 1, schemaregistry.SchemaInfo{Schema: userV2}); err != nil || !ok {
		t.Errorf("a field added with a default: compatible = %v, %v; want true", ok, err)
	}
	if ok, err := c.TestCompatibility("u", 1, schemaregistry.SchemaInfo{Schema: userBad}); err != nil || ok {
		t.Errorf("a field added without a default: compatible = %v, %v; want false", ok, err)
	}
	_, err := c.Register("u", schemaregistry.SchemaInfo{Schema: userBad}, false)
	if code(err) != CodeIncompatible || !strings.Contains(err.Error(), "incompatible") {
		t.Fatalf("registering an incompatible schema: %v, want code %d", err, CodeIncompatible)
	}
	// Removing a field without a default is BACKWARD compatible (the new reader ignores
	// it) but not FORWARD (an old reader misses it).
	if _, err := c.Register("u", schemaregistry.SchemaInfo{Schema: userV2}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateCompatibility("u", schemaregistry.Forward); err != nil {
		t.Fatal(err)
	}
	if lvl, err := c.GetCompatibility("u"); err != nil || lvl != schemaregistry.Forward {
		t.Fatalf("level = %v, %v", lvl, err)
	}
	onlyAge := `{"type":"record","name":"User","fields":[{"name":"age","type":"int","default":0}]}`
	if _, err := c.Register("u", schemaregistry.SchemaInfo{Schema: onlyAge}, false); code(err) != CodeIncompatible {
		t.Fatalf("FORWARD, dropping a field an old reader needs: %v, want code %d", err, CodeIncompatible)
	}
	if _, err := c.UpdateCompatibility("u", schemaregistry.None); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Register("u", schemaregistry.SchemaInfo{Schema: `"string"`}, false); err != nil {
		t.Fatalf("NONE accepts anything: %v", err)
	}
	// The global level applies to subjects without one.
	if _, err := c.UpdateDefaultCompatibility(schemaregistry.FullTransitive); err != nil {
		t.Fatal(err)
	}
	if lvl, err := c.GetDefaultCompatibility(); err != nil || lvl != schemaregistry.FullTransitive {
		t.Fatalf("global level = %v, %v", lvl, err)
	}
	if _, err := c.Register("w", schemaregistry.SchemaInfo{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Register("w", schemaregistry.SchemaInfo{Schema: userBad}, false); code(err) != CodeIncompatible {
		t.Fatalf("FULL_TRANSITIVE: %v, want code %d", err, CodeIncompatible)
	}
}

func TestAuthAndTLS(t *testing.T) {
	s := New(t, WithBasicAuth("alice", "secret"), WithTLS())
	conf := schemaregistry.NewConfig(s.URL)
	conf.SslCaLocation = s.CAFile
	if _, err := client(t, conf).GetAllSubjects(); code(err) != CodeUnauthorized {
		t.Fatalf("no credentials: %v, want code %d", err, CodeUnauthorized)
	}
	conf = schemaregistry.NewConfigWithBasicAuthentication(s.URL, "alice", "secret")
	conf.SslCaLocation = s.CAFile
	if _, err := client(t, conf).Register("x", schemaregistry.SchemaInfo{Schema: userV1}, false); err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	if s.Requests("AUTH") != 1 || s.Requests("POST /subjects/{subject}/versions") != 1 {
		t.Errorf("requests: auth refused %d, registered %d", s.Requests("AUTH"), s.Requests("POST /subjects/{subject}/versions"))
	}
}

type user struct {
	Name string `avro:"name"`
	Age  int32  `avro:"age"`
}

// TestAvroSerde runs confluent-kafka-go's own Avro serializer and deserializer against
// the server: auto-registration, then reading by id (fetched once and cached).
func TestAvroSerde(t *testing.T) {
	s := New(t)
	c := client(t, schemaregistry.NewConfig(s.URL))
	if _, err := c.Register("t-value", schemaregistry.SchemaInfo{Schema: userV2}, false); err != nil {
		t.Fatal(err)
	}
	sconf := avrov2.NewSerializerConfig()
	sconf.AutoRegisterSchemas = false
	sconf.UseLatestVersion = true
	ser, err := avrov2.NewSerializer(c, serde.ValueSerde, sconf)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := ser.Serialize("t", &user{Name: "ann", Age: 7})
	if err != nil {
		t.Fatal(err)
	}
	if payload[0] != 0 || payload[4] != 1 {
		t.Fatalf("wire format: % x", payload[:5])
	}
	// A fresh client, so the id is fetched from the server.
	c2 := client(t, schemaregistry.NewConfig(s.URL))
	de, err := avrov2.NewDeserializer(c2, serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		var got user
		if err := de.DeserializeInto("t", payload, &got); err != nil || got != (user{"ann", 7}) {
			t.Fatalf("deserialized %+v, %v", got, err)
		}
	}
	if n := s.Requests("GET /schemas/ids/{id}"); n != 1 {
		t.Errorf("GET /schemas/ids/{id} requests = %d, want 1 (cached)", n)
	}
}
