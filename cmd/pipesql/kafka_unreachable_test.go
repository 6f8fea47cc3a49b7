package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// A job whose brokers cannot be reached waits for them, naming each broker it tried; a
// SIGTERM ends that wait and the process exits cleanly, instead of hanging on the
// startup retries.
func TestKafkaUnreachableBrokersStopOnSIGTERM(t *testing.T) {
	// Two ports that nothing listens on: bind, note the address, close.
	var addrs []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		l.Close()
	}
	job := writeJob(t, fmt.Sprintf(`
CREATE TABLE src (user_id STRING) WITH (
  'connector' = 'kafka', 'topic' = 'events',
  'properties.bootstrap.servers' = '%s',
  'properties.group.id' = 'g', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json',
  'properties.default.api.timeout.ms' = '2000');
CREATE TABLE dst (user_id STRING) WITH ('connector' = 'blackhole');
INSERT INTO dst SELECT user_id FROM src;
`, strings.Join(addrs, ",")))
	p := startPipesql(t, "run", "--log-level", "info", job)
	deadline := time.Now().Add(kafkaDeadline)
	const warning = "no broker reachable (tried "
	for !strings.Contains(p.stderr.String(), warning) && p.running() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !p.running() {
		t.Fatalf("the job ended before it was stopped: %s", p.stderr)
	}
	line := p.stderr.String()
	line = line[strings.Index(line, warning):]
	line = line[:strings.IndexByte(line+"\n", '\n')]
	for _, a := range addrs {
		if !strings.Contains(line, a) {
			t.Errorf("the warning does not name broker %s: %s", a, line)
		}
	}
	r := p.stop()
	if r.code != 0 {
		t.Errorf("after SIGTERM: exit %d, want 0\nstderr: %s", r.code, r.stderr)
	}
}
