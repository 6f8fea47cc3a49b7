package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nexmarkTables writes a few Nexmark events, one JSON object per line with the person,
// auction and bid of each in ROW columns (NULL or missing where the event is of another
// kind), and returns the DDL of Nexmark's table and views over them, as the benchmark
// declares them.
func nexmarkTables(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data := `{"event_type":0,"person":{"id":1,"name":"alice","city":"Paris","state":"OR","dateTime":"2024-01-01 00:00:00.000"},"auction":null,"bid":null}
{"event_type":1,"person":null,"auction":{"id":100,"itemName":"lamp","seller":1,"category":10,"dateTime":"2024-01-01 00:00:01.000","expires":"2024-01-01 01:00:00.000"},"bid":null}
{"event_type":2,"bid":{"auction":100,"bidder":1,"price":50,"channel":"web","url":"http://x/a/b/c","dateTime":"2024-01-01 00:00:02.000"}}
{"event_type":2,"person":null,"bid":{"auction":100,"bidder":2,"price":70,"channel":"app","url":"http://x/a/d","dateTime":"2024-01-01 00:00:03.500","extra":"e"}}
{"event_type":2,"bid":{"auction":101,"bidder":3,"price":null,"channel":"web","url":"http://y/z","dateTime":"2024-01-01 00:00:12.000"}}
`
	if err := os.WriteFile(filepath.Join(dir, "events.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`CREATE TABLE datagen (
    event_type int,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS
        CASE
            WHEN event_type = 0 THEN person.dateTime
            WHEN event_type = 1 THEN auction.dateTime
            ELSE bid.dateTime
        END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE VIEW person AS SELECT person.id, person.name, person.emailAddress, person.creditCard, person.city, person.state, dateTime, person.extra
FROM datagen WHERE event_type = 0;
CREATE VIEW auction AS SELECT auction.id, auction.itemName, auction.description, auction.initialBid, auction.reserve, dateTime, auction.expires, auction.seller, auction.category, auction.extra
FROM datagen WHERE event_type = 1;
CREATE VIEW bid AS SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra
FROM datagen WHERE event_type = 2;
`, dir)
}

// TestNexmarkViews runs Nexmark's views and queries over them; the expected rows are
// worked out by hand from the events above.
func TestNexmarkViews(t *testing.T) {
	tests := []struct {
		name, query string
		want        []string
	}{
		{"q0 bid", `SELECT auction, bidder, price, channel, dateTime, extra FROM bid`, []string{
			"+I(100, 1, 50, web, 2024-01-01 00:00:02.000, NULL)",
			"+I(100, 2, 70, app, 2024-01-01 00:00:03.500, e)",
			"+I(101, 3, NULL, web, 2024-01-01 00:00:12.000, NULL)",
		}},
		{"person", `SELECT id, name, city, state, dateTime FROM person`, []string{
			"+I(1, alice, Paris, OR, 2024-01-01 00:00:00.000)",
		}},
		{"auction", `SELECT id, itemName, seller, category, dateTime, expires FROM auction`, []string{
			"+I(100, lamp, 1, 10, 2024-01-01 00:00:01.000, 2024-01-01 01:00:00.000)",
		}},
		{"q1", `SELECT auction, 0.908 * price AS price FROM bid WHERE price IS NOT NULL`, []string{
			"+I(100, 45.4)", "+I(100, 63.56)",
		}},
		{"q22", `SELECT auction, SPLIT_INDEX(url, '/', 3) AS dir1, SPLIT_INDEX(url, '/', 4) AS dir2 FROM bid`, []string{
			"+I(100, a, b)", "+I(100, a, d)", "+I(101, z, NULL)",
		}},
		{"window over the view", `SELECT auction, window_start, COUNT(*) AS n, SUM(price) AS total, MAX(price) AS top
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end`, []string{
			"+I(100, 2024-01-01 00:00:00.000, 2, 120, 70)",
			"+I(101, 2024-01-01 00:00:10.000, 1, NULL, NULL)",
		}},
		{"fields straight from the table", `SELECT event_type, d.bid.auction, person.name, auction.itemName FROM datagen AS d`, []string{
			"+I(0, NULL, alice, NULL)",
			"+I(1, NULL, NULL, lamp)",
			"+I(2, 100, NULL, NULL)",
			"+I(2, 100, NULL, NULL)",
			"+I(2, 101, NULL, NULL)",
		}},
		{"group by a field", `SELECT bid.channel, COUNT(*), SUM(bid.price) FROM datagen WHERE event_type = 2 GROUP BY bid.channel`, []string{
			"+I(web, 1, 50)", "+I(app, 1, 70)", "-U(web, 1, 50)", "+U(web, 2, 50)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runSelect(t, nexmarkTables(t)+tt.query+";")
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func nestedRawTable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data := `{"id":1,"r":{"a":1,"b":{"c":"x","d":[1,2,3]}},"tags":["a","b"],"props":{"k":10,"j":null}}
{"id":2,"r":null,"tags":[],"props":{}}
{"id":3,"r":{"a":3,"b":null},"tags":null,"props":null}
{"id":4}
`
	if err := os.WriteFile(filepath.Join(dir, "raw.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`CREATE TABLE raw_events (
  id BIGINT,
  r ROW<a INT, b ROW<c STRING, d ARRAY<INT>>>,
  tags ARRAY<STRING>,
  props MAP<STRING, INT>
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
}

// TestNestedAccessOnNulls reads fields, elements and map values of NULL rows, arrays and
// maps, empty ones and indexes out of range: each is NULL, as in Flink.
func TestNestedAccessOnNulls(t *testing.T) {
	got := runSelect(t, nestedRawTable(t)+`SELECT id, r.a, r.b.c, r.b.d[2], r.b.d[4], r.b.d[0], CARDINALITY(r.b.d), tags[1],
  CARDINALITY(tags), props['k'], props['j'], props['zz'], CARDINALITY(props), r.b IS NULL, ELEMENT(ARRAY[r.a])
FROM raw_events;`)
	want := []string{
		"+I(1, 1, x, 2, NULL, NULL, 3, a, 2, 10, NULL, NULL, 2, FALSE, 1)",
		"+I(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0, TRUE, NULL)",
		"+I(3, 3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, TRUE, 3)",
		"+I(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, TRUE, NULL)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A filter on a field of a NULL row drops the row: NULL is not TRUE.
	got = runSelect(t, nestedRawTable(t)+`SELECT id FROM raw_events WHERE r.a > 0 AND tags[2] = 'b';`)
	if want := []string{"+I(1)"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestNestedValuesToJSON builds ROW, ARRAY and MAP values and writes them into a JSON
// filesystem sink, which nests them under the sink's field names.
func TestNestedValuesToJSON(t *testing.T) {
	out := t.TempDir()
	prog := planSQL(t, nestedRawTable(t)+fmt.Sprintf(`
CREATE TABLE nested_out (id BIGINT, r ROW<x BIGINT, tags ARRAY<STRING>>, m MAP<STRING, INT>, a ARRAY<BIGINT>)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO nested_out SELECT id, (id, tags), MAP['a', r.a], ARRAY[id, id * 10] FROM raw_events;`, out))
	j, err := NewJob(prog, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(out, "part-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no part files in %s (%v)", out, err)
	}
	var got []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Split(strings.TrimSpace(string(data)), "\n")...)
	}
	slices.Sort(got)
	want := []string{
		`{"id":1,"r":{"x":1,"tags":["a","b"]},"m":{"a":1},"a":[1,10]}`,
		`{"id":2,"r":{"x":2,"tags":[]},"m":{"a":null},"a":[2,20]}`,
		`{"id":3,"r":{"x":3,"tags":null},"m":{"a":3},"a":[3,30]}`,
		`{"id":4,"r":{"x":4,"tags":null},"m":{"a":null},"a":[4,40]}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func unnestTable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data := `{"id":1,"tags":["a","b",null],"props":{"k":1,"j":2},"items":[{"sku":"s1","qty":2},null,{"sku":"s2","qty":5}]}
{"id":2,"tags":[],"props":{},"items":[]}
{"id":3,"tags":null,"props":null,"items":null}
{"id":4,"tags":["c"],"items":[{"sku":"s3"}]}
`
	if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`CREATE TABLE tagged (id BIGINT, tags ARRAY<STRING>, props MAP<STRING, INT>, items ARRAY<ROW<sku STRING, qty INT>>)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
}

// TestUnnest expands arrays, maps and arrays of rows; empty and NULL collections give no
// rows, or one row of NULLs under LEFT JOIN ... ON TRUE, as in Flink.
func TestUnnest(t *testing.T) {
	tests := []struct {
		name, query string
		want        []string
	}{
		{"array", `SELECT id, tag FROM tagged CROSS JOIN UNNEST(tags) AS u(tag)`, []string{
			"+I(1, a)", "+I(1, b)", "+I(1, NULL)", "+I(4, c)",
		}},
		{"with ordinality, after a comma", `SELECT id, tag, n FROM tagged, UNNEST(tagged.tags) WITH ORDINALITY AS u(tag, n) WHERE n > 1`, []string{
			"+I(1, b, 2)", "+I(1, NULL, 3)",
		}},
		{"left join keeps empty and NULL arrays", `SELECT id, tag FROM tagged LEFT JOIN UNNEST(tags) AS u(tag) ON TRUE`, []string{
			"+I(1, a)", "+I(1, b)", "+I(1, NULL)", "+I(2, NULL)", "+I(3, NULL)", "+I(4, c)",
		}},
		{"map", `SELECT id, k, v FROM tagged CROSS JOIN UNNEST(props) AS m(k, v)`, []string{
			"+I(1, k, 1)", "+I(1, j, 2)",
		}},
		{"array of rows", `SELECT id, sku, qty FROM tagged CROSS JOIN UNNEST(items) AS i`, []string{
			"+I(1, s1, 2)", "+I(1, NULL, NULL)", "+I(1, s2, 5)", "+I(4, s3, NULL)",
		}},
		{"an array built in the query", `SELECT id, x FROM tagged CROSS JOIN UNNEST(ARRAY[id, id * 10]) AS u(x) WHERE id < 3`, []string{
			"+I(1, 1)", "+I(1, 10)", "+I(2, 2)", "+I(2, 20)",
		}},
		{"aggregate over the elements", `SELECT tag, COUNT(*) AS n FROM tagged CROSS JOIN UNNEST(tags) AS u(tag) WHERE tag IS NOT NULL GROUP BY tag`, []string{
			"+I(a, 1)", "+I(b, 1)", "+I(c, 1)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runSelect(t, unnestTable(t)+tt.query+";")
			if !slices.Equal(got, tt.want) {
				slices.Sort(got)
				want := slices.Clone(tt.want)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}

// TestJSONFunctionsOverNestedValues builds JSON out of nested values (constructors
// nested in one another are inserted as JSON, not as strings) and reads it back.
func TestJSONFunctionsOverNestedValues(t *testing.T) {
	got := runSelect(t, nestedRawTable(t)+`SELECT id,
  JSON_OBJECT('id' VALUE id, KEY 'r' VALUE r, 'tags' VALUE JSON_ARRAY(tags[1], tags[2] NULL ON NULL)),
  JSON_VALUE(JSON_OBJECT('a' VALUE r.a), '$.a' RETURNING INT) + 1,
  JSON_VALUE('{"a": "x"}', '$.a' RETURNING INT),
  STR_TO_MAP('x=1,y')['x'], JSON_ARRAY(props['k'], r.b.c)
FROM raw_events;`)
	want := []string{
		`+I(1, {"id":1,"r":{"a":1,"b":{"c":"x","d":[1,2,3]}},"tags":["a","b"]}, 2, NULL, 1, [10,"x"])`,
		`+I(2, {"id":2,"r":null,"tags":[null,null]}, NULL, NULL, 1, [])`,
		`+I(3, {"id":3,"r":{"a":3,"b":null},"tags":[null,null]}, 4, NULL, 1, [])`,
		`+I(4, {"id":4,"r":null,"tags":[null,null]}, NULL, NULL, 1, [])`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUnnestOfAnUpdatingInput: each change of an input row is the same change of every
// row unnested from it.
func TestUnnestOfAnUpdatingInput(t *testing.T) {
	got := runSelect(t, unnestTable(t)+`SELECT k, x FROM (SELECT id > 2 AS k, COUNT(*) AS n FROM tagged GROUP BY id > 2)
CROSS JOIN UNNEST(ARRAY[n, n * 10]) AS u(x);`)
	want := []string{
		"+I(FALSE, 1)", "+I(FALSE, 10)",
		"-U(FALSE, 1)", "-U(FALSE, 10)", "+U(FALSE, 2)", "+U(FALSE, 20)",
		"+I(TRUE, 1)", "+I(TRUE, 10)",
		"-U(TRUE, 1)", "-U(TRUE, 10)", "+U(TRUE, 2)", "+U(TRUE, 20)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
