package agg

import (
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Serializing shared state off the processing goroutine
//
// A full checkpoint of a dictionary of millions of entries takes tens of milliseconds
// to serialize: too long for the in-line pause of a checkpoint, during which the
// operator processes nothing. But the dictionaries are append-only: the entries below a
// mark are never written again, and the memory that holds them (the arena chunks of the
// string dictionary, the key array of the BIGINT one) is never moved while it is in use.
// So SharedView captures, in line and in O(chunks), references to the entries between
// the mark and now; AppendTo serializes them later on another goroutine (the checkpoint
// writer) while the operator goes on adding entries past them.
//
// What could still pull the memory away is an explicit free: the BIGINT dictionary's
// key array moves when it grows, and a compaction or a restore replaces a dictionary
// whole. While a view is outstanding, such frees are deferred (regionPins) until the
// last view is done; a view holds its regions, so the GC's cleanup cannot unmap them
// either. A view that is dropped without AppendTo or Release is released by its own
// cleanup once unreachable.

// SharedSnapshot is the shared state (dictionary entries) added since a mark, captured
// by Func.SharedView. It is safe to use on another goroutine than the Func's, once
// handed over with a happens-before edge (a channel or a mutex), and only once.
type SharedSnapshot struct {
	tag   byte
	mark  int // the first id
	count int
	// string dictionary: the arena chunks holding the entries, the first from pos on,
	// each up to its length when the view was taken
	chunks [][]byte
	pos    int
	// BIGINT dictionary: the keys
	keys []uint64
	// regions keeps the memory reachable (see above)
	regions []*region
	pin     *viewPin
}

// viewPin is what a SharedSnapshot holds on its dictionary's pins: released once.
type viewPin struct {
	pins     *regionPins
	released atomic.Bool
	cleanup  runtime.Cleanup
}

func (p *viewPin) release() {
	if p != nil && p.released.CompareAndSwap(false, true) {
		p.pins.unpin()
	}
}

// AppendTo appends the snapshot in the format of Func.AppendSharedSince (version byte
// first) and releases the view.
func (s *SharedSnapshot) AppendTo(dst []byte) ([]byte, error) {
	defer s.Release()
	dst, start := beginSnapshot(dst, s.tag)
	if s.tag != tagSharedNone {
		dst = binary.AppendUvarint(dst, uint64(s.mark))
		dst = binary.AppendUvarint(dst, uint64(s.count))
	}
	switch s.tag {
	case tagSharedString:
		dst = appendChunkEntries(dst, s.chunks, s.pos)
	case tagSharedInt64:
		at := len(dst)
		dst = slices.Grow(dst, 8*len(s.keys))[:at+8*len(s.keys)]
		for i, k := range s.keys {
			binary.LittleEndian.PutUint64(dst[at+8*i:], k)
		}
	}
	runtime.KeepAlive(s.regions)
	return endSnapshot(dst, start), nil
}

// Release ends the view without serializing it (AppendTo releases it too). It is safe
// to call more than once.
func (s *SharedSnapshot) Release() {
	if s.pin != nil {
		s.pin.cleanup.Stop()
		s.pin.release()
	}
	s.chunks, s.keys, s.regions = nil, nil, nil
}

// appendChunkEntries writes the arena entries of chunks (the first from pos on) as
// uvarint length and bytes.
func appendChunkEntries(dst []byte, chunks [][]byte, pos int) []byte {
	size := -pos // the arena bytes bound what is written
	for _, c := range chunks {
		size += len(c)
	}
	dst = slices.Grow(dst, max(size, 0))
	for i, c := range chunks {
		if i > 0 {
			pos = 0
		}
		for pos < len(c) {
			key := entryKey(c[pos:])
			dst = binary.AppendUvarint(dst, uint64(len(key)))
			dst = append(dst, key...)
			pos += 4 + uvarintLen(uint64(len(key))) + len(key)
		}
	}
	return dst
}

// regionPins defers freeing a dictionary's regions while views of it are outstanding.
// The Func's goroutine frees; views unpin from the writer's goroutine or a cleanup:
// hence the mutex.
type regionPins struct {
	mu       sync.Mutex
	n        int
	deferred []*region
}

func (p *regionPins) pin() *viewPin {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
	return &viewPin{pins: p}
}

func (p *regionPins) unpin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n--; p.n == 0 {
		for _, r := range p.deferred {
			r.free()
		}
		p.deferred = nil
	}
}

// free frees r now, or when the last view is released. It is safe on a nil p (no
// views can exist) and a nil r.
func (p *regionPins) free(r *region) {
	if r == nil {
		return
	}
	if p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.n > 0 {
			p.deferred = append(p.deferred, r)
			return
		}
	}
	r.free()
}

// pinView attaches a pin of p to s, released by AppendTo, Release or, if s is dropped,
// its cleanup.
func pinView(s *SharedSnapshot, p *regionPins) {
	vp := p.pin()
	vp.cleanup = runtime.AddCleanup(s, func(vp *viewPin) { vp.release() }, vp)
	s.pin = vp
}

// view captures the entries with ids >= mark (mark <= len()).
func (d *stringDict) view(mark int) *SharedSnapshot {
	s := &SharedSnapshot{tag: tagSharedString, mark: mark, count: d.n - mark}
	if s.count > 0 {
		from := d.refOf(mark)
		first := int(from >> chunkBits)
		s.pos = int(from & (chunkSize - 1))
		s.chunks = slices.Clone(d.chunks[first:])
		s.regions = slices.Clone(d.chunkMem[first:])
		pinView(s, d.pins)
	}
	return s
}

// view captures the keys with ids >= mark (mark <= len()).
func (d *int64Dict) view(mark int) *SharedSnapshot {
	s := &SharedSnapshot{tag: tagSharedInt64, mark: mark, count: len(d.keys) - mark}
	if s.count > 0 {
		s.keys = d.keys[mark:len(d.keys):len(d.keys)]
		s.regions = []*region{d.keysMem}
		pinView(s, d.pins)
	}
	return s
}
