package exec

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/types"
)

// Aggregate state in checkpoints
//
// The groups of a table (a window slice, a CUMULATE window's running accumulator, or all
// of a GroupAggregate) are checkpointed per key group: a group's encoded key hashes to
// one of keyGroups key groups, and each key group of each table is one value. A
// checkpoint rewrites only the key groups that changed since its base (the last
// completed checkpoint) and carries over the others with state.Writer.Reuse; a window
// that fired is simply not written again, which deletes its state from the new
// checkpoint. Key groups are also the unit in which state could later move between
// processes (Flink's max parallelism, 128 by default).
//
// A key group changed when a group was added to it, when one of its groups was updated
// (touched) and a buffer reports Dirty (adding a user a day's distinct count already has
// touches the group without dirtying it), or when it was last written by a checkpoint
// after the base: one that failed, whose values are lost.
//
// Aggregates whose Funcs share state (the dictionary of COUNT(DISTINCT) over strings)
// checkpoint it as a chain of chunks, each the entries added between two marks: a
// checkpoint reuses the chunks of its base and appends one for what was added since.
// A chunk is captured in line as a view (agg.Func.SharedView) and serialized by the
// checkpoint writer. To bound both what a restore replays and what a checkpoint rewrites, the
// newest chunks are merged (rewritten as one) the way a binary counter carries: when
// the new chunk has at least half the entries of the one before it, or the chain is
// longer than maxSharedChunks; but never into a chunk of more than maxSharedMerge
// entries, so that a checkpoint never rewrites more than that. A dictionary of n
// entries is restored from about n/(maxSharedMerge/2) + log2(maxSharedMerge) chunks.

// keyGroups is the number of key groups per table, Flink's default max parallelism.
const keyGroups = 128

// Bounds of the shared state's chunk chain (see above).
const (
	maxSharedChunks = 16
	maxSharedMerge  = 1 << 18
)

// keyGroupOf hashes an encoded group key (FNV-1a, stable across processes) to its key group.
func keyGroupOf(k []byte) uint16 {
	h := uint32(2166136261)
	for _, b := range k {
		h ^= uint32(b)
		h *= 16777619
	}
	return uint16(h % keyGroups)
}

// kgSet is a set of key groups.
type kgSet [keyGroups / 64]uint64

func (s *kgSet) set(kg uint16)      { s[kg>>6] |= 1 << (kg & 63) }
func (s *kgSet) has(kg uint16) bool { return s[kg>>6]&(1<<(kg&63)) != 0 }
func (s *kgSet) clear()             { *s = kgSet{} }

// tableCheckpoint is what a table remembers between its checkpoints.
type tableCheckpoint struct {
	groups  map[uint16][]*aggGroup // by key group, in order of addition
	touched kgSet                  // key groups with a group updated since the last snapshot
	changed kgSet                  // key groups that gained a group since the last snapshot
	// written holds the checkpoint that last wrote each key group (restoring counts).
	written map[uint16]uint64
	// saved is the key prefix the table was last written under ("" before the first
	// snapshot): a table that moved (a CUMULATE slice becoming a running accumulator)
	// has nothing to reuse.
	saved string
}

func (c *tableCheckpoint) added(g *aggGroup, seq int) {
	if c.groups == nil {
		c.groups = map[uint16][]*aggGroup{}
	}
	c.groups[g.kg] = append(c.groups[g.kg], g)
	c.changed.set(g.kg)
	g.seq = uint32(seq)
}

// kgKey is the key of key group kg under prefix.
func kgKey(prefix string, kg uint16) string { return prefix + fmt.Sprintf("%03d", kg) }

// snapshotTable writes the key groups of tbl under prefix, reusing from the checkpoint's
// base those that did not change since it. withLast writes each group's last emitted
// result (GroupAggregate).
func snapshotTable(w stateWriter, prefix string, tbl *aggTable, withLast bool) error {
	c := &tbl.ckpt
	if c.written == nil {
		c.written = map[uint16]uint64{}
	}
	kgs := make([]uint16, 0, len(c.groups))
	for kg := range c.groups {
		kgs = append(kgs, kg)
	}
	slices.Sort(kgs)
	base := w.Base()
	for _, kg := range kgs {
		groups := c.groups[kg]
		key := kgKey(prefix, kg)
		at := c.written[kg]
		if base != 0 && c.saved == prefix && at != 0 && at <= base &&
			!c.changed.has(kg) && !(c.touched.has(kg) && anyDirty(groups)) {
			if err := w.Unchanged(key); err != nil {
				return err
			}
			continue
		}
		fg, err := freezeGroups(groups, withLast)
		if err != nil {
			return fmt.Errorf("key %s: %w", key, err)
		}
		if len(fg.cuts) == 0 {
			err = w.Put(key, fg.head)
		} else {
			err = putDeferred(w, key, func() ([]byte, error) {
				v, err := fg.appendTo(make([]byte, 0, len(fg.head)))
				if err != nil {
					return nil, fmt.Errorf("key %s: %w", key, err)
				}
				return v, nil
			})
		}
		if err != nil {
			return err
		}
		c.written[kg] = w.ID()
	}
	c.saved = prefix
	c.touched.clear()
	c.changed.clear()
	return nil
}

func anyDirty(groups []*aggGroup) bool {
	for _, g := range groups {
		for _, b := range g.bufs {
			if b.Dirty() {
				return true
			}
		}
	}
	return false
}

// The groups of a key group are written as
//
//	version | count | per group: position in its table, key values,
//	[last result: 0, or 1 and the values], buffer count, per buffer: uint32 length and snapshot
//
// frozenGroups is that encoding captured in line (freezeGroups): head is the encoding
// with the snapshots of the bitmap buffers (and their lengths) left out, each frozen
// (agg.FreezeBuffer) to be written at its cut by appendTo, later and on the checkpoint
// writer's goroutine. So the in-line pause of a full checkpoint does not serialize
// bitmaps of millions of users.
type frozenGroups struct {
	head []byte
	cuts []frozenCut
}

type frozenCut struct {
	at int // position in head
	fz *agg.FrozenBuffer
}

func freezeGroups(groups []*aggGroup, withLast bool) (*frozenGroups, error) {
	fg := &frozenGroups{}
	dst := []byte{stateVersion}
	dst = binary.AppendUvarint(dst, uint64(len(groups)))
	for _, g := range groups {
		dst = binary.AppendUvarint(dst, uint64(g.seq))
		dst = appendStateRow(dst, g.key)
		if withLast {
			if g.last == nil {
				dst = append(dst, 0)
			} else {
				dst = append(dst, 1)
				dst = appendStateRow(dst, g.last)
			}
		}
		dst = binary.AppendUvarint(dst, uint64(len(g.bufs)))
		for _, b := range g.bufs {
			fz, err := agg.FreezeBuffer(b)
			if err != nil {
				return nil, err
			}
			if fz != nil {
				fg.cuts = append(fg.cuts, frozenCut{at: len(dst), fz: fz})
				continue
			}
			if dst, err = appendSized(dst, b.AppendSnapshot); err != nil {
				return nil, err
			}
		}
	}
	fg.head = dst
	return fg, nil
}

// appendTo writes the encoding whole.
func (fg *frozenGroups) appendTo(dst []byte) ([]byte, error) {
	prev := 0
	for _, c := range fg.cuts {
		dst = append(dst, fg.head[prev:c.at]...)
		var err error
		if dst, err = appendSized(dst, c.fz.AppendTo); err != nil {
			return nil, err
		}
		prev = c.at
	}
	return append(dst, fg.head[prev:]...), nil
}

// appendSized appends what appendFn appends, after its length as a uint32.
func appendSized(dst []byte, appendFn func([]byte) ([]byte, error)) ([]byte, error) {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := appendFn(dst)
	if err != nil {
		return nil, err
	}
	n := len(dst) - at - 4
	if n > 1<<32-1 {
		return nil, fmt.Errorf("aggregate state of %d bytes is too large", n)
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(n))
	return dst, nil
}

// restoredGroup is a group read back with its position in its table.
type restoredGroup struct {
	g   *aggGroup
	seq uint32
}

// decodeGroups reads what frozenGroups.appendTo wrote into groups of key group kg.
func decodeGroups(data []byte, kg uint16, funcs []agg.Func, withLast bool) ([]restoredGroup, error) {
	d := &stateDecoder{data: data}
	d.version()
	n := d.count(3)
	out := make([]restoredGroup, 0, n)
	for range n {
		seq := d.uvarint()
		key := d.row()
		var last types.Row
		if withLast {
			switch d.byte() {
			case 0:
			case 1:
				last = d.row()
			default:
				d.fail("bad last-result flag")
			}
		}
		nb := d.count(4)
		if d.err == nil && nb != len(funcs) {
			d.fail("%d aggregate buffers, the plan has %d aggregates", nb, len(funcs))
		}
		if d.err != nil {
			return nil, d.err
		}
		if seq > 1<<32-1 {
			return nil, fmt.Errorf("group position %d out of range", seq)
		}
		g := &aggGroup{key: key, last: last, bufs: make([]agg.Buffer, nb), kg: kg}
		g.k = string(appendRowKey(nil, key, identityCols(len(key))))
		for i, f := range funcs {
			lenb := d.bytes(4)
			if d.err != nil {
				return nil, d.err
			}
			snap := d.bytes(int(binary.LittleEndian.Uint32(lenb)))
			if d.err != nil {
				return nil, d.err
			}
			b, err := f.RestoreBuffer(snap)
			if err != nil {
				return nil, err
			}
			g.bufs[i] = b
		}
		out = append(out, restoredGroup{g: g, seq: uint32(seq)})
	}
	return out, d.finish()
}

func identityCols(n int) []int {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return cols
}

// tableRestorer collects the key groups of tables as a checkpoint is scanned and builds
// the tables at the end, groups in their original order.
type tableRestorer struct {
	tables map[string][]restoredGroup // by prefix
}

func (r *tableRestorer) add(prefix string, kg uint16, groups []restoredGroup) {
	if r.tables == nil {
		r.tables = map[string][]restoredGroup{}
	}
	r.tables[prefix] = append(r.tables[prefix], groups...)
}

// build returns the table restored under prefix, as saved under it by checkpoint id.
func (r *tableRestorer) build(prefix string, id uint64) (*aggTable, error) {
	groups := r.tables[prefix]
	slices.SortFunc(groups, func(a, b restoredGroup) int { return int(int64(a.seq) - int64(b.seq)) })
	t := newAggTable()
	for _, rg := range groups {
		if t.index[rg.g.k] != nil {
			return nil, fmt.Errorf("key %s: group %v appears twice", prefix, rg.g.key)
		}
		t.add(rg.g)
	}
	t.ckpt.saved = prefix
	t.ckpt.changed.clear()
	t.ckpt.written = make(map[uint16]uint64, len(t.ckpt.groups))
	for kg := range t.ckpt.groups {
		t.ckpt.written[kg] = id
	}
	return t, nil
}

// parseKGKey splits "<prefix><kg>" where kg is the last three characters.
func parseKGKey(key string) (prefix string, kg uint16, err error) {
	if len(key) < 3 {
		return "", 0, fmt.Errorf("malformed state key %q", key)
	}
	n, err := strconv.ParseUint(key[len(key)-3:], 10, 16)
	if err != nil || n >= keyGroups {
		return "", 0, fmt.Errorf("malformed key group in state key %q", key)
	}
	return key[:len(key)-3], uint16(n), nil
}

// sharedState checkpoints the shared state of one Func (its dictionary) as a chain of
// chunks under "<prefix>c<seq>", in key order.
type sharedState struct {
	prefix string
	seq    uint64                   // the last chunk's sequence number
	chains map[uint64][]sharedChunk // the chain each recent checkpoint holds
}

// sharedChunk is the shared state added between two marks of a Func.
type sharedChunk struct {
	key      string
	from, to uint64 // Func.SharedMark values
	written  uint64 // the checkpoint that wrote it
}

func (c sharedChunk) entries() uint64 { return c.to&(1<<32-1) - c.from&(1<<32-1) }

func (s *sharedState) chunkKey(seq uint64) string {
	return s.prefix + "c" + fmt.Sprintf("%016x", seq)
}

// snapshot writes f's shared state: the chain of the checkpoint's base, carried over,
// with what was added since appended and the newest chunks merged as the chain's bounds
// require. Without a base (or after a compaction of the dictionary) it is one chunk.
func (s *sharedState) snapshot(w stateWriter, f agg.Func) error {
	if s.chains == nil {
		s.chains = map[uint64][]sharedChunk{}
	}
	mark := f.SharedMark()
	chain := slices.Clone(s.chains[w.Base()])
	if w.Base() == 0 || len(chain) > 0 && chain[0].to>>32 != mark>>32 {
		chain = nil // nothing to build on, or the dictionary was compacted
	}
	if mark == 0 && len(chain) == 0 {
		return nil // no shared state (most aggregates), or none yet
	}
	var end uint64
	if len(chain) > 0 {
		end = chain[len(chain)-1].to
	}
	if len(chain) == 0 || mark != end {
		tail := sharedChunk{from: end, to: mark, written: w.ID()}
		if len(chain) == 0 {
			tail.from = 0
		}
		for len(chain) > 0 {
			prev := chain[len(chain)-1]
			if tail.entries() < prev.entries()/2 && len(chain) < maxSharedChunks {
				break
			}
			if prev.entries()+tail.entries() > maxSharedMerge {
				break
			}
			tail.from = prev.from
			chain = chain[:len(chain)-1]
		}
		s.seq++
		tail.key = s.chunkKey(s.seq)
		// Only a view of the entries is taken in line; the writer serializes it.
		view, err := f.SharedView(tail.from)
		if err != nil {
			return err
		}
		chain = append(chain, tail)
		for _, c := range chain[:len(chain)-1] {
			if err := w.Unchanged(c.key); err != nil {
				view.Release()
				return err
			}
		}
		produce := func() ([]byte, error) { return view.AppendTo([]byte{stateVersion}) }
		if err := putDeferred(w, tail.key, produce); err != nil {
			return err
		}
	} else {
		for _, c := range chain {
			if err := w.Unchanged(c.key); err != nil {
				return err
			}
		}
	}
	s.chains[w.ID()] = chain
	// Later checkpoints build on this one or a later one.
	for id := range s.chains {
		if id < w.Base() {
			delete(s.chains, id)
		}
	}
	return nil
}

// restore applies one chunk, which Scan passes in key order, of checkpoint id.
func (s *sharedState) restore(f agg.Func, id uint64, key string, value []byte) error {
	rest, ok := strings.CutPrefix(key, s.prefix+"c")
	if !ok {
		return fmt.Errorf("malformed shared state key %q", key)
	}
	seq, err := strconv.ParseUint(rest, 16, 64)
	if err != nil || seq <= s.seq && s.seq != 0 {
		return fmt.Errorf("state key %q: shared state chunk out of order", key)
	}
	if len(value) == 0 || value[0] != stateVersion {
		return fmt.Errorf("state key %q: unknown state version", key)
	}
	if s.chains == nil {
		s.chains = map[uint64][]sharedChunk{}
	}
	chain := s.chains[id]
	var from uint64
	if len(chain) > 0 {
		from = chain[len(chain)-1].to
	}
	if err := f.RestoreShared(value[1:]); err != nil {
		return fmt.Errorf("state key %q: %w", key, err)
	}
	s.seq = seq
	s.chains[id] = append(chain, sharedChunk{key: key, from: from, to: f.SharedMark(), written: id})
	return nil
}
