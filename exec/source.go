package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// sourceSpec is a compiled source task: a TableSourceScan (or Values) with the Calc and
// WatermarkAssigner nodes directly above it fused in, so that the watermark of each split
// is computed where the split is known.
type sourceSpec struct {
	pipeline int
	name     string
	metrics  *opMetrics
	src      *srcMetrics // nil for Values

	scan   *planner.TableSourceScan // nil for Values
	values [][]eval.Evaluator       // the rows of a Values node
	stages []sourceStage
	// wmInterval is pipeline.auto-watermark-interval: how often the source emits its
	// watermark (0: only at the end of input).
	wmInterval time.Duration
	hasWM      bool
	idle       time.Duration // idle timeout of splits (0: never idle)
	// stateID and stateDesc name and describe the source's checkpointed state (its
	// connector's position and its splits' watermarks); "" for Values.
	stateID, stateDesc string
	// The source's rows go to input port of operator to of the pipeline.
	to, port int
}

// sourceStage is one fused node: a Calc or the watermark assigner.
type sourceStage struct {
	calc *calcProgram
	wm   *watermarkProgram
}

// watermarkProgram is a compiled WatermarkAssigner.
type watermarkProgram struct {
	rowtime int
	expr    eval.Evaluator
	// delay is set when the expression is rowtime - INTERVAL (or rowtime itself, delay 0):
	// then the watermark is the largest rowtime minus delay, found without evaluating
	// the expression per row.
	delay    int64
	hasDelay bool
}

func compileWatermark(n *planner.WatermarkAssigner, env eval.Env) (*watermarkProgram, error) {
	width := len(n.Input.Schema())
	if n.RowtimeCol < 0 || n.RowtimeCol >= width {
		return nil, fmt.Errorf("%w: rowtime column %d of %d", ErrUnsupportedPlan, n.RowtimeCol, width)
	}
	p := &watermarkProgram{rowtime: n.RowtimeCol}
	if k := n.Expr.Type().Kind; k != types.Timestamp && k != types.TimestampLTZ {
		return nil, fmt.Errorf("%w: watermark %s is %s, want a timestamp", ErrUnsupportedPlan, n.Expr, n.Expr.Type())
	}
	switch e := n.Expr.(type) {
	case *planner.ColumnRef:
		p.hasDelay = e.Index == n.RowtimeCol
	case *planner.Call:
		if len(e.Args) == 2 && e.Func == "-" {
			c, isCol := e.Args[0].(*planner.ColumnRef)
			l, isLit := e.Args[1].(*planner.Literal)
			if isCol && isLit && c.Index == n.RowtimeCol && l.T.Kind == types.IntervalDayTime && !l.Value.IsNull() {
				p.hasDelay, p.delay = true, l.Value.Int()
			}
		}
	}
	ev, err := eval.Compile(n.Expr, env)
	if err != nil {
		return nil, fmt.Errorf("watermark %s: %w", n.Expr, err)
	}
	p.expr = ev
	return p, nil
}

// splitState is the event-time progress of one split.
type splitState struct {
	watermark  int64 // largest watermark expression value seen, NoWatermark before any
	lastActive time.Time
	records    int64
	idle       bool
}

// sourceTask runs a source in its goroutine: it polls the connector, runs the fused
// stages per split, tracks per-split watermarks and emits the source's watermark.
type sourceTask struct {
	spec *sourceSpec
	rt   *runEnv
	out  *outbox
	src  connectors.Source

	// barriers and completed carry checkpoint requests from the coordinator.
	barriers  chan uint64
	completed chan uint64
	// restored is the source's part of the checkpoint the run starts from, nil for none.
	restored *sourceRestore

	splits      map[string]*splitState
	lastWM      int64
	nextWM      time.Time
	warnedNull  bool
	scratchRows []types.Row
	// calcScratch[i] is the reused output of stage i when only a later Calc reads it
	// (nil entries: fresh memory per batch); made at the first batch.
	calcScratch []*calcScratch
}

func (t *sourceTask) fail(err error) error {
	return &OperatorError{Pipeline: t.spec.pipeline, Operator: t.spec.name, Err: err}
}

// run reads the source until a bounded input ends (final watermark, then end), the job
// is cancelled (stop: drain, no final watermark) or ctx is cancelled because a task failed.
func (t *sourceTask) run(ctx context.Context) error {
	t.splits = map[string]*splitState{}
	t.lastWM = NoWatermark
	if t.spec.scan == nil {
		return t.runValues(ctx)
	}
	n := t.spec.scan
	if n.Connector == nil || n.Connector.NewSource == nil {
		return t.fail(fmt.Errorf("%w: connector of table %s cannot be read", ErrUnsupportedPlan, n.Table))
	}
	cfg := connectors.SourceConfig{
		TableInfo: n.Info,
		Produce:   n.Produce,
		Settings:  t.rt.settings,
		Log:       connLogger{t.rt.log.With("table", n.Table)},
		Clock:     t.rt.clock,
	}
	if r := t.restored; r != nil {
		cfg.Restored = r.connector
		if err := t.restoreSplits(r.splits, t.rt.clock.Now()); err != nil {
			return t.fail(fmt.Errorf("%w: split watermarks of checkpoint %d: %v", ErrRestore, r.id, err))
		}
	}
	// Opening may wait for brokers that cannot be reached; a stop (SIGTERM) must end
	// that wait as it ends a Poll, so open under a context the stop cancels too. So
	// may the check that a restored source reads the input its checkpoint read.
	openCtx, cancelOpen := context.WithCancel(ctx)
	stopOpening := context.AfterFunc(t.rt.stop, cancelOpen)
	src, err := n.Connector.NewSource(openCtx, cfg)
	if err == nil && t.restored != nil {
		if err = t.checkInput(openCtx, src, t.restored); err != nil {
			if cerr := src.Close(); cerr != nil {
				t.rt.log.Warn("closing source failed", "table", n.Table, "err", cerr)
			}
		}
	}
	stopOpening()
	cancelOpen()
	if err != nil {
		if t.rt.stop.Err() != nil && ctx.Err() == nil {
			t.rt.log.Warn("stopped while opening the source", "table", n.Table, "err", err)
			return t.out.send(ctx, event{kind: eventStop})
		}
		return t.fail(err)
	}
	t.src = src
	if t.restored != nil && t.rt.sourceOpened != nil {
		t.rt.sourceOpened()
	}
	defer func() {
		if err := src.Close(); err != nil {
			t.rt.log.Warn("closing source failed", "table", n.Table, "err", err)
		}
	}()

	stop := t.rt.stop
	// Poll is interrupted by a cancellation of the job as well as by a failed task.
	pollCtx, cancelPoll := context.WithCancel(stop)
	defer cancelPoll()
	defer context.AfterFunc(ctx, cancelPoll)()

	maxWait := t.spec.wmInterval
	if maxWait <= 0 || maxWait > time.Second {
		maxWait = time.Second
	}
	t.nextWM = t.rt.clock.Now().Add(t.spec.wmInterval)
	width := len(n.Produce)
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if stop.Err() != nil {
			return t.finishInput(ctx, false)
		}
		if final, err := t.checkpointRequests(ctx); err != nil || final {
			if err != nil {
				return err
			}
			return t.finishInput(ctx, false)
		}
		batches, err := src.Poll(pollCtx, maxWait)
		eof := false
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			eof = true
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case stop.Err() != nil:
			// The poll was interrupted by the cancellation; rows it returned still count.
		default:
			return t.fail(err)
		}
		now := t.rt.clock.Now()
		for _, sb := range batches {
			if err := t.process(ctx, sb, width, now); err != nil {
				return err
			}
		}
		if err := t.out.flush(ctx); err != nil {
			return err
		}
		t.report()
		if eof {
			t.spec.src.watermark.Store(MaxWatermark)
			t.spec.metrics.watermark.Store(MaxWatermark)
			if err := t.out.send(ctx, event{kind: eventWatermark, watermark: MaxWatermark}); err != nil {
				return err
			}
			return t.finishInput(ctx, true)
		}
		if err := t.periodicWatermark(ctx, now, len(batches) > 0); err != nil {
			return err
		}
	}
}

// runValues emits the rows of a Values node and ends.
func (t *sourceTask) runValues(ctx context.Context) error {
	rows := make([]types.Row, 0, len(t.spec.values))
	for _, evs := range t.spec.values {
		row := make(types.Row, len(evs))
		for i, ev := range evs {
			v, err := ev(nil)
			if err != nil {
				return t.fail(err)
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	t.spec.metrics.in.add(len(rows))
	rows, kinds, err := t.runStages(rows, nil, nil)
	if err != nil {
		return t.fail(err)
	}
	if err := t.out.emitBatch(ctx, batch{rows: rows, kinds: kinds}); err != nil {
		return err
	}
	if err := t.out.send(ctx, event{kind: eventWatermark, watermark: MaxWatermark}); err != nil {
		return err
	}
	return t.out.send(ctx, event{kind: eventEnd})
}

// process runs the rows of one split through the fused stages and emits them.
func (t *sourceTask) process(ctx context.Context, sb connectors.SourceBatch, width int, now time.Time) error {
	for _, r := range sb.Rows {
		if len(r) != width {
			return t.fail(fmt.Errorf("%w: split %s returned a row of %d columns, want %d", ErrBadRow, sb.Split, len(r), width))
		}
	}
	if sb.Kinds != nil && len(sb.Kinds) != len(sb.Rows) {
		return t.fail(fmt.Errorf("%w: split %s returned %d rows with %d change kinds", ErrBadRow, sb.Split, len(sb.Rows), len(sb.Kinds)))
	}
	n := len(sb.Rows)
	t.spec.metrics.in.add(n)
	t.spec.src.read.add(n)
	sp := t.split(sb.Split, now)
	if n > 0 {
		sp.records += int64(n)
		sp.lastActive = now
		sp.idle = false
	}
	rows, kinds, err := t.runStages(sb.Rows, sb.Kinds, sp)
	if err != nil {
		return t.fail(fmt.Errorf("split %s: %w", sb.Split, err))
	}
	return t.out.emitBatch(ctx, batch{rows: rows, kinds: kinds})
}

// runStages runs the fused Calc and watermark stages over rows of one split (sp is nil
// for Values, which have no split and no watermark), keeping each row's change kind
// (kinds nil: all inserts) with it.
func (t *sourceTask) runStages(rows []types.Row, kinds []connectors.RowKind, sp *splitState) ([]types.Row, []connectors.RowKind, error) {
	var err error
	if t.calcScratch == nil {
		t.calcScratch = stageScratch(t.spec.stages)
	}
	for i, st := range t.spec.stages {
		if len(rows) == 0 {
			return rows, kinds, nil
		}
		switch {
		case st.calc != nil:
			rows, kinds, err = st.calc.applyTo(rows, kinds, t.calcScratch[i])
			if err != nil {
				return nil, nil, err
			}
		case st.wm != nil && sp != nil:
			rows, kinds, err = t.assignWatermark(st.wm, rows, kinds, sp)
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return rows, kinds, nil
}

// stageScratch gives a reusable output to each Calc stage whose rows are read only by
// the stages up to the next Calc, which copies what it keeps into rows of its own.
func stageScratch(stages []sourceStage) []*calcScratch {
	out := make([]*calcScratch, len(stages))
	for i, st := range stages {
		if st.calc == nil {
			continue
		}
		for _, next := range stages[i+1:] {
			if next.calc != nil {
				if !next.calc.identity {
					out[i] = &calcScratch{}
				}
				break
			}
		}
	}
	return out
}

// assignWatermark raises the split's watermark to the largest value of the watermark
// expression over rows, and drops rows whose event time is NULL: they cannot be placed
// in event time. (Flink fails the job on them; one bad record should not stop a job that
// would fail again on it after every restart, so pipesql counts them and warns once.)
// A delete (-D) with a NULL event time is kept: an upsert tombstone carries only its key.
func (t *sourceTask) assignWatermark(p *watermarkProgram, rows []types.Row, kinds []connectors.RowKind, sp *splitState) ([]types.Row, []connectors.RowKind, error) {
	kept := rows[:0]
	keptKinds := kinds[:0]
	maxTS := NoWatermark
	nulls := 0
	for i, r := range rows {
		ts := r[p.rowtime]
		if ts.IsNull() {
			if kinds != nil && kinds[i] == connectors.Delete {
				kept, keptKinds = append(kept, r), append(keptKinds, kinds[i])
				continue
			}
			nulls++
			continue
		}
		kept = append(kept, r)
		if kinds != nil {
			keptKinds = append(keptKinds, kinds[i])
		}
		if p.hasDelay {
			maxTS = max(maxTS, ts.Int())
			continue
		}
		v, err := p.expr(r)
		if err != nil {
			return nil, nil, fmt.Errorf("watermark: %w", err)
		}
		if !v.IsNull() && v.Int() > sp.watermark {
			sp.watermark = v.Int()
		}
	}
	if p.hasDelay && maxTS != NoWatermark && maxTS-p.delay > sp.watermark {
		sp.watermark = maxTS - p.delay
	}
	if nulls > 0 {
		t.spec.src.nullRowtime.add(nulls)
		t.spec.metrics.bad.add(nulls)
		if !t.warnedNull {
			t.warnedNull = true
			t.rt.log.Warn("dropping rows with a NULL event time (counted in metrics, warned once)",
				"table", t.spec.scan.Table)
		}
	}
	// Zero the tail so dropped rows are not kept alive by the shared array.
	clear(rows[len(kept):])
	return kept, keptKinds, nil
}

// split returns the state of split name, registering it (active from now) when new.
func (t *sourceTask) split(name string, now time.Time) *splitState {
	sp := t.splits[name]
	if sp == nil {
		sp = &splitState{watermark: NoWatermark, lastActive: now}
		t.splits[name] = sp
	}
	return sp
}

// currentWatermark is the minimum watermark over the active splits: those the source
// lists (all known ones when it lists none) that are not idle. A split without rows yet
// holds the watermark back until it is idle. When every split is idle the watermark
// stays where it is, as Flink's does.
func (t *sourceTask) currentWatermark(now time.Time) int64 {
	listed := t.src.Splits()
	active := make(map[string]bool, len(listed))
	for _, name := range listed {
		t.split(name, now)
		active[name] = true
	}
	wm := MaxWatermark
	found := false
	for name, sp := range t.splits {
		if len(listed) > 0 && !active[name] {
			// Finished (a file read to its end) or revoked: it holds nothing back, and
			// forgetting it keeps a directory of many files from growing this map.
			delete(t.splits, name)
			t.spec.src.forget(name)
			continue
		}
		sp.idle = t.spec.idle > 0 && now.Sub(sp.lastActive) >= t.spec.idle
		if sp.idle {
			continue
		}
		found = true
		wm = min(wm, sp.watermark)
	}
	if !found {
		return NoWatermark
	}
	return wm
}

// periodicWatermark emits the source's watermark when it advanced: after every poll that
// returned rows, and every wmInterval otherwise (so that idleness is noticed). Emitting
// after each poll (at most a few thousand rows) costs one event per batch and makes the
// rows a window drops as late depend on the input alone, not on how fast it was read.
func (t *sourceTask) periodicWatermark(ctx context.Context, now time.Time, polledRows bool) error {
	if !t.spec.hasWM || t.spec.wmInterval <= 0 || (now.Before(t.nextWM) && !polledRows) {
		return nil
	}
	t.nextWM = now.Add(t.spec.wmInterval)
	wm := t.currentWatermark(now)
	t.reportSplits()
	if wm == NoWatermark || wm <= t.lastWM {
		return nil
	}
	t.lastWM = wm
	t.spec.src.watermark.Store(wm)
	t.spec.metrics.watermark.Store(wm)
	return t.out.send(ctx, event{kind: eventWatermark, watermark: wm})
}

// checkpointRequests injects the barriers requested since the last poll and passes on
// completed checkpoints. final is true when it injected the barrier of the final
// checkpoint of a stop: the source must read nothing more.
func (t *sourceTask) checkpointRequests(ctx context.Context) (final bool, err error) {
	for {
		t.drainCompleted(ctx)
		select {
		case id := <-t.barriers:
			f, err := t.injectBarrier(ctx, id)
			if err != nil {
				return false, err
			}
			final = final || f
		default:
			return final, nil
		}
	}
}

// drainCompleted passes on the completed checkpoints queued so far. It runs before every
// barrier is injected: the coordinator queues checkpoint N's completion before it
// triggers N+1, and a source must hear of N before it snapshots for N+1, since a source
// that acknowledges its last snapshot upstream when told of a completion (postgres-cdc
// confirms its slot's LSN) would otherwise acknowledge N+1's position, not yet durable.
func (t *sourceTask) drainCompleted(ctx context.Context) {
	for {
		select {
		case id := <-t.completed:
			t.notifyCompleted(ctx, id)
		default:
			return
		}
	}
}

// injectBarrier snapshots the source for checkpoint id and sends the barrier after the
// rows emitted so far. A checkpoint that expired meanwhile is skipped.
func (t *sourceTask) injectBarrier(ctx context.Context, id uint64) (final bool, err error) {
	c := t.rt.coord
	if !c.inFlight(id) {
		return false, nil
	}
	final = c.isFinal(id)
	if err := t.out.flush(ctx); err != nil {
		return false, err
	}
	snap, err := t.src.Snapshot()
	if err != nil {
		return false, t.fail(fmt.Errorf("snapshot for checkpoint %d: %w", id, err))
	}
	values := map[string][]byte{
		sourceConnectorKey: snap,
		sourceSplitsKey:    t.encodeSplits(),
	}
	if ider, ok := t.src.(connectors.Identified); ok {
		ident, err := ider.Identity()
		if err != nil {
			return false, t.fail(fmt.Errorf("identity for checkpoint %d: %w", id, err))
		}
		values[sourceIdentityKey] = ident
	}
	c.sourceState(id, t.spec.stateID, values)
	return final, t.out.send(ctx, event{kind: eventBarrier, barrier: id})
}

func (t *sourceTask) notifyCompleted(ctx context.Context, id uint64) {
	// A failed notification is a warning: the checkpoint itself is complete.
	if err := t.src.CheckpointComplete(ctx, id); err != nil {
		t.rt.log.Warn("source checkpoint notification failed", "table", t.spec.scan.Table, "checkpoint", id, "err", err)
	}
}

// finishInput ends the source's stream: eventEnd after the end of its input, eventStop
// when the job was stopped. With checkpoints, the source first waits for the job's final
// checkpoint, serving barriers at its final position meanwhile, so that everything it
// emitted is covered by a completed checkpoint before its stream ends.
func (t *sourceTask) finishInput(ctx context.Context, eof bool) error {
	end := event{kind: eventStop}
	if eof {
		end.kind = eventEnd
	}
	c := t.rt.coord
	if c == nil {
		return t.out.send(ctx, end)
	}
	if err := t.out.flush(ctx); err != nil {
		return err
	}
	c.send(ctx, sourceFinished{eof: eof})
	for {
		select {
		case id := <-t.barriers:
			t.drainCompleted(ctx)
			if _, err := t.injectBarrier(ctx, id); err != nil {
				return err
			}
		case id := <-t.completed:
			t.notifyCompleted(ctx, id)
		case <-c.finalDone:
			// The final checkpoint's completion was queued before finalDone closed.
			t.drainCompleted(ctx)
			return t.out.send(ctx, end)
		case <-c.done:
			return t.out.send(ctx, end)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Keys of a source's state.
const (
	sourceConnectorKey = "connector" // the connector's Snapshot
	sourceSplitsKey    = "splits"    // the source's watermark and its splits' watermarks
	sourceIdentityKey  = "identity"  // what the connector read (connectors.Identified)
)

// sourceRestore is a source's part of the checkpoint a run starts from.
type sourceRestore struct {
	id        uint64
	connector []byte
	splits    []byte
	identity  []byte // nil when the checkpoint has none
	rp        *restorePoint
	op        string // the source's state id
}

// checkInput makes a restored source check that it reads the input its checkpoint
// read (connectors.Identified), unless it did so already for this checkpoint or the
// checkpoint is one this Run took. A mismatch fails the job for good (it wraps
// connectors.ErrInputMismatch), unless pipesql.restore.allow-changed-input allows it.
func (t *sourceTask) checkInput(ctx context.Context, src connectors.Source, r *sourceRestore) error {
	ider, ok := src.(connectors.Identified)
	if !ok || !r.rp.needsCheck(r.op) {
		return nil
	}
	err := ider.CheckRestored(ctx, r.identity)
	var mismatch *connectors.InputMismatchError
	switch {
	case err == nil:
	case errors.As(err, &mismatch) && t.rt.allowChangedInput:
		t.rt.log.Warn(fmt.Sprintf("resuming job '%s' from %s although the input is not the one it read (allowed by %s)",
			r.rp.job, r.rp.describe(), KeyAllowChangedInput), "err", err)
	case errors.As(err, &mismatch):
		return fmt.Errorf("job '%s' cannot resume from %s: %w; to start fresh, keeping the old checkpoints aside, run with --fresh (SET '%s' = 'true'); to resume anyway, SET '%s' = 'true'",
			r.rp.job, r.rp.describe(), err, KeyFreshStart, KeyAllowChangedInput)
	default:
		return err
	}
	r.rp.markVerified(r.op)
	return nil
}

// decodeSplitsSummary reads the source watermark and the number of splits of what
// encodeSplits wrote.
func decodeSplitsSummary(data []byte) (wm int64, splits int, err error) {
	t := &sourceTask{}
	if err := t.restoreSplits(data, time.Time{}); err != nil {
		return 0, 0, err
	}
	return t.lastWM, len(t.splits), nil
}

// encodeSplits writes the source's watermark and each split's watermark and row count.
func (t *sourceTask) encodeSplits() []byte {
	dst := []byte{stateVersion}
	dst = binary.AppendVarint(dst, t.lastWM)
	names := make([]string, 0, len(t.splits))
	for name := range t.splits {
		names = append(names, name)
	}
	sort.Strings(names)
	dst = binary.AppendUvarint(dst, uint64(len(names)))
	for _, name := range names {
		sp := t.splits[name]
		dst = appendLenBytes(dst, []byte(name))
		dst = binary.AppendVarint(dst, sp.watermark)
		dst = binary.AppendVarint(dst, sp.records)
	}
	return dst
}

func (t *sourceTask) restoreSplits(data []byte, now time.Time) error {
	if data == nil {
		return nil
	}
	d := &stateDecoder{data: data}
	d.version()
	wm := d.varint()
	n := d.count(3)
	splits := make(map[string]*splitState, n)
	for range n {
		name := string(d.lenBytes())
		sp := &splitState{watermark: d.varint(), records: d.varint(), lastActive: now}
		splits[name] = sp
	}
	if err := d.finish(); err != nil {
		return err
	}
	t.lastWM, t.splits = wm, splits
	return nil
}

// report copies connector-side counters into the metrics after a poll.
func (t *sourceTask) report() {
	m := t.spec.src
	if sc, ok := t.src.(SkipCounter); ok {
		m.skipped.Store(sc.Skipped())
	}
	if st, ok := t.src.(connectors.Status); ok {
		d := st.Degraded()
		m.mu.Lock()
		m.degraded = d
		m.mu.Unlock()
	}
	t.reportConnector()
	t.reportSplits()
}

func (t *sourceTask) reportSplits() {
	var positions map[string]string
	if pr, ok := t.src.(PositionReporter); ok {
		positions = pr.SplitPositions()
	}
	m := t.spec.src
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, sp := range t.splits {
		m.splits[name] = SplitMetrics{
			Split: name, Records: sp.records, Watermark: sp.watermark, Idle: sp.idle,
			LastActive: sp.lastActive, Position: positions[name],
		}
	}
}
