package connectors

import (
	"context"
	"log/slog"
)

// MeasureKind says how a Measure behaves over time.
type MeasureKind uint8

const (
	// Counter only grows while the connector is open (records, failures).
	Counter MeasureKind = iota
	// Gauge goes up and down (lag, partitions, seconds since something happened).
	Gauge
	// Histogram is a distribution of observations (durations): Value is their sum,
	// Count their number and Buckets the cumulative counts.
	Histogram
)

func (k MeasureKind) String() string {
	switch k {
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	}
	return "counter"
}

// Bucket is one bucket of a Histogram measure: how many observations were at most
// UpperBound.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Measure is one number a connector reports about itself beyond the rows it returns:
// bytes read, partition discovery failures, commit failures, the lag of a split.
type Measure struct {
	// Name is snake_case with its unit last, as Prometheus names are: "lag_records",
	// "discovery_failures_total". The runtime exports it as pipesql_source_<Name> (or
	// pipesql_sink_<Name>) with the job, table and split as labels.
	Name string
	// Help says what the number means, in one line.
	Help string
	Kind MeasureKind
	// Split is the split the measure describes (a Kafka partition, "topic-3"), "" when
	// it describes the whole connector.
	Split string
	Value float64
	// Count and Buckets belong to a Histogram: the number of observations and the
	// cumulative count per upper bound (the +Inf bucket is Count).
	Count   uint64
	Buckets []Bucket
}

// Reporter is an optional interface of sources (and sinks) that measure more than the
// runtime counts by itself. The runtime calls Report from the connector's goroutine,
// like the other methods, after a Poll (at most about ten times a second while rows
// flow), or after a sink's Write (as often) and after its PrepareCommit and
// CheckpointComplete, so Report may read the connector's own state without locks; it
// must not wait on the network. The runtime shows the measures in the job's metrics as
// they are (pipesql_source_<Name>, pipesql_sink_<Name>).
type Reporter interface {
	Report() []Measure
}

// Measure names with a meaning the runtime and the progress display rely on. A
// connector that reports them reports them per split.
const (
	// MeasureLag is how many records of a split are after the read position: the end
	// of the split (a Kafka partition's high watermark) minus the next offset to read.
	MeasureLag = "lag_records"
	// MeasureOffset is the next offset a split will read.
	MeasureOffset = "offset"
	// MeasureEndOffset is the end of a split as last seen (a partition's high watermark).
	MeasureEndOffset = "end_offset"
)

// LevelLogger is implemented by Loggers that log at any slog level, so that a connector
// can pass on the log lines of the client library it wraps (librdkafka's) at their own
// levels. Connectors find it by a type assertion on SourceConfig.Log or SinkConfig.Log.
type LevelLogger interface {
	Logger
	Log(ctx context.Context, level slog.Level, msg string, args ...any)
}
