package exec

// matchOp runs a planner.Match (MATCH_RECOGNIZE, ONE ROW PER MATCH). Per partition key,
// rows wait until the watermark passes them (a row at or behind the watermark on
// arrival is late: dropped and counted), then join the partition's sequence in event
// time order.
//
// The pattern is compiled to a small program (matchProgram: a variable that takes a
// row, a split between two continuations in order of preference, a jump, the ends of
// an iteration that may take no row, the end of a match) and run as a Pike VM: from
// the earliest row a match may start at, the partial matches (threads, each a place in
// the program and the chain of rows mapped to variables so far) advance together row by
// row, in SQL:2016's order of preference (greedy quantifiers one more iteration first,
// reluctant ones one fewer, alternatives left to right). A thread that reaches the end
// of the pattern is the best match so far and ends every thread less preferred; the
// match is final when no more preferred thread is left. Two threads at the same place
// with the same mapping (or, when no DEFINE reads the mapping, any two threads at the
// same place) have the same future, so the less preferred one is dropped: nested
// quantifiers such as (A+)+ cost the size of the program per row, not an exponential.
// Threads that need a row not released yet wait for the next watermark, unless WITHIN
// rules every later row out; so a match is emitted once, and exactly as the whole input
// gives it. After a match, AFTER MATCH SKIP chooses where the next search starts; a
// start row with no match is passed. Rows before the next start are dropped, but for
// the few that PREV may still read.
//
// The output holds back the watermark to just below the earliest row a later match may
// still start at, so that no match is late for the operators after it.

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

type matchConfig struct {
	n        *planner.Match
	width    int
	timeCol  int
	part     []int
	keys     []planner.SortKey
	navs     []planner.MatchNav
	navVar   []int32          // the variable of each nav, -1 for every row
	aggs     []agg.Func       // the aggregate of each NavAgg, nil for COUNT(*) and other navs
	aggArgs  []eval.Evaluator // the argument of an aggregate over an expression
	vars     []string
	define   []eval.Evaluator // per variable; nil: TRUE
	reads    [][]int          // per variable: the navs its DEFINE reads
	allNavs  []int
	measures []eval.Evaluator
	within   int64 // micros, 0 without WITHIN
	history  int   // rows before a match start that PREV may read
	prog     matchProgram
	// mapped: a DEFINE reads the mapping of earlier rows, so only threads with the same
	// mapping may merge.
	mapped bool
}

// matchThreadLimit bounds the partial matches of one search. Threads at the same place
// merge when their mappings are equal, but conditions that read the mapping (A.v in
// DEFINE B over (A | B)+) can keep one thread per mapping alive.
var matchThreadLimit = 100_000

// matchProgram is a compiled row pattern; the search starts at instruction 0.
type matchProgram []matchInst

type matchOpcode uint8

const (
	instVar       matchOpcode = iota // take the row for variable v if its DEFINE holds
	instSplit                        // go on at x, and, less preferred, at y
	instJmp                          // go on at x
	instIterBegin                    // an iteration of a group that may take no row begins
	instIterEnd                      // it ends: an iteration that took no row is no iteration
	instMatch                        // the pattern is matched
)

type matchInst struct {
	op   matchOpcode
	v    int32  // instVar: the variable
	x, y int32  // instSplit, instJmp
	bit  uint64 // instIterBegin, instIterEnd: the group's bit
}

// matchProgramLimit bounds the program a pattern expands to (A{1000} is 1000 variables).
const matchProgramLimit = 1 << 16

// compilePattern compiles p over variables vars.
func compilePattern(p *parser.Pattern, vars []string) (matchProgram, error) {
	c := &patternCompiler{vars: vars, bits: map[*parser.Pattern]uint64{}}
	c.node(p)
	c.emit(matchInst{op: instMatch})
	if c.err != nil {
		return nil, c.err
	}
	return c.prog, nil
}

type patternCompiler struct {
	prog matchProgram
	vars []string
	bits map[*parser.Pattern]uint64 // the bit of each quantified group that may take no row
	err  error
}

func (c *patternCompiler) emit(in matchInst) int32 {
	if len(c.prog) >= matchProgramLimit {
		if c.err == nil {
			c.err = fmt.Errorf("%w: the MATCH_RECOGNIZE pattern expands to more than %d steps (bounded quantifiers repeat their group)", ErrUnsupportedPlan, matchProgramLimit)
		}
		return int32(len(c.prog) - 1)
	}
	c.prog = append(c.prog, in)
	return int32(len(c.prog) - 1)
}

// node compiles n with its quantifier: Min iterations, then Max-Min optional ones (or a
// loop), each preferring one more iteration when greedy, one fewer when reluctant.
func (c *patternCompiler) node(n *parser.Pattern) {
	if n.Min == 1 && n.Max == 1 {
		c.once(n)
		return
	}
	if c.err != nil {
		return
	}
	bit := c.bits[n]
	if bit == 0 && nullableOnce(n) {
		if len(c.bits) == 64 {
			c.err = fmt.Errorf("%w: a MATCH_RECOGNIZE pattern with more than 64 quantified groups that may match no row", ErrUnsupportedPlan)
			return
		}
		bit = 1 << len(c.bits)
		c.bits[n] = bit
	}
	iteration := func() {
		if bit != 0 {
			c.emit(matchInst{op: instIterBegin, bit: bit})
		}
		c.once(n)
		if bit != 0 {
			c.emit(matchInst{op: instIterEnd, bit: bit})
		}
	}
	for range n.Min {
		iteration()
	}
	split := func(at, body, exit int32) {
		if n.Reluctant {
			body, exit = exit, body
		}
		c.prog[at].x, c.prog[at].y = body, exit
	}
	if n.Max < 0 {
		at := c.emit(matchInst{op: instSplit})
		iteration()
		c.emit(matchInst{op: instJmp, x: at})
		if c.err == nil {
			split(at, at+1, int32(len(c.prog)))
		}
		return
	}
	var splits []int32
	for range n.Max - n.Min {
		splits = append(splits, c.emit(matchInst{op: instSplit}))
		iteration()
	}
	if c.err == nil {
		for _, at := range splits {
			split(at, at+1, int32(len(c.prog)))
		}
	}
}

func (c *patternCompiler) once(n *parser.Pattern) {
	switch n.Kind {
	case parser.PatVar:
		c.emit(matchInst{op: instVar, v: int32(slices.Index(c.vars, n.Var))})
	case parser.PatConcat:
		for _, it := range n.Items {
			c.node(it)
		}
	case parser.PatAlt:
		// split(a, split(b, c)), each alternative jumping to the end.
		var jumps []int32
		for i, it := range n.Items {
			if i == len(n.Items)-1 {
				c.node(it)
				break
			}
			at := c.emit(matchInst{op: instSplit})
			c.node(it)
			jumps = append(jumps, c.emit(matchInst{op: instJmp}))
			if c.err == nil {
				c.prog[at].x, c.prog[at].y = at+1, int32(len(c.prog))
			}
		}
		if c.err == nil {
			for _, at := range jumps {
				c.prog[at].x = int32(len(c.prog))
			}
		}
	}
}

// nullableOnce reports whether one iteration of n may take no row.
func nullableOnce(n *parser.Pattern) bool {
	switch n.Kind {
	case parser.PatConcat:
		for _, it := range n.Items {
			if !nullable(it) {
				return false
			}
		}
		return true
	case parser.PatAlt:
		return slices.ContainsFunc(n.Items, nullable)
	}
	return false
}

func nullable(n *parser.Pattern) bool { return n.Min == 0 || nullableOnce(n) }
func compileMatch(n *planner.Match, env eval.Env, updating bool) (*opSpec, error) {
	if updating {
		return nil, fmt.Errorf("%w: MATCH_RECOGNIZE over an updating input", ErrUnsupportedPlan)
	}
	in := n.Input.Schema()
	cfg := &matchConfig{n: n, width: len(in), part: n.PartitionBy, keys: n.OrderBy, navs: n.Navs,
		within: n.Within.Microseconds(), mapped: n.DefinesReadMapping()}
	for _, d := range n.Define {
		cfg.vars = append(cfg.vars, d.Var)
	}
	prog, err := compilePattern(n.Pattern, cfg.vars)
	if err != nil {
		return nil, err
	}
	cfg.prog = prog
	cfg.define = make([]eval.Evaluator, len(cfg.vars))
	cfg.reads = make([][]int, len(cfg.vars))
	for _, nav := range n.Navs {
		cfg.navVar = append(cfg.navVar, int32(slices.Index(cfg.vars, nav.Var)))
	}
	if len(n.OrderBy) == 0 {
		return nil, fmt.Errorf("%w: MATCH_RECOGNIZE without ORDER BY", ErrUnsupportedPlan)
	}
	cfg.timeCol = n.OrderBy[0].Col
	for _, nav := range n.Navs {
		if nav.Col >= len(in) {
			return nil, fmt.Errorf("%w: MATCH_RECOGNIZE reads column %d of %d", ErrUnsupportedPlan, nav.Col, len(in))
		}
		if nav.Kind == planner.NavPrev {
			cfg.history = max(cfg.history, nav.Offset)
		}
		var f agg.Func
		var arg eval.Evaluator
		if nav.Arg != nil {
			var err error
			if arg, err = eval.Compile(nav.Arg, env); err != nil {
				return nil, fmt.Errorf("%s(%s): %w", nav.Agg, nav.ArgText, err)
			}
		}
		cfg.aggArgs = append(cfg.aggArgs, arg)
		if nav.Kind == planner.NavAgg && (nav.Col >= 0 || nav.Var != "" || nav.Arg != nil) {
			// The aggregate operators' buffers, so that a SUM or AVG is typed and rounded
			// the same everywhere (DECIMAL, FLOAT, integer wrap-around).
			var argType types.Type
			switch {
			case nav.Arg != nil:
				argType = nav.Arg.Type()
			case nav.Col >= 0:
				argType = in[nav.Col].Type
			}
			var err error
			col := nav.Col // the buffers tell COUNT(*) (-1) from COUNT(x)
			if nav.Arg != nil {
				col = 0
			}
			if f, err = agg.New(planner.AggCall{Func: nav.Agg, Arg: col, Filter: -1, T: nav.T}, argType); err != nil {
				return nil, fmt.Errorf("%w: MATCH_RECOGNIZE: %w", ErrUnsupportedPlan, err)
			}
		}
		cfg.aggs = append(cfg.aggs, f)
	}
	for i, d := range n.Define {
		if d.Cond == nil {
			continue
		}
		f, err := eval.Compile(d.Cond, env)
		if err != nil {
			return nil, fmt.Errorf("DEFINE %s: %w", d.Var, err)
		}
		cfg.define[i] = f
		cfg.reads[i] = n.NavsRead(d.Cond)
	}
	for i := range n.Navs {
		cfg.allNavs = append(cfg.allNavs, i)
	}
	for i, e := range n.Measures {
		f, err := eval.Compile(e, env)
		if err != nil {
			return nil, fmt.Errorf("measure %s: %w", n.MeasureText[i], err)
		}
		cfg.measures = append(cfg.measures, f)
	}
	return &opSpec{name: "match recognize", stateDesc: describeMatch(n), build: func(_ *runEnv, m *opMetrics) (operator, error) {
		return newMatchOp(cfg, m), nil
	}}, nil
}

// describeMatch describes what shapes a Match's state, for state.Meta.CheckPlan.
func describeMatch(n *planner.Match) string {
	var b strings.Builder
	b.WriteString("match " + n.Explain() + " row=[")
	for i, c := range n.Input.Schema() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Type.String())
	}
	b.WriteString("]\n")
	return b.String()
}

type matchPartition struct {
	key     string
	kg      uint16
	keyRow  types.Row
	waiting []types.Row // not yet released, arrival order
	seq     []types.Row // released, in order, from row number base on; rows before start are history for PREV
	base    int         // the number of seq[0] among the partition's released rows
	start   int         // the row number the current search starts at
	touched bool        // in matchOp.touched

	// The search from start, when searching: the rows up to pos have been stepped.
	searching bool
	pos       int
	threads   []matchThread // in order of preference
	found     bool          // best is the most preferred match so far
	best      *matchNode    // its last row; nil for an empty match
}

func (p *matchPartition) row(n int) types.Row { return p.seq[n-p.base] }
func (p *matchPartition) end() int            { return p.base + len(p.seq) }

// matchNode is a row mapped to a variable, linked to the rows mapped before it: the
// threads of a search share their common beginnings.
type matchNode struct {
	parent *matchNode
	pos    int   // the row number
	v      int32 // the variable
}

// matchThread is a partial match waiting at instruction pc (an instVar) for the next row.
type matchThread struct {
	pc   int32
	node *matchNode // the last row mapped, nil before the first
}

type matchOp struct {
	nopOperator
	cfg *matchConfig
	m   *opMetrics

	wm      int64
	ended   bool
	parts   map[string]*matchPartition
	byKG    [keyGroups]map[string]*matchPartition
	waiting []*matchPartition // partitions with waiting rows, in the order they got them
	written map[uint16]uint64
	dirty   kgSet
	keyBuf  []byte
	ext     types.Row
	touched []*matchPartition        // processing time: the partitions of this batch
	pending map[*matchPartition]bool // partitions with released rows a match may still start at

	// Scratch of one step of a search.
	gen       uint64
	seenGen   []uint64                     // per instruction: the gen its seen list is for
	seen      [][]matchSeen                // per instruction: the threads that reached it in this step
	taken     []matchTaken                 // the DEFINEs evaluated in this step
	takenMap  map[matchTakenKey]*matchNode // instead of taken when it grows long
	useMap    bool
	spare     []matchThread
	candidate matchNode // the row a DEFINE is evaluated for
	aggRows   []int     // scratch of aggregate
}

type matchSeen struct {
	node *matchNode
	bits uint64
}

type matchTakenKey struct {
	parent *matchNode
	v      int32
}

type matchTaken struct {
	matchTakenKey
	node *matchNode // nil: the DEFINE does not hold
}

func newMatchOp(cfg *matchConfig, m *opMetrics) *matchOp {
	return &matchOp{cfg: cfg, m: m, wm: NoWatermark, parts: map[string]*matchPartition{},
		written: map[uint16]uint64{}, pending: map[*matchPartition]bool{},
		seenGen: make([]uint64, len(cfg.prog)), seen: make([][]matchSeen, len(cfg.prog))}
}

func (o *matchOp) partition(key []byte, row types.Row) *matchPartition {
	if p := o.parts[string(key)]; p != nil {
		return p
	}
	p := &matchPartition{key: string(key), kg: keyGroupOf(key), keyRow: keyValues(row, o.cfg.part)}
	o.parts[p.key] = p
	if o.byKG[p.kg] == nil {
		o.byKG[p.kg] = map[string]*matchPartition{}
	}
	o.byKG[p.kg][p.key] = p
	return p
}

func (o *matchOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	late, bad := 0, 0
	lastLate := NoWatermark
	t := o.cfg.timeCol
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: MATCH_RECOGNIZE received %s", ErrRetraction, b.kind(i))
		}
		switch ts := row[t]; {
		case ts.IsNull():
			bad++
		case !o.cfg.n.ProcTime && o.wm != NoWatermark && ts.Int() <= o.wm:
			late++
			lastLate = ts.Int()
		case o.cfg.n.ProcTime:
			// Processing time: rows match in arrival order, at once.
			o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.part)
			p := o.partition(o.keyBuf, row)
			p.seq = append(p.seq, row)
			o.dirty.set(p.kg)
			if !p.touched {
				p.touched = true
				o.touched = append(o.touched, p)
			}
		default:
			o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.part)
			p := o.partition(o.keyBuf, row)
			if len(p.waiting) == 0 {
				o.waiting = append(o.waiting, p)
			}
			p.waiting = append(p.waiting, row)
			o.dirty.set(p.kg)
		}
	}
	if len(o.touched) > 0 {
		touched := o.touched
		o.touched = o.touched[:0]
		for _, p := range touched {
			p.touched = false
			if err := o.run(ctx, p, out); err != nil {
				return err
			}
		}
	}
	o.m.late.add(late)
	if lastLate != NoWatermark {
		o.m.lastLate.Store(lastLate)
	}
	o.m.bad.add(bad)
	return nil
}

func (o *matchOp) compare(a, b types.Row) int {
	return planner.CompareRows(o.cfg.keys, a, b)
}

func (o *matchOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	t := o.cfg.timeCol
	var ready []*matchPartition
	still := o.waiting[:0] // filtered in place
	for _, p := range o.waiting {
		n0 := len(p.seq)
		rest := p.waiting[:0] // filtered in place
		for _, r := range p.waiting {
			if r[t].Int() <= wm {
				p.seq = append(p.seq, r)
			} else {
				rest = append(rest, r)
			}
		}
		clear(p.waiting[len(rest):])
		p.waiting = rest
		if len(rest) > 0 {
			still = append(still, p)
		}
		if len(p.seq) == n0 {
			continue
		}
		slices.SortStableFunc(p.seq[n0:], o.compare)
		ready = append(ready, p)
	}
	clear(o.waiting[len(still):])
	o.waiting = still
	// Partitions in the order their rows came (not map order, so that output order
	// depends on the input only).
	for _, p := range ready {
		o.dirty.set(p.kg)
		if err := o.run(ctx, p, out); err != nil {
			return err
		}
	}
	return nil
}

func (o *matchOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput {
		o.ended = true
		if err := o.processWatermark(ctx, MaxWatermark, out); err != nil {
			return err
		}
		// A partition released at an earlier watermark may wait on rows that never came.
		keys := make([]string, 0, len(o.pending))
		for p := range o.pending {
			keys = append(keys, p.key)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := o.run(ctx, o.parts[k], out); err != nil {
				return err
			}
		}
	}
	return nil
}

// outputWatermark holds the watermark below the earliest row a match may still start at.
func (o *matchOp) outputWatermark(wm int64) int64 {
	if o.cfg.n.ProcTime {
		return wm // the output has no event time
	}
	t := o.cfg.timeCol
	for p := range o.pending {
		wm = min(wm, p.row(p.start)[t].Int()-1)
	}
	return wm
}

// run searches p's released rows for matches from p.start on.
func (o *matchOp) run(ctx context.Context, p *matchPartition, out *outbox) error {
	o.dirty.set(p.kg)
	for {
		if !p.searching {
			if p.start >= p.end() {
				break
			}
			o.begin(p)
		}
		for len(p.threads) > 0 && p.pos < p.end() {
			if err := o.step(p); err != nil {
				return err
			}
		}
		if len(p.threads) > 0 {
			if !o.ended && !o.expired(p) {
				break // the preferred match needs rows not released yet
			}
			p.threads = p.threads[:0] // no row will come that they may take
		}
		if !p.found || p.best == nil {
			o.endSearch(p, p.start+1) // no (non-empty) match starts here
			continue
		}
		row, err := o.measure(p)
		if err != nil {
			return err
		}
		if err := out.emit(ctx, connectors.Insert, row); err != nil {
			return err
		}
		o.endSearch(p, o.skip(p))
	}
	// Drop what neither a match nor PREV can read any more.
	if drop := p.start - o.cfg.history - p.base; drop > 0 {
		p.seq = slices.Delete(p.seq, 0, drop)
		p.base += drop
	}
	if p.start < p.end() {
		o.pending[p] = true
	} else {
		delete(o.pending, p)
	}
	if p.start == p.end() && len(p.waiting) == 0 && o.cfg.history == 0 {
		delete(o.parts, p.key)
		delete(o.byKG[p.kg], p.key)
	}
	return nil
}

// expired reports whether WITHIN rules out every row after the watermark for the
// search from p.start.
func (o *matchOp) expired(p *matchPartition) bool {
	w := o.cfg.within
	return w > 0 && o.wm != MaxWatermark && o.wm != NoWatermark && o.wm-p.row(p.start)[o.cfg.timeCol].Int() >= w
}

// begin starts the search from p.start.
func (o *matchOp) begin(p *matchPartition) {
	p.searching, p.pos, p.found, p.best = true, p.start, false, nil
	p.threads = p.threads[:0]
	o.gen++
	o.closure(p, &p.threads, 0, 0, nil, p.start)
}

func (o *matchOp) endSearch(p *matchPartition, next int) {
	clear(p.threads)
	p.threads = p.threads[:0]
	p.searching, p.found, p.best = false, false, nil
	p.start = next
}

// step advances the threads of p's search over row p.pos.
func (o *matchOp) step(p *matchPartition) error {
	cfg := o.cfg
	row := p.row(p.pos)
	at := p.pos
	p.pos++
	if cfg.within > 0 && row[cfg.timeCol].Int()-p.row(p.start)[cfg.timeCol].Int() > cfg.within {
		clear(p.threads)
		p.threads = p.threads[:0]
		return nil
	}
	o.gen++
	o.taken = o.taken[:0]
	if o.useMap {
		clear(o.takenMap)
		o.useMap = false
	}
	next := o.spare[:0]
	for _, th := range p.threads {
		node := o.take(p, th.node, cfg.prog[th.pc].v, row, at)
		if node == nil {
			continue
		}
		if o.closure(p, &next, th.pc+1, 0, node, at+1) {
			break // the threads after it are less preferred than its match
		}
	}
	clear(p.threads)
	o.spare = p.threads[:0]
	p.threads = next
	if len(next) > matchThreadLimit {
		return fmt.Errorf("MATCH_RECOGNIZE: more than %d partial matches from one row (conditions that read other variables' rows keep one per mapping of the rows): simplify the pattern or bound it with WITHIN", matchThreadLimit)
	}
	return nil
}

// take maps row number at to variable v after parent if v's DEFINE holds, and returns
// the new last node (nil if it does not hold). Threads with the same mapping share the
// node; without conditions that read the mapping, the condition is evaluated once per
// variable.
func (o *matchOp) take(p *matchPartition, parent *matchNode, v int32, row types.Row, at int) *matchNode {
	key := matchTakenKey{parent, v}
	if !o.cfg.mapped {
		key.parent = nil
	}
	var hit *matchTaken
	if o.useMap {
		if n, ok := o.takenMap[key]; ok {
			hit = &matchTaken{key, n}
		}
	} else {
		for i := range o.taken {
			if o.taken[i].matchTakenKey == key {
				hit = &o.taken[i]
				break
			}
		}
	}
	if hit != nil {
		if hit.node == nil || o.cfg.mapped {
			return hit.node
		}
		return &matchNode{parent: parent, pos: at, v: v}
	}
	var node *matchNode
	if f := o.cfg.define[v]; f != nil {
		o.candidate = matchNode{parent: parent, pos: at, v: v}
		ext, err := o.extended(p, row, &o.candidate, o.cfg.reads[v])
		var val types.Value
		if err == nil {
			val, err = f(ext)
		}
		if err == nil && !val.IsNull() && val.Bool() {
			node = &matchNode{parent: parent, pos: at, v: v}
		}
	} else {
		node = &matchNode{parent: parent, pos: at, v: v}
	}
	if o.useMap {
		o.takenMap[key] = node
	} else if o.taken = append(o.taken, matchTaken{key, node}); len(o.taken) > 16 {
		o.useMap = true
		if o.takenMap == nil {
			o.takenMap = make(map[matchTakenKey]*matchNode, 64)
		}
		for _, t := range o.taken {
			o.takenMap[t.matchTakenKey] = t.node
		}
	}
	return node
}

// closure follows the program from pc, the thread's last row being node and the next
// row pos, and adds the threads that wait for a row to dst in order of preference.
// bits are the groups whose iteration began at pos. It reports whether it reached the
// end of the pattern, which makes that path p's best match and ends the less preferred.
func (o *matchOp) closure(p *matchPartition, dst *[]matchThread, pc int32, bits uint64, node *matchNode, pos int) bool {
	in := &o.cfg.prog[pc]
	if in.op == instVar || in.op == instMatch {
		bits = 0 // the same place for any path that got here
	}
	if o.reached(pc, node, bits) {
		return false // a more preferred thread got here with the same future
	}
	switch in.op {
	case instVar:
		*dst = append(*dst, matchThread{pc: pc, node: node})
	case instMatch:
		p.found, p.best = true, node
		return true
	case instJmp:
		return o.closure(p, dst, in.x, bits, node, pos)
	case instSplit:
		return o.closure(p, dst, in.x, bits, node, pos) || o.closure(p, dst, in.y, bits, node, pos)
	case instIterBegin:
		return o.closure(p, dst, pc+1, bits|in.bit, node, pos)
	case instIterEnd:
		if bits&in.bit != 0 {
			return false // an iteration that took no row would loop
		}
		return o.closure(p, dst, pc+1, bits, node, pos)
	}
	return false
}

// reached records that a thread got to pc in this step and reports whether one with
// the same future already did.
func (o *matchOp) reached(pc int32, node *matchNode, bits uint64) bool {
	if !o.cfg.mapped {
		node = nil
	}
	if o.seenGen[pc] != o.gen {
		o.seenGen[pc] = o.gen
		o.seen[pc] = o.seen[pc][:0]
	}
	k := matchSeen{node, bits}
	if slices.Contains(o.seen[pc], k) {
		return true
	}
	o.seen[pc] = append(o.seen[pc], k)
	return false
}

// skip is where the search after p's match starts.
func (o *matchOp) skip(p *matchPartition) int {
	next := p.start + 1
	switch o.cfg.n.After.Kind {
	case "", "PAST LAST ROW":
		return p.best.pos + 1
	case "TO NEXT ROW":
		return next
	case "TO FIRST", "TO LAST":
		v := int32(slices.Index(o.cfg.vars, o.cfg.n.After.Var))
		found := -1
		for n := p.best; n != nil; n = n.parent {
			if n.v == v {
				found = n.pos
				if o.cfg.n.After.Kind == "TO LAST" {
					break
				}
			}
		}
		// Skipping to the match's own first row would find it again: Flink and SQL:2016
		// fail there; pipesql moves on by one row instead.
		if found > p.start {
			return found
		}
	}
	return next
}

func (o *matchOp) measure(p *matchPartition) (types.Row, error) {
	n := len(o.cfg.part)
	row := make(types.Row, n+len(o.cfg.measures))
	copy(row, p.keyRow)
	ext, err := o.extended(p, p.row(p.best.pos), p.best, o.cfg.allNavs)
	if err != nil {
		return nil, err
	}
	for i, f := range o.cfg.measures {
		v, err := f(ext)
		if err != nil {
			return nil, fmt.Errorf("measure %s: %w", o.cfg.n.MeasureText[i], err)
		}
		row[n+i] = v
	}
	return row, nil
}

// extended is row followed by the navigation values over the rows of the match from
// p.start to last (the candidate row, when it is one, mapped last); only the navs
// listed in reads are computed, the others are NULL.
func (o *matchOp) extended(p *matchPartition, row types.Row, last *matchNode, reads []int) (types.Row, error) {
	cfg := o.cfg
	ext := append(o.ext[:0], row...)
	for range cfg.navs {
		ext = append(ext, types.Value{})
	}
	// get reads a navigation's column, or evaluates its expression, on row number at.
	get := func(i, at int) (types.Value, error) {
		if arg := cfg.aggArgs[i]; arg != nil {
			return arg(p.row(at))
		}
		return p.row(at)[cfg.navs[i].Col], nil
	}
	for _, i := range reads {
		nav := cfg.navs[i]
		var v types.Value
		var err error
		nv := cfg.navVar[i]
		switch nav.Kind {
		case planner.NavLast:
			if nv < 0 {
				if at := last.pos - nav.Offset; at >= p.start {
					v, err = get(i, at)
				}
				break
			}
			skip := nav.Offset
			for n := last; n != nil; n = n.parent {
				if n.v == nv {
					if skip == 0 {
						v, err = get(i, n.pos)
						break
					}
					skip--
				}
			}
		case planner.NavFirst:
			if nv < 0 {
				if at := p.start + nav.Offset; at <= last.pos {
					v, err = get(i, at)
				}
				break
			}
			count := 0
			for n := last; n != nil; n = n.parent {
				if n.v == nv {
					count++
				}
			}
			skip := count - 1 - nav.Offset // from the last
			for n := last; n != nil && skip >= 0; n = n.parent {
				if n.v == nv {
					if skip == 0 {
						v, err = get(i, n.pos)
					}
					skip--
				}
			}
		case planner.NavPrev:
			for n := last; n != nil; n = n.parent {
				if nv < 0 || n.v == nv {
					if at := n.pos - nav.Offset; at >= p.base {
						v = p.row(at)[nav.Col]
					}
					break
				}
			}
		case planner.NavRowtime:
			if last != nil {
				v = p.row(last.pos)[cfg.timeCol]
			}
		case planner.NavAgg:
			v, err = o.aggregate(p, nav, i, last)
		}
		if err != nil {
			return nil, err
		}
		ext[len(row)+i] = v
	}
	o.ext = ext
	return ext, nil
}

func (o *matchOp) aggregate(p *matchPartition, nav planner.MatchNav, i int, last *matchNode) (types.Value, error) {
	nv := o.cfg.navVar[i]
	if nav.Col < 0 && nv < 0 && nav.Arg == nil {
		return types.BigIntValue(int64(last.pos - p.start + 1)), nil // COUNT(*)
	}
	// The rows in match order, as Flink's aggregates see them (a float sum's rounding
	// depends on it).
	rows := o.aggRows[:0]
	for n := last; n != nil; n = n.parent {
		if nv < 0 || n.v == nv {
			rows = append(rows, n.pos)
		}
	}
	o.aggRows = rows
	b := o.cfg.aggs[i].NewBuffer()
	one := types.BigIntValue(1) // COUNT(v.*) counts rows
	arg := o.cfg.aggArgs[i]
	for k := len(rows) - 1; k >= 0; k-- {
		v := one
		switch {
		case arg != nil:
			var err error
			if v, err = arg(p.row(rows[k])); err != nil {
				return types.Value{}, err
			}
		case nav.Col >= 0:
			v = p.row(rows[k])[nav.Col]
		}
		if err := b.Add(v); err != nil {
			return types.Value{}, err
		}
	}
	return b.Result(), nil
}

// Checkpointed state, under the operator's state id: "w" the watermark, "n<kg>" the
// partitions of key group kg, each value
//
//	version | partition count | per partition: key row, waiting rows (count, rows),
//	          released rows (count, rows), start, searching (0 or 1), and when searching:
//	          pos, nodes (count; per node: parent (0 none, else 1 + its index, earlier),
//	          row, variable), threads (count; per thread: pc, node as parent),
//	          found (0 or 1), best (as parent)
//
// Row numbers (start, pos, a node's row) count from the first released row kept.
// Checkpoints of the backtracking matcher before it ("p<kg>": the same up to start) are
// restored too: their search starts again at start.
const (
	matchPrefix    = "n"
	matchPrefixOld = "p"
	matchWMKey     = "w"
)

func (o *matchOp) snapshotState(_ context.Context, w stateWriter) error {
	if err := w.Put(matchWMKey, binary.AppendVarint([]byte{stateVersion}, o.wm)); err != nil {
		return err
	}
	base := w.Base()
	for kg := range uint16(keyGroups) {
		m := o.byKG[kg]
		if len(m) == 0 {
			continue
		}
		key := kgKey(matchPrefix, kg)
		if at := o.written[kg]; base != 0 && at != 0 && at <= base && !o.dirty.has(kg) {
			if err := w.Unchanged(key); err != nil {
				return err
			}
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst := []byte{stateVersion}
		dst = binary.AppendUvarint(dst, uint64(len(keys)))
		for _, k := range keys {
			dst = appendMatchPartition(dst, m[k])
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[kg] = w.ID()
	}
	o.dirty.clear()
	return nil
}

func appendMatchPartition(dst []byte, p *matchPartition) []byte {
	dst = appendStateRow(dst, p.keyRow)
	for _, rows := range [][]types.Row{p.waiting, p.seq} {
		dst = binary.AppendUvarint(dst, uint64(len(rows)))
		for _, r := range rows {
			dst = appendStateRow(dst, r)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(p.start-p.base))
	if !p.searching {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = binary.AppendUvarint(dst, uint64(p.pos-p.base))
	// The nodes the threads and the best match reach, each after its parent.
	ids := map[*matchNode]uint64{}
	var nodes []*matchNode
	var chain []*matchNode
	add := func(n *matchNode) {
		chain = chain[:0]
		for ; n != nil && ids[n] == 0; n = n.parent {
			chain = append(chain, n)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			nodes = append(nodes, chain[i])
			ids[chain[i]] = uint64(len(nodes))
		}
	}
	for _, th := range p.threads {
		add(th.node)
	}
	add(p.best)
	dst = binary.AppendUvarint(dst, uint64(len(nodes)))
	for _, n := range nodes {
		dst = binary.AppendUvarint(dst, ids[n.parent])
		dst = binary.AppendUvarint(dst, uint64(n.pos-p.base))
		dst = binary.AppendUvarint(dst, uint64(n.v))
	}
	dst = binary.AppendUvarint(dst, uint64(len(p.threads)))
	for _, th := range p.threads {
		dst = binary.AppendUvarint(dst, uint64(th.pc))
		dst = binary.AppendUvarint(dst, ids[th.node])
	}
	found := byte(0)
	if p.found {
		found = 1
	}
	dst = append(dst, found)
	return binary.AppendUvarint(dst, ids[p.best])
}

func (o *matchOp) restoreState(r stateReader) error {
	o.parts = map[string]*matchPartition{}
	o.byKG = [keyGroups]map[string]*matchPartition{}
	o.waiting = nil
	o.pending = map[*matchPartition]bool{}
	o.written = map[uint16]uint64{}
	o.wm = NoWatermark
	err := r.Scan(func(key string, value []byte) error {
		if key == matchWMKey {
			d := &stateDecoder{data: value}
			d.version()
			o.wm = d.varint()
			return d.finish()
		}
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if prefix != matchPrefix && prefix != matchPrefixOld {
			return fmt.Errorf("malformed MATCH_RECOGNIZE state key %q", key)
		}
		if err := o.restoreKeyGroup(kg, value, prefix == matchPrefix); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		if prefix == matchPrefix {
			o.written[kg] = r.ID() // an old key group is written again in full
		}
		return nil
	})
	o.dirty.clear()
	return err
}

func (o *matchOp) restoreKeyGroup(kg uint16, value []byte, nfa bool) error {
	d := &stateDecoder{data: value}
	d.version()
	n := d.count(1)
	for range n {
		p := &matchPartition{kg: kg, keyRow: d.row()}
		for _, dst := range []*[]types.Row{&p.waiting, &p.seq} {
			c := d.count(1)
			for range c {
				row := d.row()
				if d.err == nil && len(row) != o.cfg.width {
					d.fail("a row of %d columns, the plan's input has %d", len(row), o.cfg.width)
				}
				if d.err != nil {
					return d.err
				}
				*dst = append(*dst, row)
			}
		}
		start := d.uvarint()
		if d.err != nil {
			return d.err
		}
		if start > uint64(len(p.seq)) {
			return fmt.Errorf("a partition starts at row %d of %d", start, len(p.seq))
		}
		p.start = int(start)
		if nfa {
			if err := o.restoreSearch(d, p); err != nil {
				return err
			}
		}
		p.key = string(appendRowKey(nil, p.keyRow, allCols(len(p.keyRow))))
		if keyGroupOf([]byte(p.key)) != kg {
			return fmt.Errorf("a partition of key group %d stored under %d", keyGroupOf([]byte(p.key)), kg)
		}
		o.parts[p.key] = p
		if o.byKG[kg] == nil {
			o.byKG[kg] = map[string]*matchPartition{}
		}
		o.byKG[kg][p.key] = p
		if len(p.waiting) > 0 {
			o.waiting = append(o.waiting, p)
		}
		if p.start < len(p.seq) {
			o.pending[p] = true
		}
	}
	return d.finish()
}

// restoreSearch reads the search of p, whose rows and start are read.
func (o *matchOp) restoreSearch(d *stateDecoder, p *matchPartition) error {
	searching := d.byte()
	if d.err != nil || searching == 0 {
		return d.err
	}
	if p.start >= len(p.seq) {
		return fmt.Errorf("a search from row %d of %d", p.start, len(p.seq))
	}
	p.searching = true
	pos := d.uvarint()
	if d.err == nil && (pos < uint64(p.start) || pos > uint64(len(p.seq))) {
		d.fail("a search from row %d at row %d of %d", p.start, pos, len(p.seq))
	}
	p.pos = int(pos)
	nodes := make([]*matchNode, d.count(3))
	node := func(what string) *matchNode {
		id := d.uvarint()
		if d.err == nil && id > uint64(len(nodes)) || d.err == nil && id > 0 && nodes[id-1] == nil {
			d.fail("%s %d of %d nodes", what, id, len(nodes))
		}
		if d.err != nil || id == 0 {
			return nil
		}
		return nodes[id-1]
	}
	for i := range nodes {
		n := &matchNode{parent: node("a parent")}
		at, v := d.uvarint(), d.uvarint()
		if d.err == nil && (at < uint64(p.start) || at >= uint64(p.pos) || v >= uint64(len(o.cfg.vars))) {
			d.fail("a node at row %d (search rows %d to %d) of variable %d", at, p.start, p.pos, v)
		}
		if d.err != nil {
			return d.err
		}
		n.pos, n.v = int(at), int32(v)
		nodes[i] = n
	}
	threads := d.count(2)
	for range threads {
		pc := d.uvarint()
		if d.err == nil && (pc >= uint64(len(o.cfg.prog)) || o.cfg.prog[pc].op != instVar) {
			d.fail("a thread at step %d, not a variable of the pattern's %d steps", pc, len(o.cfg.prog))
		}
		n := node("a thread at node")
		if d.err != nil {
			return d.err
		}
		p.threads = append(p.threads, matchThread{pc: int32(pc), node: n})
	}
	p.found = d.byte() == 1
	p.best = node("the best match at node")
	return d.err
}
