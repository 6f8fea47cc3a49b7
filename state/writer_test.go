package state

import (
	"bytes"
	"errors"
	"testing"
)

// faultyKV is a memKV that fails on demand.
type faultyKV struct {
	*memKV
	batchSets int  // batch sets that succeed before one fails; -1 for all
	tooBig    bool // updates of more than one key return errTooBig
}

var errDisk = errors.New("disk on fire")

func (f *faultyKV) update(sets []kvPair, deletes [][]byte) error {
	if f.tooBig && len(sets) > 1 {
		return errTooBig
	}
	return f.memKV.update(sets, deletes)
}

func (f *faultyKV) batch() kvBatch { return &faultyBatch{f, f.memKV.batch()} }

type faultyBatch struct {
	f *faultyKV
	kvBatch
}

func (b *faultyBatch) set(k, v []byte) error {
	if b.f.batchSets == 0 {
		return errDisk
	}
	b.f.batchSets--
	return b.kvBatch.set(k, v)
}

func newFaulty(t *testing.T) (*store, *faultyKV) {
	t.Helper()
	kv := &faultyKV{memKV: &memKV{m: make(map[string][]byte)}, batchSets: -1}
	opts, _ := Options{}.withDefaults()
	s, err := newStore(kv, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, kv
}

func TestCommitTooBigFallsBack(t *testing.T) {
	s, kv := newFaulty(t)
	kv.tooBig = true
	w, _ := s.Begin("dau", 1)
	if err := w.Put("agg", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(Meta{}); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	cp, err := s.Latest("dau")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := cp.Get("agg", "k"); err != nil || string(v) != "v" {
		t.Errorf("Get = %q, %v", v, err)
	}
}

func TestPutFailureBlocksCommit(t *testing.T) {
	s, kv := newFaulty(t)
	w, _ := s.Begin("dau", 1)
	w.Put("agg", "k", []byte("old"))
	w.Commit(Meta{})

	// A value of three chunks spills to a batch that fails at the second.
	kv.batchSets = 1
	w, _ = s.Begin("dau", 2)
	err := w.Put("agg", "k", bytes.Repeat([]byte{1}, 3*chunkSize))
	if !errors.Is(err, errDisk) {
		t.Fatalf("Put: %v, want %v", err, errDisk)
	}
	kv.batchSets = -1
	if err := w.Put("agg", "other", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(Meta{}); !errors.Is(err, errDisk) {
		t.Errorf("Commit after a failed Put: %v, want %v", err, errDisk)
	}
	cp, err := s.Latest("dau")
	if err != nil || cp.ID() != 1 {
		t.Fatalf("Latest = %v, %v; want checkpoint 1", cp, err)
	}
	if n, err := CountValues(s); err != nil || n != 1 {
		t.Errorf("store holds %d values, want 1 (%v)", n, err)
	}
}
