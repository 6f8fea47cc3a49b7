package exec

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestHistoriesKeepTheLatest checks that the checkpoint and exception histories keep the
// latest entries, oldest first, and that a snapshot does not share them with the job.
func TestHistoriesKeepTheLatest(t *testing.T) {
	var s checkpointStats
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= CheckpointHistory+5; i++ {
		s.record(CheckpointRecord{ID: uint64(i), Triggered: start, Ended: start.Add(time.Duration(i) * time.Millisecond)})
	}
	m := s.snapshot()
	if len(m.History) != CheckpointHistory || m.History[0].ID != 6 || m.History[len(m.History)-1].ID != CheckpointHistory+5 {
		t.Fatalf("history %d entries from %d to %d, want %d from 6 to %d", len(m.History), m.History[0].ID,
			m.History[len(m.History)-1].ID, CheckpointHistory, CheckpointHistory+5)
	}
	m.History[0].ID = 999
	if s.snapshot().History[0].ID != 6 {
		t.Error("a snapshot's history is shared with the job's")
	}

	var l lifecycle
	l.start(start)
	for i := 1; i <= ExceptionHistory+2; i++ {
		l.restarting(start.Add(time.Duration(i)*time.Second), start.Add(time.Hour), fmt.Errorf("failure %d", i))
		l.resumed()
	}
	l.end(start.Add(time.Hour), errors.New("the last"), false)
	ex := l.l.Exceptions
	if len(ex) != ExceptionHistory || ex[0].Err != "failure 4" || ex[0].Restart != 4 || !ex[0].At.Equal(start.Add(4*time.Second)) {
		t.Fatalf("exceptions %+v", ex)
	}
	if last := ex[len(ex)-1]; last.Err != "the last" || last.Restart != 0 {
		t.Errorf("last exception %+v, want the one the job ended with", last)
	}
}
