package main

import "testing"

// TestGCPercentFor checks that the GOGC picked for a live heap makes the runtime's heap
// goal, max(4 MB*g/100, live*(1+g/100)), equal max(minHeapGoal, 2*live).
func TestGCPercentFor(t *testing.T) {
	for _, live := range []uint64{0, 1, 512 << 10, 1 << 20, 3 << 20, 3277 << 10, 4 << 20, 5<<20 + 12345,
		8<<20 - 1, 8 << 20, 9 << 20, 100 << 20, 10 << 30} {
		g := uint64(gcPercentFor(live))
		if g < 100 {
			t.Fatalf("live %d: GOGC %d, below the default", live, g)
		}
		goal := max(runtimeMinHeap*g/100, live+live*g/100)
		want := max(minHeapGoal, 2*live)
		// g is an integer percentage: the goal may fall short by up to live/100
		if goal > want || goal+live/100+1 < want {
			t.Fatalf("live %d: GOGC %d gives a heap goal of %d, want %d", live, g, goal, want)
		}
	}
}
