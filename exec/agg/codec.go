package agg

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/big"

	"github.com/pipesql/pipesql/types"
)

// snapshotVersion is the first byte of every snapshot this package writes. A reader
// refuses other versions instead of guessing: state layouts change with the version.
const snapshotVersion = 1

// Every snapshot is framed as
//
//	version byte | layout tag byte | payload | CRC-32C (little endian) of all bytes before it
//
// The layout tag names the buffer implementation, so that a snapshot restored into a Func
// of another kind fails loudly instead of being misread. The checksum catches bit flips
// inside roaring containers, which would otherwise decode into silently wrong counts.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Layout tags. They are part of the snapshot format: never renumber.
const (
	tagCounter   byte = 1
	tagSumInt    byte = 2
	tagSumFloat  byte = 3
	tagSumDec    byte = 4
	tagMinMax    byte = 5
	tagAvgInt    byte = 6
	tagAvgFloat  byte = 7
	tagAvgDec    byte = 8
	tagRoaring32 byte = 9
	tagRoaring64 byte = 10
	tagDict      byte = 11
	tagValueSet  byte = 12

	tagSharedNone   byte = 32
	tagSharedString byte = 33
	tagSharedInt64  byte = 34
)

func beginSnapshot(dst []byte, tag byte) ([]byte, int) {
	return append(dst, snapshotVersion, tag), len(dst)
}

func endSnapshot(dst []byte, start int) []byte {
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// openSnapshot checks the frame of data and returns a reader over its payload.
func openSnapshot(what string, data []byte, tag byte) (*reader, error) {
	r := &reader{what: what}
	if len(data) == 0 {
		return nil, r.errorf(0, "empty")
	}
	if data[0] != snapshotVersion {
		return nil, r.errorf(0, "unknown version %d (this build reads version %d)", data[0], snapshotVersion)
	}
	if len(data) < 6 {
		return nil, r.errorf(len(data), "truncated: %d bytes", len(data))
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, r.errorf(len(data)-4, "checksum mismatch (truncated or damaged)")
	}
	if data[1] != tag {
		return nil, r.errorf(1, "written by a %s, not a %s", tagName(data[1]), tagName(tag))
	}
	r.data, r.base = body[2:], 2
	return r, nil
}

func tagName(tag byte) string {
	switch tag {
	case tagCounter:
		return "counter"
	case tagSumInt, tagSumFloat, tagSumDec:
		return "sum"
	case tagMinMax:
		return "min/max"
	case tagAvgInt, tagAvgFloat, tagAvgDec:
		return "average"
	case tagRoaring32:
		return "roaring bitmap"
	case tagRoaring64:
		return "roaring64 bitmap"
	case tagDict:
		return "dictionary bitmap"
	case tagValueSet:
		return "distinct value set"
	case tagSharedNone:
		return "state without shared part"
	case tagSharedString:
		return "string dictionary"
	case tagSharedInt64:
		return "BIGINT dictionary"
	}
	return fmt.Sprintf("unknown layout %d", tag)
}

// reader decodes a payload. Its error is sticky: after the first failure every read
// returns a zero value, so decoders read straight through and check r.err once.
type reader struct {
	what string
	data []byte
	off  int
	base int // offset of data in the whole snapshot, for error positions
	err  error
}

func (r *reader) errorf(off int, format string, args ...any) error {
	return &SnapshotError{What: r.what, Offset: off, Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = r.errorf(r.base+r.off, format, args...)
	}
}

func (r *reader) remaining() int { return len(r.data) - r.off }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.data) {
		r.fail("truncated")
		return 0
	}
	b := r.data[r.off]
	r.off++
	return b
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.data[r.off:])
	if n <= 0 {
		r.fail("bad or truncated varint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.data[r.off:])
	if n <= 0 {
		r.fail("bad or truncated varint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// bytes returns the next n bytes, aliasing the input.
func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(r.remaining()) {
		r.fail("truncated: need %d bytes, have %d", n, r.remaining())
		return nil
	}
	b := r.data[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

// lenBytes reads a uvarint length and that many bytes.
func (r *reader) lenBytes() []byte { return r.bytes(r.uvarint()) }

// count reads an element count and checks it against the bytes left, each element
// taking at least minSize bytes, so that a damaged count cannot make us allocate
// gigabytes before noticing.
func (r *reader) count(minSize int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(r.remaining()/minSize) {
		r.fail("count %d exceeds the %d bytes left", n, r.remaining())
		return 0
	}
	return int(n)
}

// finish reports the sticky error, or trailing bytes the decoder did not expect.
func (r *reader) finish() error {
	if r.err == nil && r.off != len(r.data) {
		r.fail("%d unexpected trailing bytes", len(r.data)-r.off)
	}
	return r.err
}

// Values are written with types.AppendValue, in canonical mode with types.Canonical:
// values that SQL considers equal encode to the same bytes, the identity of a value in
// distinct-value sets and dictionaries. Both layouts are part of the snapshot format.

func appendValue(dst []byte, v types.Value, canonical bool) []byte {
	if canonical {
		return types.AppendValue(dst, v, types.Canonical)
	}
	return types.AppendValue(dst, v, 0)
}

// rat reads what types.AppendDecimal wrote.
func (r *reader) rat() *big.Rat {
	if r.err != nil {
		return nil
	}
	x, n, err := types.DecodeDecimal(r.data[r.off:])
	if err != nil {
		r.fail("%v", err)
		return nil
	}
	r.off += n
	return x
}

func (r *reader) value() types.Value {
	if r.err != nil {
		return types.NullValue
	}
	v, n, err := types.DecodeValue(r.data[r.off:], 0)
	if err != nil {
		r.fail("%v", err)
		return types.NullValue
	}
	r.off += n
	return v
}
