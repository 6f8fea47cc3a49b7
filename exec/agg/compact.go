package agg

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// CompactShared drops the dictionary entries no live buffer references and renumbers
// the rest densely, rewriting the bitmaps of the live buffers. Buffers of this Func not
// in live must not be used afterwards. It is how a long-running job (a daily count over
// months) keeps its dictionary to the users of the windows still open, at the price of
// rebuilding it (about as long as restoring it) and of a full checkpoint afterwards:
// SharedMark changes epoch, so a delta from an older mark is refused with ErrSharedGap,
// and every live buffer is dirty.
func (f *function) CompactShared(live []Buffer) error {
	if f.strs == nil && f.ints == nil {
		return nil
	}
	if err := f.flush(); err != nil {
		return err
	}
	bitmaps := make([]**roaring.Bitmap, 0, len(live))
	dirty := make([]*bool, 0, len(live))
	for _, b := range live {
		switch b := b.(type) {
		case *dictBitmap:
			if b.f == f {
				bitmaps, dirty = append(bitmaps, &b.bm), append(dirty, &b.dirty)
				continue
			}
		case *bitmap64:
			if b.f == f {
				bitmaps, dirty = append(bitmaps, &b.encoded), append(dirty, &b.dirty)
				continue
			}
		}
		return &CallError{Call: f.name, Err: fmt.Errorf("%w: compacting with a %T of another call", ErrMerge, b)}
	}
	used := roaring.New()
	for _, bm := range bitmaps {
		used.Or(*bm)
	}
	remap := make([]uint32, f.dictLen()) // old id -> new id, for the ids in used
	if f.strs != nil {
		kept := &stringDict{seed: f.strs.seed, maxLen: f.strs.maxLen, pins: f.strs.pins}
		kept.reset(int(used.GetCardinality()))
		f.strs.scan(0, func(_ uint64, id uint32, key string) bool {
			if used.Contains(id) {
				remap[id], _ = kept.lookup(key) // fewer entries than before: cannot be full
			}
			return true
		})
		f.strs.release() // no key of the old arena is referenced any more: kept copied them
		*f.strs = *kept
	} else {
		kept := &int64Dict{seed: f.ints.seed, maxLen: f.ints.maxLen, pins: f.ints.pins}
		kept.reset(int(used.GetCardinality()))
		for id, key := range f.ints.keys {
			if used.Contains(uint32(id)) {
				remap[id], _ = kept.lookup(key)
			}
		}
		f.ints.release()
		*f.ints = *kept
	}
	for i, bm := range bitmaps {
		ids := (*bm).ToArray()
		for j, id := range ids {
			ids[j] = remap[id] // the renumbering keeps the order, so ids stay sorted
		}
		*bm = roaring.New()
		(*bm).AddMany(ids)
		*dirty[i] = true
	}
	f.epoch++
	return nil
}
