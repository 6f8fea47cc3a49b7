package state_test

import (
	"fmt"
	"testing"

	"github.com/pipesql/pipesql/state"
)

// The DAU job checkpoints one roaring bitmap per window and key group: 24
// bitmaps of 1M dense ids serialize to 130-470 KB each. Random bytes stand
// in for them (Badger is not compressing).
const (
	benchBlobs = 24
	benchSize  = 470 << 10
	benchDelta = 32 << 10 // an incremental delta after ~100k events
)

func benchStores(b *testing.B, fn func(b *testing.B, st state.Store)) {
	b.Run("badger", func(b *testing.B) {
		st, err := state.OpenBadger(b.TempDir(), state.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		fn(b, st)
	})
	b.Run("memory", func(b *testing.B) {
		st := state.NewMemory(state.Options{})
		defer st.Close()
		fn(b, st)
	})
}

func benchCheckpoint(b *testing.B, st state.Store, id uint64, blobs [][]byte) {
	w, err := st.Begin("dau", id)
	if err != nil {
		b.Fatal(err)
	}
	for i, blob := range blobs {
		if err := w.Put("agg", fmt.Sprint(i), blob); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Commit(state.Meta{Plan: "fp"}); err != nil {
		b.Fatal(err)
	}
}

func benchBlobsOf(size int) [][]byte {
	blobs := make([][]byte, benchBlobs)
	for i := range blobs {
		blobs[i] = blob(uint64(i), size)
	}
	return blobs
}

// BenchmarkCommit24x1MDense writes full checkpoints of 24 bitmaps, each
// commit also deleting the previous checkpoint (NumRetained 1).
func BenchmarkCommit24x1MDense(b *testing.B) {
	blobs := benchBlobsOf(benchSize)
	benchStores(b, func(b *testing.B, st state.Store) {
		b.SetBytes(benchBlobs * benchSize)
		id := uint64(0)
		for b.Loop() {
			id++
			benchCheckpoint(b, st, id, blobs)
		}
	})
}

// BenchmarkCommitIncremental writes one changed bitmap delta and reuses the
// other 23 bitmaps from the previous checkpoint.
func BenchmarkCommitIncremental(b *testing.B) {
	blobs := benchBlobsOf(benchSize)
	delta := blob(99, benchDelta)
	benchStores(b, func(b *testing.B, st state.Store) {
		benchCheckpoint(b, st, 1, blobs)
		b.SetBytes(benchDelta)
		id := uint64(1)
		for b.Loop() {
			id++
			w, err := st.Begin("dau", id)
			if err != nil {
				b.Fatal(err)
			}
			for i := 1; i < benchBlobs; i++ {
				if err := w.Reuse("agg", fmt.Sprint(i), id-1); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Put("agg", "0", delta); err != nil {
				b.Fatal(err)
			}
			if err := w.Commit(state.Meta{Plan: "fp"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRestore24x1MDense finds, verifies and reads the latest checkpoint,
// as a restart does.
func BenchmarkRestore24x1MDense(b *testing.B) {
	blobs := benchBlobsOf(benchSize)
	benchStores(b, func(b *testing.B, st state.Store) {
		benchCheckpoint(b, st, 1, blobs)
		b.SetBytes(benchBlobs * benchSize)
		for b.Loop() {
			cp, err := st.Latest("dau")
			if err != nil {
				b.Fatal(err)
			}
			err = cp.Scan("agg", func(string, []byte) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
