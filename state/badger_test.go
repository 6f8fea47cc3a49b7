package state_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pipesql/pipesql/state"
	"github.com/pipesql/pipesql/state/statetest"
)

func TestBadger(t *testing.T) {
	statetest.Suite{
		Open: func(t *testing.T, dir string, opts state.Options) (state.Store, error) {
			return state.OpenBadger(dir, opts)
		},
		Persistent:  true,
		Damage:      state.Damage,
		CountValues: state.CountValues,
	}.Run(t)
}

// TestBadgerEmptyMemtableFile is the state a SIGKILL leaves when it lands right after
// Badger created a memtable file and before it sized it: an empty NNNNN.mem. The store
// must open, with its checkpoints (TestKillMidCommit hits this now and then).
func TestBadgerEmptyMemtableFile(t *testing.T) {
	dir := t.TempDir()
	st, err := state.OpenBadger(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := st.Begin("dau", 1)
	w.Put("agg", "0", []byte("one"))
	if err := w.Commit(state.Meta{Plan: "1"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.WriteFile(filepath.Join(dir, "00042.mem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = state.OpenBadger(dir, state.Options{})
	if err != nil {
		t.Fatalf("open with an empty memtable file: %v", err)
	}
	defer st.Close()
	cp, err := st.Latest("dau")
	if err != nil || cp.ID() != 1 {
		t.Fatalf("Latest = %v, %v; want checkpoint 1", cp, err)
	}
}
