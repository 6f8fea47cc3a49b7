package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
)

// checkpoint reads a completed checkpoint of a store.
type checkpoint struct {
	s         *store
	job       string
	id        uint64
	meta      Meta
	operators []string
}

var _ Checkpoint = (*checkpoint)(nil)

// open reads the commit record of checkpoint id of job and verifies the
// checkpoint: the index against the manifest, and every value against its
// checksums.
func (s *store) open(job string, id uint64) (*checkpoint, error) {
	cp, err := s.verify(job, id)
	return cp, s.vanished(job, id, err)
}

// vanished turns a verification error into ErrNotFound when retention
// deleted the checkpoint while it was being read: its commit record is
// deleted first, so by the time a value is seen missing, the store no longer
// lists the checkpoint.
func (s *store) vanished(job string, id uint64, err error) error {
	if !errors.Is(err, ErrCorrupt) {
		return err
	}
	s.mu.Lock()
	listed := slices.Contains(s.committed[job], id)
	s.mu.Unlock()
	if listed {
		return err
	}
	return fmt.Errorf("%v: %w", Location{Path: s.kv.path(), Job: job, Checkpoint: id}, ErrNotFound)
}

func (s *store) verify(job string, id uint64) (*checkpoint, error) {
	loc := Location{Path: s.kv.path(), Job: job, Checkpoint: id}
	var rec commitRecord
	var bad string
	err := s.kv.get(commitKey(job, id), func(v []byte) error {
		rec, bad = unmarshalCommit(v)
		return nil
	})
	switch {
	case errors.Is(err, errNoKey):
		return nil, &CorruptError{Location: loc, Reason: "commit record missing"}
	case err != nil:
		return nil, fmt.Errorf("%v: %w", loc, err)
	case bad != "":
		return nil, &CorruptError{Location: loc, Reason: bad}
	}

	cp := &checkpoint{s: s, job: job, id: id, meta: rec.meta}
	h := crc32.New(castagnoli)
	var n uint64
	err = s.kv.scan(indexPrefix(job, id), true, func(k, v []byte) error {
		h.Write(k)
		h.Write(v)
		n++
		_, _, op, key, ok := parseIndexKey(k)
		if !ok {
			return &CorruptError{Location: loc, Reason: fmt.Sprintf("malformed index key %q", k)}
		}
		if len(cp.operators) == 0 || cp.operators[len(cp.operators)-1] != op {
			cp.operators = append(cp.operators, op)
		}
		vloc := cp.loc(op, key)
		e, bad := unmarshalEntry(v)
		if bad != "" {
			return &CorruptError{Location: vloc, Reason: bad}
		}
		vloc.writtenBy(e.origin)
		return s.readValue(vloc, e, nil)
	})
	if err != nil {
		return nil, err
	}
	if n != rec.entries {
		return nil, &CorruptError{Location: loc, Reason: fmt.Sprintf("manifest lists %d values, index has %d", rec.entries, n)}
	}
	if h.Sum32() != rec.sum {
		return nil, &CorruptError{Location: loc, Reason: "index does not match manifest checksum"}
	}
	// Index order puts shorter operator names first (length prefix).
	slices.Sort(cp.operators)
	return cp, nil
}

// readValue reads and verifies the value described by e, passing it to fn
// (if not nil) chunk by chunk. Chunks are only valid during fn.
func (s *store) readValue(loc Location, e entry, fn func(part []byte)) error {
	n := e.chunks()
	reason := func(c uint32, format string, args ...any) string {
		r := fmt.Sprintf(format, args...)
		if n > 1 {
			r = fmt.Sprintf("chunk %d of %d: %s", c+1, n, r)
		}
		return r
	}
	var crc uint32
	for c := range n {
		want := e.chunkLen(c)
		err := s.kv.get(dataKey(loc.Job, e.origin, loc.Operator, loc.Key, c), func(raw []byte) error {
			if len(raw) != want+4 {
				return &CorruptError{Location: loc, Reason: reason(c, "%d bytes stored, want %d", len(raw), want+4)}
			}
			part := raw[:want]
			if checksum(part) != binary.LittleEndian.Uint32(raw[want:]) {
				return &CorruptError{Location: loc, Reason: reason(c, "checksum mismatch")}
			}
			crc = crc32.Update(crc, castagnoli, part)
			if fn != nil {
				fn(part)
			}
			return nil
		})
		switch {
		case errors.Is(err, errNoKey):
			return &CorruptError{Location: loc, Reason: reason(c, "value data missing")}
		case errors.Is(err, ErrCorrupt):
			return err
		case err != nil:
			return fmt.Errorf("%v: %w", loc, err)
		}
	}
	if crc != e.crc {
		return &CorruptError{Location: loc, Reason: "value does not match index checksum"}
	}
	return nil
}

func (c *checkpoint) loc(operator, key string) Location {
	return Location{Path: c.s.kv.path(), Job: c.job, Checkpoint: c.id, Operator: operator, Key: key}
}

func (c *checkpoint) Job() string         { return c.job }
func (c *checkpoint) ID() uint64          { return c.id }
func (c *checkpoint) Operators() []string { return slices.Clone(c.operators) }

func (c *checkpoint) Meta() Meta {
	m := c.meta
	m.Operators = slices.Clone(m.Operators)
	m.Props = maps.Clone(m.Props)
	return m
}

func (c *checkpoint) Get(operator, key string) ([]byte, error) {
	if err := c.s.enter(); err != nil {
		return nil, fmt.Errorf("%v: %w", c.loc(operator, key), err)
	}
	defer c.s.leave()

	loc := c.loc(operator, key)
	e, err := c.s.entry(&loc)
	if err != nil {
		return nil, err
	}
	value := make([]byte, 0, e.size)
	err = c.s.readValue(loc, e, func(part []byte) { value = append(value, part...) })
	if err != nil {
		return nil, c.s.vanished(c.job, c.id, err)
	}
	return value, nil
}

func (c *checkpoint) Scan(operator string, fn func(key string, value []byte) error) error {
	if err := c.s.enter(); err != nil {
		return fmt.Errorf("%v: %w", c.loc(operator, ""), err)
	}
	defer c.s.leave()

	prefix := indexOperatorPrefix(c.job, c.id, operator)
	var value []byte
	err := c.s.kv.scan(prefix, true, func(k, v []byte) error {
		loc := c.loc(operator, string(k[len(prefix):]))
		e, bad := unmarshalEntry(v)
		if bad != "" {
			return &CorruptError{Location: loc, Reason: bad}
		}
		loc.writtenBy(e.origin)
		value = value[:0]
		if err := c.s.readValue(loc, e, func(part []byte) { value = append(value, part...) }); err != nil {
			return err
		}
		return fn(loc.Key, value)
	})
	return c.s.vanished(c.job, c.id, err)
}
