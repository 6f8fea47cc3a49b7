package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// SavepointFile is the one file of a savepoint, in a directory of its own,
// so that it can be moved, copied and restored from without the store that
// wrote it:
//
//	magic "pipesql savepoint\n"
//	header   record: job, checkpoint id, Meta
//	value*   'v' record: operator, key, size, crc32c of the value; then the value
//	end      'e' record: number of values
//
// A record is its uvarint length and a sealed body (version byte first,
// crc32c last). Values are in operator, then key, order.
const SavepointFile = "pipesql.savepoint"

const savepointMagic = "pipesql savepoint\n"

// maxRecord bounds record lengths read from a savepoint, so that a corrupt
// length is reported instead of allocated.
const maxRecord = 64 << 20

// ExportSavepoint writes every value of cp, with its job, id and Meta, to
// SavepointFile in dir, creating dir if needed. The file appears complete
// or not at all. An existing savepoint in dir is not replaced: the error
// wraps fs.ErrExist.
func ExportSavepoint(cp Checkpoint, dir string) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("export savepoint of checkpoint %d of job %q to %s: %w", cp.ID(), cp.Job(), dir, err)
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	final := filepath.Join(dir, SavepointFile)
	if _, err := os.Lstat(final); err == nil {
		return fs.ErrExist
	}
	f, err := os.CreateTemp(dir, ".savepoint-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()

	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(savepointMagic)
	header := []byte{recordVersion}
	header = appendString(header, cp.Job())
	header = binary.AppendUvarint(header, cp.ID())
	header = appendMeta(header, cp.Meta())
	writeRecord(w, seal(header))
	var count uint64
	for _, op := range cp.Operators() {
		err := cp.Scan(op, func(key string, value []byte) error {
			rec := []byte{recordVersion}
			rec = appendString(rec, op)
			rec = appendString(rec, key)
			rec = binary.AppendUvarint(rec, uint64(len(value)))
			rec = binary.LittleEndian.AppendUint32(rec, checksum(value))
			w.WriteByte('v')
			writeRecord(w, seal(rec))
			_, err := w.Write(value)
			count++
			return err
		})
		if err != nil {
			return err
		}
	}
	w.WriteByte('e')
	writeRecord(w, seal(binary.AppendUvarint([]byte{recordVersion}, count)))
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), final); err != nil {
		return err
	}
	return syncDir(dir)
}

func writeRecord(w *bufio.Writer, rec []byte) {
	var n [binary.MaxVarintLen64]byte
	w.Write(n[:binary.PutUvarint(n[:], uint64(len(rec)))])
	w.Write(rec)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// OpenSavepoint opens the savepoint in dir after verifying all of it. The
// error wraps ErrNotFound if dir has no savepoint, and ErrCorrupt (as a
// *CorruptError naming the file) if it fails verification. Values are read
// from the file when asked for, so it must stay in place while in use.
func OpenSavepoint(dir string) (Checkpoint, error) {
	path := filepath.Join(dir, SavepointFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open savepoint in %s: %w", dir, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open savepoint: %w", err)
	}
	defer f.Close()
	sp := &savepoint{path: path, values: make(map[string]map[string]spValue)}
	if err := sp.load(&spReader{r: bufio.NewReaderSize(f, 1<<20)}); err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("open savepoint %s: %w", path, err)
	}
	return sp, nil
}

type savepoint struct {
	path      string
	job       string
	id        uint64
	meta      Meta
	operators []string
	values    map[string]map[string]spValue
}

// spValue is where a value is in the file.
type spValue struct {
	off, size int64
	crc       uint32
}

var _ Checkpoint = (*savepoint)(nil)

// spReader reads a savepoint, counting the offset.
type spReader struct {
	r   *bufio.Reader
	off int64
}

func (r *spReader) ReadByte() (byte, error) {
	b, err := r.r.ReadByte()
	if err == nil {
		r.off++
	}
	return b, err
}

func (r *spReader) record() ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > maxRecord {
		return nil, fmt.Errorf("record length %d is too large", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r.r, b)
	r.off += int64(n)
	return b, err
}

func (sp *savepoint) corrupt(op, key, format string, args ...any) error {
	loc := Location{Path: sp.path, Job: sp.job, Checkpoint: sp.id, Operator: op, Key: key}
	return &CorruptError{Location: loc, Reason: fmt.Sprintf(format, args...)}
}

// load reads and verifies the whole file, remembering where values are.
func (sp *savepoint) load(r *spReader) error {
	// Reading past the end means the file was cut short.
	truncated := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return sp.corrupt("", "", "truncated at byte %d", r.off)
		}
		var ce *CorruptError
		if errors.As(err, &ce) {
			return err
		}
		return sp.corrupt("", "", "at byte %d: %v", r.off, err)
	}
	magic := make([]byte, len(savepointMagic))
	if _, err := io.ReadFull(r.r, magic); err != nil || string(magic) != savepointMagic {
		return sp.corrupt("", "", "not a pipesql savepoint")
	}
	r.off = int64(len(magic))
	rec, err := r.record()
	if err != nil {
		return truncated(err)
	}
	body, bad := unseal(rec)
	if bad != "" {
		return sp.corrupt("", "", "header: %s", bad)
	}
	d := decoder{b: body}
	sp.job, sp.id, sp.meta = d.string(), d.uvarint(), d.meta()
	if d.bad != "" {
		return sp.corrupt("", "", "header: %s", d.bad)
	}

	var count uint64
	for {
		tag, err := r.ReadByte()
		if err != nil {
			return truncated(err)
		}
		rec, err := r.record()
		if err != nil {
			return truncated(err)
		}
		body, bad := unseal(rec)
		if bad != "" {
			return sp.corrupt("", "", "record at byte %d: %s", r.off-int64(len(rec)), bad)
		}
		d := decoder{b: body}
		switch tag {
		case 'v':
			op, key, size, crc := d.string(), d.string(), d.uvarint(), d.uint32()
			if d.bad != "" {
				return sp.corrupt("", "", "value record at byte %d: %s", r.off-int64(len(rec)), d.bad)
			}
			v := spValue{off: r.off, size: int64(size), crc: crc}
			h := crc32.New(castagnoli)
			n, err := io.CopyN(h, r.r, v.size)
			r.off += n
			if err != nil {
				return truncated(err)
			}
			if h.Sum32() != crc {
				return sp.corrupt(op, key, "checksum mismatch")
			}
			if sp.values[op] == nil {
				sp.values[op] = make(map[string]spValue)
			}
			if _, dup := sp.values[op][key]; dup {
				return sp.corrupt(op, key, "value stored twice")
			}
			sp.values[op][key] = v
			count++
		case 'e':
			if n := d.uvarint(); d.bad != "" || n != count {
				return sp.corrupt("", "", "end record lists %d values, file has %d", n, count)
			}
			if _, err := r.ReadByte(); err != io.EOF {
				return sp.corrupt("", "", "data after end record at byte %d", r.off)
			}
			sp.operators = slices.Sorted(maps.Keys(sp.values))
			return nil
		default:
			return sp.corrupt("", "", "unknown record %q at byte %d", tag, r.off-int64(len(rec)))
		}
	}
}

func (sp *savepoint) Job() string         { return sp.job }
func (sp *savepoint) ID() uint64          { return sp.id }
func (sp *savepoint) Operators() []string { return slices.Clone(sp.operators) }

func (sp *savepoint) Meta() Meta {
	m := sp.meta
	m.Operators = slices.Clone(m.Operators)
	m.Props = maps.Clone(m.Props)
	return m
}

func (sp *savepoint) Get(operator, key string) ([]byte, error) {
	v, ok := sp.values[operator][key]
	if !ok {
		loc := Location{Path: sp.path, Job: sp.job, Checkpoint: sp.id, Operator: operator, Key: key}
		return nil, fmt.Errorf("%v: %w", loc, ErrNotFound)
	}
	f, err := os.Open(sp.path)
	if err != nil {
		return nil, fmt.Errorf("read savepoint: %w", err)
	}
	defer f.Close()
	return sp.read(f, operator, key, v, nil)
}

func (sp *savepoint) Scan(operator string, fn func(key string, value []byte) error) error {
	values := sp.values[operator]
	if len(values) == 0 {
		return nil
	}
	f, err := os.Open(sp.path)
	if err != nil {
		return fmt.Errorf("read savepoint: %w", err)
	}
	defer f.Close()
	var buf []byte
	for _, key := range slices.Sorted(maps.Keys(values)) {
		value, err := sp.read(f, operator, key, values[key], buf)
		if err != nil {
			return err
		}
		if err := fn(key, value); err != nil {
			return err
		}
		buf = value
	}
	return nil
}

// read reads and verifies one value, into buf if it is large enough.
func (sp *savepoint) read(f *os.File, operator, key string, v spValue, buf []byte) ([]byte, error) {
	if int64(cap(buf)) < v.size {
		buf = make([]byte, v.size)
	}
	buf = buf[:v.size]
	if _, err := f.ReadAt(buf, v.off); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, sp.corrupt(operator, key, "truncated")
		}
		return nil, fmt.Errorf("read savepoint: %w", err)
	}
	if checksum(buf) != v.crc {
		return nil, sp.corrupt(operator, key, "checksum mismatch")
	}
	return buf, nil
}
