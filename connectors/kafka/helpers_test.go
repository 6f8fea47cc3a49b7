package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	_ "github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/types"
)

// testDeadline bounds how long a test waits for something that must happen; reaching
// it fails the test. It is not a timing threshold: healthy runs finish far sooner.
const testDeadline = 60 * time.Second

// testLog is a connectors.Logger that keeps every line and shows warnings in the test
// log while the test runs.
type testLog struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
	done  bool
}

func newTestLog(t testing.TB) *testLog {
	l := &testLog{t: t}
	t.Cleanup(func() {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	})
	return l
}

func (l *testLog) add(level, msg string, args []any) {
	var b strings.Builder
	b.WriteString(level + " " + msg)
	for i := 0; i+1 < len(args); i += 2 {
		fmt.Fprintf(&b, " %v=%v", args[i], args[i+1])
	}
	line := b.String()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if level == "WARN" && !l.done {
		l.t.Logf("%s", line)
	}
}

func (l *testLog) Warn(msg string, args ...any) { l.add("WARN", msg, args) }
func (l *testLog) Info(msg string, args ...any) { l.add("INFO", msg, args) }

func (l *testLog) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// eventSchema is the physical schema of the test topics' JSON records.
var eventSchema = types.Schema{
	{Name: "id", Type: types.TypeBigInt},
	{Name: "user", Type: types.TypeString},
	{Name: "n", Type: types.TypeInt},
}

func eventJSON(id int) []byte {
	return []byte(fmt.Sprintf(`{"id":%d,"user":"u%d","n":%d}`, id, id%7, id%100))
}

// produceEvents writes events ids [from, to) round-robin over partitions.
func produceEvents(t testing.TB, c *kafkatest.Cluster, topic string, partitions int32, from, to int) {
	t.Helper()
	var rs []kafkatest.Record
	for id := from; id < to; id++ {
		rs = append(rs, kafkatest.Record{Partition: int32(id) % partitions, Value: eventJSON(id)})
	}
	c.Produce(t, topic, rs...)
}

// physical returns produced columns for every physical column of eventSchema.
func physical() []connectors.ProducedColumn {
	out := make([]connectors.ProducedColumn, len(eventSchema))
	for i, c := range eventSchema {
		out[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	return out
}

// sourceConfig is a Kafka source table over topic with the given extra options.
func sourceConfig(c *kafkatest.Cluster, log *testLog, topic string, extra map[string]string) connectors.SourceConfig {
	opts := map[string]string{
		"connector":                    "kafka",
		"topic":                        topic,
		"properties.bootstrap.servers": c.Bootstrap(),
		"scan.startup.mode":            "earliest-offset",
		"format":                       "json",
		"scan.topic-partition-discovery.interval": "1 s",
		"properties.default.api.timeout.ms":       "3000",
		"properties.request.timeout.ms":           "3000",
	}
	for k, v := range extra {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	return connectors.SourceConfig{
		TableInfo: connectors.TableInfo{Name: "events", Options: opts, Schema: eventSchema},
		Produce:   physical(),
		// Checkpointing on: offsets are committed only by CheckpointComplete, so tests
		// sharing a group do not see each other's periodic commits.
		Settings: map[string]string{"execution.checkpointing.interval": "1 min"},
		Log:      log,
	}
}

func openSource(t testing.TB, cfg connectors.SourceConfig) *Source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open source: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reader collects rows from a source and checks that no record arrives twice.
type reader struct {
	t    testing.TB
	src  *Source
	rows map[int64]types.Row // by id
	// bySplit counts rows per split, to check batches name the partition a row is from.
	bySplit map[string]int
}

func newReader(t testing.TB, src *Source) *reader {
	return &reader{t: t, src: src, rows: map[int64]types.Row{}, bySplit: map[string]int{}}
}

// poll runs one Poll and records its rows; it returns Poll's error.
func (r *reader) poll() error {
	r.t.Helper()
	batches, err := r.src.Poll(context.Background(), 100*time.Millisecond)
	for _, b := range batches {
		for _, row := range b.Rows {
			id := row[0].Int()
			if _, dup := r.rows[id]; dup {
				r.t.Errorf("record id %d read twice (split %s)", id, b.Split)
			}
			r.rows[id] = row
			r.bySplit[b.Split]++
		}
	}
	return err
}

// until polls until cond holds, failing the test on a Poll error or at the deadline.
func (r *reader) until(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s: deadline passed; %d rows read; degraded: %q", what, len(r.rows), r.src.Degraded())
		}
		if err := r.poll(); err != nil {
			r.t.Fatalf("waiting for %s: poll: %v", what, err)
		}
	}
}

// count polls until n rows were read.
func (r *reader) count(n int) {
	r.t.Helper()
	r.until(fmt.Sprintf("%d rows", n), func() bool { return len(r.rows) >= n })
	if len(r.rows) != n {
		r.t.Fatalf("read %d rows, want %d", len(r.rows), n)
	}
}

// toEOF polls until the source returns io.EOF.
func (r *reader) toEOF() {
	r.t.Helper()
	deadline := time.Now().Add(testDeadline)
	for {
		if time.Now().After(deadline) {
			r.t.Fatalf("no io.EOF before the deadline; %d rows read", len(r.rows))
		}
		err := r.poll()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			r.t.Fatalf("poll: %v", err)
		}
	}
}

// ids returns whether exactly the ids [from, to) were read.
func (r *reader) checkIDs(from, to int) {
	r.t.Helper()
	if len(r.rows) != to-from {
		r.t.Errorf("read %d rows, want %d", len(r.rows), to-from)
	}
	for id := from; id < to; id++ {
		if _, ok := r.rows[int64(id)]; !ok {
			r.t.Errorf("id %d not read", id)
			return
		}
	}
}

// eventually waits for cond, checking it every few milliseconds, up to the deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: deadline passed", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
