package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/engine"
)

// The DAU job over Kafka into an exactly-once kafka sink (the daily windows) and an
// exactly-once upsert-kafka sink (the running counts), checkpointing every second,
// SIGKILLed again and again while events keep arriving: some kills land after the
// sinks pre-committed and before the checkpoint completed, some after it completed and
// before the sinks committed. A read_committed franz-go consumer reads both topics the
// whole time. It must never see a row twice or a row that is not in the final committed
// log, the job must never stall on a dead run's transaction, and the final output must
// be the truth computed here.

const eoJob = `
SET 'table.local-time-zone' = 'Asia/Shanghai';
SET 'execution.checkpointing.interval' = '1 s';
SET 'execution.checkpointing.dir' = '%[2]s';
SET 'restart-strategy.type' = 'none';
CREATE TABLE events (
  app STRING, user_id STRING, event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '%[1]s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'
);
CREATE TABLE dau ({day} STRING, app STRING, dau BIGINT, events BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'dau', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'dau-eo'
);
CREATE TABLE dau_upsert ({day} STRING, app STRING, dau BIGINT, events BIGINT,
  PRIMARY KEY ({day}, app) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'dau-upsert', 'properties.bootstrap.servers' = '%[1]s',
  'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'dau-upsert-eo'
);
INSERT INTO dau
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
INSERT INTO dau_upsert
SELECT DATE_FORMAT(ts, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM events
GROUP BY DATE_FORMAT(ts, 'yyyy-MM-dd'), app;
`

const flushApp = "zz-flush" // the events that close the last windows; not in the truth

func TestKafkaExactlyOnceCrash(t *testing.T) {
	rounds := 10
	if !soak {
		rounds = 3 // the fast set: one kill of each kind
	}
	const parts = 4
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", parts)
	c.CreateTopic(t, "dau", 2)
	c.CreateTopic(t, "dau-upsert", 3)
	dauWatch := watchTopic(t, c, "dau")
	upsertWatch := watchTopic(t, c, "dau-upsert")
	job := writeJob(t, strings.ReplaceAll(fmt.Sprintf(eoJob, c.Bootstrap(), t.TempDir()), "{day}", "`day`"))

	// Events arrive all along: ~2,500 a second, 10 s of event time each, so a day of
	// events takes ~3.5 s and windows close while the job is being killed.
	g := newDAUGen(parts, time.Date(2026, 3, 1, 10, 0, 0, 0, shanghai), 10*time.Second)
	stop, produced := make(chan struct{}), make(chan struct{})
	var produceErr error
	var mu sync.Mutex
	go func() {
		defer close(produced)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			mu.Lock()
			evs := g.events(50)
			mu.Unlock()
			if err := c.TryProduce("events", evs...); err != nil {
				produceErr = err
				return
			}
		}
	}()

	env := []string{engine.CommitDelayEnv + "=300ms", kafka.KafkaCommitDelayEnv + "=300ms"}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	killed, inCommit := crashRounds(t, env, job, rounds, func(round int) killPlan {
		switch round % 3 {
		case 0: // the sinks pre-committed, the checkpoint is not complete
			return killPlan{commits: 1 + rng.IntN(2), inCommit: true}
		case 1: // the checkpoint completed, the sinks have not committed
			return killPlan{commits: 1 + rng.IntN(2), kafkaCommit: true}
		}
		return killPlan{commits: 1, delay: time.Duration(rng.IntN(1000)) * time.Millisecond}
	}, nil)
	close(stop)
	<-produced
	if produceErr != nil {
		t.Fatalf("producing events: %v", produceErr)
	}
	if killed < rounds {
		t.Fatalf("only %d of %d runs were killed", killed, rounds)
	}
	// One event per partition far ahead closes every window of the truth.
	mu.Lock()
	want := g.want("")
	far := g.next + int64(10*24*time.Hour/time.Millisecond)
	mu.Unlock()
	for p := range parts {
		v, _ := json.Marshal(dauEvent{App: flushApp, UserID: "x", EventTime: far})
		c.Produce(t, "events", kafkatest.Record{Partition: int32(p), Value: v})
	}

	// The last run resumes and must get to the end: no transaction of the killed runs
	// holds the read_committed consumers back.
	began := time.Now()
	r := startCrashRun(t, env, "run", job)
	defer r.kill(t)
	complete := func(rs []outRecord) bool { return len(decodeWindows(rs)) >= len(want) }
	dauWatch.until("every window", nil, complete)
	upsertWatch.until("every group's final count", nil, func(rs []outRecord) bool {
		got, _ := finalUpserts(t, rs)
		for k, w := range want {
			if got[k] != w {
				return false
			}
		}
		return true
	})
	t.Logf("%d kills (%d after a pre-commit, before the checkpoint completed); the last run caught up in %s; %d windows",
		killed, inCommit, time.Since(began), len(want))
	r.kill(t)
	if strings.Contains(r.stderr.String(), "level=ERROR") {
		t.Errorf("errors in the last run:\n%s", r.stderr.String())
	}

	// What the consumer saw during the kills: every window once, with the truth's
	// counts; every upsert of a key once (its event count only grows); and nothing that
	// is not in the committed log now (no aborted or uncommitted record).
	dauSeen, upSeen := dauWatch.snapshot(), upsertWatch.snapshot()
	counts := map[dauKey]int{}
	for _, rec := range dauSeen {
		var row dauRow
		if err := json.Unmarshal(rec.Value, &row); err != nil {
			t.Fatalf("dau record %q: %v", rec.Value, err)
		}
		counts[dauKey{row.Day, row.App}]++
	}
	for k, n := range counts {
		if n > 1 {
			t.Errorf("window %v seen %d times", k, n)
		}
	}
	compareDAU(t, "kafka exactly-once sink", decodeWindows(dauSeen), want)
	got, dups := finalUpserts(t, upSeen)
	for _, d := range dups {
		t.Error(d)
	}
	compareDAU(t, "upsert-kafka exactly-once sink", got, want)
	for _, topic := range []struct {
		name string
		seen []outRecord
	}{{"dau", dauSeen}, {"dau-upsert", upSeen}} {
		final := map[[2]int64]string{}
		for _, rec := range c.ReadAll(t, topic.name) {
			final[[2]int64{int64(rec.Partition), rec.Offset}] = string(rec.Value)
		}
		for _, rec := range topic.seen {
			if v, ok := final[[2]int64{int64(rec.Partition), rec.Offset}]; !ok || v != string(rec.Value) {
				t.Errorf("%s: the consumer saw %s at partition %d offset %d, which is not committed there", topic.name, rec.Value, rec.Partition, rec.Offset)
			}
		}
	}
}

// decodeWindows reads the windows of the append-only DAU topic (the flush app left out).
func decodeWindows(rs []outRecord) map[dauKey][2]int64 {
	out := map[dauKey][2]int64{}
	for _, rec := range rs {
		var row dauRow
		if json.Unmarshal(rec.Value, &row) == nil && row.App != flushApp {
			out[dauKey{row.Day, row.App}] = [2]int64{row.DAU, row.Events}
		}
	}
	return out
}

// finalUpserts applies the upsert topic's records in offset order per partition and
// returns each key's last value, and the keys whose event count did not grow from one
// record to the next (an update written twice).
func finalUpserts(t *testing.T, rs []outRecord) (map[dauKey][2]int64, []string) {
	t.Helper()
	rs = append([]outRecord(nil), rs...)
	sort.SliceStable(rs, func(i, j int) bool {
		return rs[i].Partition < rs[j].Partition || rs[i].Partition == rs[j].Partition && rs[i].Offset < rs[j].Offset
	})
	out := map[dauKey][2]int64{}
	var dups []string
	for _, rec := range rs {
		var row dauRow
		if rec.Value == nil || json.Unmarshal(rec.Value, &row) != nil || row.App == flushApp {
			continue
		}
		k := dauKey{row.Day, row.App}
		if prev, ok := out[k]; ok && row.Events <= prev[1] {
			dups = append(dups, fmt.Sprintf("upsert of %v: events %d after %d (offset %d of partition %d): an update seen twice", k, row.Events, prev[1], rec.Offset, rec.Partition))
		}
		out[k] = [2]int64{row.DAU, row.Events}
	}
	return out, dups
}
