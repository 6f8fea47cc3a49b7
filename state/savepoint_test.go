package state_test

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pipesql/pipesql/state"
)

// savepointSource commits two checkpoints, the second incremental, and
// returns the second with what it holds.
func savepointSource(t *testing.T, st state.Store) (state.Checkpoint, map[string]map[string][]byte) {
	t.Helper()
	want := map[string]map[string][]byte{
		"agg":    {"w1": blob(1, 3<<20), "w2": []byte("b2"), "": {}, "\x00bin": {0, 1, 2}},
		"source": {"p0": []byte("100")},
	}
	w, _ := st.Begin("dau", 1)
	w.Put("agg", "w1", want["agg"]["w1"])
	w.Put("agg", "w2", []byte("b1"))
	if err := w.Commit(state.Meta{}); err != nil {
		t.Fatal(err)
	}
	w, _ = st.Begin("dau", 2)
	if err := w.Reuse("agg", "w1", 1); err != nil {
		t.Fatal(err)
	}
	for op, kv := range want {
		for k, v := range kv {
			if k != "w1" {
				w.Put(op, k, v)
			}
		}
	}
	meta := state.Meta{
		Plan:      "fp",
		Operators: []state.Operator{{ID: "agg", Desc: "count distinct v1"}},
		Created:   time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),
		Props:     map[string]string{"version": "0.1"},
	}
	if err := w.Commit(meta); err != nil {
		t.Fatal(err)
	}
	cp, err := st.Latest("dau")
	if err != nil {
		t.Fatal(err)
	}
	return cp, want
}

func checkSavepoint(t *testing.T, sp state.Checkpoint, from state.Checkpoint, want map[string]map[string][]byte) {
	t.Helper()
	if sp.Job() != from.Job() || sp.ID() != from.ID() {
		t.Errorf("savepoint of checkpoint %d of %q, want %d of %q", sp.ID(), sp.Job(), from.ID(), from.Job())
	}
	got, meta := sp.Meta(), from.Meta()
	if got.Plan != meta.Plan || !got.Created.Equal(meta.Created) || !slices.Equal(got.Operators, meta.Operators) ||
		!maps.Equal(got.Props, meta.Props) {
		t.Errorf("savepoint Meta() = %+v, want %+v", got, meta)
	}
	if ops := sp.Operators(); !slices.Equal(ops, slices.Sorted(maps.Keys(want))) {
		t.Errorf("Operators() = %q", ops)
	}
	for op, kv := range want {
		var keys []string
		err := sp.Scan(op, func(key string, value []byte) error {
			keys = append(keys, key)
			if !bytes.Equal(value, kv[key]) {
				t.Errorf("Scan(%q) key %q: wrong value", op, key)
			}
			return nil
		})
		if err != nil || !slices.Equal(keys, slices.Sorted(maps.Keys(kv))) {
			t.Errorf("Scan(%q) keys %q, %v", op, keys, err)
		}
		for k, v := range kv {
			if got, err := sp.Get(op, k); err != nil || !bytes.Equal(got, v) {
				t.Errorf("Get(%q, %q): wrong value, %v", op, k, err)
			}
		}
	}
	if _, err := sp.Get("agg", "nope"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Get of a missing key: %v", err)
	}
}

func TestSavepoint(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) state.Store{
		"Memory": func(*testing.T) state.Store { return state.NewMemory(state.Options{}) },
		"Badger": func(t *testing.T) state.Store {
			st, err := state.OpenBadger(t.TempDir(), state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			defer st.Close()
			cp, want := savepointSource(t, st)
			dir := filepath.Join(t.TempDir(), "sp")
			if err := state.ExportSavepoint(cp, dir); err != nil {
				t.Fatalf("ExportSavepoint: %v", err)
			}
			err := state.ExportSavepoint(cp, dir)
			if !errors.Is(err, fs.ErrExist) {
				t.Errorf("export over a savepoint: %v, want fs.ErrExist", err)
			}
			st.Close() // a savepoint does not need its store

			moved := filepath.Join(t.TempDir(), "moved")
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			sp, err := state.OpenSavepoint(moved)
			if err != nil {
				t.Fatalf("OpenSavepoint: %v", err)
			}
			checkSavepoint(t, sp, cp, want)
		})
	}
}

func TestSavepointNotFound(t *testing.T) {
	_, err := state.OpenSavepoint(t.TempDir())
	if !errors.Is(err, state.ErrNotFound) {
		t.Errorf("OpenSavepoint of an empty directory: %v", err)
	}
}

func TestSavepointCorrupt(t *testing.T) {
	st := state.NewMemory(state.Options{})
	cp, _ := savepointSource(t, st)
	dir := t.TempDir()
	if err := state.ExportSavepoint(cp, dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, state.SavepointFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Offset of the big value agg/w1 in the file.
	w1 := bytes.Index(good, blob(1, 3<<20)[:64])

	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		want   state.Location
	}{
		{"Value", func(b []byte) []byte { b[w1+100] ^= 1; return b },
			state.Location{Job: "dau", Checkpoint: 2, Operator: "agg", Key: "w1"}},
		{"Truncated", func(b []byte) []byte { return b[:w1+100] },
			state.Location{Job: "dau", Checkpoint: 2}},
		{"NoEnd", func(b []byte) []byte { return b[:len(b)-3] },
			state.Location{Job: "dau", Checkpoint: 2}},
		{"Header", func(b []byte) []byte { b[25] ^= 1; return b },
			state.Location{}},
		{"NotASavepoint", func(b []byte) []byte { return []byte("hello") },
			state.Location{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.damage(bytes.Clone(good)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := state.OpenSavepoint(dir)
			var ce *state.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("OpenSavepoint: %v, want a *state.CorruptError", err)
			}
			tc.want.Path = path
			if ce.Location != tc.want {
				t.Errorf("corrupt location %+v, want %+v (%v)", ce.Location, tc.want, err)
			}
		})
	}

	// Damage after opening is found when the value is read.
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := state.OpenSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[w1+100] ^= 1
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Get("agg", "w1"); !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("Get of a value damaged after open: %v", err)
	}
	if v, err := sp.Get("source", "p0"); err != nil || string(v) != "100" {
		t.Errorf("Get of an intact value: %q, %v", v, err)
	}
}
