package kafka

import (
	"context"
	"log/slog"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
)

// logLevel maps a librdkafka log level (syslog's: 0 emergency to 7 debug) to slog's.
func logLevel(syslog int) slog.Level {
	switch {
	case syslog <= 3: // emergency, alert, critical, error
		return slog.LevelError
	case syslog == 4: // warning
		return slog.LevelWarn
	case syslog <= 6: // notice, info
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// forwardLogs passes the log lines of a source's or sink's librdkafka clients (each
// client logs to the channel with its own name) to the job's log until quit is closed.
// When the job's logger takes levels (connectors.LevelLogger, as the runtime's does),
// each line keeps librdkafka's level, so that --log-level filters them like pipesql's
// own; the job's log handler folds repeats (a broker that stays down reconnects, and
// logs, every few seconds). Otherwise warnings and worse go to Warn and the rest is
// dropped as debugging detail.
func forwardLogs(logs <-chan ckafka.LogEvent, quit <-chan struct{}, log connectors.Logger, table string) {
	ll, leveled := log.(connectors.LevelLogger)
	for {
		select {
		case <-quit:
			return
		case ev := <-logs:
			args := []any{"table", table, "client", ev.Name, "tag", ev.Tag}
			switch {
			case leveled:
				ll.Log(context.Background(), logLevel(ev.Level), "librdkafka: "+ev.Message, args...)
			case ev.Level <= 4:
				log.Warn("librdkafka: "+ev.Message, args...)
			}
		}
	}
}
