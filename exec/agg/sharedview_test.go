package agg

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// TestSharedViewWhileGrowing serializes a view on another goroutine while the Func goes
// on adding entries (new arena chunks, a key array that moves), then compacts and
// replaces the dictionary: the view still writes exactly what AppendSharedSince wrote
// when it was taken, and its memory is freed once it is done. Run with -race.
func TestSharedViewWhileGrowing(t *testing.T) {
	for _, arg := range []types.Type{types.TypeString, types.TypeBigInt} {
		t.Run(arg.String(), func(t *testing.T) {
			user := func(i int) types.Value {
				if arg.Kind == types.BigInt {
					return types.BigIntValue(int64(mix64(uint64(i)) | 1<<63))
				}
				return types.StringValue(fmt.Sprintf("user-%d", i))
			}
			f := mustNew(t, call(planner.AggCount, true, tCount), arg)
			b := f.NewBuffer()
			for i := range 20_000 {
				addAll(t, b, []types.Value{user(i)})
			}
			for i := 20_000; i < 50_000; i++ {
				addAll(t, b, []types.Value{user(i)})
			}
			since := uint64(0)
			for range 2 {
				want, err := f.AppendSharedSince(nil, since)
				if err != nil {
					t.Fatal(err)
				}
				view, err := f.SharedView(since)
				if err != nil {
					t.Fatal(err)
				}
				got := make(chan []byte)
				start := make(chan struct{})
				go func() {
					<-start
					out, err := view.AppendTo(nil)
					if err != nil {
						t.Error(err)
					}
					got <- out
				}()
				close(start)
				for i := 50_000; i < 200_000; i++ {
					addAll(t, b, []types.Value{user(i + int(since))})
				}
				if err := f.CompactShared([]Buffer{b}); err != nil {
					t.Fatal(err)
				}
				if out := <-got; !bytes.Equal(out, want) {
					t.Fatalf("view since %#x wrote %d bytes that differ from the %d AppendSharedSince wrote", since, len(out), len(want))
				}
				// The view is released: compacting again frees at once.
				if err := f.CompactShared([]Buffer{b}); err != nil {
					t.Fatal(err)
				}
				mark := f.SharedMark()
				for i := 500_000; i < 520_000; i++ {
					addAll(t, b, []types.Value{user(i)})
				}
				pins := f.(*function).strs.pinsOrNil()
				if f.(*function).ints != nil {
					pins = f.(*function).ints.pins
				}
				if pins.n != 0 || len(pins.deferred) != 0 {
					t.Fatalf("after the view: %d pins, %d deferred frees", pins.n, len(pins.deferred))
				}
				since = mark
			}
		})
	}
}

func (d *stringDict) pinsOrNil() *regionPins {
	if d == nil {
		return nil
	}
	return d.pins
}

// TestFreezeBufferWhileAdding serializes frozen bitmaps on another goroutine while their
// buffers go on adding values: the frozen state is what AppendSnapshot wrote when it was
// frozen, and the buffers count on exactly. Run with -race.
func TestFreezeBufferWhileAdding(t *testing.T) {
	for _, arg := range []types.Type{types.TypeInt, types.TypeBigInt, types.TypeString} {
		t.Run(arg.String(), func(t *testing.T) {
			user := func(i int) types.Value {
				switch arg.Kind {
				case types.Int:
					return types.IntValue(types.Int, int64(i))
				case types.BigInt:
					if i%2 == 0 {
						return types.BigIntValue(int64(i)) // direct
					}
					return types.BigIntValue(int64(mix64(uint64(i)) | 1<<63)) // dictionary-encoded
				}
				return types.StringValue(fmt.Sprintf("user-%d", i))
			}
			f := mustNew(t, call(planner.AggCount, true, tCount), arg)
			b := f.NewBuffer()
			for i := range 300_000 {
				addAll(t, b, []types.Value{user(i * 3)})
			}
			want, err := b.AppendSnapshot(nil)
			if err != nil {
				t.Fatal(err)
			}
			b2 := f.NewBuffer()
			for i := range 300_000 {
				addAll(t, b2, []types.Value{user(i * 3)})
			}
			fz, err := FreezeBuffer(b2)
			if err != nil || fz == nil {
				t.Fatalf("FreezeBuffer: %v, %v", fz, err)
			}
			if b2.Dirty() {
				t.Fatal("a frozen buffer is still dirty")
			}
			got := make(chan []byte)
			go func() {
				out, err := fz.AppendTo(nil)
				if err != nil {
					t.Error(err)
				}
				got <- out
			}()
			for i := range 300_000 {
				addAll(t, b2, []types.Value{user(i*3 + 1)})
			}
			if out := <-got; !bytes.Equal(out, want) {
				t.Fatalf("frozen state: %d bytes that differ from the %d AppendSnapshot wrote", len(out), len(want))
			}
			if got := b2.Result().Int(); got != 600_000 {
				t.Fatalf("after freezing and adding: count %d, want 600000", got)
			}
			if !b2.Dirty() {
				t.Fatal("a buffer that gained values after freezing is not dirty")
			}
		})
	}
	plain := mustNew(t, call(planner.AggSum, false, types.TypeInt), types.TypeInt)
	if fz, err := FreezeBuffer(plain.NewBuffer()); fz != nil || err != nil {
		t.Fatalf("a SUM buffer froze: %v, %v", fz, err)
	}
}
