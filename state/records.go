package state

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"time"
)

// Records (commit records, index entries, savepoint headers) start with a
// version byte and end with the crc32c of everything before it.
const recordVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func seal(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, checksum(b))
}

// unseal checks a sealed record and returns its body, or why it is bad.
func unseal(b []byte) ([]byte, string) {
	if len(b) < 5 {
		return nil, fmt.Sprintf("record truncated to %d bytes", len(b))
	}
	n := len(b) - 4
	if checksum(b[:n]) != binary.LittleEndian.Uint32(b[n:]) {
		return nil, "record checksum mismatch"
	}
	if b[0] != recordVersion {
		return nil, fmt.Sprintf("unknown record version %d", b[0])
	}
	return b[1:n], ""
}

// entry is an index entry: where a value's data lives and how to check it.
type entry struct {
	origin    uint64 // checkpoint whose data keys hold the value
	size      uint64 // length of the value
	chunkSize uint64 // length of every chunk but the last
	crc       uint32 // crc32c of the whole value
}

func (e entry) chunks() uint32 {
	if e.size == 0 {
		return 1
	}
	return uint32((e.size + e.chunkSize - 1) / e.chunkSize)
}

func (e entry) chunkLen(c uint32) int {
	return int(min(e.chunkSize, e.size-uint64(c)*e.chunkSize))
}

func (e entry) marshal() []byte {
	b := []byte{recordVersion}
	b = binary.AppendUvarint(b, e.origin)
	b = binary.AppendUvarint(b, e.size)
	b = binary.AppendUvarint(b, e.chunkSize)
	b = binary.LittleEndian.AppendUint32(b, e.crc)
	return seal(b)
}

func unmarshalEntry(b []byte) (entry, string) {
	body, bad := unseal(b)
	if bad != "" {
		return entry{}, "index entry: " + bad
	}
	d := decoder{b: body}
	e := entry{origin: d.uvarint(), size: d.uvarint(), chunkSize: d.uvarint(), crc: d.uint32()}
	if d.bad == "" && e.chunkSize == 0 {
		d.bad = "zero chunk size"
	}
	if d.bad != "" {
		return entry{}, "index entry: " + d.bad
	}
	return e, ""
}

// commitRecord is what a completed checkpoint's commit key holds: its Meta
// and a manifest of its index (how many entries, and the crc32c of their
// keys and values in key order).
type commitRecord struct {
	meta    Meta
	entries uint64
	sum     uint32
}

func (r commitRecord) marshal() []byte {
	b := []byte{recordVersion}
	b = binary.AppendUvarint(b, r.entries)
	b = binary.LittleEndian.AppendUint32(b, r.sum)
	b = appendMeta(b, r.meta)
	return seal(b)
}

func unmarshalCommit(b []byte) (commitRecord, string) {
	body, bad := unseal(b)
	if bad != "" {
		return commitRecord{}, "commit record: " + bad
	}
	d := decoder{b: body}
	r := commitRecord{entries: d.uvarint(), sum: d.uint32(), meta: d.meta()}
	if d.bad == "" && len(d.b) != 0 {
		d.bad = fmt.Sprintf("%d trailing bytes", len(d.b))
	}
	if d.bad != "" {
		return commitRecord{}, "commit record: " + d.bad
	}
	return r, ""
}

func appendMeta(b []byte, m Meta) []byte {
	b = appendString(b, m.Plan)
	if m.Created.IsZero() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendVarint(b, m.Created.Unix())
		b = binary.AppendUvarint(b, uint64(m.Created.Nanosecond()))
	}
	b = binary.AppendUvarint(b, uint64(len(m.Operators)))
	for _, op := range m.Operators {
		b = appendString(b, op.ID)
		b = appendString(b, op.Desc)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Props)))
	for _, k := range slices.Sorted(maps.Keys(m.Props)) {
		b = appendString(b, k)
		b = appendString(b, m.Props[k])
	}
	return b
}

// decoder reads what the append functions write. The first problem is kept
// in bad; later reads return zero values.
type decoder struct {
	b   []byte
	bad string
}

func (d *decoder) fail(what string) {
	if d.bad == "" {
		d.bad = "truncated or malformed " + what
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("flag")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uint32() uint32 {
	if len(d.b) < 4 {
		d.fail("checksum")
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// count reads a length that is followed by at least min bytes per element,
// so that a corrupt length cannot make the caller allocate wildly.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail("count")
		return 0
	}
	return int(n)
}

func (d *decoder) meta() Meta {
	var m Meta
	m.Plan = d.string()
	if d.byte() == 1 {
		sec, nsec := d.varint(), d.uvarint()
		m.Created = time.Unix(sec, int64(nsec)).UTC()
	}
	if n := d.count(2); n > 0 {
		m.Operators = make([]Operator, n)
		for i := range m.Operators {
			m.Operators[i] = Operator{ID: d.string(), Desc: d.string()}
		}
	}
	if n := d.count(2); n > 0 {
		m.Props = make(map[string]string, n)
		for range n {
			k := d.string()
			m.Props[k] = d.string()
		}
	}
	return m
}
