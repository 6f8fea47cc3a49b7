package agg

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"unsafe"
)

// stringDict maps distinct byte strings to dense ids 0, 1, 2, ... in first-seen order.
// It is append-only, which is what makes incremental checkpoints of it cheap: the
// entries since a mark are a suffix of the arena.
//
// Layout (see doc.go for the measured costs):
//
//   - arena: the entries in id order, each "id (4 bytes LE) | uvarint length | bytes",
//     in chunks that are never copied once full (chunk size grows to chunkSize, then stays;
//     an entry larger than chunkSize gets a chunk of its own at position 0).
//   - slots: an open-addressing table (linear probing, at most 4/5 full) of uint64: the
//     high tagBits hold hash bits the index did not use, the low refBits hold 1 + the
//     entry's arena reference (chunk<<chunkBits | position). A zero slot is empty. The
//     tag rejects almost every probe that is not the key without touching the arena, so
//     a lookup costs one cache miss in the slots and one in the arena for the hit. The
//     table is not a power of two: a key's home slot is the high half of hash*size
//     (Lemire's multiply-shift), so it can grow by half instead of doubling, which keeps
//     it 53-80% full rather than 37-75%.
//   - marks: the arena reference of every markEvery-th id, so that AppendSince finds the
//     start of a suffix without scanning from the beginning.
//
// The large chunks and the slot table live outside the Go heap (offheap.go): release
// frees them, and so does the GC's cleanup once the dictionary is unreachable.
type stringDict struct {
	seed     maphash.Seed
	slots    []uint64
	slotsMem *region
	size     uint64 // len(slots)
	limit    int    // entries above which the table grows
	n        int
	chunks   [][]byte
	chunkMem []*region // chunkMem[i] holds chunks[i]
	marks    []uint64
	maxLen   int         // ids given out at most: maxDictLen, lowered by tests
	sink     uint64      // see lookupBatch
	pins     *regionPins // defers freeing chunks that views still read (sharedview.go)
}

const (
	refBits       = 44
	refMask       = 1<<refBits - 1
	tagBits       = 64 - refBits
	tagMask       = 1<<tagBits - 1
	chunkBits     = 20
	chunkSize     = 1 << chunkBits
	firstChunk    = 4 << 10
	minSlots      = 64
	markEvery     = 1024
	maxDictLen    = min(math.MaxUint32, math.MaxInt) // ids are uint32; MaxUint32 stays unused
	maxChunkCount = 1 << (refBits - chunkBits)
)

// slotLimit is how many entries a table of size slots holds before it grows: 4/5.
// Linear probing with tags stays fast there (a miss probes ~13 slots, two cache lines,
// without reading the arena); fuller, the probe sequences lengthen quickly.
func slotLimit(size uint64) int { return int(size / 5 * 4) }

// slotsFor is the table size for n entries.
func slotsFor(n int) uint64 {
	size := uint64(minSlots)
	for slotLimit(size) < n {
		size += size / 2
	}
	return size
}

func newStringDict() *stringDict {
	d := &stringDict{seed: maphash.MakeSeed(), maxLen: maxDictLen, pins: &regionPins{}}
	d.reset(0)
	return d
}

// reset empties the dictionary and sizes the table for n entries.
func (d *stringDict) reset(n int) {
	d.release()
	d.allocSlots(slotsFor(n))
	d.n = 0
	d.marks = nil
}

// release frees the dictionary's memory now (see offheap.go) and leaves it unusable
// until reset.
func (d *stringDict) release() {
	d.slotsMem.free()
	d.slots, d.slotsMem, d.size, d.limit = nil, nil, 0, 0
	for _, r := range d.chunkMem {
		d.pins.free(r)
	}
	d.chunks, d.chunkMem = nil, nil
}

// allocSlots gives the dictionary an empty table of size slots, freeing the old one.
func (d *stringDict) allocSlots(size uint64) {
	d.slotsMem.free()
	d.slotsMem = newRegion(int(size)*8, true)
	d.slots = d.slotsMem.uint64s(int(size))
	d.size = size
	d.limit = slotLimit(size)
}

// home is the slot where the probe for hash h starts: the high half of h*size, which
// maps the hash uniformly onto [0, size) and uses its high bits, leaving the low ones
// for the tag.
func (d *stringDict) home(h uint64) uint64 {
	hi, _ := bits.Mul64(h, d.size)
	return hi
}

func (d *stringDict) len() int { return d.n }

// lookupBytes is lookup for a key held in a scratch buffer: the dictionary copies it
// into the arena when it is new, so the caller may reuse b.
func (d *stringDict) lookupBytes(b []byte) (uint32, error) {
	return d.lookup(unsafe.String(unsafe.SliceData(b), len(b)))
}

// lookup returns the id of s, adding s if it is new.
func (d *stringDict) lookup(s string) (uint32, error) {
	return d.lookupHashed(s, maphash.String(d.seed, s))
}

// lookupBatch looks up (adding if new) keys[k] into ids[k]. It first touches the slot
// and then the arena entry of every key, loads that do not depend on each other, so the
// processor overlaps their cache misses; the lookups proper then hit the cache. With
// cold keys this is several times faster than one lookup after another, each waiting
// for two misses in a row.
func (d *stringDict) lookupBatch(keys []string, hashes []uint64, ids []uint32) error {
	hashes = hashes[:len(keys)]
	for k, s := range keys {
		hashes[k] = maphash.String(d.seed, s)
	}
	// A loop of nothing but loads: calls in it would shrink how far ahead the processor
	// can issue them.
	var sink uint64
	for _, h := range hashes {
		sink += d.slots[d.home(h)]
	}
	for _, h := range hashes {
		tag := h & tagMask
		for i := d.home(h); ; {
			slot := d.slots[i]
			if slot == 0 {
				break
			}
			if slot>>refBits == tag {
				ref := slot&refMask - 1
				sink += uint64(d.chunks[ref>>chunkBits][ref&(chunkSize-1)])
				break
			}
			if i++; i == d.size {
				i = 0
			}
		}
	}
	d.sink = sink // keeps the touching loads from being optimized away
	for k, s := range keys {
		id, err := d.lookupHashed(s, hashes[k])
		if err != nil {
			return err
		}
		ids[k] = id
	}
	return nil
}

func (d *stringDict) lookupHashed(s string, h uint64) (uint32, error) {
	tag := h & tagMask
	for i := d.home(h); ; {
		slot := d.slots[i]
		if slot == 0 {
			return d.insert(i, tag, s)
		}
		if slot>>refBits == tag {
			ref := slot&refMask - 1
			e := d.chunks[ref>>chunkBits][ref&(chunkSize-1):]
			if key := entryKey(e); key == s {
				return binary.LittleEndian.Uint32(e), nil
			}
		}
		if i++; i == d.size {
			i = 0
		}
	}
}

// entryKey returns the key of the arena entry at the start of e.
func entryKey(e []byte) string {
	l, n := uint64(e[4]), 1
	if l >= 0x80 {
		l, n = binary.Uvarint(e[4:])
	}
	k := e[4+n : 4+n+int(l)]
	return unsafe.String(unsafe.SliceData(k), len(k))
}

func (d *stringDict) insert(i, tag uint64, s string) (uint32, error) {
	if d.n >= d.maxLen {
		return 0, ErrDictionaryFull
	}
	ref, ok := d.append(uint32(d.n), s)
	if !ok {
		return 0, ErrDictionaryFull
	}
	if d.n%markEvery == 0 {
		d.marks = append(d.marks, ref)
	}
	d.slots[i] = tag<<refBits | (ref + 1)
	id := uint32(d.n)
	d.n++
	if d.n > d.limit {
		d.rehash(d.size + d.size/2)
	}
	return id, nil
}

// append writes an entry to the arena and returns its reference.
func (d *stringDict) append(id uint32, s string) (uint64, bool) {
	size := 4 + uvarintLen(uint64(len(s))) + len(s)
	last := len(d.chunks) - 1
	if last < 0 || cap(d.chunks[last])-len(d.chunks[last]) < size {
		if len(d.chunks) >= maxChunkCount {
			return 0, false
		}
		c := firstChunk
		if last >= 0 {
			c = min(2*cap(d.chunks[last]), chunkSize)
		}
		if size > c {
			c = size // a large entry sits alone at position 0 of its own chunk
		}
		r := newRegion(c, false)
		d.chunks = append(d.chunks, r.mem[:0:c])
		d.chunkMem = append(d.chunkMem, r)
		last++
	}
	c := d.chunks[last]
	ref := uint64(last)<<chunkBits | uint64(len(c))
	c = binary.LittleEndian.AppendUint32(c, id)
	c = binary.AppendUvarint(c, uint64(len(s)))
	d.chunks[last] = append(c, s...)
	return ref, true
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// rehash rebuilds the slots at the given size from the arena, which is read in order:
// the slots keep too few hash bits to move entries without rehashing their keys. So the
// old table is of no use to the rebuild and is freed before the new one is allocated:
// growing never holds two tables at once.
//
// Entries are placed a batch at a time, touching their home slots first so that the
// cache misses overlap (see lookupBatch). The keys are distinct: no comparisons.
func (d *stringDict) rehash(size uint64) {
	d.allocSlots(size)
	var refs, hashes [batchSize]uint64
	n := 0
	place := func() {
		var sink uint64
		for _, h := range hashes[:n] {
			sink += d.slots[d.home(h)]
		}
		d.sink = sink
		for k, h := range hashes[:n] {
			i := d.home(h)
			for d.slots[i] != 0 {
				if i++; i == d.size {
					i = 0
				}
			}
			d.slots[i] = (h&tagMask)<<refBits | (refs[k] + 1)
		}
		n = 0
	}
	d.scan(0, func(ref uint64, _ uint32, key string) bool {
		refs[n], hashes[n] = ref, maphash.String(d.seed, key)
		if n++; n == batchSize {
			place()
		}
		return true
	})
	place()
}

// scan calls fn for every entry from arena reference from on, in id order, until fn
// returns false.
func (d *stringDict) scan(from uint64, fn func(ref uint64, id uint32, key string) bool) {
	for ci := int(from >> chunkBits); ci < len(d.chunks); ci++ {
		c := d.chunks[ci]
		pos := 0
		if ci == int(from>>chunkBits) {
			pos = int(from & (chunkSize - 1))
		}
		for pos < len(c) {
			e := c[pos:]
			key := entryKey(e)
			if !fn(uint64(ci)<<chunkBits|uint64(pos), binary.LittleEndian.Uint32(e), key) {
				return
			}
			pos += 4 + uvarintLen(uint64(len(key))) + len(key)
		}
	}
}

// refOf returns the arena reference of entry id (id < d.n).
func (d *stringDict) refOf(id int) uint64 {
	ref := d.marks[id/markEvery]
	if id%markEvery == 0 {
		return ref
	}
	var found uint64
	d.scan(ref, func(r uint64, eid uint32, _ string) bool {
		found = r
		return int(eid) != id
	})
	return found
}

// truncate drops the entries with ids >= n; restore uses it to undo a failed delta.
func (d *stringDict) truncate(n int) {
	if n >= d.n {
		return
	}
	if n == 0 {
		d.reset(0)
		return
	}
	ref := d.refOf(n)
	ci := int(ref >> chunkBits)
	d.chunks[ci] = d.chunks[ci][:ref&(chunkSize-1)]
	for j := ci + 1; j < len(d.chunks); j++ {
		d.chunks[j] = nil
		d.pins.free(d.chunkMem[j])
		d.chunkMem[j] = nil
	}
	d.chunks, d.chunkMem = d.chunks[:ci+1], d.chunkMem[:ci+1]
	d.marks = d.marks[:(n+markEvery-1)/markEvery]
	d.n = n
	d.rehash(d.size)
}

// bytes is the memory the dictionary holds (allocated, not just used).
func (d *stringDict) bytes() int {
	b := len(d.slots)*8 + len(d.marks)*8
	for _, c := range d.chunks {
		b += cap(c)
	}
	return b
}

// restore reads what a view's AppendTo wrote (uvarint first id, uvarint count, then each
// entry as uvarint length and bytes). A snapshot starting at id 0 replaces the
// dictionary; one starting at len() extends it; anything else is a gap. On error the
// dictionary is left as it was.
func (d *stringDict) restore(r *reader) error {
	start := r.uvarint()
	count := r.count(1)
	if r.err != nil {
		return r.err
	}
	if start != 0 && start != uint64(d.n) {
		return &SnapshotError{What: r.what, Offset: r.base, Err: ErrSharedGap,
			Msg: fmt.Sprintf("dictionary delta starts at id %d but the restored dictionary has %d entries", start, d.n)}
	}
	if start+uint64(count) > uint64(d.maxLen) {
		r.fail("dictionary of %d entries exceeds the id space", start+uint64(count))
		return r.err
	}
	if start == 0 {
		fresh := &stringDict{seed: d.seed, maxLen: d.maxLen, pins: d.pins}
		fresh.reset(count)
		if err := fresh.load(r, count); err != nil {
			fresh.release()
			return err
		}
		d.release()
		*d = *fresh
		return nil
	}
	before := d.n
	if err := d.load(r, count); err != nil {
		d.truncate(before)
		return err
	}
	return nil
}

func (d *stringDict) load(r *reader, count int) error {
	// Keys are inserted in batches, for the overlapped cache misses of lookupBatch.
	keys := make([]string, 0, batchSize)
	hashes, ids := make([]uint64, batchSize), make([]uint32, batchSize)
	for done := 0; done < count; done += len(keys) {
		keys = keys[:0]
		for range min(batchSize, count-done) {
			k := r.lenBytes()
			if r.err != nil {
				return r.err
			}
			keys = append(keys, unsafe.String(unsafe.SliceData(k), len(k)))
		}
		before := d.n
		if err := d.lookupBatch(keys, hashes, ids); err != nil {
			r.fail("%v", err)
			return r.err
		}
		for k, id := range ids[:len(keys)] {
			if int(id) != before+k {
				r.fail("duplicate dictionary entry %q (ids %d and %d)", keys[k], id, before+k)
				return r.err
			}
		}
	}
	return r.finish()
}
