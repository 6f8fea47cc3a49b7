package exec

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
)

// This file holds what the runtime shows about a running job beyond its counters: where
// the job is in its life (running, waiting to restart, ended), what its connectors
// report about themselves (connectors.Reporter) and how much state its aggregates hold.
// Package obs turns it into job status, metrics and the progress line.

// Phase is where a job is in its life.
type Phase int

const (
	// PhaseCreated: Run has not been called.
	PhaseCreated Phase = iota
	// PhaseRunning: Run is running the job's tasks.
	PhaseRunning
	// PhaseRestarting: the job failed and waits to restart under its restart strategy.
	PhaseRestarting
	// PhaseEnded: Run returned (Lifecycle.Err says whether it failed).
	PhaseEnded
)

func (p Phase) String() string {
	return [...]string{"created", "running", "restarting", "ended"}[p]
}

// Lifecycle is where a job is in its life, for status displays.
type Lifecycle struct {
	Phase Phase
	// Started is when Run was called; Ended when it returned (zero before).
	Started, Ended time.Time
	// Err is the failure Run returned (PhaseEnded) or the one the job is restarting
	// from (PhaseRestarting); nil otherwise.
	Err error
	// Stopped is true when Run returned because it was asked to stop (its context was
	// cancelled, StopWithSavepoint), not because its inputs ended or it failed.
	Stopped bool
	// Restarts counts the restarts of the current Run, the one waited for included.
	Restarts int
	// NextAttempt is when a restarting job runs again.
	NextAttempt time.Time
	// Exceptions are the last ExceptionHistory failures of the job (those it restarted
	// from, and the one it ended with), oldest first.
	Exceptions []Exception
}

// ExceptionHistory is how many failures Lifecycle.Exceptions keeps.
const ExceptionHistory = 16

// Exception is one failure of a job.
type Exception struct {
	At  time.Time
	Err string
	// Restart is the restart it caused (from 1), 0 when the job ended with it.
	Restart int
}

// lifecycle tracks a job's Lifecycle; Run updates it.
type lifecycle struct {
	mu sync.Mutex
	l  Lifecycle
}

func (l *lifecycle) start(now time.Time) {
	l.mu.Lock()
	l.l = Lifecycle{Phase: PhaseRunning, Started: now}
	l.mu.Unlock()
}

func (l *lifecycle) restarting(now, next time.Time, err error) {
	l.mu.Lock()
	l.l.Phase, l.l.Err, l.l.NextAttempt = PhaseRestarting, err, next
	l.l.Restarts++
	l.exception(Exception{At: now, Err: errText(err), Restart: l.l.Restarts})
	l.mu.Unlock()
}

func (l *lifecycle) resumed() {
	l.mu.Lock()
	l.l.Phase, l.l.Err, l.l.NextAttempt = PhaseRunning, nil, time.Time{}
	l.mu.Unlock()
}

func (l *lifecycle) end(now time.Time, err error, stopped bool) {
	l.mu.Lock()
	l.l.Phase, l.l.Ended, l.l.Err, l.l.NextAttempt = PhaseEnded, now, err, time.Time{}
	l.l.Stopped = err == nil && stopped
	if err != nil {
		l.exception(Exception{At: now, Err: err.Error()})
	}
	l.mu.Unlock()
}

// exception adds e to the history; l.mu is held.
func (l *lifecycle) exception(e Exception) {
	if n := len(l.l.Exceptions); n >= ExceptionHistory {
		l.l.Exceptions = append(l.l.Exceptions[:0:0], l.l.Exceptions[n-ExceptionHistory+1:]...)
	}
	l.l.Exceptions = append(l.l.Exceptions, e)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Lifecycle returns where the job is in its life. It is safe to call concurrently with Run.
func (j *Job) Lifecycle() Lifecycle {
	j.life.mu.Lock()
	defer j.life.mu.Unlock()
	l := j.life.l
	l.Exceptions = append([]Exception(nil), l.Exceptions...)
	return l
}

// ConnectorReport is what a source's connector last reported about itself
// (connectors.Reporter): per-split lag and offsets, discovery and commit counters.
type ConnectorReport []connectors.Measure

// connReporting holds a source's latest ConnectorReport. The source task writes it, any
// goroutine reads it.
type connReporting struct {
	mu       sync.Mutex
	measures ConnectorReport
	// Owned by the source task: when it last reported, and the rows read by the poll
	// before.
	last     time.Time
	prevRead int64
}

func (c *connReporting) load() ConnectorReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.measures
}

// reportInterval is how often a source's connector is asked for its report while rows
// flow; a poll that returned nothing reports at once, so an idle or finished source
// shows its final numbers.
const reportInterval = 100 * time.Millisecond

// reportConnector asks the connector for its report after a poll (connectors.Reporter).
func (t *sourceTask) reportConnector() {
	r, ok := t.src.(connectors.Reporter)
	if !ok {
		return
	}
	c := &t.spec.src.conn
	now, read := t.rt.clock.Now(), t.spec.src.read.load()
	idle := read == c.prevRead // this poll read nothing
	c.prevRead = read
	if !idle && !c.last.IsZero() && now.Sub(c.last) < reportInterval {
		return
	}
	c.last = now
	measures := r.Report()
	c.mu.Lock()
	c.measures = measures
	c.mu.Unlock()
}

// StateMetrics describes the state an aggregate operator holds, sampled from the
// operator's goroutine about once a second.
type StateMetrics struct {
	// Groups counts the group entries held: per open window slice (a key in two open
	// windows counts twice) for a window aggregate, every group for a GROUP BY.
	Groups int64
	// Aggregates describes each aggregate call, in the order of the query.
	Aggregates []AggregateState
}

// AggregateState is the state one aggregate call shares between its groups.
type AggregateState struct {
	// Name is the aggregate's output column.
	Name string
	// SharedBytes is the memory of the state its buffers share: the dictionary that maps
	// the values of a COUNT(DISTINCT) over strings or 64-bit numbers to dense ids for
	// its bitmaps; 0 for other aggregates, whose state is in their buffers.
	SharedBytes int64
	// DictionaryEntries counts the distinct values in that dictionary.
	DictionaryEntries int64
}

// stateSampling holds an operator's latest StateMetrics.
type stateSampling struct {
	mu sync.Mutex
	m  *StateMetrics
}

func (s *stateSampling) load() *StateMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

// stateSampleInterval is how often an aggregate's state is measured.
const stateSampleInterval = time.Second

// stateMeasurer is implemented by operators that can say how much state they hold.
// It is called from the operator's goroutine.
type stateMeasurer interface {
	measureState() StateMetrics
}

// stateTicks returns the ticks on which the task samples its operator's state (nil for
// an operator without state to measure) and what stops them. A ticker rather than
// sampling after events, so that the state of a job whose input paused is still shown
// as it is. It ticks on the machine's clock, not the job's: sampling changes nothing
// the job computes, and a test that drives the job's clock counts the job's own timers.
func (t *opTask) stateTicks() (<-chan time.Time, func()) {
	if _, ok := t.op.(stateMeasurer); !ok {
		return nil, func() {}
	}
	tk := connectors.WallClock{}.NewTicker(stateSampleInterval)
	return tk.C(), tk.Stop
}

// observeState samples the operator's state, between events, where it is consistent.
func (t *opTask) observeState() {
	sm, ok := t.op.(stateMeasurer)
	if !ok {
		return
	}
	m := sm.measureState()
	s := &t.spec.metrics.state
	s.mu.Lock()
	s.m = &m
	s.mu.Unlock()
}

func (o *windowAggOp) measureState() StateMetrics {
	var m StateMetrics
	for _, t := range o.slices {
		m.Groups += int64(len(t.index))
	}
	for _, t := range o.runs {
		m.Groups += int64(len(t.index))
	}
	m.Aggregates = aggregateStates(o.cfg.aggs, o.funcs)
	return m
}

func (o *groupAggOp) measureState() StateMetrics {
	var m StateMetrics
	if o.groups != nil {
		m.Groups = int64(len(o.groups.index))
	}
	// A retracting aggregate has one more Func, its row counter (group_retract.go).
	m.Aggregates = aggregateStates(o.cfg.aggs, o.funcs[:len(o.cfg.aggs.calls)])
	return m
}

// aggregateStates measures the shared state of each aggregate call.
func aggregateStates(calls *aggCalls, funcs []agg.Func) []AggregateState {
	out := make([]AggregateState, len(funcs))
	for i, f := range funcs {
		out[i] = AggregateState{
			Name:        calls.calls[i].Name,
			SharedBytes: int64(f.SharedBytes()),
			// The low 32 bits of the mark count the dictionary's entries.
			DictionaryEntries: int64(f.SharedMark() & 0xffffffff),
		}
	}
	return out
}

// Log lets connectors log at any level (connectors.LevelLogger), so that librdkafka's
// own log lines keep their levels.
func (c connLogger) Log(ctx context.Context, level slog.Level, msg string, args ...any) {
	c.l.Log(ctx, level, msg, withoutTable(args)...)
}

var _ connectors.LevelLogger = connLogger{}
