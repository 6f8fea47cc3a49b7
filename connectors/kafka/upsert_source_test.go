package kafka_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/internal/difftest"
)

// TestUpsertKafkaSource reads a random upsert history (2 partitions, tombstones,
// repeated identical upserts, deletes of keys never written) through upsert-kafka and
// checks the final state of the changelog of the table and of an aggregate over it
// against the history applied to a map.
func TestUpsertKafkaSource(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "users", 2)
	rng := rand.New(rand.NewPCG(3, 12))
	type user struct {
		region string
		score  int
	}
	live := map[int]user{}
	var recs []kafkatest.Record
	for range 400 {
		id := rng.IntN(60)
		key := []byte(fmt.Sprintf(`{"id":%d}`, id))
		part := int32(id % 2) // a key stays in its partition, as Kafka's partitioner keeps it
		switch r := rng.IntN(10); {
		case r < 2:
			delete(live, id) // deleting a key never written (or already deleted) is fine
			recs = append(recs, kafkatest.Record{Partition: part, Key: key})
		case r < 3 && live[id] != (user{}):
			u := live[id] // the same row again
			recs = append(recs, kafkatest.Record{Partition: part, Key: key,
				Value: []byte(fmt.Sprintf(`{"id":%d,"region":"%s","score":%d}`, id, u.region, u.score))})
		default:
			u := user{region: fmt.Sprintf("r%d", rng.IntN(4)), score: rng.IntN(100)}
			live[id] = u
			recs = append(recs, kafkatest.Record{Partition: part, Key: key,
				Value: []byte(fmt.Sprintf(`{"id":%d,"region":"%s","score":%d}`, id, u.region, u.score))})
		}
	}
	c.Produce(t, "users", recs...)

	ddl := fmt.Sprintf(`CREATE TABLE users (id INT, region STRING, score INT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'upsert-kafka', 'topic' = 'users', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
`, c.Bootstrap())

	var wantRows, wantAgg []string
	agg := map[string][2]int{}
	for id, u := range live {
		wantRows = append(wantRows, fmt.Sprintf("%d %q %d", id, u.region, u.score))
		a := agg[u.region]
		agg[u.region] = [2]int{a[0] + 1, a[1] + u.score}
	}
	for r, a := range agg {
		wantAgg = append(wantAgg, fmt.Sprintf("%q %d %d", r, a[0], a[1]))
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{`SELECT id, region, score FROM users`, wantRows},
		{`SELECT region, COUNT(*) AS n, SUM(score) AS s FROM users GROUP BY region`, wantAgg},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rows, err := difftest.RunPipesql(ctx, ddl+tc.query+";\n", 0)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		var got []string
		for _, r := range rows {
			parts := make([]string, len(r))
			for i, v := range r {
				parts[i] = v.String()
			}
			got = append(got, strings.Join(parts, " "))
		}
		sort.Strings(got)
		sort.Strings(tc.want)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\ngot  %v\nwant %v", tc.query, got, tc.want)
		}
		if len(tc.want) == 0 {
			t.Fatalf("%s: an empty result proves little", tc.query)
		}
	}
}

// TestDebeziumKafkaSource reads debezium-json changes (with Kafka's tombstones after the
// deletes) from a topic, with the format's metadata as 'value.*' columns, and checks the
// final state against the changes applied to a map; a record that is not a change fails
// the job naming its topic, partition and offset.
func TestDebeziumKafkaSource(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "inv.products", 1)
	rng := rand.New(rand.NewPCG(8, 1))
	live := map[int]string{}
	var recs []kafkatest.Record
	srcTS := int64(1700000000000)
	for range 200 {
		id := rng.IntN(30)
		key := []byte(fmt.Sprintf(`{"id":%d}`, id))
		srcTS += 10
		old, had := live[id]
		name := fmt.Sprintf("p%d", rng.IntN(1000))
		src := fmt.Sprintf(`"source":{"db":"inv","schema":"public","table":"products","ts_ms":%d},"ts_ms":%d`, srcTS, srcTS+3)
		switch {
		case !had:
			live[id] = name
			recs = append(recs, kafkatest.Record{Key: key, Value: []byte(fmt.Sprintf(`{"before":null,"after":{"id":%d,"name":"%s"},"op":"c",%s}`, id, name, src))})
		case rng.IntN(3) == 0:
			delete(live, id)
			recs = append(recs, kafkatest.Record{Key: key, Value: []byte(fmt.Sprintf(`{"before":{"id":%d,"name":"%s"},"after":null,"op":"d",%s}`, id, old, src))},
				kafkatest.Record{Key: key})
		default:
			live[id] = name
			recs = append(recs, kafkatest.Record{Key: key, Value: []byte(fmt.Sprintf(`{"before":{"id":%d,"name":"%s"},"after":{"id":%d,"name":"%s"},"op":"u",%s}`, id, old, id, name, src))})
		}
	}
	c.Produce(t, "inv.products", recs...)
	ddl := fmt.Sprintf(`CREATE TABLE products (id INT, name STRING,
  src_ts TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
  db STRING METADATA FROM 'value.source.database' VIRTUAL,
  tbl STRING METADATA FROM 'value.source.table' VIRTUAL)
WITH ('connector' = 'kafka', 'topic' = 'inv.products', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-json');
`, c.Bootstrap())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := difftest.RunPipesql(ctx, ddl+"SELECT id, name, db, tbl, src_ts IS NOT NULL FROM products;\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = v.String()
		}
		got = append(got, strings.Join(parts, " "))
	}
	for id, name := range live {
		want = append(want, fmt.Sprintf("%d %q \"inv\" \"products\" TRUE", id, name))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 {
		t.Fatalf("got  %v\nwant %v", got, want)
	}

	// A record that is not a debezium change.
	c.Produce(t, "inv.products", kafkatest.Record{Value: []byte(`{"op":"x"}`)})
	_, err = difftest.RunPipesql(ctx, ddl+"SELECT id FROM products;\n", 0)
	if err == nil || !strings.Contains(err.Error(), "inv.products") || !strings.Contains(err.Error(), fmt.Sprint(len(recs))) {
		t.Fatalf("a bad record gave %v, want an error naming the topic and offset %d", err, len(recs))
	}
}
