package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// GC pacing of the pipesql process.
//
// A streaming job allocates fast (a DAU job ~500 bytes of short-lived rows per event)
// while its live Go heap stays small: the big state, the COUNT(DISTINCT) dictionaries,
// lives outside the heap (exec/agg/offheap.go). With the default GOGC=100 the runtime
// then collects whenever 4 MB were allocated, thousands of times a minute: measured on
// the 10M-event DAU benchmark, 2300 collections cost 30% more CPU than with the
// dictionary on the heap. Collections cost a fixed amount each (two pauses, stack scans,
// idle mark workers on the free core) however little they mark, so the fix is fewer of
// them: let the heap grow to minHeapGoal before collecting, and to twice the live heap
// (GOGC=100 as usual) once that is larger; a bigger live heap is paced exactly as with
// GOGC=100. At 16 MB a Nexmark job still collected ~55 times a second, and the write
// barriers and mark workers of those cycles cost a quarter of its CPU: 64 MB cut the
// CPU of Nexmark q0 and of the DAU job by ~25% (3.05 -> 2.46 and 3.49 -> 2.62 CPU-s for
// 2M events) for ~60 MB more peak RSS.
//
// The runtime has no setting for a minimum heap goal, but it has one that implies it:
// GOGC=g makes the goal max(4 MB*g/100, live*(1+g/100)). So after every collection the
// tuner picks g from the live heap just marked. It stays out of the way of a GOGC the
// user set; GOMEMLIMIT still applies on top, as the runtime enforces it.

// minHeapGoal is the heap size below which the tuned process does not collect.
const minHeapGoal = 64 << 20

// runtimeMinHeap is the runtime's heap minimum at GOGC=100 (defaultHeapMinimum).
const runtimeMinHeap = 4 << 20

func init() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	t := &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	t.adjust()
	t.arm()
}

// gcTuner re-derives GOGC after each collection.
type gcTuner struct {
	sample  []metrics.Sample
	percent int
}

// gcTick is an object that dies in the next collection: its cleanup tells the tuner a
// cycle ended. It holds a pointer so that it is not a tiny allocation, which can share
// its block with other objects and outlive them.
type gcTick struct {
	_ *gcTick
	_ [8]byte
}

func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcTick), func(t *gcTuner) {
		t.adjust()
		t.arm()
	}, t)
}

// adjust sets GOGC for the live heap the last collection marked. It runs on the
// runtime's cleanup goroutine, one call at a time.
func (t *gcTuner) adjust() {
	metrics.Read(t.sample)
	live := uint64(0)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	if p := gcPercentFor(live); p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}

// gcPercentFor is the GOGC that makes the heap goal max(minHeapGoal, 2*live):
// g = 100*(minHeapGoal/live - 1), clamped to [100, 100*minHeapGoal/runtimeMinHeap] so
// that neither of the runtime's two terms exceeds minHeapGoal for a small heap, nor falls
// below GOGC=100 for a large one.
func gcPercentFor(live uint64) int {
	const most = 100 * minHeapGoal / runtimeMinHeap
	if live*2 >= minHeapGoal {
		return 100
	}
	if live == 0 {
		return most
	}
	return int(min(most, 100*minHeapGoal/live-100))
}
