package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Top-N and deduplication
//
// rankOp runs both planner.Rank and planner.Deduplicate. Per partition it keeps the
// rows in rank order (ORDER BY, then arrival), and after each input row it compares what
// the partition shows now (the rows ranked Start to End) with what it emitted before, and
// emits the difference, as Flink's rank functions do:
//
//   - with the rank number, each rank position is a row of the result: a position that
//     gets another row is updated (-U the old row and rank, +U the new), a new position is
//     inserted (+I), a position no longer filled is deleted (-D); rows below a new one
//     shift down a rank;
//   - without it, a row that enters the range is inserted (+I) and one pushed out is
//     deleted (-D); rows that only change rank emit nothing;
//   - deduplication (one row per key) updates the kept row (-U/+U) when another replaces
//     it, and keeping the first row by processing time never replaces one.
//
// Over an insert-only input (AppendFastStrategy) a row ranked beyond End can never come
// back, since ranks only grow as rows arrive, so only the rows ranked up to End are kept.
// Over an updating input (RetractStrategy) every row is kept, so that a retracted top row
// is replaced by the next; a retraction removes one row equal to it.
//
// Ties keep arrival order: among rows with equal ORDER BY values the earlier ranks first
// (ROW_NUMBER numbers them so), except for keep-last deduplication on a rowtime, where a
// later row with the same time replaces the kept one, as in Flink. NULL sorts first
// ascending and last descending.

// rankConfig is a compiled Rank or Deduplicate.
type rankConfig struct {
	part       []int
	order      []planner.SortKey
	typ        planner.RankType
	start, end int64
	rankNumber bool
	retract    bool // keep every row (RetractStrategy)
	dedup      bool // a Deduplicate: replacements are -U/+U
	// lastWins breaks ties by later arrival first (keep-last deduplication).
	lastWins bool
	width    int // input columns
}

func compileRank(n *planner.Rank) (*rankConfig, error) {
	in := n.Input.Schema()
	cfg := &rankConfig{part: n.PartitionBy, order: n.OrderBy, typ: n.Type, start: n.Start, end: n.End,
		rankNumber: n.RankNumber, retract: n.Strategy != planner.AppendFastStrategy, width: len(in)}
	if n.Start < 1 || n.End < n.Start {
		return nil, fmt.Errorf("%w: rank range %d to %d", ErrUnsupportedPlan, n.Start, n.End)
	}
	want := len(in)
	if n.RankNumber {
		want++
	}
	if len(n.Out) != want {
		return nil, fmt.Errorf("%w: rank has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), want)
	}
	return cfg, cfg.checkCols(len(in))
}

func compileDedup(n *planner.Deduplicate) (*rankConfig, error) {
	in := n.Input.Schema()
	cfg := &rankConfig{part: n.Keys, typ: planner.RowNumber, start: 1, end: 1, dedup: true, width: len(in), lastWins: n.KeepLast}
	if n.RowTime {
		// By event time; among equal times keep-first keeps the earlier row and
		// keep-last takes the later one.
		cfg.order = []planner.SortKey{{Col: n.TimeCol, Desc: n.KeepLast}}
	}
	if len(n.Out) != len(in) {
		return nil, fmt.Errorf("%w: deduplicate has %d output columns, want %d", ErrUnsupportedPlan, len(n.Out), len(in))
	}
	if n.TimeCol < 0 || n.TimeCol >= len(in) {
		return nil, fmt.Errorf("%w: deduplicate time column %d of %d", ErrUnsupportedPlan, n.TimeCol, len(in))
	}
	return cfg, cfg.checkCols(len(in))
}

func (c *rankConfig) checkCols(width int) error {
	for _, k := range c.part {
		if k < 0 || k >= width {
			return fmt.Errorf("%w: partition column %d of %d", ErrUnsupportedPlan, k, width)
		}
	}
	for _, k := range c.order {
		if k.Col < 0 || k.Col >= width {
			return fmt.Errorf("%w: order column %d of %d", ErrUnsupportedPlan, k.Col, width)
		}
	}
	return nil
}

// rankEntry is one row of a partition; seq is its arrival, unique in the operator.
type rankEntry struct {
	row types.Row
	seq uint64
}

// rankShown is a row the partition emitted: its entry (seq, row), rank and output row.
type rankShown struct {
	seq  uint64
	rank int64
	row  types.Row
	out  types.Row
}

// rankPartition is the state of one partition key.
type rankPartition struct {
	key     string // encoded partition key
	kg      uint16
	entries []rankEntry
	shown   []rankShown
	// edge is the first ORDER BY value of the last kept row once a ROW_NUMBER Top-N is
	// full (AppendFastStrategy): most rows rank below it and are dropped after one
	// comparison with a value held here, without reaching the rows themselves.
	edge   types.Value
	edgeOK bool
}

type rankOp struct {
	nopOperator
	cfg *rankConfig

	// state: the partitions by encoded key, and again by key group for checkpoints
	parts   map[string]*rankPartition
	byKG    [keyGroups]map[string]*rankPartition
	nextSeq uint64
	// checkpoints
	dirty   kgSet             // key groups changed since the last snapshot
	written map[uint16]uint64 // the checkpoint that last wrote each key group

	keyBuf []byte
	next   []rankShown // scratch: what a partition shows after a change
}

func newRankOp(cfg *rankConfig) *rankOp {
	return &rankOp{cfg: cfg, nextSeq: 1, parts: map[string]*rankPartition{}, written: map[uint16]uint64{}}
}

// compare orders two entries: ORDER BY, then arrival.
func (o *rankOp) compare(a, b *rankEntry) int {
	if c := o.compareKeys(a.row, b.row); c != 0 {
		return c
	}
	switch {
	case a.seq == b.seq:
		return 0
	case (a.seq < b.seq) != o.cfg.lastWins:
		return -1
	}
	return 1
}

// compareKeys compares the ORDER BY values only (ties are equal).
func (o *rankOp) compareKeys(a, b types.Row) int {
	return planner.CompareRows(o.cfg.order, a, b)
}

func (o *rankOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	for i, row := range b.rows {
		kind := b.kind(i)
		retracting := kind == connectors.UpdateBefore || kind == connectors.Delete
		if retracting && !o.cfg.retract {
			return fmt.Errorf("%w: rank over an insert-only input received %s", ErrRetraction, kind)
		}
		o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.cfg.part)
		p := o.parts[string(o.keyBuf)]
		if p == nil {
			if retracting {
				continue // a retraction of a row never seen (its state expired in Flink)
			}
			p = &rankPartition{key: string(o.keyBuf), kg: keyGroupOf(o.keyBuf)}
			o.addPartition(p)
		}
		var changed bool
		if retracting {
			changed = o.remove(p, row)
		} else {
			changed = o.insert(p, row)
		}
		if !changed {
			continue
		}
		o.dirty.set(p.kg)
		if err := o.emitChanges(ctx, p, out); err != nil {
			return err
		}
		if len(p.entries) == 0 {
			delete(o.parts, p.key)
			delete(o.byKG[p.kg], p.key)
		}
	}
	return nil
}

func (o *rankOp) addPartition(p *rankPartition) {
	o.parts[p.key] = p
	m := o.byKG[p.kg]
	if m == nil {
		m = map[string]*rankPartition{}
		o.byKG[p.kg] = m
	}
	m[p.key] = p
}

// insert adds row to p; it reports false when the row ranks beyond what is kept.
func (o *rankOp) insert(p *rankPartition, row types.Row) bool {
	if p.edgeOK {
		// The hot path of a full Top-N: the row ranks below the last kept one.
		k := o.cfg.order[0]
		if k.Compare(row[k.Col], p.edge) > 0 {
			return false
		}
	}
	e := rankEntry{row: row, seq: o.nextSeq}
	n := len(p.entries)
	if !o.cfg.retract && o.cfg.typ == planner.RowNumber && int64(n) >= o.cfg.end && o.compare(&e, &p.entries[n-1]) > 0 {
		return false
	}
	o.nextSeq++
	at, _ := slices.BinarySearchFunc(p.entries, &e, func(x rankEntry, t *rankEntry) int { return o.compare(&x, t) })
	p.entries = slices.Insert(p.entries, at, e)
	if !o.cfg.retract {
		o.trim(p)
		o.setEdge(p)
	}
	return true
}

// setEdge keeps p.edge for the hot path of insert.
func (o *rankOp) setEdge(p *rankPartition) {
	n := len(p.entries)
	p.edgeOK = !o.cfg.retract && o.cfg.typ == planner.RowNumber && len(o.cfg.order) > 0 && int64(n) >= o.cfg.end
	if p.edgeOK {
		p.edge = p.entries[n-1].row[o.cfg.order[0].Col]
	}
}

// trim drops the entries ranked beyond End (AppendFastStrategy).
func (o *rankOp) trim(p *rankPartition) {
	if o.cfg.typ == planner.RowNumber {
		if int64(len(p.entries)) > o.cfg.end {
			clear(p.entries[o.cfg.end:])
			p.entries = p.entries[:o.cfg.end]
		}
		return
	}
	o.ranks(p, func(i int, rank int64) bool {
		if rank > o.cfg.end {
			clear(p.entries[i:])
			p.entries = p.entries[:i]
			return false
		}
		return true
	})
}

// remove takes one entry equal to row out of p.
func (o *rankOp) remove(p *rankPartition, row types.Row) bool {
	probe := rankEntry{row: row}
	at, _ := slices.BinarySearchFunc(p.entries, &probe, func(x rankEntry, t *rankEntry) int { return o.compareKeys(x.row, t.row) })
	for i := at; i < len(p.entries) && o.compareKeys(p.entries[i].row, row) == 0; i++ {
		if rowsEqual(p.entries[i].row, row) {
			p.entries = slices.Delete(p.entries, i, i+1)
			return true
		}
	}
	return false
}

// ranks calls fn with each entry's index and rank, in order, until fn returns false.
func (o *rankOp) ranks(p *rankPartition, fn func(i int, rank int64) bool) {
	var rank, dense int64
	for i := range p.entries {
		switch {
		case o.cfg.typ == planner.RowNumber:
			rank = int64(i) + 1
		case i == 0 || o.compareKeys(p.entries[i-1].row, p.entries[i].row) != 0:
			dense++
			rank = int64(i) + 1
			if o.cfg.typ == planner.DenseRank {
				rank = dense
			}
		}
		if !fn(i, rank) {
			return
		}
	}
}

// emitChanges emits what p shows now against what it showed, and remembers it.
func (o *rankOp) emitChanges(ctx context.Context, p *rankPartition, out *outbox) error {
	next := o.next[:0]
	o.ranks(p, func(i int, rank int64) bool {
		if rank > o.cfg.end {
			return false
		}
		if rank >= o.cfg.start {
			next = append(next, rankShown{seq: p.entries[i].seq, rank: rank, row: p.entries[i].row})
		}
		return true
	})
	old := p.shown
	find := func(list []rankShown, s rankShown) int {
		for i := range list {
			if list[i].seq == s.seq && (list[i].rank == s.rank || !o.cfg.rankNumber) {
				return i
			}
		}
		return -1
	}
	// Output rows of the shown entries: the ones shown before are reused.
	for i := range next {
		if j := find(old, next[i]); j >= 0 {
			next[i].out = old[j].out
			continue
		}
		next[i].out = o.outRow(next[i])
	}
	if o.cfg.rankNumber || o.cfg.dedup {
		// By position: each rank position is a row of the result.
		for i := 0; i < max(len(old), len(next)); i++ {
			switch {
			case i >= len(next):
				if err := out.emit(ctx, connectors.Delete, old[i].out); err != nil {
					return err
				}
			case i >= len(old):
				if err := out.emit(ctx, connectors.Insert, next[i].out); err != nil {
					return err
				}
			case old[i].seq != next[i].seq || old[i].rank != next[i].rank:
				if err := out.emit(ctx, connectors.UpdateBefore, old[i].out); err != nil {
					return err
				}
				if err := out.emit(ctx, connectors.UpdateAfter, next[i].out); err != nil {
					return err
				}
			}
		}
	} else {
		for _, s := range old {
			if find(next, s) < 0 {
				if err := out.emit(ctx, connectors.Delete, s.out); err != nil {
					return err
				}
			}
		}
		for _, s := range next {
			if find(old, s) < 0 {
				if err := out.emit(ctx, connectors.Insert, s.out); err != nil {
					return err
				}
			}
		}
	}
	// p.shown takes a copy; next is scratch for the next change.
	p.shown = append(p.shown[:0:0], next...)
	o.next = next[:0]
	return nil
}

// outRow is the output row of a shown entry: the input row, and the rank number.
func (o *rankOp) outRow(s rankShown) types.Row {
	if !o.cfg.rankNumber {
		return s.row
	}
	r := make(types.Row, len(s.row)+1)
	copy(r, s.row)
	r[len(s.row)] = types.IntValue(types.BigInt, s.rank)
	return r
}

// Checkpointed state, under the operator's state id: "p<kg>" for the partitions of key
// group kg, each value
//
//	version | partition count | per partition: entry count, per entry: seq, row;
//	          shown count, per shown row: seq, rank
//
// Shown rows are rebuilt from their entries (a shown entry is always kept).
const rankPrefix = "p"

func (o *rankOp) snapshotState(_ context.Context, w stateWriter) error {
	base := w.Base()
	for kg := range uint16(keyGroups) {
		m := o.byKG[kg]
		if len(m) == 0 {
			continue // an empty key group is not written, which deletes it
		}
		key := kgKey(rankPrefix, kg)
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
			dst = binary.AppendUvarint(dst, uint64(len(p.entries)))
			for _, e := range p.entries {
				dst = binary.AppendUvarint(dst, e.seq)
				dst = appendStateRow(dst, e.row)
			}
			dst = binary.AppendUvarint(dst, uint64(len(p.shown)))
			for _, s := range p.shown {
				dst = binary.AppendUvarint(dst, s.seq)
				dst = binary.AppendVarint(dst, s.rank)
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

func (o *rankOp) restoreState(r stateReader) error {
	o.parts = map[string]*rankPartition{}
	o.byKG = [keyGroups]map[string]*rankPartition{}
	o.written = map[uint16]uint64{}
	o.nextSeq = 1
	err := r.Scan(func(key string, value []byte) error {
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if prefix != rankPrefix {
			return fmt.Errorf("malformed rank state key %q", key)
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

func (o *rankOp) restoreKeyGroup(kg uint16, value []byte) error {
	d := &stateDecoder{data: value}
	d.version()
	n := d.count(2)
	m := make(map[string]*rankPartition, n)
	for range n {
		p := &rankPartition{kg: kg}
		ne := d.count(2)
		for range ne {
			seq := d.uvarint()
			row := d.row()
			if d.err == nil && len(row) != o.cfg.width {
				d.fail("a row of %d columns, the plan's input has %d", len(row), o.cfg.width)
			}
			if d.err != nil {
				return d.err
			}
			p.entries = append(p.entries, rankEntry{row: row, seq: seq})
			o.nextSeq = max(o.nextSeq, seq+1)
		}
		ns := d.count(2)
		for range ns {
			s := rankShown{seq: d.uvarint(), rank: d.varint()}
			if d.err != nil {
				return d.err
			}
			for _, e := range p.entries {
				if e.seq == s.seq {
					s.row = e.row
				}
			}
			if s.row == nil {
				return fmt.Errorf("shown row %d is not among the partition's rows", s.seq)
			}
			p.shown = append(p.shown, s)
		}
		if len(p.entries) == 0 {
			return fmt.Errorf("an empty partition")
		}
		p.key = string(appendRowKey(nil, p.entries[0].row, o.cfg.part))
		if keyGroupOf([]byte(p.key)) != kg {
			return fmt.Errorf("a partition of key group %d stored under %d", keyGroupOf([]byte(p.key)), kg)
		}
		if m[p.key] != nil {
			return fmt.Errorf("partition %v appears twice", keyValues(p.entries[0].row, o.cfg.part))
		}
		for i := range p.shown {
			p.shown[i].out = o.outRow(p.shown[i])
		}
		o.setEdge(p)
		m[p.key] = p
	}
	if err := d.finish(); err != nil {
		return err
	}
	for _, p := range m {
		o.addPartition(p)
	}
	return nil
}

// describeRank describes what shapes a Rank's or Deduplicate's state, for state.Meta.CheckPlan.
func describeRank(in types.Schema, cfg *rankConfig) string {
	var b strings.Builder
	if cfg.dedup {
		fmt.Fprintf(&b, "deduplicate keepLast=%v", cfg.lastWins)
	} else {
		fmt.Fprintf(&b, "rank %s %d..%d retract=%v rankNumber=%v", cfg.typ, cfg.start, cfg.end, cfg.retract, cfg.rankNumber)
	}
	b.WriteString(" partition=[")
	for i, k := range cfg.part {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in[k].Type.WithoutTimeAttr().String())
	}
	b.WriteString("] order=[")
	for i, k := range cfg.order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d %s desc=%v%s", k.Col, in[k.Col].Type.WithoutTimeAttr(), k.Desc, k.NullsState())
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
