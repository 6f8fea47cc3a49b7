package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/pipesql/pipesql/types"
)

// Checkpointed operator state is written with this small codec: uvarints, varints and
// SQL values (group keys, last results). Aggregate buffers bring their own format
// (exec/agg, version byte first); each value an operator writes starts with
// stateVersion so that a later layout can be told apart.

// stateVersion is the first byte of every value exec writes to a checkpoint.
const stateVersion = 1

// stateDecoder reads what the append functions wrote, keeping the first error: a
// truncated or malformed value becomes an error naming the offset, never a panic.
type stateDecoder struct {
	data []byte
	off  int
	err  error
}

func (d *stateDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("byte %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

func (d *stateDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.data) {
		d.fail("truncated")
		return 0
	}
	b := d.data[d.off]
	d.off++
	return b
}

func (d *stateDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad unsigned number")
		return 0
	}
	d.off += n
	return v
}

func (d *stateDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.off += n
	return v
}

// count reads a count of items that take at least minSize bytes each, refusing counts
// the remaining bytes cannot hold (a corrupt count must not allocate gigabytes).
func (d *stateDecoder) count(minSize int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.data)-d.off)/uint64(max(minSize, 1)) {
		d.fail("count %d exceeds the remaining %d bytes", n, len(d.data)-d.off)
		return 0
	}
	return int(n)
}

func (d *stateDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.data)-d.off {
		d.fail("truncated: %d bytes wanted, %d left", n, len(d.data)-d.off)
		return nil
	}
	b := d.data[d.off : d.off+n]
	d.off += n
	return b
}

func (d *stateDecoder) lenBytes() []byte { return d.bytes(d.count(1)) }

// version checks the leading version byte.
func (d *stateDecoder) version() {
	if v := d.byte(); d.err == nil && v != stateVersion {
		d.fail("state version %d, this pipesql reads %d", v, stateVersion)
	}
}

// finish reports trailing bytes as an error.
func (d *stateDecoder) finish() error {
	if d.err == nil && d.off != len(d.data) {
		d.fail("%d unexpected trailing bytes", len(d.data)-d.off)
	}
	return d.err
}

func appendLenBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// stateEncoding is how exec's state holds a SQL value: types' value encoding, with
// DECIMALs as text, the layout of state version 1.
const stateEncoding = types.TextDecimals

// appendStateValue appends v: its kind, then its payload.
func appendStateValue(dst []byte, v types.Value) []byte {
	return types.AppendValue(dst, v, stateEncoding)
}

func (d *stateDecoder) value() types.Value {
	if d.err != nil {
		return types.NullValue
	}
	v, n, err := types.DecodeValue(d.data[d.off:], stateEncoding)
	if err != nil {
		d.fail("%v", err)
		return types.NullValue
	}
	d.off += n
	return v
}

// appendStateRow appends a row of values, its length first.
func appendStateRow(dst []byte, r types.Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	for _, v := range r {
		dst = appendStateValue(dst, v)
	}
	return dst
}

func (d *stateDecoder) row() types.Row {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	r := make(types.Row, n)
	for i := range r {
		r[i] = d.value()
	}
	return r
}
