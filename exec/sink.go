package exec

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// sinkOp writes its input to a table: each batch becomes one ChangeBatch. It flushes
// the connector at checkpoint barriers and when the stream ends, whether the input
// finished or the job was cancelled, so that everything it was given is written.
//
// In a pipeline that checkpoints, a sink implementing connectors.CommittingSink
// commits in two phases instead: at each barrier it stages what it was given
// (PrepareCommit, whose state goes into the checkpoint), and publishes it when the
// checkpoint completes; it never flushes, so nothing becomes visible that a restart
// would write again. Other sinks are at-least-once: rows after the last checkpoint are
// written again after a restart.
type sinkOp struct {
	node     *planner.Sink
	settings map[string]string
	log      *slog.Logger
	clock    connectors.Clock
	sink     connectors.Sink
	// checkpointed is set when the sink's pipeline takes part in checkpoints.
	checkpointed bool
	// committing is the sink when it commits in two phases, nil otherwise.
	committing connectors.CommittingSink
	restored   []byte // its state in the checkpoint the run starts from
	committed  uint64 // the last checkpoint it committed
	// metrics shows the connector's connectors.Status, when it has one, while it is open.
	metrics *opMetrics
	recent  *recentRows // the latest rows written, once asked for
}

// sinkStateKey is the key of a committing sink's state.
const sinkStateKey = "sink"

func (s *sinkOp) open(ctx context.Context) error {
	n := s.node
	if n.Connector == nil || n.Connector.NewSink == nil {
		return fmt.Errorf("%w: connector of table %s cannot be written", ErrUnsupportedPlan, n.Table)
	}
	sink, err := n.Connector.NewSink(ctx, connectors.SinkConfig{
		TableInfo: n.Info,
		Input:     n.Out,
		Updating:  n.Changelog == planner.Updating,
		Settings:  s.settings,
		Restored:  s.restored,
		Log:       connLogger{s.log.With("table", n.Table)},
		Clock:     s.clock,
	})
	if err != nil {
		return err
	}
	s.sink = sink
	if st, ok := sink.(connectors.Status); ok && s.metrics != nil {
		s.metrics.status.Store(&st)
	}
	if cs, ok := sink.(connectors.CommittingSink); ok && s.checkpointed {
		s.committing = cs
	}
	s.report(true)
	return nil
}

// report asks the connector for its report (connectors.Reporter), at most every
// reportInterval unless now is set (after a checkpoint's stage or commit).
func (s *sinkOp) report(now bool) {
	r, ok := s.sink.(connectors.Reporter)
	if !ok || s.metrics == nil {
		return
	}
	c := &s.metrics.conn
	t := connectors.ClockOr(s.clock).Now()
	if !now && !c.last.IsZero() && t.Sub(c.last) < reportInterval {
		return
	}
	c.last = t
	measures := r.Report()
	c.mu.Lock()
	c.measures = measures
	c.mu.Unlock()
}

func (s *sinkOp) processBatch(ctx context.Context, b batch, _ *outbox) error {
	if len(b.rows) == 0 {
		return nil
	}
	kinds := b.kinds
	if kinds == nil {
		kinds = make([]connectors.RowKind, len(b.rows)) // all connectors.Insert
	}
	err := s.sink.Write(ctx, connectors.ChangeBatch{Kinds: kinds, Rows: b.rows})
	if err == nil {
		s.recent.add(b.kinds, b.rows)
	}
	s.report(false)
	return err
}

// processWatermark hands the watermark to a sink that acts on event time.
func (s *sinkOp) processWatermark(ctx context.Context, wm int64, _ *outbox) error {
	if ws, ok := s.sink.(connectors.WatermarkSink); ok {
		return ws.Watermark(ctx, wm)
	}
	return nil
}

// snapshotState stages the sink's output for the checkpoint, or flushes it.
func (s *sinkOp) snapshotState(ctx context.Context, w stateWriter) error {
	if s.committing == nil {
		return s.sink.Flush(ctx)
	}
	data, err := s.committing.PrepareCommit(ctx, w.ID())
	s.report(true)
	if err != nil {
		return err
	}
	return w.Put(sinkStateKey, data)
}

func (s *sinkOp) restoreState(r stateReader) error {
	return r.Scan(func(key string, value []byte) error {
		if key == sinkStateKey {
			s.restored = append([]byte(nil), value...)
		}
		return nil
	})
}

func (s *sinkOp) checkpointComplete(ctx context.Context, id uint64) error {
	if s.committing == nil || id <= s.committed {
		return nil
	}
	s.committed = id
	err := s.committing.CheckpointComplete(ctx, id)
	s.report(true)
	return err
}

// finish flushes a plain sink. A committing sink has nothing to do: the final
// checkpoint published its output, and what no checkpoint covers is written again by
// the restarted job.
func (s *sinkOp) finish(ctx context.Context, _ bool, _ *outbox) error {
	if s.committing != nil {
		return nil
	}
	return s.sink.Flush(ctx)
}

func (s *sinkOp) close() error {
	if s.sink == nil {
		return nil
	}
	if s.metrics != nil {
		s.metrics.status.Store(nil)
	}
	return s.sink.Close()
}

// collectOp hands the rows of a SELECT to Options.Collect, in order, with their kinds.
type collectOp struct {
	nopOperator
	collect func(connectors.RowKind, types.Row)
	recent  *recentRows
}

func (c *collectOp) processBatch(_ context.Context, b batch, _ *outbox) error {
	for i, r := range b.rows {
		c.collect(b.kind(i), r)
	}
	c.recent.add(b.kinds, b.rows)
	return nil
}

// connLogger lets connectors report through the job's slog.Logger.
type connLogger struct{ l *slog.Logger }

func (c connLogger) Warn(msg string, args ...any) { c.l.Warn(msg, withoutTable(args)...) }
func (c connLogger) Info(msg string, args ...any) { c.l.Info(msg, withoutTable(args)...) }

// withoutTable drops a "table" attribute from a connector's log arguments: the job's
// logger names the table already, and a line with table= twice reads as two tables.
func withoutTable(args []any) []any {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == "table" {
			return append(args[:i:i], args[i+2:]...)
		}
	}
	return args
}
