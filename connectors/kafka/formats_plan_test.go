package kafka_test

import (
	"strings"
	"testing"

	_ "github.com/pipesql/pipesql/connectors/formats"
	_ "github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// TestFormatOptionsAtPlanTime: a wrong raw, avro or avro-confluent option of a Kafka
// table fails at CREATE TABLE, at its line, with the closest valid key.
func TestFormatOptionsAtPlanTime(t *testing.T) {
	table := func(opts string) string {
		return "CREATE TABLE t (k STRING, v BIGINT) WITH (\n" +
			"  'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:9092',\n" + opts + ")"
	}
	cases := []struct {
		opts string
		want string // "" : accepted
	}{
		{"'format' = 'avro-confluent', 'avro-confluent.url' = 'http://r:8081'", ""},
		{"'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'avro', 'key.raw.charset' = 'UTF-16LE'", ""},
		{"'format' = 'avro-confluent', 'avro-confluent.url' = 'http://r', 'avro-confluent.basic-auth.user-info' = 'u:p'", ""},
		{"'format' = 'avro-confluent', 'avro-confluent.url' = 'http://r', 'avro-confluent.subjet' = 's'",
			"test.sql:3:65: unknown option 'avro-confluent.subjet' for format 'avro-confluent': did you mean 'avro-confluent.subject'?"},
		{"'format' = 'avro-confluent'", "test.sql:1:1: table 't': option 'avro-confluent.url' = '': invalid Kafka table options: format 'avro-confluent' needs the schema registry's URL"},
		{"'value.format' = 'avro-confluent'", "option 'value.avro-confluent.url' = ''"},
		// Flink's fallback keys
		{"'format' = 'avro-confluent', 'avro-confluent.schema-registry.url' = 'http://r', 'avro-confluent.schema-registry.subject' = 's'", ""},
		{"'format' = 'avro-confluent', 'avro-confluent.url' = 'http://r', 'avro-confluent.properties.basic.auth.user.inf' = 'x'",
			"did you mean 'avro-confluent.properties.basic.auth.user.info'?"},
		{"'format' = 'avro-confluent', 'avro-confluent.url' = 'http://r', 'avro-confluent.basic-auth.credentials-source' = 'SASL_INHERIT'",
			"invalid value 'SASL_INHERIT' for option 'avro-confluent.basic-auth.credentials-source'"},
		{"'format' = 'avro', 'avro.encoding' = 'json'", "invalid value 'json' for option 'avro.encoding'"},
		{"'format' = 'avro', 'avro.timestamp-mapping.legacy' = 'false'", "did you mean 'avro.timestamp_mapping.legacy'?"},
		{"'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'json', 'key.raw.endianess' = 'little-endian'",
			"did you mean 'key.raw.endianness'?"},
		{"'format' = 'avro-confluen'", "did you mean 'avro-confluent'?"},
		{"'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = 'http://r'", ""},
		{"'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.ulr' = 'http://r'", "did you mean 'debezium-avro-confluent.url'?"},
	}
	for _, c := range cases {
		stmts, err := parser.ParseScript("test.sql", table(c.opts))
		if err != nil {
			t.Fatal(err)
		}
		err = planner.NewSession().Apply(stmts[0])
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.opts, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s:\n got %v\nwant %s", c.opts, err, c.want)
		}
	}
}

// TestReadOnlyFormatAtInsert: writing a table whose format can only be read fails when
// the INSERT is planned.
func TestReadOnlyFormatAtInsert(t *testing.T) {
	stmts, err := parser.ParseScript("job.sql", `CREATE TABLE d (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 't',
  'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = 'http://r');
CREATE TABLE s (id BIGINT) WITH ('connector' = 'datagen');
INSERT INTO d SELECT id FROM s;`)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:2] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.Plan(stmts[2])
	if err == nil || !strings.Contains(err.Error(), "format 'debezium-avro-confluent' can only be read") {
		t.Errorf("INSERT into a debezium-avro-confluent table: %v", err)
	}
}
