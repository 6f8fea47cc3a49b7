package difftest

import "testing"

// features is what the tests generate: every construct but those pipesql rejects as
// unsupported and those that show open bugs.
func features() Features {
	f := AllFeatures()
	// Rejected at plan time, as documented limitations:
	// "unsupported: aggregation over an updating input (an aggregate of an aggregate)",
	// "unsupported: SELECT DISTINCT over an updating input".
	f.UpdatingInput = false
	// "unsupported: HOP window size 13 min is not an integral multiple of the slide 5 min".
	f.HopUneven = false
	return f
}

// TestDifferential runs a few hundred random queries through pipesql and DuckDB, from a
// fixed seed, and compares the results.
func TestDifferential(t *testing.T) {
	n := 300
	if *queriesFlag > 0 {
		n = *queriesFlag
	}
	if testing.Short() {
		n = 50
	}
	runDiff(t, seed(t, 20), n, features())
}
