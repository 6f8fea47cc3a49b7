package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// OVER aggregates
//
// overOp runs a planner.OverAggregate as Flink's over functions do. Per partition it
// keeps the rows a later frame can still reach (the last n rows of ROWS n PRECEDING, the
// rows within the interval of RANGE, the rows LAG looks back to) and, for UNBOUNDED
// PRECEDING, running aggregate buffers.
//
// On event time, rows wait in their partition until the watermark reaches their time;
// then the partition's waiting rows up to the watermark are processed in time order,
// rows of one time in arrival order. A row at or behind the watermark on arrival is late:
// dropped and counted, as a window aggregate drops rows for fired windows. On processing
// time, rows are processed as they arrive.
//
// ROWS frames hold the row and the n rows before it. RANGE frames hold every row within
// the interval before the row's time and every row of its time (peers), so peers get
// the same results. LAG(x, n, default) reads the row n rows before in the partition's
// order whatever the frame; FIRST_VALUE and LAST_VALUE are the first and last non-NULL
// value in the frame, as Flink's ignore NULLs.

// overConfig is a compiled planner.OverAggregate.
type overConfig struct {
	part      []int
	orderCol  int
	rowTime   bool
	rows      bool
	preceding int64 // rows or microseconds; -1 unbounded
	calls     []planner.OverCall
	argTypes  []types.Type
	width     int // input columns
	keep      int // rows LAG needs kept besides the frame
}

func compileOver(n *planner.OverAggregate) (*overConfig, error) {
	in := n.Input.Schema()
	cfg := &overConfig{part: n.PartitionBy, orderCol: n.OrderCol, rowTime: n.RowTime, rows: n.Rows,
		preceding: n.Preceding, calls: n.Calls, width: len(in)}
	check := func(c int, what string) error {
		if c < 0 || c >= len(in) {
			return fmt.Errorf("%w: over aggregate %s column %d of %d", ErrUnsupportedPlan, what, c, len(in))
		}
		return nil
	}
	for _, k := range n.PartitionBy {
		if err := check(k, "partition"); err != nil {
			return nil, err
		}
	}
	if err := check(n.OrderCol, "order"); err != nil {
		return nil, err
	}
	if len(n.Out) != len(in)+len(n.Calls) {
		return nil, fmt.Errorf("%w: over aggregate has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), len(in)+len(n.Calls))
	}
	for _, c := range n.Calls {
		var t types.Type
		if c.Arg >= 0 {
			if err := check(c.Arg, "argument"); err != nil {
				return nil, err
			}
			t = in[c.Arg].Type
		}
		if c.Default >= 0 {
			if err := check(c.Default, "default"); err != nil {
				return nil, err
			}
		}
		switch c.Func {
		case "COUNT", "SUM", "AVG", "MIN", "MAX":
			if _, err := agg.New(c.Agg, t); err != nil {
				return nil, fmt.Errorf("over aggregate %s: %w", c.Name, err)
			}
		case "FIRST_VALUE", "LAST_VALUE":
		case "LAG":
			cfg.keep = max(cfg.keep, int(c.Offset))
		default:
			return nil, fmt.Errorf("%w: over aggregate function %s", ErrUnsupportedPlan, c.Func)
		}
		cfg.argTypes = append(cfg.argTypes, t)
	}
	return cfg, nil
}

// isAgg reports whether call i is computed by an agg buffer.
func (c *overConfig) isAgg(i int) bool {
	switch c.calls[i].Func {
	case "COUNT", "SUM", "AVG", "MIN", "MAX":
		return true
	}
	return false
}

// overPartition is the state of one partition key.
type overPartition struct {
	key    string
	keyRow types.Row // the partition key's values
	kg     uint16
	// waiting rows (event time), in arrival order
	waiting []types.Row
	// hist is the processed rows later frames and LAG can reach, in order.
	hist []types.Row
	// UNBOUNDED PRECEDING: running buffers of the aggregate calls, and the first and
	// last non-NULL values of FIRST_VALUE and LAST_VALUE (nil for other calls).
	bufs        []agg.Buffer
	first, last []types.Value
}

type overOp struct {
	nopOperator
	cfg   *overConfig
	m     *opMetrics
	clock connectors.Clock
	funcs []agg.Func // nil for calls that are not aggregates

	// state
	wm      int64
	parts   map[string]*overPartition
	byKG    [keyGroups]map[string]*overPartition
	waiting map[*overPartition]bool // partitions with waiting rows
	dirty   kgSet
	written map[uint16]uint64

	keyBuf  []byte
	scratch []agg.Buffer
}

func newOverOp(cfg *overConfig, m *opMetrics, clock connectors.Clock) (*overOp, error) {
	o := &overOp{cfg: cfg, m: m, clock: clock, wm: NoWatermark, parts: map[string]*overPartition{},
		waiting: map[*overPartition]bool{}, written: map[uint16]uint64{}}
	o.funcs = make([]agg.Func, len(cfg.calls))
	o.scratch = make([]agg.Buffer, len(cfg.calls))
	for i, c := range cfg.calls {
		if !cfg.isAgg(i) {
			continue
		}
		f, err := agg.New(c.Agg, cfg.argTypes[i])
		if err != nil {
			return nil, fmt.Errorf("over aggregate %s: %w", c.Name, err)
		}
		o.funcs[i] = f
	}
	return o, nil
}

func (o *overOp) partition(row types.Row) *overPartition {
	o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.part)
	p := o.parts[string(o.keyBuf)]
	if p == nil {
		p = &overPartition{key: string(o.keyBuf), keyRow: keyValues(row, o.cfg.part), kg: keyGroupOf(o.keyBuf)}
		o.initRunning(p)
		o.addPartition(p)
	}
	return p
}

func (o *overOp) initRunning(p *overPartition) {
	if o.cfg.preceding >= 0 {
		return
	}
	p.bufs = make([]agg.Buffer, len(o.cfg.calls))
	p.first = make([]types.Value, len(o.cfg.calls))
	p.last = make([]types.Value, len(o.cfg.calls))
	for i, f := range o.funcs {
		if f != nil {
			p.bufs[i] = f.NewBuffer()
		}
	}
}

func (o *overOp) addPartition(p *overPartition) {
	o.parts[p.key] = p
	m := o.byKG[p.kg]
	if m == nil {
		m = map[string]*overPartition{}
		o.byKG[p.kg] = m
	}
	m[p.key] = p
}

func (o *overOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	late, bad := 0, 0
	lastLate := NoWatermark
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: over aggregate received %s", ErrRetraction, b.kind(i))
		}
		ts := row[o.cfg.orderCol]
		if ts.IsNull() {
			bad++
			continue
		}
		if o.cfg.rowTime && o.wm != NoWatermark && ts.Int() <= o.wm {
			late++
			lastLate = ts.Int()
			continue
		}
		p := o.partition(row)
		o.dirty.set(p.kg)
		if o.cfg.rowTime {
			p.waiting = append(p.waiting, row)
			o.waiting[p] = true
			continue
		}
		if err := o.process(ctx, p, []types.Row{row}, out); err != nil {
			return err
		}
	}
	o.m.late.add(late)
	if lastLate != NoWatermark {
		o.m.lastLate.Store(lastLate)
	}
	o.m.bad.add(bad)
	return nil
}

func (o *overOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if !o.cfg.rowTime || wm <= o.wm {
		return nil
	}
	o.wm = wm
	t := o.cfg.orderCol
	byTime := func(a, b types.Row) int { return cmpInt(a[t].Int(), b[t].Int()) }
	for p := range o.waiting {
		if !slices.IsSortedFunc(p.waiting, byTime) {
			slices.SortStableFunc(p.waiting, byTime)
		}
		n := 0
		for n < len(p.waiting) && p.waiting[n][t].Int() <= wm {
			n++
		}
		if n == 0 {
			continue
		}
		due := p.waiting[:n:n]
		if n == len(p.waiting) {
			p.waiting = nil
			delete(o.waiting, p)
		} else {
			p.waiting = append([]types.Row(nil), p.waiting[n:]...)
		}
		o.dirty.set(p.kg)
		if err := o.process(ctx, p, due, out); err != nil {
			return err
		}
	}
	return nil
}

// process computes and emits the rows of p, in order.
func (o *overOp) process(ctx context.Context, p *overPartition, rows []types.Row, out *outbox) error {
	t := o.cfg.orderCol
	for i := 0; i < len(rows); {
		// A RANGE frame takes the peers of a row (the rows of its time) together.
		j := i + 1
		if !o.cfg.rows {
			for j < len(rows) && rows[j][t].Int() == rows[i][t].Int() {
				j++
			}
		}
		base := len(p.hist)
		p.hist = append(p.hist, rows[i:j]...)
		if o.cfg.preceding < 0 {
			if err := o.addRunning(p, rows[i:j]); err != nil {
				return err
			}
		}
		for k := i; k < j; k++ {
			res, err := o.results(p, base+k-i, base+j-i)
			if err != nil {
				return err
			}
			if err := out.emit(ctx, connectors.Insert, res); err != nil {
				return err
			}
		}
		o.trim(p, rows[j-1][t].Int())
		i = j
	}
	if len(p.hist) == 0 && len(p.waiting) == 0 && o.cfg.preceding >= 0 {
		delete(o.parts, p.key)
		delete(o.byKG[p.kg], p.key)
	}
	return nil
}

func (o *overOp) addRunning(p *overPartition, rows []types.Row) error {
	for _, row := range rows {
		for c := range o.cfg.calls {
			call := &o.cfg.calls[c]
			v := countStar
			if call.Arg >= 0 {
				v = row[call.Arg]
			}
			switch {
			case p.bufs[c] != nil:
				if err := p.bufs[c].Add(v); err != nil {
					return fmt.Errorf("over aggregate %s: %w", call.Name, err)
				}
			case call.Func == "FIRST_VALUE" && p.first[c].IsNull():
				p.first[c] = v
			case call.Func == "LAST_VALUE" && !v.IsNull():
				p.last[c] = v
			}
		}
	}
	return nil
}

// results is the output row of hist[at], whose frame ends before hist[end] (past its
// peers).
func (o *overOp) results(p *overPartition, at, end int) (types.Row, error) {
	cur := p.hist[at]
	res := make(types.Row, o.cfg.width+len(o.cfg.calls))
	copy(res, cur)
	start := 0
	switch {
	case o.cfg.preceding < 0:
	case o.cfg.rows:
		start = max(0, at-int(o.cfg.preceding))
		end = at + 1
	default:
		lo := cur[o.cfg.orderCol].Int() - o.cfg.preceding
		start, _ = slices.BinarySearchFunc(p.hist[:end], lo, func(r types.Row, lo int64) int {
			return cmpInt(r[o.cfg.orderCol].Int(), lo)
		})
	}
	frame := p.hist[start:end]
	for c := range o.cfg.calls {
		call := &o.cfg.calls[c]
		var v types.Value
		switch call.Func {
		case "LAG":
			v = types.NullValue
			if call.Default >= 0 {
				v = cur[call.Default]
			}
			if k := at - int(call.Offset); k >= 0 && k < len(p.hist) {
				v = p.hist[k][call.Arg]
			}
		case "FIRST_VALUE", "LAST_VALUE":
			v = types.NullValue
			if o.cfg.preceding < 0 {
				if call.Func == "FIRST_VALUE" {
					v = p.first[c]
				} else {
					v = p.last[c]
				}
				break
			}
			if call.Func == "FIRST_VALUE" {
				for _, r := range frame {
					if !r[call.Arg].IsNull() {
						v = r[call.Arg]
						break
					}
				}
			} else {
				for k := len(frame) - 1; k >= 0; k-- {
					if !frame[k][call.Arg].IsNull() {
						v = frame[k][call.Arg]
						break
					}
				}
			}
		default:
			if o.cfg.preceding < 0 {
				v = p.bufs[c].Result()
				break
			}
			b := o.funcs[c].NewBuffer()
			for _, r := range frame {
				x := countStar
				if call.Arg >= 0 {
					x = r[call.Arg]
				}
				if err := b.Add(x); err != nil {
					return nil, fmt.Errorf("over aggregate %s: %w", call.Name, err)
				}
			}
			v = b.Result()
		}
		if v.IsNull() {
			v = types.NullValue
		}
		res[o.cfg.width+c] = v
	}
	return res, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// trim drops the rows no later frame or LAG reaches; now is the time of the last row
// processed (later rows come at a later time on event time, at the same or later on
// processing time).
func (o *overOp) trim(p *overPartition, now int64) {
	keep := o.cfg.keep
	switch {
	case o.cfg.preceding < 0:
	case o.cfg.rows:
		keep = max(keep, int(o.cfg.preceding))
	default:
		// A later row at time t' >= now reaches back to t' - preceding >= now - preceding.
		lo := now - o.cfg.preceding
		n := 0
		for n < len(p.hist) && p.hist[n][o.cfg.orderCol].Int() < lo {
			n++
		}
		keep = max(keep, len(p.hist)-n)
	}
	if drop := len(p.hist) - keep; drop > 0 {
		clear(p.hist[:drop])
		p.hist = append(p.hist[:0], p.hist[drop:]...)
	}
}

func (o *overOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput && o.cfg.rowTime {
		return o.processWatermark(ctx, MaxWatermark, out)
	}
	return nil
}

// Checkpointed state, under the operator's state id: "w" the watermark the operator
// has reached, "p<kg>" the partitions of key group kg, each value
//
//	version | partition count | per partition: waiting rows, kept rows (count, rows);
//	          per call: running buffer (length, bytes; empty when none), first, last
const (
	overPrefix = "p"
	overWMKey  = "w"
)

func (o *overOp) snapshotState(_ context.Context, w stateWriter) error {
	if err := w.Put(overWMKey, binary.AppendVarint([]byte{stateVersion}, o.wm)); err != nil {
		return err
	}
	base := w.Base()
	for kg := range uint16(keyGroups) {
		m := o.byKG[kg]
		if len(m) == 0 {
			continue
		}
		key := kgKey(overPrefix, kg)
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
			for _, rows := range [][]types.Row{p.waiting, p.hist} {
				dst = binary.AppendUvarint(dst, uint64(len(rows)))
				for _, r := range rows {
					dst = appendStateRow(dst, r)
				}
			}
			if o.cfg.preceding < 0 {
				for c := range o.cfg.calls {
					var b []byte
					if p.bufs[c] != nil {
						var err error
						if b, err = p.bufs[c].AppendSnapshot(nil); err != nil {
							return err
						}
					}
					dst = appendLenBytes(dst, b)
					dst = appendStateValue(dst, p.first[c])
					dst = appendStateValue(dst, p.last[c])
				}
			}
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[kg] = w.ID()
	}
	o.dirty.clear()
	return nil
}

func (o *overOp) restoreState(r stateReader) error {
	o.parts = map[string]*overPartition{}
	o.byKG = [keyGroups]map[string]*overPartition{}
	o.waiting = map[*overPartition]bool{}
	o.written = map[uint16]uint64{}
	o.wm = NoWatermark
	err := r.Scan(func(key string, value []byte) error {
		if key == overWMKey {
			d := &stateDecoder{data: value}
			d.version()
			o.wm = d.varint()
			return d.finish()
		}
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if prefix != overPrefix {
			return fmt.Errorf("malformed over aggregate state key %q", key)
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

func (o *overOp) restoreKeyGroup(kg uint16, value []byte) error {
	d := &stateDecoder{data: value}
	d.version()
	n := d.count(2)
	for range n {
		p := &overPartition{kg: kg, keyRow: d.row()}
		if d.err == nil && len(p.keyRow) != len(o.cfg.part) {
			d.fail("a partition key of %d columns, the plan's has %d", len(p.keyRow), len(o.cfg.part))
		}
		for l := range 2 {
			nr := d.count(1)
			rows := make([]types.Row, 0, nr)
			for range nr {
				row := d.row()
				if d.err == nil && len(row) != o.cfg.width {
					d.fail("a row of %d columns, the plan's input has %d", len(row), o.cfg.width)
				}
				if d.err != nil {
					return d.err
				}
				rows = append(rows, row)
			}
			if l == 0 {
				p.waiting = rows
			} else {
				p.hist = rows
			}
		}
		if o.cfg.preceding < 0 {
			o.initRunning(p)
			for c := range o.cfg.calls {
				b := d.lenBytes()
				p.first[c], p.last[c] = d.value(), d.value()
				if d.err != nil {
					return d.err
				}
				if o.funcs[c] != nil {
					buf, err := o.funcs[c].RestoreBuffer(b)
					if err != nil {
						return err
					}
					p.bufs[c] = buf
				}
			}
		}
		p.key = string(appendRowKey(nil, p.keyRow, allCols(len(p.keyRow))))
		if keyGroupOf([]byte(p.key)) != kg {
			return fmt.Errorf("a partition of key group %d stored under %d", keyGroupOf([]byte(p.key)), kg)
		}
		if o.parts[p.key] != nil {
			return fmt.Errorf("partition %v appears twice", p.keyRow)
		}
		o.addPartition(p)
		if len(p.waiting) > 0 {
			o.waiting[p] = true
		}
	}
	return d.finish()
}

// describeOver describes what shapes an OverAggregate's state, for state.Meta.CheckPlan.
func describeOver(n *planner.OverAggregate) string {
	in := n.Input.Schema()
	var b strings.Builder
	fmt.Fprintf(&b, "over rowtime=%v %s partition=[", n.RowTime, n.Frame())
	for i, k := range n.PartitionBy {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in[k].Type.WithoutTimeAttr().String())
	}
	b.WriteString("] calls=[")
	for i, c := range n.Calls {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s(#%d,%d)->%s", c.Func, c.Arg, c.Offset, c.T)
	}
	b.WriteString("] row=[")
	for i, c := range in {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Type.WithoutTimeAttr().String())
	}
	fmt.Fprintf(&b, "] state v%d", stateVersion)
	return b.String()
}

// allCols is 0, 1, ..., n-1.
func allCols(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
