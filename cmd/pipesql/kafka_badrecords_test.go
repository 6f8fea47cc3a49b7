package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// badRecord is a record the json format cannot turn into a row of (id BIGINT, u STRING,
// n INT).
type badRecord struct {
	name  string
	value []byte
	// inError is what the job's error must quote of the record or its problem.
	inError string
}

// oversizedLen is the size of the oversized records: twice librdkafka's default
// max.partition.fetch.bytes, so that the record cannot fit a default fetch.
const oversizedLen = 2 << 20

var badRecords = []badRecord{
	{"invalid json", []byte(`{"id": 1000, "u": `), "invalid json"},
	{"wrong type", []byte(`{"id": "one thousand", "u": "x", "n": 1}`), `"one thousand"`},
	{"number out of range", []byte(`{"id": 1001, "u": "x", "n": 99999999999}`), "99999999999"},
	{"empty value", []byte{}, "empty record"},
	// An oversized record that is not valid JSON: a string that never ends.
	{"oversized", append([]byte(`{"id": 1002, "u": "`), strings.Repeat("x", oversizedLen)...), "invalid json"},
}

// bigClusterOptions let the cluster take the oversized records.
var bigClusterOptions = []kfake.Opt{kfake.BrokerConfigs(map[string]string{"message.max.bytes": fmt.Sprint(8 << 20)})}

// badRecordsTopic writes ids [0, 60) round-robin over 3 partitions, one valid oversized
// record (id 60), and the bad records (if bad is not nil) spread over the partitions
// between good ones. It returns where each bad record went.
func badRecordsTopic(t *testing.T, c *kafkatest.Cluster, topic string, bad []badRecord) map[string][2]int64 {
	t.Helper()
	c.CreateTopic(t, topic, 3)
	where := map[string][2]int64{}
	next := map[int32]int64{}
	var rs []kafkatest.Record
	add := func(part int32, v []byte) int64 {
		rs = append(rs, kafkatest.Record{Partition: part, Value: v})
		off := next[part]
		next[part]++
		return off
	}
	for id := range 60 {
		add(int32(id%3), idJSON(id))
		if id%10 == 5 && id/10 < len(bad) {
			b := bad[id/10]
			part := int32((id + 1) % 3)
			where[b.name] = [2]int64{int64(part), add(part, b.value)}
		}
	}
	// Valid, and as big as the oversized bad one: it must be read, not skipped.
	add(1, []byte(fmt.Sprintf(`{"id": 60, "u": "%s", "n": 60}`, strings.Repeat("y", oversizedLen))))
	c.Produce(t, topic, rs...)
	return where
}

// badRecordsJob copies in to out; the sink may write the big valid record.
func badRecordsJob(bootstrap, in, out, ignore string) string {
	return fmt.Sprintf(`
CREATE TABLE src (id BIGINT, u STRING, n INT) WITH (
  'connector' = 'kafka', 'topic' = '%[2]s', 'properties.bootstrap.servers' = '%[1]s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'json', 'json.ignore-parse-errors' = '%[4]s');
CREATE TABLE dst (id BIGINT, u STRING, n INT) WITH (
  'connector' = 'kafka', 'topic' = '%[3]s', 'properties.bootstrap.servers' = '%[1]s',
  'properties.max.request.size' = '%[5]d', 'format' = 'json');
INSERT INTO dst SELECT id, u, n FROM src;
`, bootstrap, in, out, ignore, 8<<20)
}

// With json.ignore-parse-errors every bad record is skipped and counted, and the output
// is exactly the good records, the big valid one included.
func TestKafkaBadRecordsSkipped(t *testing.T) {
	c := kafkatest.NewCluster(t, 3, bigClusterOptions...)
	badRecordsTopic(t, c, "in", badRecords)
	c.CreateTopic(t, "out", 1)
	r := pipesql(t, "run", writeJob(t, badRecordsJob(c.Bootstrap(), "in", "out", "true")))
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	var rs []outRecord
	for _, rec := range c.ReadAll(t, "out") {
		rs = append(rs, outRecord{Record: rec})
		if strings.Contains(string(rec.Value), `"id":60,`) && len(rec.Value) < oversizedLen {
			t.Errorf("the big record lost its field: %d bytes", len(rec.Value))
		}
	}
	got := decodeIDs(t, rs)
	checkIDs(t, got, idRange(0, 61))
	// The first skipped record is reported where it is, and the count when the job ends.
	if !strings.Contains(r.stderr, "skipping records that cannot be parsed") || !strings.Contains(r.stderr, "topic in partition") {
		t.Errorf("the job's log does not report the first skipped record:\n%s", r.stderr)
	}
	count := regexp.MustCompile(fmt.Sprintf(`skipped records that could not be parsed.*skipped\W+%d\b`, len(badRecords)))
	if !count.MatchString(r.stderr) {
		t.Errorf("the job's log does not count %d skipped records:\n%s", len(badRecords), r.stderr)
	}
}

// Without json.ignore-parse-errors each kind of bad record fails the job (exit 1) with
// an error naming the table, topic, partition and offset of the record.
func TestKafkaBadRecordFailsJob(t *testing.T) {
	c := kafkatest.NewCluster(t, 3, bigClusterOptions...)
	for i, b := range badRecords {
		in := fmt.Sprintf("in-%d", i)
		where := badRecordsTopic(t, c, in, []badRecord{b})[b.name]
		out := fmt.Sprintf("out-%d", i)
		c.CreateTopic(t, out, 1)
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			r := pipesql(t, "run", writeJob(t, badRecordsJob(c.Bootstrap(), in, out, "false")))
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
			}
			for _, want := range []string{
				"kafka source src",
				fmt.Sprintf("topic %s partition %d offset %d", in, where[0], where[1]),
				"bad record",
				b.inError,
			} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("error lacks %q:\n%s", want, r.stderr)
				}
			}
			if len(r.stderr) > 4000 {
				t.Errorf("the error is %d bytes long: it should quote a snippet of the record, not all of it", len(r.stderr))
			}
		})
	}
}
