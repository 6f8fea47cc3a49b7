package agg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/pipesql/pipesql/types"
)

// key32 maps a 32-bit value one-to-one onto a uint32. Flipping the sign bit keeps
// small non-negative ids dense (they land in one or a few containers) and orders
// negative values below them.
func (f *function) key32(v types.Value) (uint32, error) {
	if err := f.checkValue(v); err != nil {
		return 0, err
	}
	n := v.Int()
	if n != int64(int32(n)) {
		return 0, fmt.Errorf("%w: %s got %d, outside the 32-bit range of %s", ErrValueType, f.name, n, f.arg)
	}
	return uint32(int32(n)) ^ 1<<31, nil
}

// key64 maps a value of a 64-bit kind one-to-one onto a uint64: integers and temporal
// values as their two's complement, floats as their bits with -0.0 and NaNs folded.
func (f *function) key64(v types.Value) (uint64, error) {
	if err := f.checkValue(v); err != nil {
		return 0, err
	}
	if f.argFamily == types.Double {
		return math.Float64bits(types.CanonicalFloat(v.Float())), nil
	}
	return uint64(v.Int()), nil
}

func (f *function) dictMaxLen() int {
	if f.ints != nil {
		return f.ints.maxLen
	}
	return f.strs.maxLen
}

func (f *function) dictLen() int {
	if f.ints != nil {
		return f.ints.len()
	}
	return f.strs.len()
}

// bitmap32 is COUNT(DISTINCT x) for x of 32 bits or less: x goes straight into the
// bitmap (see key32).
type bitmap32 struct {
	f     *function
	bm    *roaring.Bitmap
	dirty bool
}

func newBitmap32(f *function) *bitmap32 { return &bitmap32{f: f, bm: roaring.New(), dirty: true} }

func (b *bitmap32) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	k, err := b.f.key32(v)
	if err != nil {
		return err
	}
	if b.bm.CheckedAdd(k) {
		b.dirty = true
	}
	return nil
}

func (b *bitmap32) Merge(other Buffer) error {
	o, ok := other.(*bitmap32)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	b.dirty = orInto(b.bm, o.bm) || b.dirty
	return nil
}

func (b *bitmap32) Result() types.Value {
	return intResult(b.f.resultKind, int64(b.bm.GetCardinality()))
}

func (b *bitmap32) Dirty() bool { return b.dirty }

func (b *bitmap32) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, b.f.tag)
	dst, err := appendBitmap(dst, b.bm)
	if err != nil {
		return dst[:start], err
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreBitmap32(r *reader) Buffer {
	return &bitmap32{f: f, bm: r.bitmap()}
}

// bitmap64 is COUNT(DISTINCT x) for BIGINT x. Values in [0, 2^32) (the ids of most
// tables) go straight into the direct bitmap; all others (negative values, snowflake
// ids, hashes, timestamps) are encoded by the Func's dictionary into dense ids in the
// encoded bitmap. The two sets are disjoint by construction, so the count is the sum of
// both cardinalities. A true roaring64 bitmap degrades to one 32-bit bitmap per distinct
// high half for sparse values (see doc.go for the measurements).
type bitmap64 struct {
	f       *function
	direct  *roaring.Bitmap
	encoded *roaring.Bitmap
	dirty   bool
}

func newBitmap64(f *function) *bitmap64 {
	return &bitmap64{f: f, direct: roaring.New(), encoded: roaring.New(), dirty: true}
}

func (b *bitmap64) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	k, err := b.f.key64(v)
	if err != nil {
		return err
	}
	if k < 1<<32 {
		if b.direct.CheckedAdd(uint32(k)) {
			b.dirty = true
		}
		return nil
	}
	return b.f.enqueueKey64(b, k)
}

func (b *bitmap64) addID(id uint32) {
	if b.encoded.CheckedAdd(id) {
		b.dirty = true
	}
}

func (b *bitmap64) Merge(other Buffer) error {
	o, ok := other.(*bitmap64)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	if err := b.f.flush(); err != nil {
		return err
	}
	d1 := orInto(b.direct, o.direct)
	d2 := orInto(b.encoded, o.encoded)
	b.dirty = d1 || d2 || b.dirty
	return nil
}

func (b *bitmap64) Result() types.Value {
	_ = b.f.flush() // a failure is returned by the next Add or AppendSnapshot
	return intResult(b.f.resultKind, int64(b.direct.GetCardinality()+b.encoded.GetCardinality()))
}

func (b *bitmap64) Dirty() bool {
	_ = b.f.flush()
	return b.dirty
}

func (b *bitmap64) AppendSnapshot(dst []byte) ([]byte, error) {
	if err := b.f.flush(); err != nil {
		return dst, err
	}
	dst, start := beginSnapshot(dst, b.f.tag)
	dst, err := appendBitmap(dst, b.direct)
	if err == nil {
		dst, err = appendBitmap(dst, b.encoded)
	}
	if err != nil {
		return dst[:start], err
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreBitmap64(r *reader) Buffer {
	b := &bitmap64{f: f, direct: r.bitmap(), encoded: r.bitmap()}
	r.checkIDs(b.encoded, f.ints.len())
	return b
}

// dictBitmap is COUNT(DISTINCT x) over dictionary ids: strings, and any other type
// through its canonical encoding (or its 64-bit image, when it has one).
type dictBitmap struct {
	f     *function
	bm    *roaring.Bitmap
	dirty bool
}

func newDictBitmap(f *function) *dictBitmap {
	return &dictBitmap{f: f, bm: roaring.New(), dirty: true}
}

func (b *dictBitmap) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if err := b.f.checkValue(v); err != nil {
		return err
	}
	return b.f.enqueue(b, v)
}

func (b *dictBitmap) addID(id uint32) {
	if b.bm.CheckedAdd(id) {
		b.dirty = true
	}
}

func (b *dictBitmap) Merge(other Buffer) error {
	o, ok := other.(*dictBitmap)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	if err := b.f.flush(); err != nil {
		return err
	}
	b.dirty = orInto(b.bm, o.bm) || b.dirty
	return nil
}

func (b *dictBitmap) Result() types.Value {
	_ = b.f.flush() // a failure is returned by the next Add or AppendSnapshot
	return intResult(b.f.resultKind, int64(b.bm.GetCardinality()))
}

func (b *dictBitmap) Dirty() bool {
	_ = b.f.flush()
	return b.dirty
}

func (b *dictBitmap) AppendSnapshot(dst []byte) ([]byte, error) {
	if err := b.f.flush(); err != nil {
		return dst, err
	}
	dst, start := beginSnapshot(dst, b.f.tag)
	dst, err := appendBitmap(dst, b.bm)
	if err != nil {
		return dst[:start], err
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreDictBitmap(r *reader) Buffer {
	b := &dictBitmap{f: f, bm: r.bitmap()}
	r.checkIDs(b.bm, f.dictLen())
	return b
}

// orInto ORs src into dst and reports whether dst changed.
func orInto(dst, src *roaring.Bitmap) bool {
	if src.IsEmpty() {
		return false
	}
	before := dst.GetCardinality()
	dst.Or(src)
	return dst.GetCardinality() != before
}

// appendBitmap writes a uvarint length and the bitmap in the portable roaring format,
// straight into dst (WriteTo into pre-sized memory is ~10x faster than ToBytes).
func appendBitmap(dst []byte, bm *roaring.Bitmap) ([]byte, error) {
	size := bm.GetSerializedSizeInBytes()
	dst = binary.AppendUvarint(dst, size)
	w := appendWriter{b: slices.Grow(dst, int(size))}
	n, err := bm.WriteTo(&w)
	if err == nil && uint64(n) != size {
		err = fmt.Errorf("roaring bitmap wrote %d bytes, announced %d", n, size)
	}
	if err != nil {
		return dst, fmt.Errorf("serialize bitmap: %w", err)
	}
	return w.b, nil
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// bitmap reads what appendBitmap wrote. The roaring decoder is third-party code fed
// with checkpoint bytes: a panic in it becomes ErrCorrupt, and the decoded bitmap is
// validated before use.
func (r *reader) bitmap() (bm *roaring.Bitmap) {
	data := r.lenBytes()
	if r.err != nil {
		return roaring.New()
	}
	bm = roaring.New()
	defer func() {
		if p := recover(); p != nil {
			r.fail("roaring bitmap: %v", p)
			bm = roaring.New()
		}
	}()
	n, err := bm.ReadFrom(bytes.NewReader(data))
	switch {
	case err != nil:
		r.fail("roaring bitmap: %v", err)
	case n != int64(len(data)):
		r.fail("roaring bitmap used %d of its %d bytes", n, len(data))
	default:
		if err := bm.Validate(); err != nil {
			r.fail("roaring bitmap: %v", err)
		}
	}
	if r.err != nil {
		return roaring.New()
	}
	return bm
}

// checkIDs fails when the bitmap holds a dictionary id the dictionary does not have:
// the buffer was written against more shared state than was restored.
func (r *reader) checkIDs(bm *roaring.Bitmap, dictLen int) {
	if r.err == nil && !bm.IsEmpty() && uint64(bm.Maximum()) >= uint64(dictLen) {
		r.fail("bitmap holds dictionary id %d but the dictionary has %d entries (restore the shared state first)",
			bm.Maximum(), dictLen)
	}
}

// valueSet is an aggregate over the set of distinct values: SUM(DISTINCT x),
// AVG(DISTINCT x), and any DISTINCT call the planner gave the "distinct value set"
// state. Values are keyed by their canonical encoding, so SQL-equal values are one.
type valueSet struct {
	f     *function
	set   map[string]types.Value
	dirty bool
}

func newValueSet(f *function) *valueSet {
	return &valueSet{f: f, set: make(map[string]types.Value), dirty: true}
}

func (b *valueSet) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if err := b.f.checkValue(v); err != nil {
		return err
	}
	b.f.scratch = appendValue(b.f.scratch[:0], v, true)
	if _, ok := b.set[string(b.f.scratch)]; !ok {
		b.set[string(b.f.scratch)] = ownValue(v)
		b.dirty = true
	}
	return nil
}

func (b *valueSet) Merge(other Buffer) error {
	o, ok := other.(*valueSet)
	if !ok || o.f != b.f {
		return b.f.mergeError(other)
	}
	for k, v := range o.set {
		if _, ok := b.set[k]; !ok {
			b.set[k] = v
			b.dirty = true
		}
	}
	return nil
}

// sortedKeys orders the set so that results (float sums) and snapshots are
// deterministic.
func (b *valueSet) sortedKeys() []string {
	keys := make([]string, 0, len(b.set))
	for k := range b.set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (b *valueSet) Result() types.Value {
	acc := b.f.plain.NewBuffer()
	for _, k := range b.sortedKeys() {
		// The values passed checkValue on the way in; the plain call has the same argument type.
		_ = acc.Add(b.set[k])
	}
	return acc.Result()
}

func (b *valueSet) Dirty() bool { return b.dirty }

func (b *valueSet) AppendSnapshot(dst []byte) ([]byte, error) {
	dst, start := beginSnapshot(dst, b.f.tag)
	dst = binary.AppendUvarint(dst, uint64(len(b.set)))
	for _, k := range b.sortedKeys() {
		dst = appendValue(dst, b.set[k], false)
	}
	b.dirty = false
	return endSnapshot(dst, start), nil
}

func (f *function) restoreValueSet(r *reader) Buffer {
	b := &valueSet{f: f, set: make(map[string]types.Value)}
	for range r.count(1) {
		v := r.value()
		if r.err != nil {
			break
		}
		if v.IsNull() || family(v.Kind()) != f.argFamily {
			r.fail("%s value in a %s buffer", v.Kind(), f.name)
			break
		}
		key := string(appendValue(nil, v, true))
		if _, dup := b.set[key]; dup {
			r.fail("duplicate value %s", v)
			break
		}
		b.set[key] = v
	}
	return b
}
