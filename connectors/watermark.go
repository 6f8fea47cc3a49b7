package connectors

import "context"

// WatermarkSink is an optional interface of sinks that act on event time, as the
// filesystem sink commits a partition once the watermark passes it
// ('sink.partition-commit.trigger' = 'partition-time'). The runtime calls Watermark
// from the sink's goroutine with every advance of the sink's input watermark, after
// the rows before it and before the rows after it, so the watermark a sink holds when
// PrepareCommit is called is the watermark of that checkpoint. Watermarks are
// microseconds, the unit of TIMESTAMP values; the end of a bounded input sends
// math.MaxInt64.
type WatermarkSink interface {
	Sink
	Watermark(ctx context.Context, wm int64) error
}
