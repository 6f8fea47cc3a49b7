package agg

import "github.com/RoaringBitmap/roaring/v2"

// Freezing bitmap buffers for a checkpoint
//
// Serializing the bitmaps of 24 daily windows of a million users each takes a few
// milliseconds, all of it inside the in-line pause of a full checkpoint. FreezeBuffer
// takes instead a copy-on-write clone of a buffer's bitmaps, which costs O(containers):
// roaring then marks every container as shared by both, and the buffer's next Add to a
// container copies that container first. So a window that does not change after the
// checkpoint copies nothing, today's window copies the few containers it touches, and
// the clone, which nothing changes any more, is serialized later on the checkpoint
// writer's goroutine (FrozenBuffer.AppendTo).

// FrozenBuffer is the state of a buffer captured by FreezeBuffer. It may be used on
// another goroutine once handed over with a happens-before edge (a channel or a mutex).
type FrozenBuffer struct {
	tag     byte
	bitmaps []*roaring.Bitmap
}

// FreezeBuffer captures b's state for AppendTo to serialize later, as AppendSnapshot
// would have now, and marks b clean as AppendSnapshot does. It returns nil for buffers
// whose AppendSnapshot is as cheap as freezing them (counters, sums, MIN/MAX) and for
// distinct value sets: snapshot those in line.
func FreezeBuffer(b Buffer) (*FrozenBuffer, error) {
	switch b := b.(type) {
	case *bitmap32:
		fz := &FrozenBuffer{tag: b.f.tag, bitmaps: []*roaring.Bitmap{freezeBitmap(b.bm)}}
		b.dirty = false
		return fz, nil
	case *bitmap64:
		if err := b.f.flush(); err != nil {
			return nil, err
		}
		fz := &FrozenBuffer{tag: b.f.tag, bitmaps: []*roaring.Bitmap{freezeBitmap(b.direct), freezeBitmap(b.encoded)}}
		b.dirty = false
		return fz, nil
	case *dictBitmap:
		if err := b.f.flush(); err != nil {
			return nil, err
		}
		fz := &FrozenBuffer{tag: b.f.tag, bitmaps: []*roaring.Bitmap{freezeBitmap(b.bm)}}
		b.dirty = false
		return fz, nil
	}
	return nil, nil
}

// freezeBitmap returns a copy-on-write clone of bm: bm stays copy-on-write from then on,
// so that its next change to a container copies the container instead of changing the
// one the clone shares.
func freezeBitmap(bm *roaring.Bitmap) *roaring.Bitmap {
	bm.SetCopyOnWrite(true)
	return bm.Clone()
}

// AppendTo appends the frozen state in the format of Buffer.AppendSnapshot.
func (fz *FrozenBuffer) AppendTo(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, fz.tag)
	for _, bm := range fz.bitmaps {
		var err error
		if dst, err = appendBitmap(dst, bm); err != nil {
			return dst[:start], err
		}
	}
	return endSnapshot(dst, start), nil
}
