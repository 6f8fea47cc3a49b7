package agg

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// dictKey gives keys of many lengths: empty, short, around the one-byte varint limit
// (127/128), and larger than a chunk, so that the arena's every path is taken.
func dictKey(i int) string {
	switch i % 97 {
	case 0:
		return strings.Repeat("x", 127) + fmt.Sprint(i)
	case 1:
		return strings.Repeat("y", 128+i%3) + fmt.Sprint(i)
	case 2:
		if i < 300 {
			return strings.Repeat("z", chunkSize+i) // larger than a chunk: a chunk of its own
		}
	case 3:
		if i == 3 {
			return ""
		}
	}
	return fmt.Sprintf("k%d", i)
}

func TestStringDict(t *testing.T) {
	d := newStringDict()
	const n = 20000
	for round := range 2 {
		for i := range n {
			id, err := d.lookup(dictKey(i))
			if err != nil {
				t.Fatal(err)
			}
			if int(id) != i {
				t.Fatalf("round %d: key %d got id %d; ids must be dense in first-seen order", round, i, id)
			}
		}
	}
	if d.len() != n {
		t.Fatalf("len %d, want %d", d.len(), n)
	}
	// the arena holds every key in id order
	want := 0
	d.scan(0, func(ref uint64, id uint32, key string) bool {
		if int(id) != want || key != dictKey(want) {
			t.Fatalf("scan: entry %d is (%d, %.20q)", want, id, key)
		}
		if want%7 == 0 || want%markEvery == 0 {
			if got := d.refOf(want); got != ref {
				t.Fatalf("refOf(%d) = %x, scan says %x", want, got, ref)
			}
		}
		want++
		return true
	})
	if want != n {
		t.Fatalf("scan saw %d entries", want)
	}
	// a batch resolves the same ids, new keys included, in order
	keys := []string{dictKey(5), "new-a", dictKey(n - 1), "new-b", "new-a"}
	ids := make([]uint32, len(keys))
	if err := d.lookupBatch(keys, make([]uint64, len(keys)), ids); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != fmt.Sprint([]uint32{5, n, n - 1, n + 1, n}) {
		t.Fatalf("batch ids %v", ids)
	}
	// truncate forgets the tail and keeps the head
	for _, cut := range []int{n + 1, n - 1, markEvery + 1, markEvery, 3, 0} {
		d.truncate(cut)
		if d.len() != cut {
			t.Fatalf("truncate(%d): len %d", cut, d.len())
		}
		for i := range min(cut, 50) {
			if id, _ := d.lookup(dictKey(i)); int(id) != i {
				t.Fatalf("after truncate(%d) key %d has id %d", cut, i, id)
			}
		}
		d.truncate(cut)
	}
}

func TestInt64Dict(t *testing.T) {
	d := newInt64Dict()
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 50000)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	keys[7] = 0 // zero is a key like any other
	for round := range 2 {
		for i, k := range keys {
			if id, err := d.lookup(k); err != nil || int(id) != i {
				t.Fatalf("round %d: key %d got id %d, %v", round, i, id, err)
			}
		}
	}
	ids := make([]uint32, 3)
	if err := d.lookupBatch([]uint64{keys[9], 12345, keys[9]}, make([]uint64, 3), ids); err != nil {
		t.Fatal(err)
	}
	if ids[0] != 9 || ids[1] != uint32(len(keys)) || ids[2] != 9 {
		t.Fatalf("batch ids %v", ids)
	}
}

// TestDictionaryMemory checks the memory target: at most 36 bytes per distinct 16-byte
// string id at a million entries (21 of arena, the rest slots; a Go map[string]uint32
// takes ~72). The layout is deterministic, so this is exact, not a measurement.
func TestDictionaryMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a million-entry dictionary")
	}
	d := newStringDict()
	var key [16]byte
	for i := range 1_000_000 {
		copy(key[:], fmt.Sprintf("%016x", mix64(uint64(i))))
		if _, err := d.lookupBytes(key[:]); err != nil {
			t.Fatal(err)
		}
	}
	perEntry := float64(d.bytes()) / 1e6
	t.Logf("string dictionary: %.1f bytes per 16-byte key at 1M entries", perEntry)
	if perEntry > 36 {
		t.Fatalf("%.1f bytes per entry, want <= 36", perEntry)
	}
}

func TestCompactShared(t *testing.T) {
	for _, arg := range []types.Type{types.TypeString, types.TypeBigInt} {
		t.Run(arg.String(), func(t *testing.T) {
			user := func(i int) types.Value {
				if arg.Kind == types.BigInt {
					return types.BigIntValue(int64(mix64(uint64(i)) | 1<<63)) // sparse: dictionary-encoded
				}
				return types.StringValue(fmt.Sprintf("user-%d", i))
			}
			c := call(planner.AggCount, true, tCount)
			f := mustNew(t, c, arg)
			day1, day2 := f.NewBuffer(), f.NewBuffer()
			for i := range 1000 {
				addAll(t, day1, []types.Value{user(i)})
				addAll(t, day2, []types.Value{user(i + 500)})
			}
			if arg.Kind == types.BigInt {
				addAll(t, day2, []types.Value{types.BigIntValue(7)}) // a direct value survives too
			}
			want := day2.Result().Int()
			markBefore := f.SharedMark()
			if err := f.CompactShared([]Buffer{day2}); err != nil {
				t.Fatal(err)
			}
			if got := f.SharedMark() & (1<<32 - 1); got != 1000 {
				t.Fatalf("dictionary has %d entries after compaction, want the 1000 day 2 uses", got)
			}
			if got := day2.Result().Int(); got != want || !day2.Dirty() {
				t.Fatalf("after compaction: count %d (want %d), dirty %v (want true)", got, want, day2.Dirty())
			}
			addAll(t, day2, []types.Value{user(600), user(1499)})
			if got := day2.Result().Int(); got != want {
				t.Fatalf("re-adding known users changed the count to %d", got)
			}
			addAll(t, day2, []types.Value{user(100)}) // dropped with day 1: a new id
			if got := day2.Result().Int(); got != want+1 {
				t.Fatalf("a user only day 1 had: count %d, want %d", got, want+1)
			}
			if _, err := f.AppendSharedSince(nil, markBefore); !errors.Is(err, ErrSharedGap) {
				t.Fatalf("delta across a compaction: got %v, want ErrSharedGap", err)
			}
			g, rb := snapshotRoundTrip(t, aggCase{call: c, arg: arg}, f, day2)
			if got := rb.Result().Int(); got != want+1 {
				t.Fatalf("restored after compaction: %d, want %d", got, want+1)
			}
			if err := g.CompactShared([]Buffer{day1}); !errors.Is(err, ErrMerge) {
				t.Fatalf("compacting with another Func's buffer: got %v, want ErrMerge", err)
			}
		})
	}
	plain := mustNew(t, call(planner.AggSum, false, types.TypeInt), types.TypeInt)
	if err := plain.CompactShared([]Buffer{plain.NewBuffer()}); err != nil {
		t.Fatalf("a Func without shared state: %v", err)
	}
}

// TestDictionaryFull lowers the id space to see the Add whose value does not fit fail
// with ErrDictionaryFull, and the Func keep working for values it knows.
func TestDictionaryFull(t *testing.T) {
	for _, arg := range []types.Type{types.TypeString, types.TypeBigInt} {
		t.Run(arg.String(), func(t *testing.T) {
			user := func(i int) types.Value {
				if arg.Kind == types.BigInt {
					return types.BigIntValue(-int64(i) - 1)
				}
				return types.StringValue(fmt.Sprint("u", i))
			}
			f := mustNew(t, call(planner.AggCount, true, tCount), arg).(*function)
			if f.strs != nil {
				f.strs.maxLen = 100
			} else {
				f.ints.maxLen = 100
			}
			b := f.NewBuffer()
			added := 0
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				if err = b.Add(user(i)); err == nil {
					added++
				}
			}
			if !errors.Is(err, ErrDictionaryFull) || added != 100 {
				t.Fatalf("after %d values: %v; want ErrDictionaryFull after 100", added, err)
			}
			if err := b.Add(user(42)); err != nil {
				t.Fatalf("a known value: %v", err)
			}
			if got := b.Result().Int(); got != 100 {
				t.Fatalf("count %d, want 100", got)
			}
			if _, rb := snapshotRoundTrip(t, aggCase{call: f.call, arg: arg}, f, b); rb.Result().Int() != 100 {
				t.Fatalf("restored count %v", rb.Result())
			}
		})
	}
}
