package agg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// filledBuffer returns a Func of case c with one buffer fed 500 random values, and the
// snapshots of both.
func filledBuffer(t *testing.T, c aggCase, seed uint64) (f Func, b Buffer, shared, snap []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	f = mustNew(t, c.call, c.arg)
	b = f.NewBuffer()
	addAll(t, b, genValues(r, c, 500))
	shared, err := f.AppendShared(nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = b.AppendSnapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, b, shared, snap
}

// restoreFresh restores shared state then a buffer into a new Func of case c.
func restoreFresh(c aggCase, shared, snap []byte) (Buffer, error) {
	g, err := New(c.call, c.arg)
	if err != nil {
		return nil, err
	}
	if err := g.RestoreShared(shared); err != nil {
		return nil, err
	}
	return g.RestoreBuffer(snap)
}

func wantCorrupt(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: got %v, want an error wrapping ErrCorrupt", what, err)
	}
	var se *SnapshotError
	if !errors.As(err, &se) {
		t.Fatalf("%s: %v is not a *SnapshotError", what, err)
	}
}

func TestCorruptSnapshots(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, shared, snap := filledBuffer(t, c, uint64(i))
			if _, err := restoreFresh(c, shared, snap); err != nil {
				t.Fatalf("intact snapshot: %v", err)
			}
			for _, data := range []struct {
				name string
				snap *[]byte
			}{{"buffer", &snap}, {"shared", &shared}} {
				orig := *data.snap
				try := func(what string, bad []byte) {
					t.Helper()
					*data.snap = bad
					_, err := restoreFresh(c, shared, snap)
					*data.snap = orig
					wantCorrupt(t, err, data.name+" "+what)
				}
				for n := range len(orig) {
					try(fmt.Sprintf("truncated to %d bytes", n), orig[:n])
				}
				try("with a trailing byte", append(orig[:len(orig):len(orig)], 0))
				step := max(1, len(orig)/200) // every byte of small snapshots, 200 of big ones
				for pos := 0; pos < len(orig); pos += step {
					bad := []byte(string(orig))
					bad[pos] ^= 0x5a
					try(fmt.Sprintf("byte %d flipped", pos), bad)
				}
			}
		})
	}
}

func TestSnapshotVersionChecked(t *testing.T) {
	_, _, _, snap := filledBuffer(t, cases[0], 1)
	bad := []byte(string(snap))
	bad[0] = snapshotVersion + 1
	_, err := restoreFresh(cases[0], mustShared(t, cases[0]), bad)
	wantCorrupt(t, err, "future version")
	if !strings.Contains(err.Error(), "version") {
		t.Fatalf("error %q does not say the version is unknown", err)
	}
}

func mustShared(t *testing.T, c aggCase) []byte {
	t.Helper()
	shared, err := mustNew(t, c.call, c.arg).AppendShared(nil)
	if err != nil {
		t.Fatal(err)
	}
	return shared
}

// TestSnapshotOfOtherKind restores snapshots into Funcs of other kinds: the layout tag
// must refuse every pairing.
func TestSnapshotOfOtherKind(t *testing.T) {
	for i, c := range cases {
		_, _, _, snap := filledBuffer(t, c, uint64(i))
		for j, d := range cases {
			g := mustNew(t, d.call, d.arg)
			if g.(*function).tag == mustNew(t, c.call, c.arg).(*function).tag {
				continue
			}
			if _, err := g.RestoreBuffer(snap); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s snapshot restored into %s (case %d): got %v, want ErrCorrupt", c.name, d.name, j, err)
			}
		}
	}
}

// refreshCRC rewrites the checksum of a damaged snapshot, so that the decoders behind
// the frame see the damage: they must fail cleanly or decode something, never panic.
func refreshCRC(b []byte) []byte {
	if len(b) < 6 {
		return b
	}
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

func TestDamagedPayloadNeverPanics(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i, c := range cases {
		_, _, shared, snap := filledBuffer(t, c, uint64(i))
		for range 300 {
			bad := []byte(string(snap))
			for range 1 + r.IntN(3) {
				bad[2+r.IntN(len(bad)-6)] = byte(r.Uint32())
			}
			_, err := restoreFresh(c, shared, refreshCRC(bad))
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: damaged payload gave %v, want nil or ErrCorrupt", c.name, err)
			}
			badShared := []byte(string(shared))
			if len(badShared) > 6 {
				badShared[2+r.IntN(len(badShared)-6)] = byte(r.Uint32())
				g := mustNew(t, c.call, c.arg)
				if err := g.RestoreShared(refreshCRC(badShared)); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSharedGap) {
					t.Fatalf("%s: damaged shared state gave %v", c.name, err)
				}
			}
		}
	}
}

func FuzzRestoreBuffer(f *testing.F) {
	for i, c := range cases {
		t := &testing.T{}
		_, _, _, snap := filledBuffer(t, c, uint64(i))
		f.Add(i, snap)
	}
	f.Fuzz(func(t *testing.T, i int, data []byte) {
		c := cases[uint(i)%uint(len(cases))]
		g := mustNew(t, c.call, c.arg)
		if _, err := g.RestoreBuffer(refreshCRC(data)); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v, want nil or ErrCorrupt", err)
		}
	})
}

// TestIncrementalShared checkpoints a dictionary as a full snapshot then deltas, and
// restores the chain.
func TestIncrementalShared(t *testing.T) {
	for _, arg := range []types.Type{types.TypeString, types.TypeBigInt, types.TypeDouble} {
		t.Run(arg.String(), func(t *testing.T) {
			c := call(planner.AggCount, true, tCount)
			f := mustNew(t, c, arg)
			value := func(i int) types.Value {
				switch arg.Kind {
				case types.Varchar:
					return types.StringValue(fmt.Sprintf("user-%06d", i))
				case types.BigInt:
					return types.BigIntValue(-int64(i) - 1) // negative: all through the dictionary
				}
				return types.DoubleValue(float64(i) + 0.5)
			}
			b := f.NewBuffer()
			var chain [][]byte
			var mark uint64
			for step, n := range []int{0, 1, 1023, 1024, 1025, 3000, 3000} {
				for i := range n {
					if err := b.Add(value(i)); err != nil {
						t.Fatal(err)
					}
				}
				delta, err := f.AppendSharedSince(nil, mark)
				if err != nil {
					t.Fatal(err)
				}
				chain = append(chain, delta)
				mark = f.SharedMark()
				if want := uint64(n); step > 0 && mark < want {
					t.Fatalf("mark %d after %d distinct values", mark, n)
				}
			}
			snap, err := b.AppendSnapshot(nil)
			if err != nil {
				t.Fatal(err)
			}

			g := mustNew(t, c, arg)
			if _, err := g.RestoreBuffer(snap); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("buffer restored before its dictionary: got %v, want ErrCorrupt", err)
			}
			if err := g.RestoreShared(chain[2]); !errors.Is(err, ErrSharedGap) {
				t.Fatalf("delta without its base: got %v, want ErrSharedGap", err)
			}
			for i, delta := range chain {
				if err := g.RestoreShared(delta); err != nil {
					t.Fatalf("delta %d: %v", i, err)
				}
			}
			if g.SharedMark() != f.SharedMark() {
				t.Fatalf("restored %d entries, want %d", g.SharedMark(), f.SharedMark())
			}
			if err := g.RestoreShared(chain[3]); !errors.Is(err, ErrSharedGap) {
				t.Fatalf("delta applied twice: got %v, want ErrSharedGap", err)
			}
			// a damaged delta leaves the dictionary as it was
			more := g.NewBuffer()
			for i := 3000; i < 3100; i++ {
				if err := f.NewBuffer().Add(value(i)); err != nil {
					t.Fatal(err)
				}
			}
			delta, err := f.AppendSharedSince(nil, g.SharedMark())
			if err != nil {
				t.Fatal(err)
			}
			bad := []byte(string(delta))
			bad[len(bad)/2] ^= 1
			if err := g.RestoreShared(refreshCRC(bad)); err == nil {
				// a flipped key byte can still decode; then it must have been appended whole
				if g.SharedMark() != f.SharedMark() {
					t.Fatalf("damaged delta half applied: %d entries", g.SharedMark())
				}
			} else if g.SharedMark() != mark {
				t.Fatalf("failed delta left %d entries, want %d", g.SharedMark(), mark)
			}

			rb, err := g.RestoreBuffer(snap)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := rb.Result(), b.Result(); got.Int() != want.Int() {
				t.Fatalf("restored count %v, want %v", got, want)
			}
			// ids agree: values added before the checkpoint are not counted twice
			before := g.SharedMark()
			addAll(t, rb, []types.Value{value(0), value(2999)})
			addAll(t, more, []types.Value{value(0)})
			if got := rb.Result().Int(); got != 3000 || g.SharedMark() != before {
				t.Fatalf("after re-adding known values: count %d (want 3000), dictionary %d -> %d", got, before, g.SharedMark())
			}
			if _, err := f.AppendSharedSince(nil, f.SharedMark()+1); !errors.Is(err, ErrSharedGap) {
				t.Fatalf("mark past the end: got %v, want ErrSharedGap", err)
			}
		})
	}
}
