package agg

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Off-heap memory for the dictionaries.
//
// A dictionary of a million users is ~35 MB of slots and arena, nearly all of a DAU
// job's live heap. On the Go heap it is counted by the GC's pacer: with GOGC=100 the heap
// may grow to twice the live heap before a collection, so the dictionary also costs
// another ~35 MB of room for the short-lived rows of the source and Calc. Held outside
// the heap (anonymous mmap), it costs what it holds, and the heap goal follows only the
// small live heap of rows and bitmaps. Marking it costs nothing either way: it holds no
// pointers.
//
// The price is that nothing frees it but this package. Each region carries a
// runtime.Cleanup that unmaps it once the region is unreachable (the Func was dropped),
// and the dictionaries free their old regions explicitly as soon as they are replaced
// (the slot table when it grows, the whole dictionary when a full snapshot is restored
// or CompactShared rebuilds it), so that RSS does not wait for a GC cycle.
//
// Safety rules, which the dictionaries follow:
//   - a region holds no Go pointers (only bytes and integers): the GC does not scan it;
//   - nothing outside the dictionary keeps a slice or string into a region: keys read
//     from the arena are compared, hashed or copied, never returned, so an explicit
//     free cannot leave a dangling reference behind;
//   - the slice views into a region live in the same struct as the *region, so the
//     region is reachable (not cleaned up) while the views can be used.
//
// Small regions stay on the Go heap, where a few KB cost less than a system call and a
// page; builds without mmap (offheap_heap.go) keep everything on the heap.

// mmapThreshold is the smallest region placed outside the Go heap: the first chunks of
// the arena and the tables of small dictionaries (most GROUP BY keys see few values)
// stay on the heap.
var mmapThreshold = 64 << 10

// offHeapBytes is the memory currently mapped by regions (cleanups run on their own
// goroutine, hence atomic), for tests.
var offHeapBytes atomic.Int64

// region is a block of zeroed memory for pointer-free data, outside the Go heap when it
// is large enough.
type region struct {
	mem     []byte
	mapped  bool // mem is an anonymous mapping, to be unmapped by free or the cleanup
	cleanup runtime.Cleanup
}

// newRegion returns size bytes of zeroed memory, 8-byte aligned. random says the memory
// will be read at random (a hash table) rather than in order (an arena).
func newRegion(size int, random bool) *region {
	if size >= mmapThreshold {
		if mem, ok := mapAnon(size, random); ok {
			r := &region{mem: mem, mapped: true}
			offHeapBytes.Add(int64(len(mem)))
			// The cleanup gets the mapping, not r: a cleanup that referenced r would keep it
			// reachable forever.
			r.cleanup = runtime.AddCleanup(r, unmapRegion, mem)
			return r
		}
		// Out of address space or mappings: the heap either copes or fails the way any
		// allocation does.
	}
	words := make([]uint64, (size+7)/8)
	return &region{mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)}
}

// unmapRegion is the cleanup of a region the dictionary did not free itself.
func unmapRegion(mem []byte) {
	unmap(mem)
	offHeapBytes.Add(-int64(len(mem)))
}

// free releases the region now. The caller must drop every view into it first. It is
// safe on nil and on a region already freed.
func (r *region) free() {
	if r == nil || r.mem == nil {
		return
	}
	if r.mapped {
		r.cleanup.Stop()
		unmapRegion(r.mem)
	}
	r.mem = nil
}

// uint64s views the region as n uint64s (n*8 <= its size).
func (r *region) uint64s(n int) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(r.mem))), n)
}
