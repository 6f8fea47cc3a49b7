package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nexmarkDDL is Nexmark's table and bid view over the nexmark connector, as the
// benchmark declares them.
const nexmarkDDL = `CREATE TABLE datagen (
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
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '5000',
    'events.num' = '%d'
);
CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra
FROM datagen WHERE event_type = 2;
`

// TestNexmarkSourceAgainstExport runs Nexmark's bid view through the binary twice in one
// file: once exporting every bid to JSON files, once aggregated (a group aggregate and a
// tumbling window, as Nexmark's q5 and q7 do). The aggregates must equal the same
// computation done here over the exported file, which also checks the 1:3:46 mix.
func TestNexmarkSourceAgainstExport(t *testing.T) {
	const events = 20000
	dir := t.TempDir()
	export := filepath.Join(dir, "bids")
	job := fmt.Sprintf(nexmarkDDL, events) + fmt.Sprintf(`
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE per_auction (auction BIGINT, bids BIGINT, top BIGINT, total BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'group');
CREATE TABLE per_second (auction BIGINT, window_start TIMESTAMP(3), bids BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'window');
INSERT INTO bids SELECT auction, bidder, price, dateTime FROM bid;
INSERT INTO per_auction SELECT auction, COUNT(*), MAX(price), SUM(price) FROM bid GROUP BY auction;
INSERT INTO per_second
SELECT auction, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND))
GROUP BY auction, window_start, window_end;
`, export)
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "run", "--progress", "off", file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	type exported struct {
		Auction, Bidder, Price int64
		DateTime               string
	}
	var bids []exported
	files, _ := filepath.Glob(filepath.Join(export, "*"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var b exported
			if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
				t.Fatalf("%s: %v: %s", f, err, sc.Text())
			}
			bids = append(bids, b)
		}
		fh.Close()
	}
	if len(bids) != events/50*46 {
		t.Fatalf("%d bids exported, want %d of %d events", len(bids), events/50*46, events)
	}
	type agg struct{ n, top, total int64 }
	group := map[int64]*agg{}
	window := map[string]int64{}
	for _, b := range bids {
		a := group[b.Auction]
		if a == nil {
			a = &agg{}
			group[b.Auction] = a
		}
		a.n, a.top, a.total = a.n+1, max(a.top, b.Price), a.total+b.Price
		ts, err := time.Parse("2006-01-02 15:04:05.999", b.DateTime)
		if err != nil {
			t.Fatal(err)
		}
		start, layout := ts.Truncate(time.Second), "2006-01-02T15:04:05"
		if start.Second() == 0 {
			layout = "2006-01-02T15:04" // as Java's LocalDateTime prints it
		}
		window[fmt.Sprintf("%d, %s", b.Auction, start.Format(layout))]++
	}
	var wantGroup, wantWindow []string
	for k, a := range group {
		wantGroup = append(wantGroup, fmt.Sprintf("[%d, %d, %d, %d]", k, a.n, a.top, a.total))
	}
	for k, n := range window {
		wantWindow = append(wantWindow, fmt.Sprintf("[%s, %d]", k, n))
	}
	slices.Sort(wantGroup)
	slices.Sort(wantWindow)
	if got := finalState(t, r.stdout, "group"); !slices.Equal(got, wantGroup) {
		t.Errorf("per auction: %d rows, want %d\n got %v\nwant %v", len(got), len(wantGroup), firstRows(got), firstRows(wantGroup))
	}
	if got := finalState(t, r.stdout, "window"); !slices.Equal(got, wantWindow) {
		t.Errorf("per second: %d rows, want %d\n got %v\nwant %v", len(got), len(wantWindow), firstRows(got), firstRows(wantWindow))
	}
}

func firstRows(rows []string) string {
	return strings.Join(rows[:min(len(rows), 5)], " ")
}
