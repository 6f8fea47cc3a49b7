package exec

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// Metrics is a snapshot of a job's counters, for the progress line, SHOW JOBS and
// Prometheus. Counters start at zero when Run starts.
type Metrics struct {
	Sources     []SourceMetrics
	Operators   []OperatorMetrics
	Checkpoints CheckpointMetrics
}

// CheckpointMetrics describes a job's checkpoints since Run started (they are not reset
// by restarts).
type CheckpointMetrics struct {
	Completed, Failed int64
	// LastID is the id of the last completed checkpoint, 0 before the first.
	LastID uint64
	// LastDuration is from its trigger to its commit; LastWrite the part spent writing
	// to storage in the background.
	LastDuration, LastWrite time.Duration
	// LastBytes is the size of the values it wrote, LastReused how many values it
	// carried over unchanged from the previous checkpoint.
	LastBytes, LastReused int64
	// LastPause is the longest in-line pause an operator took for it (serializing what
	// changed, staging sink output), MaxPause the longest of any checkpoint.
	LastPause, MaxPause time.Duration
	// Restarts counts the restarts under the restart strategy.
	Restarts int
	// RestoredFrom says what the job last started from: "checkpoint" or the savepoint's
	// path, "" when it started from nothing; RestoredID is the checkpoint's id.
	RestoredFrom string
	RestoredID   uint64
	// Resumed is the checkpoint (or savepoint) Run started from, nil when it started
	// from nothing. Restarts within the Run leave it as it is.
	Resumed *ResumeInfo
	// History is the last CheckpointHistory checkpoints that ended, completed or
	// failed, oldest first.
	History []CheckpointRecord
}

// CheckpointRecord is one checkpoint that ended, for the web console's history.
type CheckpointRecord struct {
	ID uint64
	// Triggered is when the barriers were sent, Ended when it committed or failed.
	Triggered, Ended time.Time
	// Bytes is the size it wrote (0 for a failed one), Pause the longest in-line pause
	// an operator took for it.
	Bytes int64
	Pause time.Duration
	// Savepoint is the savepoint exported from it, "" for none; Failure why it
	// failed, "" when it completed.
	Savepoint, Failure string
}

// ResumeInfo describes the saved state a job resumed from.
type ResumeInfo struct {
	// From is "checkpoint" or the savepoint's path; ID the checkpoint's id.
	From string
	ID   uint64
	// Taken is when the checkpoint was written, zero when it does not say.
	Taken time.Time
	// Dir is where it was read from: the checkpoint store's directory or the savepoint.
	Dir string
	// Watermark is the least watermark of the sources it restored, NoWatermark when
	// none had one; Splits counts the splits whose positions it restored.
	Watermark int64
	Splits    int
	// Text says all of it in words: "checkpoint 789 taken 2026-12-01 21:24:08 in DIR
	// (watermark 2026-12-01 21:00:00.000, offsets of 3 partitions)".
	Text string
}

// OperatorMetrics counts what one operator saw, in pipeline order (source task first,
// its sink or collect last).
type OperatorMetrics struct {
	Pipeline   int    // index in Program.Pipelines
	Name       string // "source events", "window aggregate", "sink dau" ...
	RecordsIn  int64
	RecordsOut int64
	// LateDropped counts rows that arrived after every window they belong to had fired.
	LateDropped int64
	// LastLate is the event time of the latest row dropped as late (in the unit of
	// Watermark), NoWatermark before the first: where the late records are in event
	// time, as against the watermark.
	LastLate int64
	// BadRecords counts rows dropped because they cannot be processed, such as a NULL
	// event time.
	BadRecords int64
	// Watermark is the operator's current input watermark in microseconds (TIMESTAMP_LTZ:
	// since the epoch; TIMESTAMP: the wall clock as if UTC), NoWatermark before the first.
	Watermark int64
	// SnapshotPause is how long the operator last stopped processing for a checkpoint
	// (the in-line part: serializing its changed state, staging sink output).
	SnapshotPause time.Duration
	// Backpressured is how long, in all, the operator waited to send downstream because
	// the next operator's input queue was full: Flink's back-pressured time. Its growth
	// per second of wall time is the share of time the operator is backpressured.
	Backpressured time.Duration
	// State is the state an aggregate holds, nil for other operators (see observe.go).
	State *StateMetrics
	// Degraded is the reason a sink's connector reports for working degraded
	// (connectors.Status: a database unreachable while it retries), "" when healthy.
	Degraded string
	// Connector is what a sink's connector last reported about itself
	// (connectors.Reporter: the Kafka sink's transactions), nil for other operators.
	Connector ConnectorReport
}

// SourceMetrics describes one source task.
type SourceMetrics struct {
	Pipeline int
	Table    string
	// RecordsRead counts rows returned by the connector.
	RecordsRead int64
	// Skipped counts records the format could not decode and skipped
	// (json.ignore-parse-errors), as reported by sources implementing SkipCounter.
	Skipped int64
	// NullRowtime counts rows dropped because their event time was NULL.
	NullRowtime int64
	// Watermark is the watermark the source emitted last (NoWatermark before the first).
	Watermark int64
	Splits    []SplitMetrics // sorted by name
	// Degraded is the reason the connector reports for working degraded, "" when healthy.
	Degraded string
	// Connector is what the connector last reported about itself (connectors.Reporter).
	Connector ConnectorReport
}

// SplitMetrics describes one split (a Kafka partition, a file) of a source.
type SplitMetrics struct {
	Split   string
	Records int64
	// Watermark is the largest WATERMARK expression value seen in the split (NoWatermark
	// before its first row).
	Watermark int64
	// Idle is true while the split holds the watermark back no longer.
	Idle bool
	// LastActive is when the split last returned rows (or was first seen).
	LastActive time.Time
	// Position is the split's position as the connector reports it (PositionReporter),
	// "" when the connector does not say.
	Position string
}

// SkipCounter is implemented by sources that skip bad records (a format configured to
// ignore parse errors): the runtime shows the count in Metrics. It is called from the
// source's goroutine, like the other Source methods.
type SkipCounter interface {
	Skipped() int64
}

// PositionReporter is implemented by sources that can say where each split is (a Kafka
// offset, a file line), for Metrics. It is called from the source's goroutine.
type PositionReporter interface {
	SplitPositions() map[string]string
}

// counter is a concurrently readable count.
type counter struct{ n atomic.Int64 }

func (c *counter) add(n int) {
	if c != nil {
		c.n.Add(int64(n))
	}
}
func (c *counter) load() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

// opMetrics is the live counters of one operator.
type opMetrics struct {
	pipeline  int
	name      string
	in, out   counter
	late, bad counter
	lastLate  atomic.Int64
	watermark atomic.Int64
	pause     atomic.Int64 // nanoseconds
	blocked   atomic.Int64 // nanoseconds the output waited downstream (outbox.blocked)
	state     stateSampling
	// status is the open sink's connectors.Status, nil for other operators. It is read
	// from other goroutines, so sinks implement Degraded safely for concurrent use.
	status atomic.Pointer[connectors.Status]
	// conn is what a sink's connector last reported (connectors.Reporter).
	conn connReporting
}

func newOpMetrics(pipeline int, name string) *opMetrics {
	m := &opMetrics{pipeline: pipeline, name: name}
	m.watermark.Store(NoWatermark)
	m.lastLate.Store(NoWatermark)
	return m
}

func (m *opMetrics) reset() {
	m.in.n.Store(0)
	m.out.n.Store(0)
	m.late.n.Store(0)
	m.lastLate.Store(NoWatermark)
	m.bad.n.Store(0)
	m.watermark.Store(NoWatermark)
	m.pause.Store(0)
	m.blocked.Store(0)
}

func (m *opMetrics) snapshot() OperatorMetrics {
	return OperatorMetrics{
		Pipeline: m.pipeline, Name: m.name,
		RecordsIn: m.in.load(), RecordsOut: m.out.load(),
		LateDropped: m.late.load(), LastLate: m.lastLate.Load(), BadRecords: m.bad.load(),
		Watermark: m.watermark.Load(), SnapshotPause: time.Duration(m.pause.Load()),
		Backpressured: time.Duration(m.blocked.Load()), State: m.state.load(), Degraded: m.degraded(),
		Connector: m.conn.load(),
	}
}

func (m *opMetrics) degraded() string {
	if st := m.status.Load(); st != nil {
		return (*st).Degraded()
	}
	return ""
}

// srcMetrics is the live counters of one source task. The per-split part changes once
// per poll, under mu; the counters are atomic.
type srcMetrics struct {
	pipeline    int
	table       string
	read        counter
	skipped     atomic.Int64
	nullRowtime counter
	watermark   atomic.Int64

	mu       sync.Mutex
	splits   map[string]SplitMetrics
	degraded string
	conn     connReporting
}

func newSrcMetrics(pipeline int, table string) *srcMetrics {
	m := &srcMetrics{pipeline: pipeline, table: table}
	m.reset()
	return m
}

func (m *srcMetrics) reset() {
	m.read.n.Store(0)
	m.skipped.Store(0)
	m.nullRowtime.n.Store(0)
	m.watermark.Store(NoWatermark)
	m.mu.Lock()
	m.splits = map[string]SplitMetrics{}
	m.degraded = ""
	m.mu.Unlock()
}

// forget drops a split that is no longer assigned.
func (m *srcMetrics) forget(split string) {
	m.mu.Lock()
	delete(m.splits, split)
	m.mu.Unlock()
}

func (m *srcMetrics) snapshot() SourceMetrics {
	s := SourceMetrics{
		Pipeline: m.pipeline, Table: m.table,
		RecordsRead: m.read.load(), Skipped: m.skipped.Load(), NullRowtime: m.nullRowtime.load(),
		Watermark: m.watermark.Load(),
	}
	m.mu.Lock()
	s.Degraded = m.degraded
	s.Connector = m.conn.load()
	for _, sp := range m.splits {
		s.Splits = append(s.Splits, sp)
	}
	m.mu.Unlock()
	sort.Slice(s.Splits, func(i, j int) bool { return s.Splits[i].Split < s.Splits[j].Split })
	return s
}
