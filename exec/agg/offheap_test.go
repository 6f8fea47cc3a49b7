package agg

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// allOffHeap places every region, however small, outside the Go heap for the rest of the
// test, so that the tests of small dictionaries take the mmap paths too.
func allOffHeap(t *testing.T) {
	saved := mmapThreshold
	mmapThreshold = 1
	t.Cleanup(func() { mmapThreshold = saved })
}

func TestRegion(t *testing.T) {
	small := newRegion(100, false)
	if small.mapped || len(small.mem) != 100 {
		t.Fatalf("a 100-byte region: mapped %v, %d bytes; want 100 bytes on the heap", small.mapped, len(small.mem))
	}
	small.free()
	small.free() // twice is harmless

	// offHeapBytes is global, and cleanups of Funcs dropped by other tests release their
	// regions whenever a collection runs, so only bounds can be checked, not exact deltas.
	size := mmapThreshold + 12345
	r := newRegion(size, true)
	if !r.mapped {
		if mem, ok := mapAnon(4096, false); ok { // mmap works here, so the region should have used it
			unmap(mem)
			t.Fatalf("a %d-byte region is on the heap", size)
		}
	}
	if len(r.mem) != size {
		t.Fatalf("region of %d bytes, want %d", len(r.mem), size)
	}
	for i, b := range r.mem {
		if b != 0 {
			t.Fatalf("byte %d of a new region is %d", i, b)
		}
	}
	r.mem[size-1] = 7 // writable to the end
	if r.mapped {
		if got := offHeapBytes.Load(); got < int64(size) {
			t.Fatalf("with %d bytes mapped the off-heap count is %d", size, got)
		}
	}
	r.free()
	if r.mem != nil {
		t.Fatal("free left the memory in place")
	}
	if got := offHeapBytes.Load(); got < 0 {
		t.Fatalf("after free the off-heap count is negative: %d", got)
	}
	r.free()
	var none *region
	none.free()
}

// TestOffHeapEverywhere reruns the dictionary, checkpoint and compaction tests with every
// region outside the heap.
func TestOffHeapEverywhere(t *testing.T) {
	allOffHeap(t)
	t.Run("StringDict", TestStringDict)
	t.Run("Int64Dict", TestInt64Dict)
	t.Run("IncrementalShared", TestIncrementalShared)
	t.Run("CompactShared", TestCompactShared)
	t.Run("SnapshotRoundTrip", TestSnapshotRoundTrip)
	t.Run("DictionaryFull", TestDictionaryFull)
}

// TestStringDictGrowth checks the table stays between 8/15 and 4/5 full as it grows by
// half, frees each table it replaces, and keeps every id.
func TestStringDictGrowth(t *testing.T) {
	allOffHeap(t)
	d := newStringDict()
	const n = 200_000
	grew := 0
	for i := range n {
		old := d.slotsMem
		if id, err := d.lookup(fmt.Sprintf("user-%08d", i)); err != nil || int(id) != i {
			t.Fatalf("key %d: id %d, %v", i, id, err)
		}
		if d.slotsMem != old {
			grew++
			if old.mem != nil {
				t.Fatalf("growing at %d entries kept the old table mapped", d.n)
			}
			if d.size != uint64(len(d.slots)) || d.limit != slotLimit(d.size) {
				t.Fatalf("table of %d slots, size field %d, limit %d", len(d.slots), d.size, d.limit)
			}
		}
		if load := float64(d.n) / float64(d.size); load > 0.8 || (d.n > 1000 && load < 0.8/1.5-0.01) {
			t.Fatalf("%d entries in %d slots: load %.3f outside [0.52, 0.8]", d.n, d.size, load)
		}
	}
	if grew < 10 {
		t.Fatalf("the table grew %d times for %d keys", grew, n)
	}
	for i := range n {
		if id, _ := d.lookup(fmt.Sprintf("user-%08d", i)); int(id) != i {
			t.Fatalf("after growing, key %d has id %d", i, id)
		}
	}
	// truncate frees the chunks it drops
	chunks := append([]*region(nil), d.chunkMem...)
	d.truncate(10)
	for i, r := range chunks[1:] {
		if r.mem != nil {
			t.Fatalf("truncate(10) kept chunk %d of %d mapped", i+1, len(chunks))
		}
	}
	if id, _ := d.lookup("user-00000009"); id != 9 {
		t.Fatalf("after truncate(10), key 9 has id %d", id)
	}
	if id, _ := d.lookup("user-00000010"); id != 10 {
		t.Fatalf("after truncate(10), a dropped key got id %d, want 10", id)
	}
	d.release()
	if chunks[0].mem != nil || d.slots != nil {
		t.Fatal("release kept memory")
	}
}

// TestReplacedDictionaryFreed checks that a full restore and a compaction free the
// memory of the dictionary they replace at once, and a failed restore frees the one
// it was building.
func TestReplacedDictionaryFreed(t *testing.T) {
	allOffHeap(t)
	for _, arg := range []types.Type{types.TypeString, types.TypeBigInt} {
		t.Run(arg.String(), func(t *testing.T) {
			c := call(planner.AggCount, true, tCount)
			f := mustNew(t, c, arg).(*function)
			user := func(i int) types.Value {
				if arg.Kind == types.BigInt {
					return types.BigIntValue(-int64(i) - 1)
				}
				return types.StringValue(fmt.Sprint("user-", i))
			}
			regions := func() []*region {
				if f.strs != nil {
					return append([]*region{f.strs.slotsMem}, f.strs.chunkMem...)
				}
				return []*region{f.ints.slotsMem, f.ints.keysMem}
			}
			mustBeFreed := func(what string, rs []*region) {
				t.Helper()
				for i, r := range rs {
					if r.mem != nil {
						t.Fatalf("%s: region %d of %d still holds memory", what, i, len(rs))
					}
				}
			}
			b := f.NewBuffer()
			for i := range 20000 {
				addAll(t, b, []types.Value{user(i)})
			}
			want := b.Result().Int()
			shared, err := f.AppendShared(nil)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := b.AppendSnapshot(nil)
			if err != nil {
				t.Fatal(err)
			}

			old := regions()
			if err := f.RestoreShared(shared); err != nil {
				t.Fatal(err)
			}
			mustBeFreed("full restore", old)
			rb, err := f.RestoreBuffer(snap)
			if err != nil {
				t.Fatal(err)
			}
			if got := rb.Result().Int(); got != want {
				t.Fatalf("restored count %d, want %d", got, want)
			}

			// a snapshot that fails its checksum is refused before any dictionary is built;
			// one with a duplicate key fails while loading, which is the path to watch
			var dup []byte
			g := mustNew(t, c, arg)
			gb := g.NewBuffer()
			addAll(t, gb, []types.Value{user(1), user(2)})
			if dup, err = g.AppendShared(nil); err != nil {
				t.Fatal(err)
			}
			dup = duplicateLastEntry(t, dup, arg)
			kept := regions()
			before := f.SharedMark()
			if err := f.RestoreShared(dup); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("a snapshot with a duplicate key: got %v, want ErrCorrupt", err)
			}
			for i, r := range kept {
				if r.mem == nil {
					t.Fatalf("a failed restore freed region %d of the dictionary in use", i)
				}
			}
			if f.SharedMark() != before {
				t.Fatalf("a failed restore changed the dictionary: %d -> %d entries", before, f.SharedMark())
			}

			old = regions()
			if err := f.CompactShared([]Buffer{rb}); err != nil {
				t.Fatal(err)
			}
			mustBeFreed("compaction", old)
			addAll(t, rb, []types.Value{user(0), user(19999)})
			if got := rb.Result().Int(); got != want {
				t.Fatalf("after compaction, count %d, want %d", got, want)
			}
		})
	}
}

// duplicateLastEntry rewrites a shared snapshot of two entries so that it holds the
// second one twice (count 2 -> 3), with a valid checksum.
func duplicateLastEntry(t *testing.T, snap []byte, arg types.Type) []byte {
	t.Helper()
	body := snap[:len(snap)-4] // version | tag | payload, then CRC
	entry := 8                 // a 64-bit key
	if arg.Kind != types.BigInt {
		entry = 1 + len("user-2") // uvarint length and the bytes
	}
	// payload: uvarint start (0), uvarint count (2), entries
	if body[2] != 0 || body[3] != 2 {
		t.Fatalf("unexpected shared snapshot header % x", body[:4])
	}
	out := append([]byte(nil), body...)
	out[3] = 3
	out = append(out, body[len(body)-entry:]...)
	return refreshCRC(append(out, 0, 0, 0, 0))
}

// TestDroppedFuncUnmapped checks that the GC's cleanup unmaps the dictionary of a Func
// nobody references any more.
func TestDroppedFuncUnmapped(t *testing.T) {
	if mem, ok := mapAnon(4096, false); !ok {
		t.Skip("no mmap on this system: dictionaries live on the heap")
	} else {
		unmap(mem)
	}
	held := func() int64 {
		f := mustNew(t, call(planner.AggCount, true, tCount), types.TypeString)
		b := f.NewBuffer()
		for i := range 100_000 {
			addAll(t, b, []types.Value{types.StringValue(fmt.Sprintf("user-%08d", i))})
		}
		mapped := int64(0)
		d := f.(*function).strs
		for _, r := range append([]*region{d.slotsMem}, d.chunkMem...) {
			if r.mapped {
				mapped += int64(len(r.mem))
			}
		}
		return mapped
	}
	before := offHeapBytes.Load()
	mapped := held()
	if mapped < 2<<20 {
		t.Fatalf("a dictionary of 100k keys maps only %d bytes", mapped)
	}
	// Other dictionaries that became garbage earlier may be unmapped meanwhile, which
	// only lowers the count further; nothing else maps memory while this test runs.
	// Cleanups run on their own goroutine after a collection: a few cycles suffice.
	for i := 0; i < 100 && offHeapBytes.Load() > before; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if left := offHeapBytes.Load() - before; left > 0 {
		t.Fatalf("%d of the %d bytes mapped by a dropped Func are still mapped", left, mapped)
	}
}
