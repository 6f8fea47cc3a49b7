package kafka

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// levelLog is a connectors.LevelLogger that keeps the records it is given.
type levelLog struct {
	mu      sync.Mutex
	records []string
}

func (l *levelLog) add(level slog.Level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, level.String()+" "+msg)
}

func (l *levelLog) Warn(msg string, args ...any) { l.add(slog.LevelWarn, msg) }
func (l *levelLog) Info(msg string, args ...any) { l.add(slog.LevelInfo, msg) }
func (l *levelLog) Log(_ context.Context, level slog.Level, msg string, args ...any) {
	l.add(level, msg)
}

// librdkafka's log lines reach a leveled log at their own levels (syslog's, 0 to 7);
// a log without levels gets the warnings and worse as warnings.
func TestForwardLogsLevels(t *testing.T) {
	events := []ckafka.LogEvent{
		{Name: "c#consumer-1", Tag: "FAIL", Message: "connect failed", Level: 3},
		{Name: "c#consumer-1", Tag: "REQTMOUT", Message: "timed out", Level: 4},
		{Name: "c#consumer-1", Tag: "CONFWARN", Message: "notice", Level: 5},
		{Name: "c#consumer-1", Tag: "INIT", Message: "info", Level: 6},
		{Name: "c#consumer-1", Tag: "FETCH", Message: "debug", Level: 7},
		{Name: "c#consumer-1", Tag: "FATAL", Message: "critical", Level: 2},
	}
	run := func(log interface {
		Warn(string, ...any)
		Info(string, ...any)
	}) {
		ch := make(chan ckafka.LogEvent)
		quit := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			forwardLogs(ch, quit, log, "events")
		}()
		for _, ev := range events {
			ch <- ev
		}
		close(quit)
		<-done
	}

	leveled := &levelLog{}
	run(leveled)
	want := []string{
		"ERROR librdkafka: connect failed", "WARN librdkafka: timed out", "INFO librdkafka: notice",
		"INFO librdkafka: info", "DEBUG librdkafka: debug", "ERROR librdkafka: critical",
	}
	if len(leveled.records) != len(want) {
		t.Fatalf("records %q, want %q", leveled.records, want)
	}
	for i := range want {
		if leveled.records[i] != want[i] {
			t.Errorf("record %d: %q, want %q", i, leveled.records[i], want[i])
		}
	}

	plain := &testLog{t: t}
	run(plain)
	if got := len(plain.lines); got != 3 {
		t.Errorf("a log without levels got %q, want the error, the warning and the critical line", plain.lines)
	}
}
