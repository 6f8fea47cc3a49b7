package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// metricValue scrapes url and returns the value of the series name whose labels include
// every "k=v" of want.
func metricValue(t *testing.T, url, name string, want ...string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if labels[k] != v {
				continue next
			}
		}
		return m.GetCounter().GetValue() + m.GetGauge().GetValue(), true
	}
	return 0, false
}

// jsonLogLines decodes the lines of a JSON log, failing on one that is not JSON.
func jsonLogLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// pipesql run with SET 'metrics.address' serves the job's metrics and status, logs JSON
// with --log-format json, and logs the progress when stderr is not a terminal.
func TestRunServesMetricsAndLogsProgress(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 2)
	var rs []kafkatest.Record
	for i := range 60 {
		rs = append(rs, kafkatest.Record{Partition: int32(i % 2), Value: []byte(fmt.Sprintf(`{"user_id":"u-%d"}`, i))})
	}
	c.Produce(t, "events", rs...)
	job := writeJob(t, fmt.Sprintf(`
SET 'metrics.address' = '127.0.0.1:0';
CREATE TABLE events (user_id STRING) WITH (
  'connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE sink (user_id STRING) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT user_id FROM events;
`, c.Bootstrap()))
	p := startPipesql(t, "run", job, "--log-format", "json", "--log-level", "info", "--progress-interval", "200ms")

	var base string
	eventuallyTrue(t, "the metrics address in the log", func() bool {
		p.failIfExited()
		line, ok := p.stderr.first(`"serving metrics and job status"`)
		if !ok {
			return false
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line.text), &rec); err != nil {
			t.Fatalf("log line %q: %v", line.text, err)
		}
		base = strings.TrimSuffix(fmt.Sprint(rec["metrics"]), "/metrics")
		return true
	})
	eventuallyTrue(t, "every record in the metrics, without lag", func() bool {
		p.failIfExited()
		n, _ := metricValue(t, base+"/metrics", "pipesql_source_records_total", "table=events")
		lag, ok := metricValue(t, base+"/metrics", "pipesql_job_lag_records")
		return n == 60 && ok && lag == 0
	})
	for _, part := range []string{"events-0", "events-1"} {
		if v, ok := metricValue(t, base+"/metrics", "pipesql_source_offset", "split="+part); v != 30 {
			resp, _ := http.Get(base + "/metrics")
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("offset of %s = %v (%v), want 30\n%s", part, v, ok, body)
		}
	}
	resp, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs []struct {
			Name    string `json:"name"`
			State   string `json:"state"`
			Records int64  `json:"records"`
		} `json:"jobs"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || len(doc.Jobs) != 1 || doc.Jobs[0].Name != "insert-into_sink" || doc.Jobs[0].State != "RUNNING" || doc.Jobs[0].Records != 60 {
		t.Errorf("/status: %+v (%v)", doc, err)
	}
	eventuallyTrue(t, "a progress record with every record", func() bool {
		p.failIfExited()
		_, ok := p.stderr.first(`"msg":"progress"`, `"state":"RUNNING"`, `"records":60`, `"lag":0`)
		return ok
	})

	r := p.stop()
	if r.code != 0 {
		t.Fatalf("exit %d after SIGTERM\nstderr: %s", r.code, r.stderr)
	}
	for _, rec := range jsonLogLines(t, r.stderr) {
		if rec["msg"] == "progress" && rec["job"] != "insert-into_sink" {
			t.Errorf("progress record of job %v", rec["job"])
		}
	}
}

// Bad observability flags are usage errors that say what is wrong.
func TestObserveFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	job := writeJob(t, `CREATE TABLE t (a INT) WITH ('connector' = 'blackhole'); INSERT INTO t VALUES (1);`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-format", "xml"}, `log format "xml" (want text or json)`},
		{[]string{"--log-level", "loud"}, `log level "loud" (want debug, info, warn or error)`},
		{[]string{"--progress", "sometimes"}, `--progress "sometimes": want auto, line, log or off`},
		{[]string{"--metrics-addr", busy.Addr().String()}, "--metrics-addr: cannot serve metrics: " + busy.Addr().String()},
		{[]string{"--web-addr", "0.0.0.0:0"}, "--web-addr: address is not loopback: 0.0.0.0:0"},
		{[]string{"--web-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:1"}, "the console and the metrics share one server"},
	} {
		r := pipesql(t, append([]string{"run", job}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("run %v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// On a terminal, pipesql run redraws its progress line in place at the bottom; printed
// rows scroll above it, and the final state stays on the screen.
func TestRunProgressLineOnTerminal(t *testing.T) {
	job := writeJob(t, `
CREATE TABLE clicks (user_num INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', 'rows-per-second' = '1000',
  'fields.user_num.min' = '1', 'fields.user_num.max' = '3');
CREATE TABLE users (user_num INT, clicks BIGINT) WITH ('connector' = 'print');
INSERT INTO users SELECT user_num, COUNT(*) FROM clicks GROUP BY user_num;
`)
	cmd := exec.Command(binary, "run", job, "--progress-interval", "100ms")
	cmd.Dir = t.TempDir()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, f) // ends with EIO once the process exits
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("exit %d:\n%s", exitErr.ExitCode(), out.String())
		}
	case <-time.After(kafkaDeadline):
		cmd.Process.Kill()
		t.Fatalf("pipesql run did not finish:\n%q", out.String())
	}
	<-copied
	screen := out.String()
	if !strings.Contains(screen, "\r\x1b[KRUNNING | ") {
		t.Errorf("no RUNNING progress line drawn in place:\n%q", screen)
	}
	if !strings.Contains(screen, "\r\x1b[KFINISHED | 3,000 records in ") || !strings.HasSuffix(strings.TrimRight(screen, "\r\n"), "0 restarts") {
		t.Errorf("the final line is not FINISHED with every record:\n%q", screen)
	}
	// Every printed row starts a line of its own: the status line was erased before it.
	for _, line := range strings.Split(screen, "\n") {
		if i := strings.Index(line, "+I["); i > 0 && !strings.HasSuffix(line[:i], "\r\x1b[K") {
			t.Errorf("a row shares a line with the status line: %q", line)
		}
	}
	if !strings.Contains(screen, "+I[") && !strings.Contains(screen, "+U[") {
		t.Errorf("no printed rows:\n%q", screen)
	}
}
