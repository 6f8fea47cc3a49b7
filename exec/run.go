package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/restart"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

// Run runs the job until its bounded inputs are exhausted (the final watermark fires
// every window, then sinks flush and close), or until ctx is cancelled: then sources stop,
// the rows in flight drain to the sinks, nothing more fires, sinks flush, and Run returns
// nil. When an operator fails, every task stops; under the restart strategy the job is
// rebuilt from its latest completed checkpoint and runs again, and when the strategy
// gives up (or there is none) Run returns the failure as an *OperatorError. Run returns
// only after every goroutine it started has ended.
//
// With checkpointing, the end of the inputs and a cancelled ctx both take a final
// checkpoint first (a cancelled ctx exports it as a savepoint when
// execution.checkpointing.savepoint-dir is set), so that a stopped job resumes where it
// stopped and a finished one has committed all its output. Run starts from the
// savepoint of execution.savepoint.path, else from the latest checkpoint of
// Options.JobKey in Options.Store; a plan that does not match that state is refused with
// an error wrapping state.ErrPlanMismatch, unless
// execution.savepoint.ignore-unclaimed-state allows dropping the state it cannot use.
func (j *Job) Run(ctx context.Context) (err error) {
	if !j.running.CompareAndSwap(false, true) {
		return ErrJobRunning
	}
	defer j.running.Store(false)
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	j.life.start(j.opts.Clock.Now())
	defer func() { j.life.end(j.opts.Clock.Now(), err, stopCtx.Err() != nil) }()
	j.mu.Lock()
	j.stopRun, j.stopSP = stop, savepointRequest{}
	j.mu.Unlock()
	defer func() {
		// A StopWithSavepoint that no final checkpoint answered (the run failed first).
		j.mu.Lock()
		if r := j.stopSP.reply; r != nil {
			select {
			case r <- savepointResult{err: fmt.Errorf("%w: the job ended before its final checkpoint", ErrJobNotRunning)}:
			default:
			}
		}
		j.mu.Unlock()
	}()

	rp, err := j.initialRestore()
	if err != nil {
		return err
	}
	firstID := j.nextCheckpointID(rp)
	for {
		err := j.runOnce(ctx, stopCtx, rp)
		if err == nil || stopCtx.Err() != nil || errors.Is(err, ErrRestore) || errors.Is(err, state.ErrPlanMismatch) ||
			errors.Is(err, connectors.ErrInputMismatch) || errors.Is(err, connectors.ErrMisconfigured) {
			return err
		}
		delay, ok := j.restart.Failed(j.opts.Clock.Now())
		if !ok {
			if j.restart != restart.None() {
				return fmt.Errorf("%w (restart strategy %s: no more restarts)", err, j.restart)
			}
			return err
		}
		j.stats.restarted()
		j.opts.Log.Warn("job failed; restarting from its latest checkpoint", "in", delay, "strategy", j.restart.String(), "err", err)
		now := j.opts.Clock.Now()
		j.life.restarting(now, now.Add(delay), err)
		if !j.sleep(stopCtx, delay) {
			return nil // stopped while waiting: the latest checkpoint stands
		}
		j.life.resumed()
		if rp, err = j.restartPoint(rp, firstID); err != nil {
			return err
		}
	}
}

// sleep waits d on the job's clock; false when ctx ended first.
func (j *Job) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := j.opts.Clock.NewTicker(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// restorePoint is the saved state a run starts from.
type restorePoint struct {
	cp        state.Checkpoint
	fromStore bool   // a checkpoint of Options.Store (not a savepoint)
	what      string // "checkpoint" or the savepoint's path
	dir       string // where it was read from: the store's directory or the savepoint's
	job       string // the job key, for messages
	// skip holds operators whose saved state the plan cannot use and the user allowed
	// to drop (execution.savepoint.ignore-unclaimed-state).
	skip map[string]bool
	// own is true for a checkpoint this Run took: its sources' inputs need no check.
	own bool
	// verified holds the sources whose input was checked against this checkpoint
	// (connectors.Identified), so that a restart from it does not check again; announced
	// is true once the resume was logged.
	mu        sync.Mutex
	verified  map[string]bool
	announced bool
}

// needsCheck reports whether the source with state op must check its input.
func (rp *restorePoint) needsCheck(op string) bool {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return !rp.own && !rp.verified[op]
}

func (rp *restorePoint) markVerified(op string) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.verified == nil {
		rp.verified = map[string]bool{}
	}
	rp.verified[op] = true
}

// describe names the checkpoint for messages: "checkpoint 789 taken 2026-12-01
// 21:24:08 in DIR".
func (rp *restorePoint) describe() string {
	var b strings.Builder
	if rp.fromStore {
		fmt.Fprintf(&b, "checkpoint %d", rp.cp.ID())
	} else {
		fmt.Fprintf(&b, "savepoint of checkpoint %d", rp.cp.ID())
	}
	if t := rp.cp.Meta().Created; !t.IsZero() {
		fmt.Fprintf(&b, " taken %s", t.Local().Format("2006-01-02 15:04:05"))
	}
	if rp.dir != "" {
		fmt.Fprintf(&b, " in %s", rp.dir)
	}
	return b.String()
}

// initialRestore finds what the first run starts from and checks it against the plan.
func (j *Job) initialRestore() (*restorePoint, error) {
	s := j.ckpt
	if s == nil {
		return nil, nil
	}
	rp := &restorePoint{job: s.jobKey}
	switch {
	case s.cfg.RestorePath != "":
		cp, err := state.OpenSavepoint(s.cfg.RestorePath)
		if err != nil {
			return nil, fmt.Errorf("%w: %s = '%s': %w", ErrRestore, KeySavepointPath, s.cfg.RestorePath, err)
		}
		rp.cp, rp.what, rp.dir = cp, s.cfg.RestorePath, s.cfg.RestorePath
	case s.store != nil && s.cfg.Fresh:
		// At warning level, as the resume is: what a run starts from changes what it
		// computes, and must show at the default log level.
		j.opts.Log.Warn(fmt.Sprintf("starting job '%s' fresh, without restoring its checkpoints (%s)", s.jobKey, KeyFreshStart))
		return nil, nil
	case s.store != nil:
		cp, err := s.store.Latest(s.jobKey)
		if errors.Is(err, state.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRestore, err)
		}
		rp.cp, rp.what, rp.fromStore, rp.dir = cp, "checkpoint", true, s.store.Path()
	default:
		return nil, nil
	}
	meta := rp.cp.Meta()
	err := meta.CheckPlan(s.plan, s.operators, s.cfg.AllowNonRestoredState)
	var pm *state.PlanMismatchError
	switch {
	case err == nil:
	case s.cfg.AllowNonRestoredState && errors.As(err, &pm):
		// Changed operators cannot take their old state over: allowed to, they start empty.
		rp.skip = map[string]bool{}
		for _, c := range pm.Changed {
			rp.skip[c[0].ID] = true
			j.opts.Log.Warn("dropping the state of a changed operator (allowed by execution.savepoint.ignore-unclaimed-state)",
				"job", s.jobKey, "operator", c[0].ID, "saved", c[0].Desc, "now", c[1].Desc)
		}
	default:
		return nil, fmt.Errorf("job %q cannot resume from %s %d: %w; to start anyway, dropping the state the plan cannot use, set %s (pipesql run --allow-non-restored-state)",
			s.jobKey, rp.what, rp.cp.ID(), err, KeyIgnoreUnclaimedState)
	}
	if meta.Plan != s.plan {
		have := map[string]bool{}
		for _, op := range s.operators {
			have[op.ID] = true
		}
		for _, op := range meta.Operators {
			if !have[op.ID] {
				j.opts.Log.Warn("dropping the state of an operator the plan no longer has (allowed by execution.savepoint.ignore-unclaimed-state)",
					"job", s.jobKey, "operator", op.ID, "saved", op.Desc)
			}
		}
	}
	if meta.Props[propFinished] == "true" {
		j.opts.Log.Warn("the job already finished: it resumes at the end of its inputs (delete its checkpoints to run it again from the start)",
			"job", s.jobKey, "checkpoint", rp.cp.ID())
	}
	info, err := j.resumeInfo(rp)
	if err != nil {
		return nil, err
	}
	j.stats.resumed(info)
	return rp, nil
}

// resumeInfo describes what a Run starts from, for the announcement and the status.
func (j *Job) resumeInfo(rp *restorePoint) (*ResumeInfo, error) {
	info := &ResumeInfo{
		From: rp.what, ID: rp.cp.ID(), Taken: rp.cp.Meta().Created, Dir: rp.dir,
		Watermark: NoWatermark, Text: rp.describe(),
	}
	noun := ""
	for _, ps := range j.pipelines {
		for _, spec := range ps.sources {
			src, err := rp.sourceRestoreOf(spec.stateID)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrRestore, rp.describe(), err)
			}
			if src == nil || src.splits == nil {
				continue
			}
			wm, n, err := decodeSplitsSummary(src.splits)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: split watermarks: %w", ErrRestore, rp.describe(), err)
			}
			if wm != NoWatermark {
				if info.Watermark == NoWatermark {
					info.Watermark = wm
				}
				info.Watermark = min(info.Watermark, wm)
			}
			info.Splits += n
			sn := "splits"
			if f := spec.scan.Connector; f != nil && f.SplitNoun != "" {
				sn = f.SplitNoun
			}
			if noun != "" && noun != sn {
				sn = "splits"
			}
			noun = sn
		}
	}
	if noun == "" {
		noun = "splits"
	}
	wm := "none"
	if info.Watermark != NoWatermark {
		wm = types.FormatTimestamp(info.Watermark, 3)
	}
	info.Text += fmt.Sprintf(" (watermark %s, offsets of %d %s)", wm, info.Splits, noun)
	return info, nil
}

// announceResume logs, once per restore point, that the job resumed from it: after
// every source restored from it opened and found its input to be the one the
// checkpoint read, so that a refused restore is never announced as a resume.
func (j *Job) announceResume(rp *restorePoint) {
	rp.mu.Lock()
	done := rp.announced
	rp.announced = true
	rp.mu.Unlock()
	if done || rp.own {
		return
	}
	if info := j.stats.snapshot().Resumed; info != nil {
		// At warning level, so that it shows at the default log level: a resume that
		// nothing announced once made a job drop every record as late, silently.
		j.opts.Log.Warn(fmt.Sprintf("resumed job '%s' from %s", rp.job, info.Text))
	}
}

// nextCheckpointID is the id after every completed checkpoint of the job and after
// the one restored.
func (j *Job) nextCheckpointID(rp *restorePoint) uint64 {
	s := j.ckpt
	var last uint64
	if rp != nil {
		last = rp.cp.ID()
	}
	if s != nil && s.store != nil {
		if ids, err := s.store.Completed(s.jobKey); err == nil && len(ids) > 0 {
			last = max(last, ids[0])
		}
	}
	return last + 1
}

// restartPoint is what a restart starts from: the latest checkpoint this Run
// completed, else what the Run started from.
func (j *Job) restartPoint(prev *restorePoint, firstID uint64) (*restorePoint, error) {
	s := j.ckpt
	if s == nil || s.store == nil {
		return prev, nil
	}
	cp, err := s.store.Latest(s.jobKey)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return prev, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrRestore, err)
	case cp.ID() >= firstID:
		return &restorePoint{cp: cp, fromStore: true, what: "checkpoint", dir: s.store.Path(), job: s.jobKey, own: true}, nil
	}
	return prev, nil
}

// stateReaderOf reads one operator's part of a checkpoint.
type stateReaderOf struct {
	cp state.Checkpoint
	op string
}

func (r stateReaderOf) ID() uint64 { return r.cp.ID() }
func (r stateReaderOf) Scan(fn func(key string, value []byte) error) error {
	return r.cp.Scan(r.op, fn)
}

// restoreOf returns the reader of op's saved state, nil when there is none to restore.
func (rp *restorePoint) restoreOf(op string) stateReader {
	if rp == nil || op == "" || rp.skip[op] || !slices.Contains(rp.cp.Operators(), op) {
		return nil
	}
	return stateReaderOf{cp: rp.cp, op: op}
}

// sourceRestoreOf reads a source's saved position and split watermarks.
func (rp *restorePoint) sourceRestoreOf(op string) (*sourceRestore, error) {
	if rp.restoreOf(op) == nil {
		return nil, nil
	}
	r := &sourceRestore{id: rp.cp.ID(), rp: rp, op: op}
	for key, dst := range map[string]*[]byte{sourceConnectorKey: &r.connector, sourceSplitsKey: &r.splits, sourceIdentityKey: &r.identity} {
		v, err := rp.cp.Get(op, key)
		switch {
		case errors.Is(err, state.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			*dst = v
		}
	}
	return r, nil
}

// runOnce runs the job once, from rp (nil: from nothing).
func (j *Job) runOnce(ctx, stopCtx context.Context, rp *restorePoint) error {
	runCtx, abort := context.WithCancelCause(context.WithoutCancel(ctx))
	defer abort(nil)
	g := &group{abort: abort}
	rt := &runEnv{
		clock: j.opts.Clock, log: j.opts.Log, settings: j.settings, batchSize: j.opts.BatchSize,
		stop: stopCtx, checkpointed: map[int]bool{}, failHook: j.failHook,
		allowChangedInput: j.cfg.AllowChangedInput,
	}
	if rp != nil {
		j.stats.restoredFrom(rp.what, rp.cp.ID())
	}
	var coord *coordinator
	if j.ckpt != nil && j.cfg.Enabled() {
		for _, ps := range j.pipelines {
			for _, src := range ps.sources {
				if src.scan != nil {
					rt.checkpointed[ps.index] = true
				}
			}
		}
		if len(rt.checkpointed) > 0 {
			var base uint64
			if rp != nil && rp.fromStore {
				base = rp.cp.ID()
			}
			coord = newCoordinator(j.ckpt, rt, &j.stats, j.nextCheckpointID(rp), base, g.fail)
			rt.coord = coord
		}
	}

	// Build every operator, with its saved state, before starting any task, so that a
	// failure leaves nothing running.
	type built struct {
		ps   *pipelineSpec
		ops  []operator
		srcs []*sourceRestore // by source
	}
	var all []built
	for _, ps := range j.pipelines {
		b := built{ps: ps}
		for _, spec := range ps.sources {
			spec.metrics.reset()
			if spec.src != nil {
				spec.src.reset()
			}
			src, err := rp.sourceRestoreOf(spec.stateID)
			if err != nil {
				return &OperatorError{Pipeline: ps.index, Operator: spec.name, Err: fmt.Errorf("%w: %w", ErrRestore, err)}
			}
			b.srcs = append(b.srcs, src)
		}
		for _, spec := range ps.ops {
			spec.metrics.reset()
			op, err := spec.build(rt, spec.metrics)
			if err != nil {
				return &OperatorError{Pipeline: ps.index, Operator: spec.name, Err: err}
			}
			if r := rp.restoreOf(spec.stateID); r != nil {
				if s, ok := op.(stateful); ok {
					if err := s.restoreState(r); err != nil {
						return &OperatorError{Pipeline: ps.index, Operator: spec.name,
							Err: fmt.Errorf("%w: %s %d: %w", ErrRestore, rp.what, rp.cp.ID(), err)}
					}
				}
			}
			b.ops = append(b.ops, op)
		}
		all = append(all, b)
	}

	// The resume is announced once every restored source has opened and checked its input.
	var opening atomic.Int32
	for _, b := range all {
		for _, src := range b.srcs {
			if src != nil {
				opening.Add(1)
			}
		}
	}
	if rp != nil {
		if opening.Load() == 0 {
			j.announceResume(rp)
		}
		rt.sourceOpened = func() {
			if opening.Add(-1) == 0 {
				j.announceResume(rp)
			}
		}
	}

	type task struct {
		pipeline int
		name     string
		run      func() error
	}
	var start []task
	for _, b := range all {
		ps := b.ps
		// ins[k][port] is the channel of input port of operator k.
		ins := make([][]chan event, len(ps.ops))
		for k, spec := range ps.ops {
			ins[k] = make([]chan event, spec.inputs)
			for i := range ins[k] {
				ins[k][i] = make(chan event, 4)
			}
		}
		for k, op := range b.ops {
			spec := ps.ops[k]
			var out *outbox
			if spec.to >= 0 {
				out = newOutbox(ins[spec.to][spec.port], rt.batchSize, &spec.metrics.out)
				out.blocked = &spec.metrics.blocked
			}
			in := make([]<-chan event, len(ins[k]))
			for i, ch := range ins[k] {
				in[i] = ch
			}
			t := &opTask{pipeline: ps.index, spec: spec, op: op, ins: in, out: out, rt: rt}
			if _, ok := op.(committer); ok && coord != nil && rt.checkpointed[ps.index] {
				t.notify = newCommitNotifier()
				coord.sinks = append(coord.sinks, t.notify)
			}
			start = append(start, task{ps.index, spec.name, func() error { return t.run(runCtx) }})
		}
		for i, spec := range ps.sources {
			st := &sourceTask{
				spec: spec, rt: rt, out: newOutbox(ins[spec.to][spec.port], rt.batchSize, &spec.metrics.out),
				barriers: make(chan uint64, 16), completed: make(chan uint64, 16), restored: b.srcs[i],
			}
			st.out.blocked = &spec.metrics.blocked
			if coord != nil && rt.checkpointed[ps.index] && spec.scan != nil {
				coord.sources = append(coord.sources, st)
				coord.pipelines = append(coord.pipelines, ps.index)
			}
			start = append(start, task{ps.index, spec.name, func() error { return st.run(runCtx) }})
		}
	}

	j.mu.Lock()
	j.coord = coord
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.coord = nil
		j.mu.Unlock()
	}()
	coordDone := make(chan struct{})
	if coord != nil {
		go func() {
			defer close(coordDone)
			coord.run(runCtx, stopCtx.Done(), j.takeStopSavepoint)
		}()
	} else {
		close(coordDone)
	}
	for _, t := range start {
		g.spawn(t.pipeline, t.name, rt.log, t.run)
	}
	err := g.wait()
	abort(nil)
	<-coordDone
	if err == nil && coord != nil && coord.finalErr != nil {
		return fmt.Errorf("final checkpoint: %w", coord.finalErr)
	}
	return err
}

// takeStopSavepoint says where the savepoint of a stop goes: where StopWithSavepoint
// asked, else execution.checkpointing.savepoint-dir ("" for none).
func (j *Job) takeStopSavepoint() savepointRequest {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopSP.reply != nil {
		return j.stopSP
	}
	return savepointRequest{dir: j.cfg.SavepointDir}
}

// Savepoint takes a checkpoint of the running job now, without stopping it, and
// exports it as a savepoint in a new directory under dir, whose path it returns. It
// waits for the checkpoint in flight, if any, to end first.
func (j *Job) Savepoint(ctx context.Context, dir string) (string, error) {
	c, err := j.runningCoordinator()
	if err != nil {
		return "", err
	}
	reply := make(chan savepointResult, 1)
	if !c.send(ctx, savepointRequest{dir: dir, reply: reply}) {
		return "", ErrJobNotRunning
	}
	select {
	case r := <-reply:
		return r.path, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// checkpointNow takes a checkpoint and waits for it to complete, returning its id.
func (j *Job) checkpointNow(ctx context.Context) (uint64, error) {
	c, err := j.runningCoordinator()
	if err != nil {
		return 0, err
	}
	reply := make(chan savepointResult, 1)
	if !c.send(ctx, savepointRequest{reply: reply}) {
		return 0, ErrJobNotRunning
	}
	select {
	case r := <-reply:
		return r.id, r.err
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
}

// StopWithSavepoint stops the running job as cancelling Run's context does (sources
// stop, what is in flight drains, nothing more fires) after a final checkpoint that it
// exports as a savepoint in a new directory under dir. It returns the savepoint's path
// once written; Run then returns nil. This is what STOP JOB ... WITH SAVEPOINT does.
func (j *Job) StopWithSavepoint(ctx context.Context, dir string) (string, error) {
	if _, err := j.runningCoordinator(); err != nil {
		return "", err
	}
	reply := make(chan savepointResult, 1)
	j.mu.Lock()
	if j.stopSP.reply != nil {
		j.mu.Unlock()
		return "", fmt.Errorf("%w: the job is already stopping with a savepoint", ErrJobNotRunning)
	}
	j.stopSP = savepointRequest{dir: dir, reply: reply}
	stop := j.stopRun
	j.mu.Unlock()
	stop()
	select {
	case r := <-reply:
		return r.path, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

func (j *Job) runningCoordinator() (*coordinator, error) {
	if j.ckpt == nil || !j.cfg.Enabled() {
		return nil, ErrCheckpointingDisabled
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.coord == nil {
		return nil, fmt.Errorf("%w (or it is restarting)", ErrJobNotRunning)
	}
	return j.coord, nil
}
