package exec

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/state"
)

// Checkpoints
//
// A coordinator runs beside the tasks of each run of a job with checkpointing enabled.
// Every execution.checkpointing.interval it injects a barrier with a new checkpoint id
// at every source task. A source task, between two polls, takes its connector's
// Snapshot (the position after exactly the rows it emitted) and its splits'
// watermarks, and sends the barrier after those rows. Every operator passes the
// barrier on after the rows before it, snapshotting its state (stateful) when it
// arrives: that is the in-line part, during which the operator processes nothing, and
// it only serializes what changed since the previous checkpoint into memory. The root
// of each pipeline acknowledges the barrier (a sink after staging or flushing what it
// was given). When every pipeline has, the cut is complete, and a background goroutine
// writes it to the state.Store: new values with Put, unchanged ones with Reuse, and the
// commit record last. Processing goes on meanwhile. Once committed, sinks are told
// (CommittingSink.CheckpointComplete publishes their staged output) and so are sources
// (Kafka commits offsets to its group).
//
// One checkpoint is in flight at a time. One that fails (a storage error, a barrier
// that took longer than execution.checkpointing.timeout) is counted; more than
// execution.checkpointing.tolerable-failed-checkpoints failures in a row fail the job.
// After a failed checkpoint, operators cannot reuse what they wrote for it, so the next
// one rewrites their state whole.
//
// When every source has reached the end of its input, or the job is stopped, one final
// checkpoint is taken after the last rows (a stop exports it as a savepoint when asked
// to), and only then do the sources end their streams: so the output of a bounded job is
// committed exactly once, and a stopped job resumes exactly where it stopped.

// pendingCheckpoint is a checkpoint whose barriers are travelling or whose write is in
// progress.
type pendingCheckpoint struct {
	id      uint64
	base    uint64 // the completed checkpoint unchanged values are reused from, 0: none
	final   bool
	eof     bool // final, at the end of every input
	started time.Time
	waiting map[int]bool // pipelines whose root has not acknowledged yet
	parts   []statePart
	pause   time.Duration // the longest in-line pause of an operator
	writing bool
	// savepoint is where to export the checkpoint once committed ("": nowhere).
	savepoint string
	replies   []chan savepointResult
}

// statePart is one value of a checkpoint: written anew, or reused from the base. A value
// written anew is either given (value) or serialized by the writing goroutine (produce).
type statePart struct {
	op, key string
	value   []byte
	produce func() ([]byte, error)
	reuse   bool
}

// deferredPutter is a stateWriter that can serialize a value after the in-line pause, on
// the goroutine that writes the checkpoint. produce may only read state that the
// operator does not change afterwards (frozen or append-only, see agg.SharedSnapshot).
type deferredPutter interface {
	PutDeferred(key string, produce func() ([]byte, error)) error
}

// putDeferred stores what produce returns under key: later on the writing goroutine
// when w can, in line otherwise.
func putDeferred(w stateWriter, key string, produce func() ([]byte, error)) error {
	if d, ok := w.(deferredPutter); ok {
		return d.PutDeferred(key, produce)
	}
	v, err := produce()
	if err != nil {
		return err
	}
	return w.Put(key, v)
}

type savepointResult struct {
	id   uint64
	path string
	err  error
}

// savepointRequest asks for a checkpoint exported to dir (Job.Savepoint).
type savepointRequest struct {
	dir   string
	reply chan savepointResult
}

// coordinator runs the checkpoints of one run of a job.
type coordinator struct {
	setup *checkpointSetup
	clock connectors.Clock
	log   *slog.Logger
	stats *checkpointStats
	fail  func(error) // fails the run

	sources   []*sourceTask
	pipelines []int // pipelines with a checkpointed source
	sinks     []*commitNotifier

	written chan writeResult
	acked   chan *pendingCheckpoint
	control chan any      // savepointRequest, sourceFinished
	done    chan struct{} // closed when run returns

	mu       sync.Mutex
	pending  *pendingCheckpoint
	nextID   uint64
	base     uint64
	failures int // in a row
	lastDone time.Time

	finished   int  // sources that ended their input or stopped
	eof        int  // of them, those at the end of their input
	stopping   bool // the job was asked to stop
	finalStart bool // the final checkpoint was triggered
	finalDone  chan struct{}
	finalErr   error
	stopSP     savepointRequest // where the stop's savepoint goes, dir "" for nowhere
	queued     []savepointRequest
}

type writeResult struct {
	p         *pendingCheckpoint
	committed bool
	err       error
	// what the write did, for metrics and the savepoint
	bytes, reused int64
	took          time.Duration
	path          string
}

// sourceFinished is sent by a source task when its input ended (eof) or it stopped.
type sourceFinished struct{ eof bool }

func newCoordinator(setup *checkpointSetup, rt *runEnv, stats *checkpointStats, nextID, base uint64, fail func(error)) *coordinator {
	return &coordinator{
		setup: setup, clock: rt.clock, log: rt.log, stats: stats, fail: fail,
		written: make(chan writeResult, 1), acked: make(chan *pendingCheckpoint, 1), control: make(chan any, 16),
		done:   make(chan struct{}),
		nextID: nextID, base: base, finalDone: make(chan struct{}),
	}
}

// run triggers checkpoints until ctx is cancelled (the run ended) or the final
// checkpoint is done. stop is closed when the job is asked to stop; stopSavepoint then
// says where the stop's savepoint goes and who waits for it.
func (c *coordinator) run(ctx context.Context, stop <-chan struct{}, stopSavepoint func() savepointRequest) {
	ticker := c.clock.NewTicker(c.setup.cfg.Interval)
	defer ticker.Stop()
	c.lastDone = c.clock.Now()
	defer close(c.done)
	defer c.shutdown()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C():
			c.tick(now)
		case <-stop:
			stop = nil
			c.mu.Lock()
			c.stopping = true
			c.stopSP = stopSavepoint()
			c.mu.Unlock()
			c.maybeFinal()
		case p := <-c.acked:
			c.startWrite(ctx, p)
		case r := <-c.written:
			c.completed(r)
			if c.isFinalDone() {
				return
			}
		case m := <-c.control:
			switch m := m.(type) {
			case sourceFinished:
				c.mu.Lock()
				c.finished++
				if m.eof {
					c.eof++
				}
				c.mu.Unlock()
				c.maybeFinal()
			case savepointRequest:
				c.mu.Lock()
				c.queued = append(c.queued, m)
				c.mu.Unlock()
				c.maybeSavepoint()
			}
		}
	}
}

func (c *coordinator) isFinalDone() bool {
	select {
	case <-c.finalDone:
		return true
	default:
		return false
	}
}

// shutdown answers what is still waiting when the run ends.
func (c *coordinator) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := fmt.Errorf("%w: the job ended before the checkpoint completed", ErrJobNotRunning)
	if c.pending != nil {
		for _, r := range c.pending.replies {
			r <- savepointResult{err: err}
		}
		c.pending.replies = nil
	}
	for _, q := range c.queued {
		q.reply <- savepointResult{err: err}
	}
	c.queued = nil
	if c.stopSP.reply != nil && !c.finalStart {
		c.stopSP.reply <- savepointResult{err: err}
	}
}

// tick expires a checkpoint whose barriers are late, then starts the next one when the
// previous one ended at least min-pause ago.
func (c *coordinator) tick(now time.Time) {
	c.mu.Lock()
	p := c.pending
	if p != nil && !p.writing && now.Sub(p.started) > c.setup.cfg.Timeout {
		c.pending = nil
		c.mu.Unlock()
		c.failed(p, fmt.Errorf("%w: checkpoint %d did not reach every sink within %s", ErrCheckpointTimeout, p.id, c.setup.cfg.Timeout))
		c.mu.Lock()
	}
	ready := c.pending == nil && !c.finalStart && !c.stopping && now.Sub(c.lastDone) >= c.setup.cfg.MinPause
	c.mu.Unlock()
	if ready {
		c.trigger(false, "")
	}
}

// maybeFinal triggers the final checkpoint when every source is done (or the job
// stops) and no other checkpoint is in flight.
func (c *coordinator) maybeFinal() {
	c.mu.Lock()
	all := c.finished == len(c.sources)
	ready := (c.stopping || all) && c.pending == nil && !c.finalStart
	if !ready {
		c.mu.Unlock()
		return
	}
	c.finalStart = true
	sp := c.stopSP
	c.mu.Unlock()
	if sp.reply != nil {
		c.trigger(true, sp.dir, sp.reply)
		return
	}
	c.trigger(true, sp.dir)
}

// maybeSavepoint triggers a checkpoint for a queued savepoint request.
func (c *coordinator) maybeSavepoint() {
	c.mu.Lock()
	if c.pending != nil || c.finalStart || c.stopping || len(c.queued) == 0 {
		c.mu.Unlock()
		return
	}
	q := c.queued[0]
	c.queued = c.queued[1:]
	c.mu.Unlock()
	c.trigger(false, q.dir, q.reply)
}

// trigger starts checkpoint nextID: barriers go to every source task.
func (c *coordinator) trigger(final bool, savepoint string, replies ...chan savepointResult) {
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	p := &pendingCheckpoint{
		id: id, base: c.base, final: final, eof: final && c.eof == len(c.sources),
		started: c.clock.Now(), waiting: map[int]bool{}, savepoint: savepoint, replies: replies,
	}
	for _, i := range c.pipelines {
		p.waiting[i] = true
	}
	c.pending = p
	c.mu.Unlock()
	for _, st := range c.sources {
		select {
		case st.barriers <- id:
		default:
			c.mu.Lock()
			c.pending = nil
			c.mu.Unlock()
			c.failed(p, fmt.Errorf("checkpoint %d: %w", id, ErrCheckpointBusy))
			return
		}
	}
}

// inFlight reports whether checkpoint id is still waiting for barriers.
func (c *coordinator) inFlight(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending != nil && c.pending.id == id && !c.pending.writing
}

// sourceState records a source's part of checkpoint id.
func (c *coordinator) sourceState(id uint64, op string, keys map[string][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending; p != nil && p.id == id && !p.writing {
		for k, v := range keys {
			p.parts = append(p.parts, statePart{op: op, key: k, value: v})
		}
	}
}

// writer returns where operator op writes its part of checkpoint id.
func (c *coordinator) writer(id uint64, op string) *opStateWriter {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &opStateWriter{c: c, id: id, op: op}
	if p := c.pending; p != nil && p.id == id {
		w.base = p.base
	}
	return w
}

// recordPause notes an operator's in-line pause for checkpoint id.
func (c *coordinator) recordPause(id uint64, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending; p != nil && p.id == id {
		p.pause = max(p.pause, d)
	}
}

// ack records that the root of pipeline received barrier id; the last one completes
// the cut, which is then written.
func (c *coordinator) ack(ctx context.Context, id uint64, pipeline int) {
	c.mu.Lock()
	p := c.pending
	if p == nil || p.id != id || p.writing {
		c.mu.Unlock()
		return
	}
	delete(p.waiting, pipeline)
	if len(p.waiting) > 0 {
		c.mu.Unlock()
		return
	}
	p.writing = true
	c.mu.Unlock()
	select {
	case c.acked <- p:
	case <-c.done:
	case <-ctx.Done():
	}
}

// send passes a message to the coordinator's loop unless it has ended.
func (c *coordinator) send(ctx context.Context, m any) bool {
	select {
	case c.control <- m:
		return true
	case <-c.done:
	case <-ctx.Done():
	}
	return false
}

// isFinal reports whether id is the final checkpoint.
func (c *coordinator) isFinal(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending != nil && c.pending.id == id && c.pending.final
}

// startWrite writes p to the store in the background.
func (c *coordinator) startWrite(ctx context.Context, p *pendingCheckpoint) {
	go func() {
		r := c.write(p)
		select {
		case c.written <- r:
		case <-ctx.Done():
			c.replyAll(p, savepointResult{err: r.err})
		}
	}()
}

func (c *coordinator) replyAll(p *pendingCheckpoint, res savepointResult) {
	for _, r := range p.replies {
		r <- res
	}
	p.replies = nil
}

// write stores checkpoint p: its values, the unchanged ones reused from its base, then
// the commit record.
func (c *coordinator) write(p *pendingCheckpoint) writeResult {
	s := c.setup
	start := c.clock.Now()
	r := writeResult{p: p}
	w, err := s.store.Begin(s.jobKey, p.id)
	if err != nil {
		r.err = err
		return r
	}
	// Meta describes the operators that have state in this checkpoint: a sink that
	// stages nothing (print) is not one whose change would lose state.
	withState := map[string]bool{}
	for _, part := range p.parts {
		if part.produce != nil {
			// Serialized here rather than in the operator's pause (see putDeferred).
			part.value, err = part.produce()
			if err != nil {
				w.Abort()
				r.err = fmt.Errorf("state of %s, key %q: %w", part.op, part.key, err)
				return r
			}
		}
		if part.reuse {
			err = w.Reuse(part.op, part.key, p.base)
			r.reused++
		} else {
			err = w.Put(part.op, part.key, part.value)
			r.bytes += int64(len(part.value))
		}
		if err != nil {
			w.Abort()
			r.err = err
			return r
		}
		withState[part.op] = true
	}
	p.parts = nil // the writer has its own copies
	meta := state.Meta{Plan: s.plan, Props: map[string]string{}}
	for _, op := range s.operators {
		if withState[op.ID] {
			meta.Operators = append(meta.Operators, op)
		}
	}
	if p.eof {
		meta.Props[propFinished] = "true"
	}
	if err := w.Commit(meta); err != nil {
		r.err = err
		return r
	}
	r.committed = true
	r.took = c.clock.Now().Sub(start)
	if p.savepoint != "" {
		r.path, r.err = exportSavepoint(s, p.id, p.savepoint)
	}
	return r
}

// exportSavepoint writes completed checkpoint id to a new directory under dir, a local
// path or file URI ('file:///x' and 'file:/x' are '/x').
func exportSavepoint(s *checkpointSetup, id uint64, dir string) (string, error) {
	dir, err := config.LocalDir(dir)
	if err != nil {
		return "", fmt.Errorf("savepoint: %w", err)
	}
	cp, err := s.store.Open(s.jobKey, id)
	if err != nil {
		return "", fmt.Errorf("savepoint: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("savepoint-%s-%d", safeName(s.jobKey), id))
	if err := state.ExportSavepoint(cp, path); err != nil {
		return "", err
	}
	return path, nil
}

// safeName keeps a job key usable as part of a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// completed handles the end of a write.
func (c *coordinator) completed(r writeResult) {
	p := r.p
	c.mu.Lock()
	if c.pending == p {
		c.pending = nil
	}
	c.mu.Unlock()
	if !r.committed {
		c.failed(p, fmt.Errorf("checkpoint %d: %w", p.id, r.err))
		return
	}
	// Committed (a failed savepoint export does not undo the checkpoint).
	now := c.clock.Now()
	c.mu.Lock()
	c.base = p.id
	c.failures = 0
	c.lastDone = now
	c.mu.Unlock()
	c.stats.completedCheckpoint(p.id, now.Sub(p.started), r.took, r.bytes, r.reused, p.pause)
	c.stats.record(CheckpointRecord{ID: p.id, Triggered: p.started, Ended: now, Bytes: r.bytes, Pause: p.pause,
		Savepoint: r.path})
	c.log.Info("checkpoint completed", "checkpoint", p.id, "took", now.Sub(p.started), "write", r.took,
		"bytes", r.bytes, "reused", r.reused, "pause", p.pause)
	for _, n := range c.sinks {
		n.notify(p.id)
	}
	for _, st := range c.sources {
		select {
		case st.completed <- p.id:
		default: // the source is behind; a later completion covers this one
		}
	}
	res := savepointResult{id: p.id, path: r.path, err: r.err}
	if r.err != nil {
		c.log.Warn("savepoint failed", "checkpoint", p.id, "err", r.err)
	} else if r.path != "" {
		c.log.Info("savepoint written", "checkpoint", p.id, "path", r.path)
	}
	c.replyAll(p, res)
	if p.final {
		c.finalErr = r.err // a stop whose savepoint failed reports it
		close(c.finalDone)
		return
	}
	c.maybeSavepoint()
	c.maybeFinal()
}

// failed counts a failed checkpoint; too many in a row fail the job.
func (c *coordinator) failed(p *pendingCheckpoint, err error) {
	c.stats.failedCheckpoint()
	c.stats.record(CheckpointRecord{ID: p.id, Triggered: p.started, Ended: c.clock.Now(), Pause: p.pause, Failure: err.Error()})
	c.log.Warn("checkpoint failed", "checkpoint", p.id, "err", err)
	c.replyAll(p, savepointResult{err: err})
	c.mu.Lock()
	c.failures++
	failures := c.failures
	c.lastDone = c.clock.Now()
	c.mu.Unlock()
	if p.final {
		c.finalErr = err
		close(c.finalDone)
		return
	}
	if tol := c.setup.cfg.TolerableFailures; failures > tol {
		c.fail(fmt.Errorf("%w: %d in a row (execution.checkpointing.tolerable-failed-checkpoints is %d); the last: %w",
			ErrCheckpointFailures, failures, tol, err))
		return
	}
	c.maybeSavepoint()
	c.maybeFinal()
}

// opStateWriter collects one operator's part of a checkpoint in memory.
type opStateWriter struct {
	c    *coordinator
	id   uint64
	base uint64
	op   string
}

func (w *opStateWriter) ID() uint64   { return w.id }
func (w *opStateWriter) Base() uint64 { return w.base }

func (w *opStateWriter) add(part statePart) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	// A checkpoint that expired meanwhile drops what its late barriers bring.
	if p := w.c.pending; p != nil && p.id == w.id && !p.writing {
		p.parts = append(p.parts, part)
	}
}

func (w *opStateWriter) Put(key string, value []byte) error {
	w.add(statePart{op: w.op, key: key, value: value})
	return nil
}

func (w *opStateWriter) PutDeferred(key string, produce func() ([]byte, error)) error {
	w.add(statePart{op: w.op, key: key, produce: produce})
	return nil
}

func (w *opStateWriter) Unchanged(key string) error {
	if w.base == 0 {
		return fmt.Errorf("%w: key %q of %s is unchanged but checkpoint %d has no base", ErrInternal, key, w.op, w.id)
	}
	w.add(statePart{op: w.op, key: key, reuse: true})
	return nil
}

// commitNotifier tells a committing sink's task which checkpoint completed last.
type commitNotifier struct {
	id atomic.Uint64
	ch chan struct{}
}

func newCommitNotifier() *commitNotifier { return &commitNotifier{ch: make(chan struct{}, 1)} }

func (n *commitNotifier) notify(id uint64) {
	n.id.Store(id)
	select {
	case n.ch <- struct{}{}:
	default:
	}
}

// checkpointStats are the live checkpoint counters of a job.
type checkpointStats struct {
	mu sync.Mutex
	m  CheckpointMetrics
}

func (s *checkpointStats) completedCheckpoint(id uint64, took, write time.Duration, bytes, reused int64, pause time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Completed++
	s.m.LastID = id
	s.m.LastDuration = took
	s.m.LastWrite = write
	s.m.LastBytes = bytes
	s.m.LastReused = reused
	s.m.LastPause = pause
	s.m.MaxPause = max(s.m.MaxPause, pause)
}

// CheckpointHistory is how many checkpoints CheckpointMetrics.History keeps.
const CheckpointHistory = 32

// record adds a checkpoint that ended to the history.
func (s *checkpointStats) record(r CheckpointRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m.History) >= CheckpointHistory {
		s.m.History = append(s.m.History[:0:0], s.m.History[len(s.m.History)-CheckpointHistory+1:]...)
	}
	s.m.History = append(s.m.History, r)
}

func (s *checkpointStats) failedCheckpoint() {
	s.mu.Lock()
	s.m.Failed++
	s.mu.Unlock()
}

func (s *checkpointStats) restarted() {
	s.mu.Lock()
	s.m.Restarts++
	s.mu.Unlock()
}

func (s *checkpointStats) restoredFrom(what string, id uint64) {
	s.mu.Lock()
	s.m.RestoredFrom, s.m.RestoredID = what, id
	s.mu.Unlock()
}

func (s *checkpointStats) resumed(info *ResumeInfo) {
	s.mu.Lock()
	s.m.Resumed = info
	s.mu.Unlock()
}

func (s *checkpointStats) snapshot() CheckpointMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	m.History = append([]CheckpointRecord(nil), s.m.History...)
	return m
}

// propFinished marks the final checkpoint of a job whose every input ended.
const propFinished = "pipesql.finished"
