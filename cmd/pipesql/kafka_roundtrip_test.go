package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// passThroughJob copies topic in to topic out; srcOptions are extra WITH options of the
// source, as "'key' = 'value', ..." text.
const passThroughJob = `
%s
CREATE TABLE src (id BIGINT, u STRING, n INT) WITH (
  'connector' = 'kafka',
  'topic' = '%s',
  'properties.bootstrap.servers' = '%s',
  'format' = 'json',
  %s
);
CREATE TABLE dst (id BIGINT, u STRING, n INT) WITH (
  'connector' = 'kafka',
  'topic' = '%s',
  'properties.bootstrap.servers' = '%s',
  'format' = 'json'
);
INSERT INTO dst SELECT id, u, n FROM src;
`

func passThrough(sets, bootstrap, in, out, srcOptions string) string {
	return fmt.Sprintf(passThroughJob, sets, in, bootstrap, srcOptions, out, bootstrap)
}

// TestKafkaStartupAndBoundedModes reads the same records under every scan.startup.mode
// and scan.bounded.mode through the binary: 4 partitions, record id i in partition i%4
// at offset i/4, its timestamp base + i seconds. Each bounded job ends by itself.
func TestKafkaStartupAndBoundedModes(t *testing.T) {
	const parts, total = 4, 40
	c := kafkatest.NewCluster(t, 3)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tsMillis := func(id int) int64 { return base.Add(time.Duration(id) * time.Second).UnixMilli() }
	// The committed offsets of the group-offsets cases, by partition.
	committed := map[int32]int64{0: 2, 1: 5, 2: 0, 3: 10}

	type tc struct {
		name    string
		options string
		group   bool
		want    func(id int) bool // whether record id is read
	}
	partOff := func(id int) (int32, int64) { return int32(id % parts), int64(id / parts) }
	cases := []tc{
		{"earliest to latest", `'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'`, false,
			func(int) bool { return true }},
		{"group-offsets to latest", `'scan.startup.mode' = 'group-offsets', 'scan.bounded.mode' = 'latest-offset'`, true,
			func(id int) bool { p, o := partOff(id); return o >= committed[p] }},
		{"timestamp to latest", fmt.Sprintf(`'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '%d', 'scan.bounded.mode' = 'latest-offset'`, tsMillis(22)), false,
			func(id int) bool { return id >= 22 }},
		{"specific-offsets to latest", `'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:3;partition:1,offset:9', 'scan.bounded.mode' = 'latest-offset'`, false,
			func(id int) bool {
				// Partitions the option does not name start at the earliest offset (no group).
				p, o := partOff(id)
				return p == 0 && o >= 3 || p == 1 && o >= 9 || p >= 2
			}},
		{"earliest to group-offsets", `'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'group-offsets'`, true,
			func(id int) bool { p, o := partOff(id); return o < committed[p] }},
		{"earliest to timestamp", fmt.Sprintf(`'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '%d'`, tsMillis(17)), false,
			func(id int) bool { return id < 17 }},
		{"earliest to specific-offsets", `'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0,offset:3;partition:1,offset:9;partition:2,offset:0'`, false,
			func(id int) bool {
				// As in Flink, a partition the option does not name is not read at all.
				p, o := partOff(id)
				return p == 0 && o < 3 || p == 1 && o < 9
			}},
		{"timestamp to timestamp", fmt.Sprintf(`'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '%d', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '%d'`, tsMillis(9), tsMillis(31)), false,
			func(id int) bool { return id >= 9 && id < 31 }},
	}
	for i, cs := range cases {
		in, out := fmt.Sprintf("in-%d", i), fmt.Sprintf("out-%d", i)
		c.CreateTopic(t, in, parts)
		c.CreateTopic(t, out, 1)
		var rs []kafkatest.Record
		for id := range total {
			rs = append(rs, kafkatest.Record{Partition: int32(id % parts), Value: idJSON(id), Timestamp: time.UnixMilli(tsMillis(id))})
		}
		c.Produce(t, in, rs...)
		if cs.group {
			c.Commit(t, fmt.Sprintf("g-%d", i), in, committed)
		}
	}
	for i, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			in, out := fmt.Sprintf("in-%d", i), fmt.Sprintf("out-%d", i)
			opts := cs.options
			if cs.group {
				opts += fmt.Sprintf(", 'properties.group.id' = 'g-%d'", i)
			}
			job := writeJob(t, passThrough("", c.Bootstrap(), in, out, opts))
			r := pipesql(t, "run", job)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
			}
			var want []int64
			for id := range total {
				if cs.want(id) {
					want = append(want, int64(id))
				}
			}
			got := map[int64]int{}
			for _, rec := range c.ReadAll(t, out) {
				var v idRecord
				if err := json.Unmarshal(rec.Value, &v); err != nil {
					t.Fatalf("output %q: %v", rec.Value, err)
				}
				got[v.ID]++
			}
			checkIDs(t, got, want)
		})
	}
}

// TestKafkaLatestOffsetUnbounded starts an unbounded job at the latest offsets: records
// written before it started are not read, every one written after is, and SIGTERM
// stops it cleanly (exit 0) with its output flushed. The job copies the records and
// aggregates them per user into an upsert-kafka topic, whose final values must be the
// aggregates of exactly the later records.
func TestKafkaLatestOffsetUnbounded(t *testing.T) {
	const parts = 4
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "in", parts)
	c.CreateTopic(t, "out", 1)
	c.CreateTopic(t, "agg", 2)
	produceIDs(t, c, "in", parts, 0, 40)
	// Without checkpointing a source with a group commits its positions periodically; the
	// first commit shows where the job starts, so the test knows when it is positioned.
	// Each of the two INSERTs reads with a source of its own, each with a group.
	latest := func(group string) string {
		return fmt.Sprintf(`'scan.startup.mode' = 'latest-offset', 'properties.group.id' = '%s', 'properties.auto.commit.interval.ms' = '100'`, group)
	}
	job := writeJob(t, passThrough("", c.Bootstrap(), "in", "out", latest("latest"))+fmt.Sprintf(`
CREATE TABLE src2 (id BIGINT, u STRING, n INT) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json', %[2]s);
CREATE TABLE agg (u STRING, cnt BIGINT, total BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'agg', 'properties.bootstrap.servers' = '%[1]s',
  'key.format' = 'json', 'value.format' = 'json');
INSERT INTO agg SELECT u, COUNT(*), SUM(CAST(n AS BIGINT)) FROM src2 GROUP BY u;
`, c.Bootstrap(), latest("latest-agg")))
	p := startPipesql(t, "run", job)
	for _, group := range []string{"latest", "latest-agg"} {
		eventuallyTrue(t, "the first commit of group "+group, func() bool {
			p.failIfExited()
			return len(c.Committed(t, group, "in")) == parts
		})
		for part, off := range c.Committed(t, group, "in") {
			if off != 10 {
				t.Errorf("group %s: partition %d starts at offset %d, want 10 (the end when the job started)", group, part, off)
			}
		}
	}
	w := watchTopic(t, c, "out")
	produceIDs(t, c, "in", parts, 40, 100)
	w.until("60 records", p, func(rs []outRecord) bool { return len(rs) >= 60 })
	// The aggregate's last update covers every later record: the counts add up to 60.
	agg := watchTopic(t, c, "agg")
	agg.until("the aggregates of the 60 records", p, func(rs []outRecord) bool {
		total := int64(0)
		for _, v := range lastPerKey(t, rs) {
			total += v.Cnt
		}
		return total == 60
	})
	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	var rs []outRecord
	for _, rec := range c.ReadAll(t, "out") {
		rs = append(rs, outRecord{Record: rec})
	}
	checkIDs(t, decodeIDs(t, rs), idRange(40, 100))

	want := map[string]aggRow{}
	for id := 40; id < 100; id++ {
		u := fmt.Sprintf("u%d", id%7)
		a := want[u]
		a.U, a.Cnt, a.Total = u, a.Cnt+1, a.Total+int64(id%100)
		want[u] = a
	}
	rs = rs[:0]
	for _, rec := range c.ReadAll(t, "agg") {
		rs = append(rs, outRecord{Record: rec})
	}
	got := lastPerKey(t, rs)
	if len(got) != len(want) {
		t.Errorf("%d users aggregated, want %d: %v", len(got), len(want), got)
	}
	for u, w := range want {
		if got[u] != w {
			t.Errorf("user %s: got %+v, want %+v", u, got[u], w)
		}
	}
}

// aggRow is a row of the per-user aggregate.
type aggRow struct {
	U     string `json:"u"`
	Cnt   int64  `json:"cnt"`
	Total int64  `json:"total"`
}

// lastPerKey returns the latest value of each key of an upsert-kafka topic (records of
// one key are in one partition, in order).
func lastPerKey(t *testing.T, rs []outRecord) map[string]aggRow {
	t.Helper()
	sort.SliceStable(rs, func(i, j int) bool {
		return rs[i].Partition < rs[j].Partition || rs[i].Partition == rs[j].Partition && rs[i].Offset < rs[j].Offset
	})
	out := map[string]aggRow{}
	for _, r := range rs {
		var key struct {
			U string `json:"u"`
		}
		if err := json.Unmarshal(r.Key, &key); err != nil {
			t.Fatalf("aggregate key %q: %v", r.Key, err)
		}
		if r.Value == nil {
			delete(out, key.U) // a tombstone
			continue
		}
		var a aggRow
		if err := json.Unmarshal(r.Value, &a); err != nil {
			t.Fatalf("aggregate %q: %v", r.Value, err)
		}
		if a.U != key.U {
			t.Errorf("key %s carries value %s", r.Key, r.Value)
		}
		out[key.U] = a
	}
	return out
}

// dauEvent is one click of the DAU round trip.
type dauEvent struct {
	App       string `json:"app"`
	UserID    string `json:"user_id"`
	EventTime int64  `json:"event_time"`
}

// dauKafkaJob is the DAU job over Kafka: the windowed DAU into an append-only topic, and
// the same counts as a continuously updated aggregate into an upsert-kafka topic.
const dauKafkaJob = `
SET 'table.local-time-zone' = 'Asia/Shanghai';
%[2]s
CREATE TABLE events (
  app        STRING,
  user_id    STRING,
  event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '%[1]s',
  'properties.group.id' = 'dau',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  %[3]s
);
CREATE TABLE dau (
  {day} STRING, app STRING, dau BIGINT, events BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'dau',
  'properties.bootstrap.servers' = '%[1]s',
  'format' = 'json'
);
CREATE TABLE dau_upsert (
  {day} STRING, app STRING, dau BIGINT, events BIGINT,
  PRIMARY KEY ({day}, app) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'dau-upsert',
  'properties.bootstrap.servers' = '%[1]s',
  'key.format' = 'json',
  'value.format' = 'json'
);
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
%[4]s
`

const dauUpsertInsert = `
INSERT INTO dau_upsert
SELECT DATE_FORMAT(ts, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM events
GROUP BY DATE_FORMAT(ts, 'yyyy-MM-dd'), app;
`

func dauKafkaJobText(bootstrap, sets, srcOptions string, upsert bool) string {
	ins := ""
	if upsert {
		ins = dauUpsertInsert
	}
	return strings.ReplaceAll(fmt.Sprintf(dauKafkaJob, bootstrap, sets, srcOptions, ins), "{day}", "`day`")
}

// dauGen generates click events: several apps, skewed users, event time moving forward
// in every partition with disorder within the 5 s watermark bound, so that nothing is
// late and the truth is every event.
type dauGen struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	apps  []string
	parts int
	next  int64 // event time of the next event, epoch ms
	step  int64 // mean event-time advance per event, ms
	truth map[dauKey]map[string]bool
	count map[dauKey]int
	n     int
}

func newDAUGen(parts int, start time.Time, step time.Duration) *dauGen {
	return &dauGen{
		rng:   rand.New(rand.NewPCG(1, 2)),
		zipf:  rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.3, 1, 5000),
		apps:  []string{"shop", "news", "game", "mail", "maps"},
		parts: parts,
		next:  start.UnixMilli(),
		step:  step.Milliseconds(),
		truth: map[dauKey]map[string]bool{},
		count: map[dauKey]int{},
	}
}

var shanghai = func() *time.Location {
	l, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		panic(err)
	}
	return l
}()

// events returns the next n events as records, spread over the partitions, and adds
// them to the truth.
func (g *dauGen) events(n int) []kafkatest.Record {
	out := make([]kafkatest.Record, 0, n)
	for range n {
		g.next += g.rng.Int64N(2*g.step + 1)
		ts := g.next - g.rng.Int64N(3000)
		app := g.apps[g.rng.IntN(len(g.apps))]
		if g.rng.IntN(3) == 0 {
			app = g.apps[0]
		}
		user := fmt.Sprintf("u-%05d", g.zipf.Uint64())
		v, _ := json.Marshal(dauEvent{App: app, UserID: user, EventTime: ts})
		out = append(out, kafkatest.Record{Partition: int32(g.n % g.parts), Value: v})
		g.n++
		k := dauKey{time.UnixMilli(ts).In(shanghai).Format("2006-01-02"), app}
		if g.truth[k] == nil {
			g.truth[k] = map[string]bool{}
		}
		g.truth[k][user] = true
		g.count[k]++
	}
	return out
}

// want returns the truth as day/app -> (dau, events), leaving out days not before
// beforeDay ("" keeps all).
func (g *dauGen) want(beforeDay string) map[dauKey][2]int64 {
	out := map[dauKey][2]int64{}
	for k, users := range g.truth {
		if beforeDay == "" || k.day < beforeDay {
			out[k] = [2]int64{int64(len(users)), int64(g.count[k])}
		}
	}
	return out
}

// dauRow is a row of the DAU sinks.
type dauRow struct {
	Day    string `json:"day"`
	App    string `json:"app"`
	DAU    int64  `json:"dau"`
	Events int64  `json:"events"`
}

// decodeDAU reads append-only DAU output: every window must be emitted once.
func decodeDAU(t *testing.T, values [][]byte) map[dauKey][2]int64 {
	t.Helper()
	got := map[dauKey][2]int64{}
	for _, v := range values {
		var r dauRow
		if err := json.Unmarshal(v, &r); err != nil {
			t.Fatalf("DAU output %q: %v", v, err)
		}
		k := dauKey{r.Day, r.App}
		if _, dup := got[k]; dup {
			t.Errorf("window %v emitted twice", k)
		}
		got[k] = [2]int64{r.DAU, r.Events}
	}
	return got
}

func TestKafkaDAURoundTrip(t *testing.T) {
	const parts = 6
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", parts)
	c.CreateTopic(t, "dau", 1)
	c.CreateTopic(t, "dau-upsert", 3)
	g := newDAUGen(parts, time.Date(2026, 3, 1, 10, 0, 0, 0, shanghai), 40*time.Second)
	for range 3 {
		c.Produce(t, "events", g.events(2000)...)
	}
	job := writeJob(t, dauKafkaJobText(c.Bootstrap(), "", `'scan.bounded.mode' = 'latest-offset'`, true))
	r := pipesql(t, "run", job)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	want := g.want("")
	if len(want) < 10 {
		t.Fatalf("the data covers only %d day/app groups", len(want))
	}
	var values [][]byte
	for _, rec := range c.ReadAll(t, "dau") {
		values = append(values, rec.Value)
	}
	compareDAU(t, "kafka sink", decodeDAU(t, values), want)

	// upsert-kafka: the last record of each key is its final value; keys are JSON of the
	// primary key, so every record of a key is in one partition, in order.
	final := map[string][]byte{}
	recs := c.ReadAll(t, "dau-upsert")
	sort.SliceStable(recs, func(i, j int) bool {
		return recs[i].Partition < recs[j].Partition || recs[i].Partition == recs[j].Partition && recs[i].Offset < recs[j].Offset
	})
	partOf := map[string]int32{}
	for _, rec := range recs {
		k := string(rec.Key)
		if p, ok := partOf[k]; ok && p != rec.Partition {
			t.Errorf("key %s written to partitions %d and %d", k, p, rec.Partition)
		}
		partOf[k] = rec.Partition
		final[k] = rec.Value
	}
	got := map[dauKey][2]int64{}
	for k, v := range final {
		var key struct {
			Day string `json:"day"`
			App string `json:"app"`
		}
		if err := json.Unmarshal([]byte(k), &key); err != nil {
			t.Fatalf("upsert key %q: %v", k, err)
		}
		if v == nil {
			continue // a tombstone: the key was deleted
		}
		var row dauRow
		if err := json.Unmarshal(v, &row); err != nil {
			t.Fatalf("upsert value %q: %v", v, err)
		}
		if row.Day != key.Day || row.App != key.App {
			t.Errorf("key %s carries value %s", k, v)
		}
		got[dauKey{key.Day, key.App}] = [2]int64{row.DAU, row.Events}
	}
	if len(recs) <= len(got) {
		t.Errorf("%d upsert records for %d keys: the aggregate should have been updated along the way", len(recs), len(got))
	}
	compareDAU(t, "upsert-kafka sink", got, want)
}
