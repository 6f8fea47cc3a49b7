package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRunNexmarkViewOverNestedJSON runs a Nexmark-style job through the binary: a JSON
// file of events whose person and bid are ROW columns (NULL, missing, or with NULL
// fields), Nexmark's bid view taking the fields out of the rows, and a query over it
// into the print sink.
func TestRunNexmarkViewOverNestedJSON(t *testing.T) {
	dir := t.TempDir()
	events := `{"event_type":0,"person":{"id":1,"name":"alice","dateTime":"2024-01-01 00:00:00.000"},"bid":null}
{"event_type":2,"person":null,"bid":{"auction":100,"bidder":1,"price":50,"channel":"web","url":"http://x/a/b","dateTime":"2024-01-01 00:00:02.000"}}
{"event_type":2,"bid":{"auction":101,"bidder":2,"price":null,"channel":"app","url":"http://y/c","dateTime":"2024-01-01 00:00:03.000","extra":"x"}}
{"event_type":2,"bid":{"auction":100,"bidder":3,"price":70,"channel":"web","url":"http://x/d","dateTime":"2024-01-01 00:00:04.000"}}
`
	if err := os.WriteFile(filepath.Join(dir, "events.json"), []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`SET 'pipeline.name' = 'nexmark-nested';
CREATE TABLE datagen (
    event_type INT,
    person ROW<id BIGINT, name VARCHAR, dateTime TIMESTAMP(3)>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS CASE WHEN event_type = 0 THEN person.dateTime ELSE bid.dateTime END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra
FROM datagen WHERE event_type = 2;
CREATE TABLE sink (auction BIGINT, price BIGINT, dir STRING, ts TIMESTAMP(3), extra STRING, who ROW<bidder BIGINT, channel STRING>, name STRING)
WITH ('connector' = 'print');
INSERT INTO sink
SELECT b.auction, b.price, SPLIT_INDEX(b.url, '/', 3), b.dateTime, b.extra, (b.bidder, b.channel), CAST(NULL AS STRING)
FROM bid AS b;
INSERT INTO sink
SELECT person.id, CAST(NULL AS BIGINT), CAST(NULL AS STRING), dateTime, person.name, ROW(bid.bidder, bid.channel), person.name
FROM datagen WHERE person.id IS NOT NULL;
`, filepath.Join(dir, "events.json"))
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "run", "--progress", "off", file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var got []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "+I[") {
			got = append(got, line)
		}
	}
	// The print sink writes rows as Flink's does, nested rows included; the two INSERTs
	// run side by side, so only the order within each is fixed.
	want := []string{
		"+I[100, 50, a, 2024-01-01T00:00:02, null, +I[1, web], null]",
		"+I[101, null, c, 2024-01-01T00:00:03, x, +I[2, app], null]",
		"+I[100, 70, d, 2024-01-01T00:00:04, null, +I[3, web], null]",
		"+I[1, null, null, 2024-01-01T00:00, alice, +I[null, null], alice]",
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s\nstdout:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), r.stdout)
	}
}
