package kafka_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/internal/registrytest"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

const (
	jobUserV1 = `{"type":"record","name":"User","namespace":"shop","fields":[
		{"name":"name","type":"string"},{"name":"visits","type":"long"}]}`
	// jobUserV2 adds a field with a default (BACKWARD compatible).
	jobUserV2 = `{"type":"record","name":"User","namespace":"shop","fields":[
		{"name":"name","type":"string"},{"name":"visits","type":"long"},
		{"name":"age","type":["null","int"],"default":null}]}`
)

type jobUserV1Rec struct {
	Name   string `avro:"name"`
	Visits int64  `avro:"visits"`
}

type jobUserV2Rec struct {
	Name   string `avro:"name"`
	Visits int64  `avro:"visits"`
	Age    *int32 `avro:"age"`
}

// runJob plans script (CREATE TABLEs, then one query or INSERT) and runs it to the end
// of its bounded inputs; a query's rows are returned as text, sorted.
func runJob(t *testing.T, script string) []string {
	t.Helper()
	stmts, err := parser.ParseScript("job.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var rows []string
	job, err := exec.NewJob(prog, exec.Options{Collect: func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		rows = append(rows, k.String()+fmt.Sprint(r))
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := job.Run(ctx); err != nil {
		t.Fatalf("job: %v", err)
	}
	sort.Strings(rows)
	return rows
}

// TestAvroConfluentEvolutionJobs: a topic holds records of a schema and of its next
// version (a field added with a default); a job whose table predates the field and a
// job whose table has it both read every record. A third job copies the topic into
// another with avro-confluent, registering its schema under '<topic>-value', and a
// fourth reads that copy.
func TestAvroConfluentEvolutionJobs(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "users", 1)
	c.CreateTopic(t, "copy", 1)
	reg := registrytest.New(t)
	client, err := schemaregistry.NewClient(schemaregistry.NewConfig(reg.URL))
	if err != nil {
		t.Fatal(err)
	}
	// newSer is confluent-kafka-go's serializer writing the subject's latest version, on
	// a fresh client (clients cache the latest version).
	newSer := func() *avrov2.Serializer {
		cl, err := schemaregistry.NewClient(schemaregistry.NewConfig(reg.URL))
		if err != nil {
			t.Fatal(err)
		}
		conf := avrov2.NewSerializerConfig()
		conf.AutoRegisterSchemas, conf.UseLatestVersion = false, true
		ser, err := avrov2.NewSerializer(cl, serde.ValueSerde, conf)
		if err != nil {
			t.Fatal(err)
		}
		return ser
	}
	if _, err := reg.Register("users-value", registrytest.Avro, jobUserV1); err != nil {
		t.Fatal(err)
	}
	var recs []kafkatest.Record
	ser := newSer()
	for i := range 3 {
		v, err := ser.Serialize("users", &jobUserV1Rec{Name: fmt.Sprintf("old%d", i), Visits: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, kafkatest.Record{Value: v})
	}
	if _, err := reg.Register("users-value", registrytest.Avro, jobUserV2); err != nil {
		t.Fatalf("v2: %v", err)
	}
	ser = newSer()
	for i := range 2 {
		age := int32(30 + i)
		v, err := ser.Serialize("users", &jobUserV2Rec{Name: fmt.Sprintf("new%d", i), Visits: int64(10 + i), Age: &age})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, kafkatest.Record{Value: v})
	}
	c.Produce(t, "users", recs...)

	table := func(name, topic, cols string) string {
		return fmt.Sprintf(`CREATE TABLE %s (%s) WITH ('connector' = 'kafka', 'topic' = '%s',
			'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset',
			'scan.bounded.mode' = 'latest-offset', 'format' = 'avro-confluent', 'avro-confluent.url' = '%s');`,
			name, cols, topic, c.Bootstrap(), reg.URL)
	}
	old := runJob(t, table("users", "users", "name STRING, visits BIGINT")+"SELECT name, visits * 2 FROM users;")
	if got := strings.Join(old, " "); got != "+I[new0 20] +I[new1 22] +I[old0 0] +I[old1 2] +I[old2 4]" {
		t.Errorf("old job read %s", got)
	}
	newer := runJob(t, table("users", "users", "name STRING, visits BIGINT, age INT")+"SELECT name, age FROM users;")
	if got := strings.Join(newer, " "); got != "+I[new0 30] +I[new1 31] +I[old0 NULL] +I[old1 NULL] +I[old2 NULL]" {
		t.Errorf("new job read %s", got)
	}

	runJob(t, table("users", "users", "name STRING, visits BIGINT, age INT")+
		table("copy", "copy", "name STRING, age INT NOT NULL")+
		"INSERT INTO copy SELECT name, COALESCE(age, -1) FROM users WHERE visits < 11;")
	md, err := client.GetLatestSchemaMetadata("copy-value")
	if err != nil {
		t.Fatalf("the copy's subject: %v", err)
	}
	if !strings.Contains(md.Schema, `"name":"age","type":"int"`) {
		t.Errorf("registered schema %s: age should be a plain int (NOT NULL)", md.Schema)
	}
	copied := runJob(t, table("copy", "copy", "name STRING, age INT NOT NULL")+"SELECT * FROM copy;")
	if got := strings.Join(copied, " "); got != "+I[new0 30] +I[old0 -1] +I[old1 -1] +I[old2 -1]" {
		t.Errorf("copy read %s", got)
	}
}
