package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	osexec "os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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
%[3]s
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

// eoFixture is a cluster with the events topic, the two output topics read by
// read_committed consumers from the start, the job file, and events produced all along
// until stopProducing.
type eoFixture struct {
	c                     *kafkatest.Cluster
	dauWatch, upsertWatch *topicWatch
	job                   string

	mu         sync.Mutex
	g          *dauGen
	stop       chan struct{}
	produced   chan struct{}
	produceErr error
}

const eoParts = 4

// newEOFixture starts the cluster and the producer; sets are the job's further SETs.
func newEOFixture(t *testing.T, sets string) *eoFixture {
	f := &eoFixture{c: kafkatest.NewCluster(t, 3), stop: make(chan struct{}), produced: make(chan struct{})}
	f.c.CreateTopic(t, "events", eoParts)
	f.c.CreateTopic(t, "dau", 2)
	f.c.CreateTopic(t, "dau-upsert", 3)
	f.dauWatch = watchTopic(t, f.c, "dau")
	f.upsertWatch = watchTopic(t, f.c, "dau-upsert")
	f.job = writeJob(t, strings.ReplaceAll(fmt.Sprintf(eoJob, f.c.Bootstrap(), t.TempDir(), sets), "{day}", "`day`"))
	// ~2,500 events a second, 10 s of event time each: a day of events takes ~3.5 s, so
	// windows close while the job runs.
	f.g = newDAUGen(eoParts, time.Date(2026, 3, 1, 10, 0, 0, 0, shanghai), 10*time.Second)
	go func() {
		defer close(f.produced)
		for {
			select {
			case <-f.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			f.mu.Lock()
			evs := f.g.events(50)
			f.mu.Unlock()
			if err := f.c.TryProduce("events", evs...); err != nil {
				f.produceErr = err
				return
			}
		}
	}()
	t.Cleanup(f.stopProducing)
	return f
}

func (f *eoFixture) stopProducing() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.produced
}

// finish stops the events, sends one event per partition far ahead of them (closing
// every window of the truth) and returns the truth.
func (f *eoFixture) finish(t *testing.T) map[dauKey][2]int64 {
	t.Helper()
	f.stopProducing()
	if f.produceErr != nil {
		t.Fatalf("producing events: %v", f.produceErr)
	}
	want := f.g.want("")
	far := f.g.next + int64(10*24*time.Hour/time.Millisecond)
	for p := range eoParts {
		v, _ := json.Marshal(dauEvent{App: flushApp, UserID: "x", EventTime: far})
		f.c.Produce(t, "events", kafkatest.Record{Partition: int32(p), Value: v})
	}
	return want
}

// waitComplete waits until the consumers have seen every window and every group's
// final count of want: a transaction nobody ends would hold them back.
func (f *eoFixture) waitComplete(t *testing.T, want map[dauKey][2]int64) {
	t.Helper()
	f.dauWatch.until("every window", nil, func(rs []outRecord) bool { return len(decodeWindows(rs)) >= len(want) })
	f.upsertWatch.until("every group's final count", nil, func(rs []outRecord) bool {
		got, _ := finalUpserts(t, rs)
		for k, w := range want {
			if got[k] != w {
				return false
			}
		}
		return true
	})
}

// check checks what the consumers saw: every window once, with the truth's counts;
// every upsert of a key once (its event count only grows); and nothing that is not in
// the committed log now (no aborted or uncommitted record).
func (f *eoFixture) check(t *testing.T, want map[dauKey][2]int64) {
	t.Helper()
	dauSeen, upSeen := f.dauWatch.snapshot(), f.upsertWatch.snapshot()
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
		for _, rec := range f.c.ReadAll(t, topic.name) {
			final[[2]int64{int64(rec.Partition), rec.Offset}] = string(rec.Value)
		}
		for _, rec := range topic.seen {
			if v, ok := final[[2]int64{int64(rec.Partition), rec.Offset}]; !ok || v != string(rec.Value) {
				t.Errorf("%s: the consumer saw %s at partition %d offset %d, which is not committed there", topic.name, rec.Value, rec.Partition, rec.Offset)
			}
		}
		// A second, independent client: kcat (librdkafka, read_committed) reads the
		// same committed log.
		if byKcat, ok := kcatRecords(t, f.c.Bootstrap(), topic.name); ok {
			if len(byKcat) != len(final) {
				t.Errorf("%s: kcat reads %d committed records, franz-go %d", topic.name, len(byKcat), len(final))
			}
			for k, v := range byKcat {
				if final[k] != v {
					t.Errorf("%s: kcat reads %q at partition %d offset %d, franz-go %q", topic.name, v, k[0], k[1], final[k])
				}
			}
		}
	}
}

// kcatRecords reads topic from its start to its end with Debian's kcat, isolation
// read_committed, by partition and offset; ok is false when kcat is not installed
// (.ci/run installs it).
func kcatRecords(t *testing.T, bootstrap, topic string) (map[[2]int64]string, bool) {
	t.Helper()
	path, err := osexec.LookPath("kcat")
	if err != nil {
		t.Logf("kcat is not installed: the committed output is read by franz-go only")
		return nil, false
	}
	cmd := osexec.Command(path, "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%p %o %s\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	recs := map[[2]int64]string{}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		var p, o int64
		fields := strings.SplitN(line, " ", 3)
		if len(fields) != 3 {
			t.Fatalf("kcat line %q", line)
		}
		fmt.Sscan(fields[0], &p)
		fmt.Sscan(fields[1], &o)
		recs[[2]int64{p, o}] = fields[2]
	}
	return recs, true
}

func TestKafkaExactlyOnceCrash(t *testing.T) {
	rounds := 10
	if !soak {
		rounds = 3 // the fast set: one kill of each kind
	}
	f := newEOFixture(t, "SET 'restart-strategy.type' = 'none';")
	env := []string{engine.CommitDelayEnv + "=300ms", kafka.CommitDelayEnv + "=300ms"}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	killed, inCommit := crashRounds(t, env, f.job, rounds, func(round int) killPlan {
		switch round % 3 {
		case 0: // the sinks pre-committed, the checkpoint is not complete
			return killPlan{commits: 1 + rng.IntN(2), inCommit: true}
		case 1: // the checkpoint completed, the sinks have not committed
			return killPlan{commits: 1 + rng.IntN(2), kafkaCommit: true}
		}
		return killPlan{commits: 1, delay: time.Duration(rng.IntN(1000)) * time.Millisecond}
	}, nil)
	if killed < rounds {
		t.Fatalf("only %d of %d runs were killed", killed, rounds)
	}
	want := f.finish(t)

	// The last run resumes and must get to the end.
	began := time.Now()
	r := startCrashRun(t, env, "run", f.job)
	defer r.kill(t)
	f.waitComplete(t, want)
	t.Logf("%d kills (%d after a pre-commit, before the checkpoint completed); the last run caught up in %s; %d windows",
		killed, inCommit, time.Since(began), len(want))
	r.kill(t)
	if strings.Contains(r.stderr.String(), "level=ERROR") {
		t.Errorf("errors in the last run:\n%s", r.stderr.String())
	}
	f.check(t, want)
}

// TestKafkaExactlyOnceFailedCheckpoint fails the commit record of checkpoint 2 once,
// after the sinks pre-committed their transactions for it: with no failure tolerated
// the run fails and restarts from checkpoint 1, whose fenced ids abort the staged
// transactions before the rows are written again; with one tolerated the staged
// transactions wait and checkpoint 3 commits them. Either way no row is seen twice.
//
// The metrics show the sinks' transactions meanwhile: committed, aborted (the restarted
// run's fencing), pending, and the barrier-to-commit histogram.
func TestKafkaExactlyOnceFailedCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name, sets, log string
		aborted         bool
	}{
		{"restarted", "SET 'restart-strategy.type' = 'fixed-delay';\nSET 'restart-strategy.fixed-delay.delay' = '100 ms';",
			"aborted a lingering transaction", true},
		{"tolerated", "SET 'restart-strategy.type' = 'none';\nSET 'execution.checkpointing.tolerable-failed-checkpoints' = '1';", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEOFixture(t, tc.sets)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			r := startCrashRun(t, []string{engine.FailCheckpointEnv + "=2"}, "run", "--metrics-addr", addr, f.job)
			defer r.kill(t)
			url := "http://" + addr + "/metrics"
			eventuallyTrue(t, "the failed checkpoint", func() bool {
				select {
				case <-r.done:
					t.Fatalf("the job ended: exit %d\nstderr: %s", r.exitCode(), r.stderr.String())
				default:
				}
				resp, err := http.Get(url)
				if err != nil {
					return false // not serving yet
				}
				resp.Body.Close()
				failed := 0.0
				if f := scrapeFamilies(t, url)["pipesql_checkpoints_failed_total"]; f != nil {
					for _, m := range f.Metric {
						failed += m.GetCounter().GetValue()
					}
				}
				return failed >= 1
			})
			want := f.finish(t)
			f.waitComplete(t, want)

			// The sinks' transactions in the metrics.
			eventuallyTrue(t, "the sinks' transactions in the metrics", func() bool {
				fams := scrapeFamilies(t, url)
				sum := func(name string) (float64, int) {
					total, n := 0.0, 0
					if f := fams[name]; f != nil {
						for _, m := range f.Metric {
							total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
							n++
						}
					}
					return total, n
				}
				committed, nc := sum("pipesql_sink_transactions_committed_total")
				commits, nh := sum("pipesql_sink_transaction_commit_seconds")
				aborted, _ := sum("pipesql_sink_transactions_aborted_total")
				_, np := sum("pipesql_sink_transactions_pending")
				return nc == 2 && nh == 2 && np == 2 && committed >= 2 && commits >= 2 && (!tc.aborted || aborted >= 1)
			})
			r.kill(t)
			stderr := r.stderr.String()
			if !strings.Contains(stderr, "checkpoint failed") || !strings.Contains(stderr, "injected storage failure") {
				t.Errorf("the injected failure of checkpoint 2 is not in the log:\n%s", stderr)
			}
			if tc.log != "" && !strings.Contains(stderr, tc.log) {
				t.Errorf("the log does not say %q:\n%s", tc.log, stderr)
			}
			f.check(t, want)
		})
	}
}

// TestKafkaExactlyOnceTimeoutAtPlanTime: a checkpoint interval that is not shorter than
// transaction.timeout.ms is an error of the INSERT, before anything runs.
func TestKafkaExactlyOnceTimeoutAtPlanTime(t *testing.T) {
	job := writeJob(t, `SET 'execution.checkpointing.interval' = '2 min';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE events_out (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1',
  'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'p',
  'properties.transaction.timeout.ms' = '90000');
INSERT INTO events_out SELECT id FROM src;
`)
	for _, cmd := range []string{"explain", "run"} {
		r := pipesql(t, cmd, job)
		if r.code != exitUsage || !strings.Contains(r.stderr, "job.sql:6:1: kafka sink events_out") ||
			!strings.Contains(r.stderr, "'execution.checkpointing.interval' (2m0s) is not shorter than 'properties.transaction.timeout.ms' (1m30s)") {
			t.Errorf("%s: exit %d, want %d and the timeout error at the INSERT\nstderr: %s", cmd, r.code, exitUsage, r.stderr)
		}
	}
}

// scrapeFamilies reads the metrics at url.
func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return fams
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

// TestKafkaExactlyOnceBounded runs the job over a bounded input to its end: with
// checkpoints the final checkpoint commits the last transactions; without, the sinks
// commit when the job ends. Both exit 0 with the truth committed.
func TestKafkaExactlyOnceBounded(t *testing.T) {
	for _, tc := range []struct{ name, interval string }{{"checkpointed", "200 ms"}, {"no checkpoints", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			c := kafkatest.NewCluster(t, 3)
			c.CreateTopic(t, "events", eoParts)
			c.CreateTopic(t, "dau", 2)
			c.CreateTopic(t, "dau-upsert", 3)
			g := newDAUGen(eoParts, time.Date(2026, 3, 1, 10, 0, 0, 0, shanghai), 40*time.Second)
			for range 3 {
				c.Produce(t, "events", g.events(2000)...)
			}
			text := strings.Replace(eoJob, "'scan.startup.mode' = 'earliest-offset',",
				"'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',", 1)
			interval := "SET 'execution.checkpointing.interval' = '1 s';\n"
			if tc.interval == "" {
				text = strings.Replace(text, interval, "", 1)
			} else {
				text = strings.Replace(text, interval, "SET 'execution.checkpointing.interval' = '"+tc.interval+"';\n", 1)
			}
			job := writeJob(t, strings.ReplaceAll(fmt.Sprintf(text, c.Bootstrap(), t.TempDir(), ""), "{day}", "`day`"))
			r := pipesql(t, "run", job)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
			}
			want := g.want("")
			var dau, up []outRecord
			for _, rec := range c.ReadAll(t, "dau") {
				dau = append(dau, outRecord{Record: rec})
			}
			for _, rec := range c.ReadAll(t, "dau-upsert") {
				up = append(up, outRecord{Record: rec})
			}
			if len(dau) != len(want) {
				t.Errorf("%d window records for %d windows", len(dau), len(want))
			}
			compareDAU(t, "kafka exactly-once sink", decodeWindows(dau), want)
			got, dups := finalUpserts(t, up)
			for _, d := range dups {
				t.Error(d)
			}
			compareDAU(t, "upsert-kafka exactly-once sink", got, want)
		})
	}
}
