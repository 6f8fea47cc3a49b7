package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nexmarkCEP are the queries of Nexmark's CEP suite (nexmark/nexmark,
// nexmark-flink/src/main/resources/queries-cep/q0.sql to q3.sql, Apache License 2.0),
// statements as published, over its bid view (nexmarkDDL).
var nexmarkCEP = map[string]string{
	"q0 decreasing price": `CREATE TABLE discard_sink (
      auction  BIGINT,
      bidder  BIGINT,
      start_tstamp  TIMESTAMP(3),
      bottom_tstamp  TIMESTAMP(3),
      end_tstamp  TIMESTAMP(3)
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO discard_sink
SELECT
    auction, bidder, start_tstamp, bottom_tstamp, end_tstamp
FROM bid
MATCH_RECOGNIZE (
    PARTITION BY auction, bidder
    ORDER BY ` + "`dateTime`" + `
    MEASURES
        START_ROW.` + "`dateTime`" + ` AS start_tstamp,
        LAST(PRICE_DOWN.` + "`dateTime`" + `) AS bottom_tstamp,
        LAST(PRICE_UP.` + "`dateTime`" + `) AS end_tstamp
    ONE ROW PER MATCH
    AFTER MATCH SKIP TO LAST PRICE_UP
    PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
    DEFINE
        PRICE_DOWN AS
            (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR
                PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
        PRICE_UP AS
            PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
);
`,
	"q1 average price, past last row": nexmarkCEPAverage("SKIP PAST LAST ROW"),
	"q2 average price, to next row":   nexmarkCEPAverage("SKIP TO NEXT ROW"),
	"q3 price drop within": `CREATE TABLE discard_sink (
      auction  BIGINT,
      bidder  BIGINT,
      drop_time  TIMESTAMP(3),
      drop_diff  BIGINT
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO discard_sink
SELECT
    auction, bidder, drop_time, drop_diff
FROM bid
MATCH_RECOGNIZE(
    PARTITION BY auction, bidder
    ORDER BY ` + "`dateTime`" + `
    MEASURES
        C.` + "`dateTime`" + ` AS drop_time,
        A.price - C.price AS drop_diff
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A B* C) WITHIN INTERVAL '5' SECOND
    DEFINE
        B AS B.price > A.price - 50,
        C AS C.price < A.price - 50
);
`,
}

// nexmarkCEPAverage is q1 (SKIP PAST LAST ROW) or q2 (SKIP TO NEXT ROW).
func nexmarkCEPAverage(skip string) string {
	return `CREATE TABLE discard_sink (
      auction  BIGINT,
      bidder  BIGINT,
      start_tstamp  TIMESTAMP(3),
      end_tstamp  TIMESTAMP(3),
      avg_price  BIGINT
) WITH (
    'connector' = 'blackhole'
);

INSERT INTO discard_sink
SELECT
    auction, bidder, start_tstamp, end_tstamp, avg_price
FROM bid
MATCH_RECOGNIZE(
    PARTITION BY auction, bidder
    ORDER BY ` + "`dateTime`" + `
    MEASURES
        FIRST(A.` + "`dateTime`" + `) AS start_tstamp,
        LAST(A.` + "`dateTime`" + `) AS end_tstamp,
        AVG(A.price) AS avg_price
    ONE ROW PER MATCH
    AFTER MATCH ` + skip + `
    PATTERN (A+ B)
    DEFINE
        A AS AVG(A.price) < 10000
);
`
}

// TestNexmarkCEPFiles: each query of Nexmark's CEP suite explains with a Match node and
// runs to the end of 50k generated events.
func TestNexmarkCEPFiles(t *testing.T) {
	names := make([]string, 0, len(nexmarkCEP))
	for name := range nexmarkCEP {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "job.sql")
			if err := os.WriteFile(file, []byte(fmt.Sprintf(nexmarkDDL, 50000)+nexmarkCEP[name]), 0o644); err != nil {
				t.Fatal(err)
			}
			r := pipesql(t, "explain", file)
			if r.code != 0 || !strings.Contains(r.stdout, "+- Match(partitionBy=[auction, bidder], orderBy=[dateTime ASC]") {
				t.Fatalf("explain: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			r = pipesql(t, "run", "--progress", "off", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
			if r.code != 0 {
				t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// cookbookSubscriptions is the Flink SQL Cookbook's recipe "Detecting patterns with
// MATCH_RECOGNIZE" (ververica/flink-sql-cookbook, aggregations-and-analytics/08,
// Apache License 2.0). Its source table uses the faker connector, which pipesql does not
// build: the table here has the same schema over a filesystem directory of JSON rows
// (%s); the query is as published.
const cookbookSubscriptions = `CREATE TABLE subscriptions ( 
    id STRING,
    user_id INT,
    type STRING,
    start_date TIMESTAMP(3),
    end_date TIMESTAMP(3),
    payment_expiration TIMESTAMP(3),
    proc_time AS PROCTIME()
) WITH (
  -- faker replaced by a filesystem table of the same schema (faker is not built)
  'connector' = 'filesystem',
  'path' = '%s',
  'format' = 'json'
);

SELECT * 
FROM subscriptions
     MATCH_RECOGNIZE (PARTITION BY user_id 
                      ORDER BY proc_time
                      MEASURES
                        LAST(PREMIUM.type) AS premium_type,
                        AVG(TIMESTAMPDIFF(DAY,PREMIUM.start_date,PREMIUM.end_date)) AS premium_avg_duration,
                        BASIC.start_date AS downgrade_date
                      AFTER MATCH SKIP PAST LAST ROW
                      --Pattern: one or more 'premium' or 'platinum' subscription events (PREMIUM)
                      --followed by a 'basic' subscription event (BASIC) for the same ` + "`user_id`" + `
                      PATTERN (PREMIUM+ BASIC)
                      DEFINE PREMIUM AS PREMIUM.type IN ('premium','platinum'),
                             BASIC AS BASIC.type = 'basic');
`

// TestCookbookMatchRecognize runs the cookbook's recipe over 2000 subscriptions of 49
// users and checks its rows against the pattern computed here: per user in arrival
// order (processing time), a run of premium or platinum subscriptions ended by a basic
// one gives the run's last type, the integer average of its days, the basic one's start.
func TestCookbookMatchRecognize(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "subscriptions")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 23))
	base := time.Date(2020, 12, 1, 10, 0, 0, 0, time.UTC)
	const layout = "2006-01-02 15:04:05.000"
	type run struct {
		last string
		days []int
	}
	runs := map[int]*run{}
	var want []string
	var b strings.Builder
	for i := range 2000 {
		user := 1 + rng.IntN(49)
		typ := []string{"basic", "premium", "platinum"}[rng.IntN(3)]
		start := base.Add(time.Duration(rng.IntN(30*24)) * time.Hour)
		end := start.Add(time.Duration(rng.IntN(45*24)) * time.Hour)
		row, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("s%d", i), "user_id": user, "type": typ,
			"start_date": start.Format(layout), "end_date": end.Format(layout), "payment_expiration": end.Add(365 * 24 * time.Hour).Format(layout)})
		b.Write(append(row, '\n'))
		r := runs[user]
		if r == nil {
			r = &run{}
			runs[user] = r
		}
		if typ != "basic" {
			r.last = typ
			r.days = append(r.days, int(end.Sub(start)/(24*time.Hour)))
			continue
		}
		if len(r.days) > 0 {
			sum := 0
			for _, d := range r.days {
				sum += d
			}
			want = append(want, fmt.Sprintf("%d|%s|%d|%s", user, r.last, sum/len(r.days), start.Format(layout)))
		}
		*r = run{}
	}
	if err := os.WriteFile(filepath.Join(data, "part-0.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(cookbookSubscriptions, data)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "explain", file)
	if r.code != 0 || !strings.Contains(r.stdout, "AVG(TIMESTAMPDIFF(DAY, PREMIUM.start_date, PREMIUM.end_date)) AS premium_avg_duration") {
		t.Fatalf("explain: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = pipesql(t, "run", "--progress", "off", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
	if r.code != 0 {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var got []string
	for _, line := range strings.Split(r.stdout, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 || strings.TrimSpace(cells[1]) != "+I" {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		got = append(got, strings.Join(cells[2:6], "|"))
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) < 50 || !slices.Equal(got, want) {
		t.Fatalf("%d matches, want %d\ngot  %q\nwant %q", len(got), len(want), got[:min(10, len(got))], want[:min(10, len(want))])
	}
}
