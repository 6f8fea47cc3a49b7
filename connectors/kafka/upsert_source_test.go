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
