package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Nested types against DuckDB
//
// Random Nexmark-like events (JSON, several files): a bid and a person in ROW columns
// that are NULL, missing, or have NULL and missing fields, and an array of tags that is
// NULL, empty, or holds NULL elements. Both engines read the same files; the queries take
// fields out of the rows (in a view, as Nexmark does), index the arrays and UNNEST them,
// and the results are compared as multisets.

type nestedData struct{ dir string }

func writeNestedData(t *testing.T, rng *rand.Rand, n, files int) nestedData {
	t.Helper()
	d := nestedData{dir: t.TempDir()}
	maybe := func(p int, s string) string {
		if rng.IntN(p) == 0 {
			return "null"
		}
		return s
	}
	for f := range files {
		var b strings.Builder
		for i := f * n / files; i < (f+1)*n/files; i++ {
			et := rng.IntN(3)
			var fields []string
			fields = append(fields, fmt.Sprintf(`"id":%d`, i), fmt.Sprintf(`"event_type":%d`, et))
			switch rng.IntN(6) {
			case 0: // bid missing
			case 1:
				fields = append(fields, `"bid":null`)
			default:
				var bf []string
				bf = append(bf, fmt.Sprintf(`"auction":%s`, maybe(10, fmt.Sprint(rng.IntN(20)))))
				if rng.IntN(8) > 0 {
					bf = append(bf, fmt.Sprintf(`"price":%s`, maybe(6, fmt.Sprint(rng.IntN(1000)))))
				}
				bf = append(bf, fmt.Sprintf(`"channel":%s`, maybe(8, fmt.Sprintf(`"ch%d"`, rng.IntN(4)))))
				fields = append(fields, `"bid":{`+strings.Join(bf, ",")+`}`)
			}
			if rng.IntN(3) > 0 {
				fields = append(fields, fmt.Sprintf(`"person":%s`, maybe(4, fmt.Sprintf(`{"id":%s,"name":"p%d"}`, maybe(5, fmt.Sprint(rng.IntN(10))), rng.IntN(7)))))
			}
			switch rng.IntN(5) {
			case 0:
				fields = append(fields, `"tags":null`)
			case 1:
				fields = append(fields, `"tags":[]`)
			case 2: // tags missing
			default:
				var tags []string
				for range 1 + rng.IntN(4) {
					tags = append(tags, maybe(6, fmt.Sprintf(`"t%d"`, rng.IntN(5))))
				}
				fields = append(fields, `"tags":[`+strings.Join(tags, ",")+`]`)
			}
			b.WriteString("{" + strings.Join(fields, ",") + "}\n")
		}
		if err := os.WriteFile(filepath.Join(d.dir, fmt.Sprintf("e%02d.json", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d nestedData) ddl() string {
	return fmt.Sprintf(`CREATE TABLE events (
  id BIGINT, event_type INT,
  bid ROW<auction BIGINT, price BIGINT, channel STRING>,
  person ROW<id BIGINT, name STRING>,
  tags ARRAY<STRING>
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE VIEW bid AS SELECT id, bid.auction, bid.price, bid.channel FROM events WHERE event_type = 2;
`, d.dir)
}

// duck is DuckDB's table over the same files.
func (d nestedData) duck() string {
	return fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {id: 'BIGINT', event_type: 'INTEGER', "+
		"bid: 'STRUCT(auction BIGINT, price BIGINT, channel VARCHAR)', person: 'STRUCT(id BIGINT, name VARCHAR)', tags: 'VARCHAR[]'})", d.dir)
}

// nestedQueries are pipesql's query and DuckDB's, where EVENTS stands for the table.
var nestedQueries = []struct{ flink, duck string }{
	{`SELECT id, bid.auction, bid.price, bid.channel FROM events WHERE event_type = 2`,
		`SELECT id, bid.auction, bid.price, bid.channel FROM EVENTS WHERE event_type = 2`},
	{`SELECT channel, COUNT(*) AS n, SUM(price) AS s, MAX(auction) AS m FROM bid GROUP BY channel`,
		`SELECT channel, COUNT(*) AS n, SUM(price) AS s, MAX(auction) AS m FROM (SELECT id, bid.auction AS auction, bid.price AS price, bid.channel AS channel FROM EVENTS WHERE event_type = 2) GROUP BY channel`},
	{`SELECT e.id, e.person.name, person.id FROM events AS e WHERE e.person.id > 3 OR e.bid IS NULL`,
		`SELECT e.id, e.person.name, e.person.id FROM EVENTS AS e WHERE e.person.id > 3 OR e.bid IS NULL`},
	{`SELECT id, bid.price * 2 + person.id AS x FROM events WHERE bid.channel <> 'ch1'`,
		`SELECT id, bid.price * 2 + person.id AS x FROM EVENTS WHERE bid.channel <> 'ch1'`},
	{`SELECT id, tags[1], tags[3], CARDINALITY(tags) FROM events`,
		`SELECT id, tags[1], tags[3], len(tags) FROM EVENTS`},
	{`SELECT id, tag FROM events CROSS JOIN UNNEST(tags) AS u(tag)`,
		`SELECT id, unnest(tags) AS tag FROM EVENTS`},
	{`SELECT id, tag, n FROM events, UNNEST(events.tags) WITH ORDINALITY AS u(tag, n) WHERE n > 1`,
		`SELECT id, tags[i] AS tag, i AS n FROM (SELECT id, tags, generate_subscripts(tags, 1) AS i FROM EVENTS) WHERE i > 1`},
	{`SELECT id, tag FROM events LEFT JOIN UNNEST(tags) AS u(tag) ON TRUE`,
		`SELECT id, u.tag FROM EVENTS LEFT JOIN LATERAL (SELECT unnest(tags) AS tag) AS u ON TRUE`},
	{`SELECT tag, COUNT(*) AS n, SUM(bid.price) AS s FROM events CROSS JOIN UNNEST(tags) AS u(tag) GROUP BY tag`,
		`SELECT tag, COUNT(*) AS n, SUM(price) AS s FROM (SELECT unnest(tags) AS tag, bid.price AS price FROM EVENTS) GROUP BY tag`},
}

// TestNestedAgainstDuckDB runs every nested-type query over a few random inputs.
func TestNestedAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 13)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeNestedData(t, rng, 200+rng.IntN(300), 1+rng.IntN(3))
		batch := []int{1, 5, 0}[round]
		for i, q := range nestedQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				dq := strings.ReplaceAll(q.duck, "EVENTS", d.duck())
				want, err := runDuck(ctx, db, dq)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, dq)
				}
				got, err := RunPipesql(ctx, d.ddl()+q.flink+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q.flink)
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", q.flink, batch, diff)
				}
				if len(want) == 0 {
					t.Fatalf("%s: an empty result proves little", q.flink)
				}
			})
		}
	}
}
