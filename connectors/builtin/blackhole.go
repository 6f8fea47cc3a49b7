package builtin

import (
	"context"

	"github.com/pipesql/pipesql/connectors"
)

var blackholeFactory = &connectors.Factory{
	Name: "blackhole",
	NewSink: func(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
		return &blackholeSink{}, nil
	},
}

// blackholeSink discards every row, inserts and changes alike, as Flink's BlackHole
// connector: for measuring a job without the cost of its output. It counts what it
// dropped so that tests and benchmarks can check rows arrived.
type blackholeSink struct{ rows int64 }

func (s *blackholeSink) Write(ctx context.Context, batch connectors.ChangeBatch) error {
	s.rows += int64(len(batch.Rows))
	return nil
}

func (s *blackholeSink) Flush(context.Context) error { return nil }
func (s *blackholeSink) Close() error                { return nil }

// Rows returns how many rows the sink discarded.
func (s *blackholeSink) Rows() int64 { return s.rows }
