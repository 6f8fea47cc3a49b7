package exec

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/exec/restart"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

// Options configures a Job. The zero value is valid.
type Options struct {
	// Clock is where time comes from: periodic watermarks, idle splits, processing-time
	// windows, CURRENT_TIMESTAMP. Default: the wall clock.
	Clock connectors.Clock
	// Log receives the job's warnings and those of its connectors. Default: discarded.
	Log *slog.Logger
	// Collect receives the rows of a SELECT (a Collect root), in order, with their kinds.
	// It is called from one goroutine. Required when the program has a SELECT.
	Collect func(kind connectors.RowKind, row types.Row)
	// BatchSize is the most rows an operator sends downstream in one batch. Default: 1024.
	BatchSize int
	// Store keeps the job's checkpoints when execution.checkpointing.interval is set, and
	// is where Run resumes from: the latest checkpoint of JobKey in it. nil: an in-memory
	// store, so checkpoints serve restarts within this process only.
	Store state.Store
	// JobKey names the job's checkpoints in Store. It must stay the same across changes
	// of the query for the upgrade check to see the old state. Default: the program's
	// fingerprint.
	JobKey string
	// Restart replaces the restart strategy the settings configure (restart-strategy.*,
	// see package restart).
	Restart restart.Strategy
}

// defaultWatermarkInterval is Flink's default pipeline.auto-watermark-interval, for
// tests that compile without settings.
const defaultWatermarkInterval = 200 * time.Millisecond

// Job is a compiled program, ready to run. Its configuration is fixed by NewJob. Run
// starts from the savepoint of execution.savepoint.path, else from the latest checkpoint
// in Options.Store, else from empty state.
type Job struct {
	opts      Options
	settings  map[string]string
	pipelines []*pipelineSpec
	cfg       CheckpointConfig
	ckpt      *checkpointSetup // nil when the job does not checkpoint
	restart   restart.Strategy
	stats     checkpointStats
	life      lifecycle // for Lifecycle (observe.go)
	// failHook, when set, is called before each batch an operator processes; an error it
	// returns fails the operator (tests inject failures with it).
	failHook func(pipeline int, operator string) error

	running atomic.Bool
	mu      sync.Mutex
	coord   *coordinator       // of the run in progress, nil between runs
	stopRun context.CancelFunc // stops the Run in progress
	stopSP  savepointRequest   // the savepoint StopWithSavepoint asked for
}

// checkpointSetup is what checkpointing a job needs, fixed by NewJob.
type checkpointSetup struct {
	cfg       CheckpointConfig
	store     state.Store
	jobKey    string
	plan      string           // the program's fingerprint
	operators []state.Operator // the stateful operators, for Meta and CheckPlan
}

// pipelineSpec is one compiled pipeline: a tree of tasks, its leaves source tasks, its
// root a sink or a collect. Each source and operator but the root feeds one input (port)
// of one operator (to, an index into ops).
type pipelineSpec struct {
	index     int
	statement string
	sources   []*sourceSpec
	ops       []*opSpec // every operator after the inputs it reads, the root last
}

// runEnv is what the tasks of one run share.
type runEnv struct {
	clock     connectors.Clock
	log       *slog.Logger
	settings  map[string]string
	batchSize int
	stop      context.Context // cancelled when the job is to stop cleanly
	coord     *coordinator    // nil when the run does not checkpoint
	// checkpointed holds the pipelines that take part in checkpoints (those reading a table).
	checkpointed map[int]bool
	failHook     func(pipeline int, operator string) error
	// allowChangedInput is pipesql.restore.allow-changed-input: a restored source whose
	// input is not the one its checkpoint read warns instead of failing.
	allowChangedInput bool
	// sourceOpened is called by each restored source once it opened and checked its
	// input; nil when the run restores nothing.
	sourceOpened func()
}

// NewJob compiles prog: expressions, aggregates, windows and the shape of each pipeline.
// Its errors are plan-time errors; connectors are opened by Run.
func NewJob(prog *planner.Program, opts Options) (*Job, error) {
	if prog == nil {
		return nil, fmt.Errorf("%w: no program", ErrUnsupportedPlan)
	}
	if opts.Clock == nil {
		opts.Clock = connectors.WallClock{}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case opts.BatchSize == 0:
		opts.BatchSize = 1024
	case opts.BatchSize < 0:
		return nil, fmt.Errorf("%w: BatchSize %d is negative", ErrInvalidOptions, opts.BatchSize)
	}
	settings := prog.Settings
	if settings == nil {
		settings = map[string]string{}
	}
	// The settings the runtime reads from planner.Program.Settings, besides those of
	// checkpoints and restarts.
	v := config.Read(settings)
	wmInterval := v.Duration(config.AutoWatermarkInterval)
	miniBatch := v.Bool(config.MiniBatchEnabled)
	stateTTL := v.Duration(config.StateTTL)
	loc, err := config.LoadTimeZone(v.String(config.LocalTimeZone))
	if err == nil {
		err = v.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	c := &compiler{
		opts: opts, env: eval.Env{Location: loc, Now: opts.Clock.Now},
		wmInterval: wmInterval, miniBatch: miniBatch, stateTTL: stateTTL, settings: settings,
	}
	j := &Job{opts: opts, settings: settings}
	for i, p := range prog.Pipelines {
		ps, err := c.pipeline(i, p)
		if err != nil {
			if len(prog.Pipelines) > 1 {
				return nil, fmt.Errorf("statement %d: %w", i+1, err)
			}
			return nil, err
		}
		j.pipelines = append(j.pipelines, ps)
	}
	if j.cfg, err = ReadCheckpointConfig(settings); err != nil {
		return nil, err
	}
	j.restart = opts.Restart
	if j.restart == nil {
		if j.restart, err = restart.FromSettings(settings, j.cfg.Enabled(), nil); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
		}
	}
	if j.cfg.Enabled() || j.cfg.RestorePath != "" {
		j.ckpt = j.checkpointSetup(prog)
	}
	return j, nil
}

// checkpointSetup describes the job's state for checkpoints.
func (j *Job) checkpointSetup(prog *planner.Program) *checkpointSetup {
	s := &checkpointSetup{cfg: j.cfg, store: j.opts.Store, jobKey: j.opts.JobKey, plan: prog.Fingerprint}
	if s.jobKey == "" {
		s.jobKey = prog.Fingerprint
	}
	if s.jobKey == "" {
		s.jobKey = "job"
	}
	if s.store == nil && j.cfg.Enabled() {
		log := j.opts.Log
		s.store = state.NewMemory(state.Options{
			NumRetained: j.cfg.NumRetained + 1,
			Warn:        func(err error) { log.Warn("checkpoint storage", "err", err) },
		})
	}
	for _, ps := range j.pipelines {
		for _, src := range ps.sources {
			if src.stateID != "" {
				s.operators = append(s.operators, state.Operator{ID: src.stateID, Desc: src.stateDesc})
			}
		}
		for _, op := range ps.ops {
			if op.stateID != "" {
				s.operators = append(s.operators, state.Operator{ID: op.stateID, Desc: op.stateDesc})
			}
		}
	}
	return s
}

// compiler turns plan nodes into task specs.
type compiler struct {
	opts       Options
	env        eval.Env
	wmInterval time.Duration
	miniBatch  bool
	stateTTL   time.Duration // table.exec.state.ttl
	settings   map[string]string
}

// pipeline compiles one pipeline. A pipeline is a tree: each leaf (a scan or values)
// with the Calc and WatermarkAssigner nodes right above it is a source task, every other
// node a task of its own; a Join or Union reads several inputs. Exchange nodes move
// nothing in one process and compile to nothing.
func (c *compiler) pipeline(index int, p *planner.Pipeline) (*pipelineSpec, error) {
	if p == nil || p.Root == nil {
		return nil, fmt.Errorf("%w: empty pipeline", ErrUnsupportedPlan)
	}
	switch p.Root.(type) {
	case *planner.Sink, *planner.Collect:
	default:
		if len(p.Root.Children()) == 0 {
			return nil, fmt.Errorf("%w: pipeline has no sink", ErrUnsupportedPlan)
		}
		return nil, fmt.Errorf("%w: a pipeline must end in a sink or a select, not %s", ErrUnsupportedPlan, p.Root.Explain())
	}
	pc := &pipelineCompiler{c: c, ps: &pipelineSpec{index: index, statement: p.Statement},
		seen: map[string]int{}, seenSrc: map[string]int{}}
	if _, _, err := pc.node(p.Root, true); err != nil {
		return nil, err
	}
	return pc.ps, nil
}

// pipelineCompiler compiles the nodes of one pipeline, numbering their state ids.
type pipelineCompiler struct {
	c  *compiler
	ps *pipelineSpec
	// seen and seenSrc count operators and sources by name: the second of a kind in a
	// pipeline gets "<pipeline>/<name> 2" as its state id, and so on, in the order the
	// tree is compiled (inputs first, left to right), so that a chain keeps the ids it
	// always had.
	seen, seenSrc map[string]int
}

// node compiles n and the nodes below it. connect tells n's task where its output goes
// (port of operator to); updating is whether that output carries updates.
func (pc *pipelineCompiler) node(n planner.Node, isRoot bool) (connect func(to, port int), updating bool, err error) {
	if x, ok := n.(*planner.Exchange); ok && !isRoot {
		return pc.node(x.Input, false)
	}
	if !isRoot {
		if chain := sourceChain(n); chain != nil {
			src, err := pc.source(chain)
			if err != nil {
				return nil, false, err
			}
			updating := planner.ChangelogOf(n) != planner.InsertOnly
			return func(to, port int) { src.to, src.port = to, port }, updating, nil
		}
	}
	kids := n.Children()
	if len(kids) == 0 {
		return nil, false, fmt.Errorf("%w: a pipeline must start with a table scan or values, not %s", ErrUnsupportedPlan, n.Explain())
	}
	conns := make([]func(int, int), len(kids))
	ups := make([]bool, len(kids))
	for i, k := range kids {
		if conns[i], ups[i], err = pc.node(k, false); err != nil {
			return nil, false, err
		}
	}
	index := pc.ps.index
	spec, err := pc.c.operator(index, n, isRoot, ups)
	if err != nil {
		return nil, false, err
	}
	spec.id = fmt.Sprintf("%d:%s", len(pc.ps.ops)+1, spec.name)
	spec.metrics = newOpMetrics(index, spec.name)
	spec.inputs = len(kids)
	spec.to = -1
	if spec.stateDesc != "" {
		pc.seen[spec.name]++
		spec.stateID = fmt.Sprintf("%d/%s", index, spec.name)
		if k := pc.seen[spec.name]; k > 1 {
			spec.stateID += fmt.Sprintf(" %d", k)
		}
	}
	at := len(pc.ps.ops)
	pc.ps.ops = append(pc.ps.ops, spec)
	for i, conn := range conns {
		conn(at, i)
	}
	for _, u := range ups {
		updating = updating || u
	}
	switch x := n.(type) {
	case *planner.GroupAggregate, *planner.Rank, *planner.ChangelogNormalize:
		updating = true
	case *planner.Deduplicate:
		updating = updating || x.Changelog() == planner.Updating
	case *planner.Join:
		updating = updating || x.Type != planner.InnerJoin
	case *planner.SemiJoin:
		updating = updating || x.Anti
	case *planner.TemporalJoin:
		updating = ups[0] // the versioned right side's changes end in its state
	}
	return func(to, port int) { spec.to, spec.port = to, port }, updating, nil
}

// sourceChain returns the nodes of n's source task, leaf first: n and the Calc and
// WatermarkAssigner (and Exchange) nodes below it down to a scan or values; nil when
// n is not such a chain.
func sourceChain(n planner.Node) []planner.Node {
	var chain []planner.Node
	for {
		switch n.(type) {
		case *planner.TableSourceScan, *planner.Values:
			return append([]planner.Node{n}, chain...)
		case *planner.Calc, *planner.WatermarkAssigner, *planner.Exchange:
			chain = append([]planner.Node{n}, chain...)
			n = n.Children()[0]
		default:
			return nil
		}
	}
}

// source compiles a source task: the scan or values chain[0], and the nodes above it
// fused into its task.
func (pc *pipelineCompiler) source(chain []planner.Node) (*sourceSpec, error) {
	c, index := pc.c, pc.ps.index
	src := &sourceSpec{pipeline: index, wmInterval: c.wmInterval}
	switch n := chain[0].(type) {
	case *planner.TableSourceScan:
		src.scan = n
		src.name = "source " + n.Table
		src.src = newSrcMetrics(index, n.Table)
		pc.seenSrc[src.name]++
		src.stateID = fmt.Sprintf("%d/%s", index, src.name)
		if k := pc.seenSrc[src.name]; k > 1 {
			src.stateID += fmt.Sprintf(" %d", k)
		}
		conn := ""
		if n.Connector != nil {
			conn = n.Connector.Name
		}
		src.stateDesc = fmt.Sprintf("source %s (%s) v%d", n.Table, conn, stateVersion)
		if len(n.Out) != len(n.Produce) {
			return nil, fmt.Errorf("%w: scan of %s produces %d columns but its schema has %d",
				ErrUnsupportedPlan, n.Table, len(n.Produce), len(n.Out))
		}
	case *planner.Values:
		src.name = "values"
		for _, row := range n.Rows {
			if len(row) != len(n.Out) {
				return nil, fmt.Errorf("%w: values row of %d columns, want %d", ErrUnsupportedPlan, len(row), len(n.Out))
			}
			evs := make([]eval.Evaluator, len(row))
			for i, e := range row {
				ev, err := eval.Compile(e, c.env)
				if err != nil {
					return nil, fmt.Errorf("values: %w", err)
				}
				evs[i] = ev
			}
			src.values = append(src.values, evs)
		}
	}
	src.metrics = newOpMetrics(index, src.name)
	for _, node := range chain[1:] {
		switch n := node.(type) {
		case *planner.Calc:
			env := c.env
			env.Watermark = (&watermarkCell{m: src.metrics}).get // current_watermark.go
			prog, err := compileCalc(n, env)
			if err != nil {
				return nil, err
			}
			src.stages = append(src.stages, sourceStage{calc: prog})
		case *planner.WatermarkAssigner:
			if src.hasWM || src.scan == nil {
				return nil, fmt.Errorf("%w: %s must be right above a table scan", ErrUnsupportedPlan, n.Explain())
			}
			wm, err := compileWatermark(n, c.env)
			if err != nil {
				return nil, err
			}
			src.stages = append(src.stages, sourceStage{wm: wm})
			src.hasWM = true
			src.idle = n.IdleTimeout
		}
	}
	pc.ps.sources = append(pc.ps.sources, src)
	return src, nil
}

// operator compiles a node above the source tasks; inputs says which of its inputs
// carry updates.
func (c *compiler) operator(pipeline int, node planner.Node, isRoot bool, inputs []bool) (*opSpec, error) {
	updating := false
	for _, u := range inputs {
		updating = updating || u
	}
	switch node.(type) {
	case *planner.Sink, *planner.Collect:
		if !isRoot {
			return nil, fmt.Errorf("%w: %s is not the root of its pipeline", ErrUnsupportedPlan, node.Explain())
		}
	default:
		if isRoot {
			return nil, fmt.Errorf("%w: a pipeline must end in a sink or a select, not %s", ErrUnsupportedPlan, node.Explain())
		}
	}
	switch n := node.(type) {
	case *planner.Calc:
		cell, env := &watermarkCell{}, c.env
		env.Watermark = cell.get // current_watermark.go
		prog, err := compileCalc(n, env)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "calc", build: func(_ *runEnv, m *opMetrics) (operator, error) {
			cell.m = m
			return &calcOp{prog: prog}, nil
		}}, nil
	case *planner.WindowAggregate:
		if updating {
			return nil, fmt.Errorf("%w: window aggregate over an updating input", ErrUnsupportedPlan)
		}
		if n.Window.Kind == planner.SessionWindow {
			return compileSessionAgg(n) // session_window.go
		}
		cfg, err := compileWindowAgg(n)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "window aggregate", stateDesc: describeWindowAgg(n), build: func(rt *runEnv, m *opMetrics) (operator, error) {
			return newWindowAggOp(cfg, m, rt.clock)
		}}, nil
	case *planner.GroupAggregate:
		if updating && !n.Retract {
			return nil, fmt.Errorf("%w: group aggregate over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileGroupAgg(n, c.miniBatch)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "group aggregate", stateDesc: describeGroupAgg(n), build: func(*runEnv, *opMetrics) (operator, error) {
			return newGroupAggOp(cfg)
		}}, nil
	case *planner.Join:
		cfg, err := compileJoin(n, c.env, c.stateTTL)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "join", stateDesc: describeJoin(n), build: func(rt *runEnv, _ *opMetrics) (operator, error) {
			return newJoinOp(cfg, rt.clock), nil
		}}, nil
	case *planner.TemporalJoin:
		return compileTemporalJoin(n, c.env, inputs) // temporal_join.go
	case *planner.IntervalJoin:
		if updating {
			return nil, fmt.Errorf("%w: interval join over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileIntervalJoin(n, c.env)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "interval join", stateDesc: describeIntervalJoin(n), build: func(rt *runEnv, _ *opMetrics) (operator, error) {
			return newIntervalJoinOp(cfg, rt.clock), nil
		}}, nil
	case *planner.WindowJoin:
		if updating {
			return nil, fmt.Errorf("%w: window join over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileWindowJoin(n, c.env)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "window join", stateDesc: describeWindowJoin(n), build: func(rt *runEnv, m *opMetrics) (operator, error) {
			return newWindowJoinOp(cfg, m), nil
		}}, nil
	case *planner.SemiJoin:
		if updating && n.NullAware {
			return nil, fmt.Errorf("%w: null-aware anti join over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileSemiJoin(n, c.env)
		if err != nil {
			return nil, err
		}
		name := "semi join"
		if n.Anti {
			name = "anti join"
		}
		return &opSpec{name: name, stateDesc: describeSemiJoin(n), build: func(rt *runEnv, _ *opMetrics) (operator, error) {
			return newSemiJoinOp(cfg, n), nil
		}}, nil
	case *planner.Union:
		for _, in := range n.Inputs {
			if len(in.Schema()) != len(n.Out) {
				return nil, fmt.Errorf("%w: union input of %d columns, want %d", ErrUnsupportedPlan, len(in.Schema()), len(n.Out))
			}
		}
		return &opSpec{name: "union", build: func(*runEnv, *opMetrics) (operator, error) {
			return unionOp{}, nil
		}}, nil
	case *planner.Rank:
		if updating && n.Strategy == planner.AppendFastStrategy {
			return nil, fmt.Errorf("%w: %s over an updating input", ErrUnsupportedPlan, n.Strategy)
		}
		cfg, err := compileRank(n)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "rank", stateDesc: describeRank(n.Input.Schema(), cfg), build: func(*runEnv, *opMetrics) (operator, error) {
			return newRankOp(cfg), nil
		}}, nil
	case *planner.Deduplicate:
		if updating {
			return nil, fmt.Errorf("%w: deduplicate over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileDedup(n)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "deduplicate", stateDesc: describeRank(n.Input.Schema(), cfg), build: func(*runEnv, *opMetrics) (operator, error) {
			return newRankOp(cfg), nil
		}}, nil
	case *planner.Expand:
		op, err := compileExpand(n) // expand.go
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "expand", build: func(*runEnv, *opMetrics) (operator, error) {
			return op, nil
		}}, nil
	case *planner.WindowRank:
		if updating {
			return nil, fmt.Errorf("%w: window rank over an updating input", ErrUnsupportedPlan)
		}
		cfg, tvf, err := compileWindowRank(n) // window_rank.go
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "window rank", stateDesc: "window " + describeRank(n.Input.Schema(), cfg), build: func(_ *runEnv, m *opMetrics) (operator, error) {
			return &windowRankOp{cfg: cfg, tvf: tvf, m: m, wm: NoWatermark}, nil
		}}, nil
	case *planner.TemporalSort:
		return compileTemporalSort(n, updating) // temporal_sort.go
	case *planner.Match:
		return compileMatch(n, c.env, updating) // match.go
	case *planner.Limit:
		return compileLimit(n, updating) // temporal_sort.go
	case *planner.OverAggregate:
		if updating {
			return nil, fmt.Errorf("%w: over aggregate over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileOver(n) // over.go
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "over aggregate", stateDesc: describeOver(n), build: func(rt *runEnv, m *opMetrics) (operator, error) {
			return newOverOp(cfg, m, rt.clock)
		}}, nil
	case *planner.ChangelogNormalize:
		cfg, err := compileNormalize(n) // normalize.go
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "changelog normalize", stateDesc: describeNormalize(n), build: func(*runEnv, *opMetrics) (operator, error) {
			return cfg.fresh(), nil
		}}, nil
	case *planner.LookupJoin:
		if updating {
			return nil, fmt.Errorf("%w: lookup join over an updating input", ErrUnsupportedPlan)
		}
		cfg, err := compileLookupJoin(n, c.env) // lookup_join.go
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "lookup join " + n.Table, build: func(rt *runEnv, _ *opMetrics) (operator, error) {
			return &lookupJoinOp{cfg: cfg, settings: rt.settings, log: rt.log, clock: rt.clock}, nil
		}}, nil
	case *planner.Correlate:
		op, err := compileCorrelate(n, c.env) // correlate.go
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "correlate", build: func(*runEnv, *opMetrics) (operator, error) {
			return op, nil
		}}, nil
	case *planner.WindowTableFunction:
		cfg, err := compileWindowTVF(n)
		if err != nil {
			return nil, err
		}
		return &opSpec{name: "window table function", build: func(rt *runEnv, m *opMetrics) (operator, error) {
			return &windowTVFOp{cfg: cfg, m: m, clock: rt.clock, zone: newZone(cfg.win.loc)}, nil
		}}, nil
	case *planner.Sink:
		if len(n.Out) != len(n.Input.Schema()) {
			return nil, fmt.Errorf("%w: sink %s takes %d columns but its input has %d",
				ErrUnsupportedPlan, n.Table, len(n.Out), len(n.Input.Schema()))
		}
		if updating && n.Changelog != planner.Updating {
			return nil, fmt.Errorf("%w: sink %s is planned insert-only but its input is updating", ErrUnsupportedPlan, n.Table)
		}
		conn := ""
		if n.Connector != nil {
			conn = n.Connector.Name
		}
		desc := fmt.Sprintf("sink %s (%s) v%d", n.Table, conn, stateVersion)
		recent := &recentRows{schema: n.Out}
		return &opSpec{name: "sink " + n.Table, stateDesc: desc, recent: recent, build: func(rt *runEnv, m *opMetrics) (operator, error) {
			return &sinkOp{node: n, settings: rt.settings, log: rt.log, clock: rt.clock, checkpointed: rt.checkpointed[pipeline], metrics: m,
				recent: recent}, nil
		}}, nil
	case *planner.Collect:
		collect := c.opts.Collect
		if collect == nil {
			return nil, ErrNoCollector
		}
		recent := &recentRows{schema: n.Schema()}
		return &opSpec{name: "collect", recent: recent, build: func(*runEnv, *opMetrics) (operator, error) {
			return &collectOp{collect: collect, recent: recent}, nil
		}}, nil
	case *planner.WatermarkAssigner:
		return nil, fmt.Errorf("%w: %s must be right above a table scan", ErrUnsupportedPlan, n.Explain())
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedPlan, node.Explain())
}

// Metrics returns the job's counters. It is safe to call concurrently with Run.
func (j *Job) Metrics() Metrics {
	var m Metrics
	for _, ps := range j.pipelines {
		for _, src := range ps.sources {
			if src.src != nil {
				m.Sources = append(m.Sources, src.src.snapshot())
			}
			m.Operators = append(m.Operators, src.metrics.snapshot())
		}
		for _, op := range ps.ops {
			m.Operators = append(m.Operators, op.metrics.snapshot())
		}
	}
	m.Checkpoints = j.stats.snapshot()
	return m
}

// Statements returns the canonical SQL of each pipeline, for job names and SHOW JOBS.
func (j *Job) Statements() []string {
	s := make([]string, len(j.pipelines))
	for i, ps := range j.pipelines {
		s[i] = ps.statement
	}
	return s
}
