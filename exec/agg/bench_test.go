package agg

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// The COUNT(DISTINCT) benchmarks feed user ids the way a daily-active-users job does:
// a set of `users` distinct ids, first seen in one random order (the dictionary is built
// from it, untimed for "steady"), then counted in another random order, so that every
// add lands on a cold part of the dictionary and bitmap. Counting in the insertion order
// would walk the arena sequentially and flatter the dictionary about 2x.

var benchSizes = []int{1_000_000, 10_000_000}

// idShape is one kind of user id.
type idShape struct {
	name string
	arg  types.Type
	// ids returns the i-th distinct id of the set (i < users), as a value built without
	// allocating from the stream data.
	make func(users int) (stream func(i int) types.Value, populate func(i int) types.Value)
}

func permutation(n int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, 99))
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// denseID is the i-th id of a set of users ids drawn from [0, 4*users): a quarter of an
// auto-increment id space is active.
func denseIDs(users int) []uint32 {
	r := rand.New(rand.NewPCG(uint64(users), 1))
	ids := make([]uint32, 0, users)
	for v := 0; len(ids) < users; v++ {
		if left, space := users-len(ids), 4*users-v; r.IntN(space) < left {
			ids = append(ids, uint32(v))
		}
	}
	return ids
}

// orders returns the ids in a first random order (populate) and a second (stream).
func orders[T any](ids []T) (populate, stream []T) {
	p1, p2 := permutation(len(ids), 1), permutation(len(ids), 2)
	populate, stream = make([]T, len(ids)), make([]T, len(ids))
	for i := range ids {
		populate[i], stream[i] = ids[p1[i]], ids[p2[i]]
	}
	return populate, stream
}

var shapes = []idShape{
	{"int32", types.TypeInt, func(users int) (func(int) types.Value, func(int) types.Value) {
		pop, str := orders(denseIDs(users))
		return func(i int) types.Value { return types.IntValue(types.Int, int64(str[i])) },
			func(i int) types.Value { return types.IntValue(types.Int, int64(pop[i])) }
	}},
	{"int64-dense", types.TypeBigInt, func(users int) (func(int) types.Value, func(int) types.Value) {
		pop, str := orders(denseIDs(users))
		return func(i int) types.Value { return types.BigIntValue(int64(str[i])) },
			func(i int) types.Value { return types.BigIntValue(int64(pop[i])) }
	}},
	{"int64-sparse", types.TypeBigInt, func(users int) (func(int) types.Value, func(int) types.Value) {
		ids := make([]uint64, users)
		for i := range ids {
			ids[i] = mix64(uint64(i) + 1<<40) // distinct (mix64 is a bijection), spread over 64 bits
		}
		pop, str := orders(ids)
		return func(i int) types.Value { return types.BigIntValue(int64(str[i])) },
			func(i int) types.Value { return types.BigIntValue(int64(pop[i])) }
	}},
	{"string16", types.TypeString, func(users int) (func(int) types.Value, func(int) types.Value) {
		// 16-byte ids laid out contiguously in stream order: reading the next id is
		// sequential, like reading it from a freshly decoded event.
		keys := make([][16]byte, users)
		for i := range keys {
			copy(keys[i][:], fmt.Sprintf("%016x", mix64(uint64(i))))
		}
		pop, str := orders(keys)
		s := func(k *[16]byte) types.Value { return types.StringValue(unsafe.String(&k[0], 16)) }
		return func(i int) types.Value { return s(&str[i]) }, func(i int) types.Value { return s(&pop[i]) }
	}},
}

// BenchmarkCountDistinct measures three phases of a daily-active-users job:
//
//	steady: the dictionary and today's bitmap already hold every user (repeat visits,
//	        most of a day's events);
//	newday: the dictionary holds every user, today's bitmap is empty (first visits);
//	insert: a new Func, every add is a user never seen before (dictionary growth).
func BenchmarkCountDistinct(b *testing.B) {
	c := call(planner.AggCount, true, tCount)
	for _, shape := range shapes {
		for _, users := range benchSizes {
			b.Run(fmt.Sprintf("%s/users=%dM", shape.name, users/1_000_000), func(b *testing.B) {
				stream, populate := shape.make(users)
				fill := func(buf Buffer, value func(int) types.Value) {
					for i := range users {
						if err := buf.Add(value(i)); err != nil {
							b.Fatal(err)
						}
					}
				}
				f := mustNew(b, c, shape.arg)
				today := f.NewBuffer()
				fill(today, populate)
				b.Run("steady", func(b *testing.B) {
					i := 0
					cpu := processCPU()
					for b.Loop() {
						if err := today.Add(stream(i)); err != nil {
							b.Fatal(err)
						}
						if i++; i == users {
							i = 0
						}
					}
					reportRate(b, b.N, processCPU()-cpu)
					b.ReportMetric(float64(f.SharedBytes())/float64(users), "dictB/user")
				})
				b.Run("newday", func(b *testing.B) {
					cpu := processCPU()
					for b.Loop() {
						fill(f.NewBuffer(), stream)
					}
					reportRate(b, b.N*users, processCPU()-cpu)
				})
				b.Run("insert", func(b *testing.B) {
					cpu := processCPU()
					for b.Loop() {
						fill(mustNew(b, c, shape.arg).NewBuffer(), stream)
					}
					reportRate(b, b.N*users, processCPU()-cpu)
				})
			})
		}
	}
}

// reportRate reports adds per wall-clock second and per CPU second of the process.
func reportRate(b *testing.B, adds int, cpu time.Duration) {
	b.ReportMetric(float64(adds)/b.Elapsed().Seconds(), "adds/s")
	if cpu > 0 {
		b.ReportMetric(float64(adds)/cpu.Seconds(), "adds/cpu-s")
	}
}

// millionUserBuffer returns a COUNT(DISTINCT) buffer holding 1M users of the shape.
func millionUserBuffer(b *testing.B, shape idShape) (Func, Buffer) {
	const users = 1_000_000
	stream, _ := shape.make(users)
	f := mustNew(b, call(planner.AggCount, true, tCount), shape.arg)
	buf := f.NewBuffer()
	for i := range users {
		if err := buf.Add(stream(i)); err != nil {
			b.Fatal(err)
		}
	}
	return f, buf
}

func BenchmarkSnapshot(b *testing.B) {
	for _, shape := range shapes {
		b.Run(shape.name+"/users=1M", func(b *testing.B) {
			_, buf := millionUserBuffer(b, shape)
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = buf.AppendSnapshot(dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dst)), "bytes")
		})
	}
}

func BenchmarkRestoreBuffer(b *testing.B) {
	for _, shape := range shapes {
		b.Run(shape.name+"/users=1M", func(b *testing.B) {
			f, buf := millionUserBuffer(b, shape)
			snap, err := buf.AppendSnapshot(nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := f.RestoreBuffer(snap); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(snap)), "bytes")
		})
	}
}

// BenchmarkSharedSnapshot writes and restores the dictionary of 1M users (a full
// checkpoint; deltas cost in proportion to the entries added since the last one).
func BenchmarkSharedSnapshot(b *testing.B) {
	for _, shape := range shapes {
		if shape.name == "int32" || shape.name == "int64-dense" {
			continue // no dictionary
		}
		f, _ := millionUserBuffer(b, shape)
		shared, err := f.AppendShared(nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(shape.name+"/users=1M/write", func(b *testing.B) {
			var dst []byte
			for b.Loop() {
				if dst, err = f.AppendShared(dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dst)), "bytes")
		})
		b.Run(shape.name+"/users=1M/restore", func(b *testing.B) {
			for b.Loop() {
				g := mustNew(b, call(planner.AggCount, true, tCount), shape.arg)
				if err := g.RestoreShared(shared); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The baselines measure the alternatives doc.go argues against, in the same run.

// BenchmarkBaselineRoaring64Sparse adds sparse 64-bit ids to a roaring64 bitmap
// directly: each distinct high half becomes its own 32-bit bitmap in a sorted array.
func BenchmarkBaselineRoaring64Sparse(b *testing.B) {
	for _, users := range []int{50_000, 100_000, 200_000} { // quadratic: 1M takes minutes
		b.Run(fmt.Sprintf("users=%dk", users/1000), func(b *testing.B) {
			ids := make([]uint64, users)
			for i := range ids {
				ids[i] = mix64(uint64(i) + 1<<40)
			}
			var before, after runtime.MemStats
			var bm *roaring64.Bitmap
			cpu := processCPU()
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				bm = roaring64.New()
				for _, id := range ids {
					bm.Add(id)
				}
				runtime.ReadMemStats(&after)
			}
			reportRate(b, b.N*users, processCPU()-cpu)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(users), "B/user")
			runtime.KeepAlive(bm)
		})
	}
}

// BenchmarkBaselineGoMap is the obvious dictionary, map[string]uint32, with a roaring
// bitmap, fed like BenchmarkCountDistinct/string16/steady.
func BenchmarkBaselineGoMap(b *testing.B) {
	for _, users := range []int{1_000_000} {
		b.Run(fmt.Sprintf("users=%dM", users/1_000_000), func(b *testing.B) {
			var shape idShape
			for _, s := range shapes {
				if s.name == "string16" {
					shape = s
				}
			}
			stream, populate := shape.make(users)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			dict := make(map[string]uint32)
			for i := range users {
				k := populate(i).Str()
				dict[string([]byte(k))] = uint32(len(dict))
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			bm := roaring.New()
			i := 0
			cpu := processCPU()
			for b.Loop() {
				k := stream(i).Str()
				id, ok := dict[k]
				if !ok {
					id = uint32(len(dict))
					dict[string([]byte(k))] = id
				}
				bm.Add(id)
				if i++; i == users {
					i = 0
				}
			}
			reportRate(b, b.N, processCPU()-cpu)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(users), "dictB/user")
		})
	}
}
