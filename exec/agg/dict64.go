package agg

import (
	"fmt"
	"math/rand/v2"
)

// int64Dict maps distinct 64-bit keys to dense ids 0, 1, 2, ... in first-seen order,
// for BIGINT (and other 64-bit) values too sparse for a roaring64 bitmap.
//
// The slots are pairs of uint64 (key, id+1) in one array, so that a lookup touches one
// cache line: id+1 == 0 marks an empty pair. keys holds the keys in id order for
// checkpoints (a suffix since a mark is a delta) and for rehashing. Both live outside
// the Go heap once large (offheap.go), like the string dictionary's.
type int64Dict struct {
	seed     uint64
	slots    []uint64
	slotsMem *region
	mask     uint64 // pairs - 1
	limit    int
	keys     []uint64
	keysMem  *region
	maxLen   int         // ids given out at most: maxDictLen, lowered by tests
	sink     uint64      // see lookupBatch
	pins     *regionPins // defers freeing keys that views still read (sharedview.go)
}

func newInt64Dict() *int64Dict {
	d := &int64Dict{seed: rand.Uint64(), maxLen: maxDictLen, pins: &regionPins{}}
	d.reset(0)
	return d
}

func (d *int64Dict) reset(n int) {
	pairs := uint64(minSlots)
	for int(pairs/4*3) < n {
		pairs *= 2
	}
	d.release()
	d.allocSlots(pairs)
	d.growKeys(max(n, minSlots))
}

// release frees the dictionary's memory now and leaves it unusable until reset.
func (d *int64Dict) release() {
	d.slotsMem.free()
	d.pins.free(d.keysMem)
	d.slots, d.slotsMem, d.keys, d.keysMem = nil, nil, nil, nil
}

// allocSlots gives the dictionary an empty table of pairs pairs, freeing the old one.
func (d *int64Dict) allocSlots(pairs uint64) {
	d.slotsMem.free()
	d.slotsMem = newRegion(int(2*pairs)*8, true)
	d.slots = d.slotsMem.uint64s(int(2 * pairs))
	d.mask = pairs - 1
	d.limit = int(pairs / 4 * 3)
}

// growKeys moves the keys to room for capacity keys. The copy briefly holds both: 8
// bytes per key, a third of what a lookup table costs.
func (d *int64Dict) growKeys(capacity int) {
	mem := newRegion(capacity*8, false)
	keys := mem.uint64s(capacity)[:len(d.keys)]
	copy(keys, d.keys)
	d.pins.free(d.keysMem)
	d.keys, d.keysMem = keys, mem
}

func (d *int64Dict) len() int { return len(d.keys) }

// mix64 is the murmur3 finalizer: every input bit reaches every output bit, which
// linear probing over a power-of-two table needs (ids, timestamps and snowflakes differ
// mostly in their middle bits). The random seed keeps crafted keys from colliding.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// lookup returns the id of key, adding it if it is new.
func (d *int64Dict) lookup(key uint64) (uint32, error) {
	return d.lookupHashed(key, mix64(key^d.seed))
}

// lookupBatch looks up (adding if new) keys[k] into ids[k], touching all their slots
// first so that the cache misses overlap (see stringDict.lookupBatch).
func (d *int64Dict) lookupBatch(keys []uint64, hashes []uint64, ids []uint32) error {
	hashes = hashes[:len(keys)]
	var sink uint64
	for k, key := range keys {
		h := mix64(key ^ d.seed)
		hashes[k] = h
		sink += d.slots[2*(h&d.mask)+1]
	}
	d.sink = sink
	for k, key := range keys {
		id, err := d.lookupHashed(key, hashes[k])
		if err != nil {
			return err
		}
		ids[k] = id
	}
	return nil
}

func (d *int64Dict) lookupHashed(key, h uint64) (uint32, error) {
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		id1 := d.slots[2*i+1]
		if id1 == 0 {
			return d.insert(i, key)
		}
		if d.slots[2*i] == key {
			return uint32(id1 - 1), nil
		}
	}
}

func (d *int64Dict) insert(i, key uint64) (uint32, error) {
	id := len(d.keys)
	if id >= d.maxLen {
		return 0, ErrDictionaryFull
	}
	d.slots[2*i] = key
	d.slots[2*i+1] = uint64(id) + 1
	if len(d.keys) == cap(d.keys) {
		d.growKeys(2 * cap(d.keys))
	}
	d.keys = append(d.keys, key)
	if len(d.keys) > d.limit {
		d.rehash(2 * (d.mask + 1))
	}
	return uint32(id), nil
}

// rehash rebuilds the table from the keys, so the old table is freed first.
func (d *int64Dict) rehash(pairs uint64) {
	d.allocSlots(pairs)
	for id, key := range d.keys {
		i := mix64(key^d.seed) & d.mask
		for d.slots[2*i+1] != 0 {
			i = (i + 1) & d.mask
		}
		d.slots[2*i] = key
		d.slots[2*i+1] = uint64(id) + 1
	}
}

func (d *int64Dict) bytes() int { return len(d.slots)*8 + cap(d.keys)*8 }

// restore reads what a view's AppendTo wrote (uvarint first id, uvarint count, then the
// keys as 8 bytes each): from id 0 it replaces the dictionary, from
// len() it extends it. On error the dictionary is left as it was.
func (d *int64Dict) restore(r *reader) error {
	start := r.uvarint()
	count := r.count(8)
	if r.err != nil {
		return r.err
	}
	if start != 0 && start != uint64(len(d.keys)) {
		return &SnapshotError{What: r.what, Offset: r.base, Err: ErrSharedGap,
			Msg: fmt.Sprintf("dictionary delta starts at id %d but the restored dictionary has %d entries", start, len(d.keys))}
	}
	if start+uint64(count) > uint64(d.maxLen) {
		r.fail("dictionary of %d entries exceeds the id space", start+uint64(count))
		return r.err
	}
	target := d
	if start == 0 {
		target = &int64Dict{seed: d.seed, maxLen: d.maxLen, pins: d.pins}
		target.reset(count)
	}
	before := len(target.keys)
	keys := make([]uint64, 0, batchSize)
	hashes, ids := make([]uint64, batchSize), make([]uint32, batchSize)
	for done := 0; done < count && r.err == nil; done += len(keys) {
		keys = keys[:0]
		for range min(batchSize, count-done) {
			keys = append(keys, r.u64())
		}
		if r.err != nil {
			break
		}
		next := len(target.keys)
		_ = target.lookupBatch(keys, hashes, ids) // cannot be full: checked above
		for k, id := range ids[:len(keys)] {
			if int(id) != next+k {
				r.fail("duplicate dictionary key %d (id %d)", int64(keys[k]), id)
				break
			}
		}
	}
	if err := r.finish(); err != nil {
		if target == d {
			d.keys = d.keys[:before]
			d.rehash(d.mask + 1)
		} else {
			target.release()
		}
		return err
	}
	if target != d {
		d.release()
		*d = *target
	}
	return nil
}
