package obs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualTime is a time the test moves by hand.
type manualTime struct {
	mu sync.Mutex
	t  time.Time
}

func (m *manualTime) now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t
}

func (m *manualTime) advance(d time.Duration) {
	m.mu.Lock()
	m.t = m.t.Add(d)
	m.mu.Unlock()
}

// jsonLines decodes the JSON log lines of buf.
func jsonLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// A broker that stays down makes librdkafka log the same line again and again; the log
// shows it once per window, then once with the count of the lines it did not write.
func TestDedupFoldsRepeats(t *testing.T) {
	clock := &manualTime{t: t0}
	var buf bytes.Buffer
	log, dedup, err := NewLogger(&buf, LogOptions{Format: "json", Level: "info", DedupWindow: 30 * time.Second, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	kafka := log.With("table", "events")
	for i := range 1000 {
		// The numbers in the message differ; the line is the same.
		kafka.Error(fmt.Sprintf("librdkafka: localhost:9092/0: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after %dms in state CONNECT)", i),
			"client", "pipesql-events#consumer-1", "tag", "FAIL")
		clock.advance(10 * time.Millisecond)
	}
	// Another client's line is another line.
	kafka.Error("librdkafka: localhost:9092/0: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)",
		"client", "pipesql-events#producer-2")
	lines := jsonLines(t, &buf)
	if len(lines) != 2 {
		t.Fatalf("%d lines within the window, want 2 (one per client):\n%s", len(lines), buf.String())
	}
	if lines[0]["table"] != "events" || lines[0]["level"] != "ERROR" || !strings.Contains(lines[0]["msg"].(string), "after 0ms") {
		t.Errorf("first line %v", lines[0])
	}

	// After the window, the next repeat brings the count of the ones folded, then
	// itself as the first of a new window.
	clock.advance(30 * time.Second)
	kafka.Error("librdkafka: localhost:9092/0: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 1000ms in state CONNECT)",
		"client", "pipesql-events#consumer-1", "tag", "FAIL")
	lines = jsonLines(t, &buf)
	if len(lines) != 4 {
		t.Fatalf("%d lines after the window, want 4:\n%s", len(lines), buf.String())
	}
	if lines[2]["suppressed"] != 999.0 || !strings.Contains(lines[2]["msg"].(string), "after 999ms") || lines[2]["client"] != "pipesql-events#consumer-1" {
		t.Errorf("summary %v, want the last folded line (after 999ms) with suppressed=999", lines[2])
	}
	if _, ok := lines[3]["suppressed"]; ok || !strings.Contains(lines[3]["msg"].(string), "after 1000ms") {
		t.Errorf("after the summary %v, want the line of 1000ms as a new line", lines[3])
	}

	// Flush at exit writes what is still folded.
	for range 5 {
		kafka.Error("librdkafka: again", "client", "c")
	}
	dedup.Flush(context.Background())
	lines = jsonLines(t, &buf)
	last := lines[len(lines)-1]
	if last["msg"] != "librdkafka: again" || last["suppressed"] != 4.0 {
		t.Errorf("after Flush: %v, want the folded line with suppressed=4", last)
	}
}

// Lines that differ in their text attributes (a table, a partition, an error) are
// different lines; levels too.
func TestDedupKeepsDifferentLines(t *testing.T) {
	clock := &manualTime{t: t0}
	var buf bytes.Buffer
	log, _, err := NewLogger(&buf, LogOptions{Level: "debug", Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	log.Warn("partition error", "partition", "events-1")
	log.Warn("partition error", "partition", "events-2")
	log.Info("partition error", "partition", "events-2")
	log.Warn("commit failed", "err", errors.New("coordinator not available"))
	log.Warn("commit failed", "err", errors.New("request timed out"))
	log.Warn("commit failed", "err", errors.New("request timed out after 5000ms"))
	log.Warn("commit failed", "err", errors.New("request timed out after 30000ms"))
	log.WithGroup("kafka").Warn("partition error", "partition", "events-1")
	log.Info("checkpoint completed", "checkpoint", 1, "took", 3*time.Millisecond)
	log.Info("checkpoint completed", "checkpoint", 2, "took", 3*time.Millisecond)
	log.Info("checkpoint completed", "checkpoint", 2, "took", 3*time.Millisecond)
	if n := strings.Count(buf.String(), "\n"); n != 9 {
		t.Errorf("%d lines, want 9 (the timeout after 30000ms and checkpoint 2 repeat lines):\n%s", n, buf.String())
	}
}

func TestLogOptions(t *testing.T) {
	var buf bytes.Buffer
	if _, _, err := NewLogger(&buf, LogOptions{Format: "xml"}); !errors.Is(err, ErrLogOptions) || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("format xml: %v", err)
	}
	if _, _, err := NewLogger(&buf, LogOptions{Level: "loud"}); !errors.Is(err, ErrLogOptions) || !strings.Contains(err.Error(), "debug, info, warn or error") {
		t.Errorf("level loud: %v", err)
	}
	log, d, err := NewLogger(&buf, LogOptions{DedupWindow: -1})
	if err != nil || d != nil {
		t.Fatalf("dedup off: %v, %v", d, err)
	}
	log.Info("hidden")
	log.Warn("shown", "k", "v")
	log.Warn("shown", "k", "v")
	if got := buf.String(); strings.Contains(got, "hidden") || strings.Count(got, "level=WARN msg=shown k=v") != 2 {
		t.Errorf("default level warn, text, no folding:\n%s", got)
	}
	for in, want := range map[string]slog.Level{"DEBUG": slog.LevelDebug, "info": slog.LevelInfo, "warning": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
}

// What goes through a StatusLine's writers appears above the line, which is drawn again
// under it; a partial line is not broken by a redraw.
func TestStatusLine(t *testing.T) {
	var term bytes.Buffer
	l := NewStatusLine(&term)
	out := l.Writer(&term)
	l.Set("RUNNING | 1 records")
	out.Write([]byte("+I[a]\n"))
	l.Set("RUNNING | 2 records")
	out.Write([]byte("+I[b"))
	l.Set("RUNNING | 3 records") // waits for the end of the row
	out.Write([]byte("]\n"))
	l.Done()
	want := "\r\x1b[KRUNNING | 1 records" +
		"\r\x1b[K+I[a]\n\r\x1b[KRUNNING | 1 records" +
		"\r\x1b[KRUNNING | 2 records" +
		"\r\x1b[K+I[b" +
		"]\n\r\x1b[KRUNNING | 3 records" +
		"\n"
	if got := term.String(); got != want {
		t.Errorf("terminal got\n%q\nwant\n%q", got, want)
	}
}
