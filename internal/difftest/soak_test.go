//go:build soak

package difftest

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDifferentialSoak is the long run: thousands of queries from a random seed (or
// PIPESQL_DIFFTEST_SEED / -difftest.seed), printed first and with every failure.
//
//	go test -tags soak -run Soak -v ./internal/difftest/ [-difftest.queries=N]
func TestDifferentialSoak(t *testing.T) {
	n := 3000
	if *queriesFlag > 0 {
		n = *queriesFlag
	}
	start := time.Now()
	st := runDiff(t, seed(t, rand.Uint64()), n, features())
	t.Logf("%d queries in %v", st.Queries, time.Since(start).Round(time.Millisecond))
}
