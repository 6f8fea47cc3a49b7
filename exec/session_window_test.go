package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/types"
)

// bruteSessions is, per session of gapMS milliseconds of each key, (k, rows, SUM(v),
// first id, last id).
func bruteSessions(evs []overEvent, gapMS int64) string {
	byKey := map[string][]overEvent{}
	for _, e := range evs {
		byKey[e.k] = append(byKey[e.k], e)
	}
	var rows []string
	for k, part := range byKey {
		slices.SortStableFunc(part, func(a, b overEvent) int { return int(a.ts - b.ts) })
		flush := func(s []overEvent) {
			var sum int64
			any := false
			lo, hi := s[0].seq, s[0].seq
			for _, e := range s {
				if e.v >= 0 {
					sum += e.v
					any = true
				}
				lo, hi = min(lo, e.seq), max(hi, e.seq)
			}
			sv := "NULL"
			if any {
				sv = fmt.Sprint(sum)
			}
			rows = append(rows, fmt.Sprintf("(%s, %d, %s, %d, %d)", k, len(s), sv, lo, hi))
		}
		start := 0
		for i := 1; i <= len(part); i++ {
			if i == len(part) || part[i].ts-part[i-1].ts >= gapMS {
				flush(part[start:i])
				start = i
			}
		}
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// TestSessionStopWithSavepointAndResume stops a session window job with a savepoint
// halfway (open sessions with their buffers in the state, rows out of order that bridge
// sessions) and resumes it: the sessions of both runs together are the brute-force ones,
// each once.
func TestSessionStopWithSavepointAndResume(t *testing.T) {
	const n = 20000
	dir, evs := writeOverFixture(t, n, 4)
	query := "SELECT k, COUNT(*), SUM(v), MIN(id), MAX(id) FROM e GROUP BY SESSION(rt, INTERVAL '2' SECOND), k;"
	spDir := t.TempDir()
	clock := newStepClock(20 * time.Millisecond)
	clock.autoAdvance(100 * time.Millisecond)
	var mu sync.Mutex
	var got []string
	collect := func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		if k != connectors.Insert {
			t.Errorf("a session window emitted %s", k)
		}
		got = append(got, rowString(r))
	}
	opts := Options{Clock: clock, Store: state.NewMemory(state.Options{}), JobKey: "session", Collect: collect, BatchSize: 16}
	j, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'")+query), opts)
	if err != nil {
		t.Fatal(err)
	}
	path := runStoppedHalfway(t, j, "session window aggregate", 1, spDir)
	read := j.Metrics().Sources[0].RecordsRead
	if read >= n || read == 0 {
		t.Fatalf("the first run read %d of %d rows; the test needs it stopped halfway", read, n)
	}
	first := len(got)
	j2, err := NewJob(planSQL(t, overDDL(dir, "'execution.checkpointing.interval' = '100 ms'", "'execution.savepoint.path' = '"+path+"'")+query), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range append(j.Metrics().Operators, j2.Metrics().Operators...) {
		if m.LateDropped != 0 {
			t.Fatalf("%s dropped %d late rows; the fixture has none", m.Name, m.LateDropped)
		}
	}
	slices.Sort(got)
	t.Logf("stopped after %d of %d rows and %d sessions; %d sessions in all", read, n, first, len(got))
	if first == 0 {
		t.Fatal("no session was emitted before the stop: the resume restores no fired state")
	}
	if g, w := strings.Join(got, "\n"), bruteSessions(evs, 2000); g != w {
		t.Fatalf("--- pipesql (%d rows):\n%.2000s\n--- brute force:\n%.2000s", len(got), g, w)
	}
}
