package exec

// matchOp runs a planner.Match (MATCH_RECOGNIZE, ONE ROW PER MATCH). Per partition key,
// rows wait until the watermark passes them (a row at or behind the watermark on
// arrival is late: dropped and counted), then join the partition's sequence in event
// time order. The pattern runs over that sequence by backtracking in SQL:2016's order
// of preference (greedy quantifiers try one more iteration first, reluctant ones one
// fewer, alternatives left to right): the first complete match from the earliest start
// row is the match. A search that would need a row not yet released (a greedy B* at
// the end of the rows so far) waits for the next watermark, unless WITHIN rules every
// later row out; so a match is emitted once, and exactly as the whole input would give
// it. After a match, AFTER MATCH SKIP chooses where the next search starts; a start row
// with no match is passed. Rows before the next start are dropped, but for the few that
// PREV may still read.
//
// The output holds back the watermark to just below the earliest row a later match may
// still start at, so that no match is late for the operators after it.

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
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
	define   map[string]eval.Evaluator // nil entry: TRUE
	measures []eval.Evaluator
	within   int64 // micros, 0 without WITHIN
	history  int   // rows before a match start that PREV may read
	pattern  *parser.Pattern
}

func compileMatch(n *planner.Match, env eval.Env, updating bool) (*opSpec, error) {
	if updating {
		return nil, fmt.Errorf("%w: MATCH_RECOGNIZE over an updating input", ErrUnsupportedPlan)
	}
	in := n.Input.Schema()
	cfg := &matchConfig{n: n, width: len(in), part: n.PartitionBy, keys: n.OrderBy, navs: n.Navs,
		define: map[string]eval.Evaluator{}, within: n.Within.Microseconds(), pattern: n.Pattern}
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
		if nav.Kind == planner.NavAgg && nav.Col >= 0 && nav.Agg != planner.AggCount && nav.Agg != planner.AggMin && nav.Agg != planner.AggMax {
			switch in[nav.Col].Type.Kind {
			case types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Float, types.Double:
			default:
				return nil, fmt.Errorf("%w: %s over %s in MATCH_RECOGNIZE is not supported yet", ErrUnsupportedPlan, nav.Agg, in[nav.Col].Type)
			}
		}
	}
	for _, d := range n.Define {
		if d.Cond == nil {
			cfg.define[d.Var] = nil
			continue
		}
		f, err := eval.Compile(d.Cond, env)
		if err != nil {
			return nil, fmt.Errorf("DEFINE %s: %w", d.Var, err)
		}
		cfg.define[d.Var] = f
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
	seq     []types.Row // released, in order; seq[:start] is history for PREV
	start   int
	touched bool // in matchOp.touched
}

type matchOp struct {
	nopOperator
	cfg *matchConfig
	m   *opMetrics

	wm      int64
	ended   bool
	parts   map[string]*matchPartition
	byKG    [keyGroups]map[string]*matchPartition
	waiting map[*matchPartition]bool // partitions with waiting rows
	written map[uint16]uint64
	dirty   kgSet
	keyBuf  []byte
	ext     types.Row
	touched []*matchPartition        // processing time: the partitions of this batch
	pending map[*matchPartition]bool // partitions with released rows a match may still start at
	search  matchSearch              // reused by run
}

func newMatchOp(cfg *matchConfig, m *opMetrics) *matchOp {
	return &matchOp{cfg: cfg, m: m, wm: NoWatermark, parts: map[string]*matchPartition{},
		waiting: map[*matchPartition]bool{}, written: map[uint16]uint64{}, pending: map[*matchPartition]bool{}}
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
			p.waiting = append(p.waiting, row)
			o.waiting[p] = true
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
	for _, k := range o.cfg.keys {
		c := types.Compare(a[k.Col], b[k.Col])
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (o *matchOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	t := o.cfg.timeCol
	var ready []*matchPartition
	for p := range o.waiting {
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
		if len(p.seq) == n0 {
			continue
		}
		slices.SortStableFunc(p.seq[n0:], o.compare)
		if len(rest) == 0 {
			delete(o.waiting, p)
		}
		ready = append(ready, p)
	}
	// Partitions in key order, so that output order does not depend on map order.
	slices.SortFunc(ready, func(a, b *matchPartition) int { return strings.Compare(a.key, b.key) })
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
		wm = min(wm, p.seq[p.start][t].Int()-1)
	}
	return wm
}

// run searches p's released rows for matches from p.start on.
func (o *matchOp) run(ctx context.Context, p *matchPartition, out *outbox) error {
	s := &o.search
	for p.start < len(p.seq) {
		*s = matchSearch{op: o, p: p, start: p.start, assign: s.assign[:0]}
		res := s.find()
		if s.err != nil {
			return s.err
		}
		if res == matchWait {
			break
		}
		if res == matchNone || s.end == p.start {
			p.start++ // no (non-empty) match starts here
			continue
		}
		row, err := o.measure(s)
		if err != nil {
			return err
		}
		if err := out.emit(ctx, connectors.Insert, row); err != nil {
			return err
		}
		p.start = o.skip(s)
	}
	// Drop what neither a match nor PREV can read any more.
	if drop := p.start - o.cfg.history; drop > 0 {
		p.seq = slices.Delete(p.seq, 0, drop)
		p.start -= drop
	}
	if p.start < len(p.seq) {
		o.pending[p] = true
	} else {
		delete(o.pending, p)
	}
	if len(p.seq) == p.start && len(p.waiting) == 0 && o.cfg.history == 0 {
		delete(o.parts, p.key)
		delete(o.byKG[p.kg], p.key)
	}
	return nil
}

// skip is where the search after match s starts.
func (o *matchOp) skip(s *matchSearch) int {
	next := s.start + 1
	switch o.cfg.n.After.Kind {
	case "", "PAST LAST ROW":
		return s.end
	case "TO NEXT ROW":
		return next
	case "TO FIRST", "TO LAST":
		v := o.cfg.n.After.Var
		found := -1
		for i, a := range s.assign {
			if a == v {
				found = s.start + i
				if o.cfg.n.After.Kind == "TO FIRST" {
					break
				}
			}
		}
		// Skipping to the match's own first row would find it again: Flink and SQL:2016
		// fail there; pipesql moves on by one row instead.
		if found > s.start {
			return found
		}
	}
	return next
}

func (o *matchOp) measure(s *matchSearch) (types.Row, error) {
	n := len(o.cfg.part)
	row := make(types.Row, n+len(o.cfg.measures))
	copy(row, s.p.keyRow)
	last := s.p.seq[s.end-1]
	ext := s.extended(last, s.end-s.start)
	for i, f := range o.cfg.measures {
		v, err := f(ext)
		if err != nil {
			return nil, fmt.Errorf("measure %s: %w", o.cfg.n.MeasureText[i], err)
		}
		row[n+i] = v
	}
	return row, nil
}

type matchResult int

const (
	matchNone  matchResult = iota // no match from this start, whatever rows come
	matchFound                    // s.assign and s.end hold the match
	matchWait                     // the preferred path needs rows not released yet
)

// matchSearch is one backtracking search for a match from start.
type matchSearch struct {
	op     *matchOp
	p      *matchPartition
	start  int
	assign []string // the variable of each row from start on, for the path being tried
	end    int      // one past the match's last row
	wait   bool
	steps  int   // rows tried, bounded by matchStepLimit
	err    error // the search gave up
}

// matchStepLimit bounds the rows one search tries: nested quantifiers such as (A+)+
// can backtrack exponentially over a run of rows that ends in a failure.
var matchStepLimit = 10_000_000

func (s *matchSearch) find() matchResult {
	found := s.node(s.op.cfg.pattern, s.start, func(pos int) bool {
		s.end = pos
		return true
	})
	switch {
	case found:
		return matchFound
	case s.wait:
		return matchWait
	}
	return matchNone
}

// node matches pattern n at pos, then calls k with the position after it. It returns
// true once k has accepted a match; it returns false with s.wait set when the path
// preferred next needs a row not yet released.
func (s *matchSearch) node(n *parser.Pattern, pos int, k func(int) bool) bool {
	if n.Min == 1 && n.Max == 1 {
		return s.once(n, pos, k)
	}
	return s.repeat(n, 0, pos, k)
}

func (s *matchSearch) repeat(n *parser.Pattern, count, pos int, k func(int) bool) bool {
	more := func() bool {
		if n.Max >= 0 && count >= n.Max {
			return false
		}
		return s.once(n, pos, func(next int) bool {
			if next == pos {
				return false // an empty iteration would loop
			}
			return s.repeat(n, count+1, next, k)
		})
	}
	done := func() bool { return count >= n.Min && k(pos) }
	if n.Reluctant {
		if done() || s.wait {
			return !s.wait
		}
		return more()
	}
	if more() || s.wait {
		return !s.wait
	}
	return done()
}

func (s *matchSearch) once(n *parser.Pattern, pos int, k func(int) bool) bool {
	switch n.Kind {
	case parser.PatVar:
		return s.variable(n.Var, pos, k)
	case parser.PatConcat:
		var step func(i, pos int) bool
		step = func(i, pos int) bool {
			if i == len(n.Items) {
				return k(pos)
			}
			return s.node(n.Items[i], pos, func(next int) bool { return step(i+1, next) })
		}
		return step(0, pos)
	case parser.PatAlt:
		for _, it := range n.Items {
			if s.node(it, pos, k) {
				return true
			}
			if s.wait {
				return false
			}
		}
	}
	return false
}

func (s *matchSearch) variable(v string, pos int, k func(int) bool) bool {
	cfg := s.op.cfg
	seq := s.p.seq
	if pos >= len(seq) {
		// The next row is not released yet: it will be later than the watermark.
		if !s.op.ended && !(cfg.within > 0 && s.op.wm != MaxWatermark && s.op.wm-seq[s.start][cfg.timeCol].Int() >= cfg.within) {
			s.wait = true
		}
		return false
	}
	if s.steps++; s.steps > matchStepLimit {
		s.err = fmt.Errorf("MATCH_RECOGNIZE: the pattern tried more than %d rows to match from one row (nested quantifiers such as (A+)+ backtrack exponentially): simplify the pattern or bound it with WITHIN", matchStepLimit)
		s.wait = true // unwinds the search
		return false
	}
	row := seq[pos]
	if cfg.within > 0 && row[cfg.timeCol].Int()-seq[s.start][cfg.timeCol].Int() > cfg.within {
		return false
	}
	s.assign = append(s.assign, v)
	ok := true
	if f := cfg.define[v]; f != nil {
		val, err := f(s.extended(row, len(s.assign)))
		ok = err == nil && !val.IsNull() && val.Bool()
	}
	if ok && k(pos+1) {
		return true
	}
	s.assign = s.assign[:len(s.assign)-1]
	return false
}

// extended is row followed by the navigation values over the first n rows of the path
// (the candidate row, when it is one, mapped last).
func (s *matchSearch) extended(row types.Row, n int) types.Row {
	cfg := s.op.cfg
	ext := append(s.op.ext[:0], row...)
	seq := s.p.seq
	for _, nav := range cfg.navs {
		var v types.Value
		switch nav.Kind {
		case planner.NavLast, planner.NavFirst:
			skip := nav.Offset
			for j := range n {
				i := j
				if nav.Kind == planner.NavLast {
					i = n - 1 - j
				}
				if nav.Var == "" || s.assign[i] == nav.Var {
					if skip == 0 {
						v = seq[s.start+i][nav.Col]
						break
					}
					skip--
				}
			}
		case planner.NavPrev:
			for i := n - 1; i >= 0; i-- {
				if nav.Var == "" || s.assign[i] == nav.Var {
					if at := s.start + i - nav.Offset; at >= 0 {
						v = seq[at][nav.Col]
					}
					break
				}
			}
		case planner.NavRowtime:
			if n > 0 {
				v = seq[s.start+n-1][cfg.timeCol]
			}
		case planner.NavAgg:
			v = s.aggregate(nav, n)
		}
		ext = append(ext, v)
	}
	s.op.ext = ext
	return ext
}

func (s *matchSearch) aggregate(nav planner.MatchNav, n int) types.Value {
	var (
		count int64
		isum  int64
		fsum  float64
		best  types.Value
	)
	kind := nav.T.Kind
	for i := range n {
		if nav.Var != "" && s.assign[i] != nav.Var {
			continue
		}
		if nav.Col < 0 {
			count++
			continue
		}
		x := s.p.seq[s.start+i][nav.Col]
		if x.IsNull() {
			continue
		}
		count++
		switch nav.Agg {
		case planner.AggMin, planner.AggMax:
			c := types.Compare(x, best)
			if best.IsNull() || nav.Agg == planner.AggMin && c < 0 || nav.Agg == planner.AggMax && c > 0 {
				best = x
			}
		case planner.AggSum, planner.AggAvg:
			switch kind {
			case types.Float, types.Double:
				fsum += x.Float()
			default:
				isum += x.Int()
			}
		}
	}
	switch nav.Agg {
	case planner.AggCount:
		return types.BigIntValue(count)
	case planner.AggMin, planner.AggMax:
		return best
	}
	if count == 0 {
		return types.Value{}
	}
	switch kind {
	case types.Float:
		if nav.Agg == planner.AggAvg {
			fsum /= float64(count)
		}
		return types.FloatValue(fsum)
	case types.Double:
		if nav.Agg == planner.AggAvg {
			fsum /= float64(count)
		}
		return types.DoubleValue(fsum)
	}
	if nav.Agg == planner.AggAvg {
		isum /= count // integer AVG truncates, as Flink's does
	}
	return types.IntValue(kind, isum)
}

// Checkpointed state, under the operator's state id: "w" the watermark, "p<kg>" the
// partitions of key group kg, each value
//
//	version | partition count | per partition: key row, waiting rows (count, rows),
//	          released rows (count, rows), start
const (
	matchPrefix = "p"
	matchWMKey  = "w"
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
			p := m[k]
			dst = appendStateRow(dst, p.keyRow)
			for _, rows := range [][]types.Row{p.waiting, p.seq} {
				dst = binary.AppendUvarint(dst, uint64(len(rows)))
				for _, r := range rows {
					dst = appendStateRow(dst, r)
				}
			}
			dst = binary.AppendUvarint(dst, uint64(p.start))
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[kg] = w.ID()
	}
	o.dirty.clear()
	return nil
}

func (o *matchOp) restoreState(r stateReader) error {
	o.parts = map[string]*matchPartition{}
	o.byKG = [keyGroups]map[string]*matchPartition{}
	o.waiting = map[*matchPartition]bool{}
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
		if prefix != matchPrefix {
			return fmt.Errorf("malformed MATCH_RECOGNIZE state key %q", key)
		}
		if err := o.restoreKeyGroup(kg, value); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		o.written[kg] = r.ID()
		return nil
	})
	o.dirty.clear()
	return err
}

func (o *matchOp) restoreKeyGroup(kg uint16, value []byte) error {
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
		if start > uint64(len(p.seq)) || start > math.MaxInt32 {
			return fmt.Errorf("a partition starts at row %d of %d", start, len(p.seq))
		}
		p.start = int(start)
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
			o.waiting[p] = true
		}
		if p.start < len(p.seq) {
			o.pending[p] = true
		}
	}
	return d.finish()
}
