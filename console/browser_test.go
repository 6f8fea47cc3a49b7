package console

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	_ "github.com/pipesql/pipesql/connectors/formats"
	_ "github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/engine"
)

var screenshot = flag.String("screenshot", "", "write a screenshot of the job page to `FILE` (docs/console.png: go test ./console -run Browser -screenshot ../docs/console.png)")

// browserJob is a DAU-like job over a Kafka topic: one-minute windows with the count of
// events and of distinct users, a 2 s partition discovery (longer than the page's
// poll, so that "within one discovery interval" can be told apart from the page's own
// delay), checkpoints every 500 ms.
const browserJob = `
SET 'execution.checkpointing.interval' = '500 ms';
SET 'state.checkpoints.dir' = '%[2]s';
SET 'execution.checkpointing.savepoint-dir' = '%[3]s';
CREATE TABLE events (
  user_id STRING,
  ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '%[1]s',
  'properties.group.id' = 'console', 'scan.startup.mode' = 'earliest-offset',
  'scan.topic-partition-discovery.interval' = '2 s', 'format' = 'json'
);
CREATE TABLE per_minute (window_start TIMESTAMP_LTZ(3), events BIGINT, users BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'per_minute', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json'
);
INSERT INTO per_minute
SELECT window_start, COUNT(*), COUNT(DISTINCT user_id)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;
`

// browser starts Debian's chromium headless on a fresh profile; the test is skipped
// without it (.ci/run installs it).
func browser(t testing.TB) context.Context {
	t.Helper()
	path, err := osexec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1700),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// waitPage evaluates js in the page until check accepts its result.
func waitPage[T any](t *testing.T, ctx context.Context, what, js string, check func(T) bool) T {
	t.Helper()
	var v T
	var lastErr error
	deadline := time.Now().Add(60 * time.Second)
	for {
		var got T
		got, lastErr = chromedp.Run(ctx, chromedp.Evaluate[T](js))
		if lastErr == nil {
			v = got
			if check(got) {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the page shows %+v (%v)", what, v, lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type pageSplit struct {
	Split                  string
	Offset, EndOffset, Lag string
}

type pageNode struct {
	Kind, In, Out string
}

// sameInstant reports whether the print connector's instant ("2024-05-01T12:30:00Z")
// and the json format's ("2024-05-01 12:30:00Z", or with a fraction) are one time.
func sameInstant(printed, encoded string) bool {
	a, err1 := time.Parse(time.RFC3339Nano, printed)
	b, err2 := time.Parse("2006-01-02 15:04:05.999999999Z07:00", encoded)
	return err1 == nil && err2 == nil && a.Equal(b)
}

// leads reports whether node leads a partition of topic.
func leads(c *kafkatest.Cluster, topic string, parts int32, node int32) bool {
	for p := range parts {
		if c.Kfake().LeaderFor(topic, p) == node {
			return true
		}
	}
	return false
}

// discoveries is how many partition discoveries the job's Kafka source has made.
func discoveries(t *testing.T, j *engine.Job) int {
	t.Helper()
	for _, src := range j.Exec().Metrics().Sources {
		for _, ms := range src.Connector {
			if ms.Name == "discovery_attempts_total" && ms.Split == "" {
				return int(ms.Value)
			}
		}
	}
	t.Fatal("the source reports no discovery_attempts_total")
	return 0
}

// TestBrowserConsole drives the page in headless Chromium against a job on an
// in-process Kafka cluster: the lag table shows each partition's offsets as produced,
// the graph the records the scan read, the charts their points; removing the broker
// turns the status DEGRADED on the page; stop with savepoint from the page writes one.
func TestBrowserConsole(t *testing.T) {
	ctx := browser(t)
	const parts = 4
	c := kafkatest.NewCluster(t, 12) // the incident's cluster: 4 of its 12 brokers go
	c.CreateTopic(t, "events", parts)
	c.CreateTopic(t, "per_minute", 1)
	start := time.Now().Add(-10 * time.Minute)
	produced := map[string]int{}
	total := 0
	var rs []kafkatest.Record
	for p := range parts {
		n := 40 + 15*p
		for i := range n {
			rs = append(rs, kafkatest.Record{Partition: int32(p),
				Value: fmt.Appendf(nil, `{"user_id":"u%d","ts":%d}`, i%17, start.Add(time.Duration(total+i)*100*time.Millisecond).UnixMilli())})
		}
		produced[fmt.Sprintf("events-%d", p)] = n
		total += n
	}
	c.Produce(t, "events", rs...)

	ckpt, sp := t.TempDir(), t.TempDir()
	e, base := serve(t, Options{})
	j, err := e.Submit(context.Background(), plan(t, fmt.Sprintf(browserJob, c.Bootstrap(), ckpt, sp)))
	if err != nil {
		t.Fatal(err)
	}
	// The jobs list, and its link to the job's page.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	row := waitPage(t, ctx, "the job in the jobs list", `[...document.querySelectorAll('#jobs-table tbody tr')].map(r => r.dataset.job + ' ' + r.cells[1].textContent + ' ' + r.querySelector('.badge').textContent)`,
		func(rows []string) bool { return len(rows) == 1 && rows[0] == j.ID()+" insert-into_per_minute RUNNING" })
	t.Logf("jobs list: %q", row)
	if err := chromedp.Do(ctx, chromedp.Click("#jobs-table tbody a")); err != nil {
		t.Fatal(err)
	}

	// The lag table: every partition read to its end, as produced.
	splits := waitPage(t, ctx, "the lag table at the end of each partition", `[...document.querySelectorAll('#lag-table tbody tr')].map(r => ({
		Split: r.dataset.split, Offset: r.querySelector('[data-col=offset]').textContent,
		EndOffset: r.querySelector('[data-col=end_offset]').textContent, Lag: r.querySelector('[data-col=lag]').textContent}))`,
		func(ss []pageSplit) bool {
			if len(ss) != parts {
				return false
			}
			for _, s := range ss {
				n := strconv.Itoa(produced[s.Split])
				if s.Offset != n || s.EndOffset != n || s.Lag != "0" {
					return false
				}
			}
			return true
		})
	t.Logf("lag table: %+v", splits)

	// The graph: the scan read every record; the window aggregate is a task of its own.
	nodes := waitPage(t, ctx, "the graph with the records read", `[...document.querySelectorAll('#graph g.node')].map(g => ({
		Kind: g.dataset.kind, In: g.dataset.recordsIn, Out: g.dataset.recordsOut}))`,
		func(ns []pageNode) bool {
			for _, n := range ns {
				if n.Kind == "TableSourceScan" && n.In == strconv.Itoa(total) {
					return true
				}
			}
			return false
		})
	kinds := map[string]pageNode{}
	for _, n := range nodes {
		kinds[n.Kind] = n
	}
	if agg, ok := kinds["WindowAggregate"]; !ok || agg.In != strconv.Itoa(total) {
		t.Errorf("graph %+v: want a WindowAggregate that saw the %d records", nodes, total)
	}

	// The checkpoint table and the SQL.
	waitPage(t, ctx, "completed checkpoints in the table", `[...document.querySelectorAll('#ckpt-table tbody tr')].map(r => r.cells[5].textContent)`,
		func(rs []string) bool { return len(rs) > 0 && rs[0] == "completed" })
	waitPage(t, ctx, "the job's SQL", `document.getElementById('sql').textContent`,
		func(s string) bool {
			return strings.Contains(s, "COUNT(DISTINCT user_id)") && strings.Contains(s, "INSERT INTO per_minute")
		})

	// More records while the page watches: the throughput chart draws them; the lag,
	// watermark delay and checkpoint charts have points.
	feed := make(chan struct{})
	fed := make(chan int)
	go func() {
		n := 0
		defer func() { fed <- n }()
		for {
			select {
			case <-feed:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var rs []kafkatest.Record
			for i := range 20 {
				rs = append(rs, kafkatest.Record{Partition: int32(i % parts),
					Value: fmt.Appendf(nil, `{"user_id":"v%d","ts":%d}`, i, time.Now().Add(-time.Minute).UnixMilli())})
			}
			if c.TryProduce("events", rs...) != nil {
				return
			}
			n += len(rs)
		}
	}()
	type chart struct{ Points, Max string }
	charts := waitPage(t, ctx, "the charts", `Object.fromEntries(['throughput', 'lag', 'wmdelay', 'ckpt'].map(k => {
		const c = document.getElementById('chart-' + k); return [k, {Points: c.dataset.points || '', Max: c.dataset.max || ''}]; }))`,
		func(cs map[string]chart) bool {
			for _, k := range []string{"throughput", "lag", "wmdelay", "ckpt"} {
				if n, _ := strconv.Atoi(cs[k].Points); n < 2 {
					return false
				}
			}
			max, _ := strconv.ParseFloat(cs["throughput"].Max, 64)
			return max > 0
		})
	t.Logf("charts: %+v", charts)

	// The results table: the windows the sink wrote, newest first, are the last records
	// of its topic.
	type pageRow struct{ Kind, Start, Events, Users string }
	shownRows := waitPage(t, ctx, "the windows written in the results table", `[...document.querySelectorAll('#results .results[data-table=per_minute] tbody tr')].map(tr => ({
		Kind: tr.cells[0].textContent, Start: tr.cells[1].textContent, Events: tr.cells[2].textContent, Users: tr.cells[3].textContent}))`,
		func(rs []pageRow) bool { return len(rs) > 0 })
	var written []pageRow
	for _, r := range c.ReadAll(t, "per_minute") {
		var w struct {
			Start         string `json:"window_start"`
			Events, Users int64
		}
		if err := json.Unmarshal(r.Value, &w); err != nil {
			t.Fatalf("a record of per_minute: %v: %s", err, r.Value)
		}
		written = append([]pageRow{{"+I", w.Start, strconv.FormatInt(w.Events, 10), strconv.FormatInt(w.Users, 10)}}, written...)
	}
	if len(written) < len(shownRows) {
		t.Fatalf("the page shows %d windows, the topic has %d", len(shownRows), len(written))
	}
	for i, r := range shownRows {
		w := written[i]
		if r.Kind != w.Kind || r.Events != w.Events || r.Users != w.Users || !sameInstant(r.Start, w.Start) {
			t.Errorf("results row %d: %+v, the topic's record %+v", i, r, w)
		}
	}
	t.Logf("results: %+v", shownRows)
	if *screenshot != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*screenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	close(feed)
	t.Logf("%d more records produced while the page was open", <-fed)

	// Four of the twelve brokers are decommissioned, as in the incident, and the
	// partitions they led lose their leader (one replica each). The next partition
	// discovery finds them so, and the page says DEGRADED naming them, within one
	// discovery interval: at most the listing after the removal, one that was in
	// flight, and one more while the job and the page poll. When the brokers come
	// back, the next discovery finds the leaders and the page says RUNNING.
	status := `document.getElementById('job-status').textContent + ': ' + document.getElementById('job-reason').textContent`
	var gone []int32
	for p := range int32(parts) {
		if l := c.Kfake().LeaderFor("events", p); p%2 == 1 && !slices.Contains(gone, l) {
			gone = append(gone, l)
		}
	}
	for _, n := range c.Nodes() {
		if len(gone) < 4 && !slices.Contains(gone, n) && !leads(c, "events", parts, n) {
			gone = append(gone, n)
		}
	}
	before, at := discoveries(t, j), time.Now()
	leaderless, restoreBrokers, err := c.Decommission("events", gone...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range leaderless {
		names = append(names, fmt.Sprintf("events-%d", p))
	}
	want := fmt.Sprintf("%d partitions without a leader, not read until one is elected: %s", len(leaderless), strings.Join(names, ", "))
	shown := waitPage(t, ctx, "DEGRADED with the leaderless partitions", status,
		func(s string) bool { return strings.HasPrefix(s, "DEGRADED: ") && strings.Contains(s, want) })
	if n := discoveries(t, j) - before; n > 3 {
		t.Errorf("the page showed %q after %d partition discoveries, want it within one discovery interval (at most 3)", shown, n)
	}
	t.Logf("brokers %v decommissioned: on the page %s later (%d discoveries): %s", gone,
		time.Since(at).Round(100*time.Millisecond), discoveries(t, j)-before, shown)
	before, at = discoveries(t, j), time.Now()
	if err := restoreBrokers(); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "RUNNING with the brokers back", status, func(s string) bool { return s == "RUNNING: " })
	if n := discoveries(t, j) - before; n > 3 {
		t.Errorf("the page showed RUNNING after %d partition discoveries, want it within one discovery interval (at most 3)", n)
	}
	t.Logf("brokers back: RUNNING on the page %s later", time.Since(at).Round(100*time.Millisecond))

	// Every broker unreachable: DEGRADED, no broker reachable. Back: RUNNING again,
	// although nobody writes to the topic any more and so no record says so.
	restore := c.Outage()
	at = time.Now()
	reason := waitPage(t, ctx, "DEGRADED without a broker", status,
		func(s string) bool {
			return strings.HasPrefix(s, "DEGRADED") && strings.Contains(s, "no broker reachable")
		})
	t.Logf("%s: on the page %s after the last broker went away", reason, time.Since(at).Round(100*time.Millisecond))
	records := j.Status().Records
	restore()
	at = time.Now()
	waitPage(t, ctx, "RUNNING after the outage", status, func(s string) bool { return s == "RUNNING: " })
	t.Logf("brokers reachable: RUNNING on the page %s later", time.Since(at).Round(100*time.Millisecond))
	if r := j.Status().Records; r != records {
		t.Errorf("%d records read after the outage, want none (%d before): the topic is idle", r-records, records)
	}

	// Stop with savepoint, confirmed in the dialog.
	if err := chromedp.Do(ctx, chromedp.Click("#btn-stop"), chromedp.WaitVisible("#confirm-ok"),
		chromedp.Click("#confirm-ok")); err != nil {
		t.Fatal(err)
	}
	path := waitPage(t, ctx, "the savepoint's path on the page", `document.getElementById('action-result').dataset.savepoint || document.getElementById('action-result').textContent`,
		func(s string) bool { _, err := os.Stat(s); return err == nil })
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if st := j.Status(); st.State != "FINISHED" || st.Savepoint != path {
		t.Errorf("after the stop from the page: %s, savepoint %q; want FINISHED with %s", st.State, st.Savepoint, path)
	}
	waitPage(t, ctx, "FINISHED on the page", `document.getElementById('job-status').textContent`, func(s string) bool { return s == "FINISHED" })
}
