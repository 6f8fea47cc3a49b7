package kafka

import (
	"encoding/binary"
	"fmt"
	"math"
)

// snapshotVersion is the first byte of every snapshot; a change of layout takes a new one.
const snapshotVersion = 1

// position is one partition's place in a snapshot.
type position struct {
	key  partitionKey
	next int64 // next offset to read, or offsetEarliest when nothing was read yet
	stop int64 // end of a bounded read, or noStop
}

// encodeSnapshot writes the version byte, the number of partitions, then for each its
// topic (length-prefixed), partition, next offset and stop offset as varints.
func encodeSnapshot(ps []position) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(ps)*32)
	b = append(b, snapshotVersion)
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(len(p.key.topic)))
		b = append(b, p.key.topic...)
		b = binary.AppendVarint(b, int64(p.key.partition))
		b = binary.AppendVarint(b, p.next)
		b = binary.AppendVarint(b, p.stop)
	}
	return b
}

// decodeSnapshot reads what encodeSnapshot wrote.
func decodeSnapshot(b []byte) ([]position, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadSnapshot)
	}
	if b[0] != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d, this pipesql reads version %d", ErrBadSnapshot, b[0], snapshotVersion)
	}
	r := snapshotReader{b: b[1:]}
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: %d partitions in %d bytes", ErrBadSnapshot, n, len(r.b))
	}
	var out []position
	for i := uint64(0); i < n && r.err == nil; i++ {
		tl := r.uvarint()
		if r.err == nil && tl > uint64(len(r.b)) {
			r.err = fmt.Errorf("%w: truncated topic name", ErrBadSnapshot)
			break
		}
		topic := string(r.b[:tl])
		r.b = r.b[tl:]
		part := r.varint()
		next := r.varint()
		stop := r.varint()
		if r.err == nil && (part < 0 || part > math.MaxInt32 || next < offsetEarliest || stop < noStop) {
			r.err = fmt.Errorf("%w: bad position for %s partition %d", ErrBadSnapshot, topic, part)
		}
		out = append(out, position{key: partitionKey{topic, int32(part)}, next: next, stop: stop})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrBadSnapshot, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

type snapshotReader struct {
	b   []byte
	err error
}

func (r *snapshotReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated", ErrBadSnapshot)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *snapshotReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated", ErrBadSnapshot)
		return 0
	}
	r.b = r.b[n:]
	return v
}
