package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// A checkpoint whose data and index stay under these limits is committed in
// one transaction together with its commit record. They are well under
// Badger's transaction limits (15% of the 16 MiB memtable, and about as
// many bytes per entry as a small index entry takes).
const (
	directBytes   = 1 << 20
	directEntries = 4 << 10
)

// writer keeps what is put in memory while it is small, and commits it in
// the same transaction as the commit record. Past directBytes it spills:
// values stream into data keys as they are put, and at Commit the index is
// written and made durable before the commit record is written. Either way
// the checkpoint becomes visible only with its commit record; if the
// process dies first, the next open removes the leftovers.
type writer struct {
	s       *store
	job     string
	id      uint64
	entries map[opKey]entry
	pinned  map[uint64]bool // checkpoints reused from
	done    bool
	failed  error // a storage error that may have left a value half written

	pending      map[string][]byte // data and index keys not yet stored
	pendingBytes int
	spilled      bool    // keys go to batch instead of pending
	batch        kvBatch // nil when there is nothing to flush
}

type opKey struct{ op, key string }

var _ Writer = (*writer)(nil)

func (w *writer) start(what string) error {
	err := ErrClosed
	if !w.done {
		err = w.s.enter()
	}
	if err != nil {
		return fmt.Errorf("%s checkpoint %d of job %q: %w", what, w.id, w.job, err)
	}
	return nil
}

func (w *writer) Put(operator, key string, value []byte) error {
	if operator == "" {
		return fmt.Errorf("put key %q in checkpoint %d of job %q: empty operator", key, w.id, w.job)
	}
	if err := w.start("put"); err != nil {
		return err
	}
	defer w.s.leave()

	e := entry{origin: w.id, size: uint64(len(value)), chunkSize: chunkSize, crc: checksum(value)}
	for c := range e.chunks() {
		part := value[int(c)*chunkSize:][:e.chunkLen(c)]
		buf := make([]byte, len(part), len(part)+4)
		copy(buf, part)
		buf = binary.LittleEndian.AppendUint32(buf, checksum(part))
		if err := w.write(dataKey(w.job, w.id, operator, key, c), buf); err != nil {
			return w.fail("put", operator, key, err)
		}
	}
	if err := w.replace(opKey{operator, key}, e); err != nil {
		return w.fail("put", operator, key, err)
	}
	return nil
}

func (w *writer) Reuse(operator, key string, from uint64) error {
	if err := w.start("reuse"); err != nil {
		return err
	}
	defer w.s.leave()

	if from >= w.id {
		return w.wrap("reuse", operator, key, fmt.Errorf("checkpoint %d is not older", from))
	}
	if err := w.s.pin(w, from); err != nil {
		return w.wrap("reuse", operator, key, err)
	}
	loc := Location{Path: w.s.kv.path(), Job: w.job, Checkpoint: from, Operator: operator, Key: key}
	e, err := w.s.entry(&loc)
	if err != nil {
		return w.wrap("reuse", operator, key, err)
	}
	if err := w.replace(opKey{operator, key}, e); err != nil {
		return w.fail("reuse", operator, key, err)
	}
	return nil
}

// replace records e for k, removing chunks of an earlier Put of k that e
// does not overwrite.
func (w *writer) replace(k opKey, e entry) error {
	old, ok := w.entries[k]
	w.entries[k] = e
	if !ok || old.origin != w.id {
		return nil
	}
	first := uint32(0)
	if e.origin == w.id {
		first = e.chunks()
	}
	for c := first; c < old.chunks(); c++ {
		if err := w.remove(dataKey(w.job, w.id, k.op, k.key, c)); err != nil {
			return err
		}
	}
	return nil
}

// write stores key and value, keeping them pending while they are small.
func (w *writer) write(key, value []byte) error {
	if !w.spilled {
		old, ok := w.pending[string(key)]
		size := w.pendingBytes + len(key) + len(value)
		if ok {
			size -= len(key) + len(old)
		}
		if size <= directBytes && len(w.pending) < directEntries {
			w.pending[string(key)] = value
			w.pendingBytes = size
			return nil
		}
		if err := w.spill(); err != nil {
			return err
		}
	}
	return w.openBatch().set(key, value)
}

func (w *writer) openBatch() kvBatch {
	if w.batch == nil {
		w.batch = w.s.kv.batch()
	}
	return w.batch
}

func (w *writer) remove(key []byte) error {
	if !w.spilled {
		if old, ok := w.pending[string(key)]; ok {
			w.pendingBytes -= len(key) + len(old)
			delete(w.pending, string(key))
		}
		return nil
	}
	return w.openBatch().delete(key)
}

// spill moves pending keys to a batch, which stores them from now on.
func (w *writer) spill() error {
	w.spilled = true
	for k, v := range w.pending {
		if err := w.openBatch().set([]byte(k), v); err != nil {
			return err
		}
	}
	w.pending, w.pendingBytes = nil, 0
	return nil
}

func (w *writer) wrap(what, operator, key string, err error) error {
	return fmt.Errorf("%s operator %q key %q in checkpoint %d of job %q: %w", what, operator, key, w.id, w.job, err)
}

// fail wraps a storage error, after which the writer can only abort.
func (w *writer) fail(what, operator, key string, err error) error {
	err = w.wrap(what, operator, key, err)
	if w.failed == nil {
		w.failed = err
	}
	return err
}

func (w *writer) Commit(meta Meta) error {
	if err := w.start("commit"); err != nil {
		return err
	}
	defer w.s.leave()
	w.done = true

	var retired []uint64
	err := w.failed
	if err == nil {
		retired, err = w.commit(meta)
	}
	if err != nil {
		w.discard()
		if w.s.finish(w) {
			w.s.retire(w.job)
		}
		return fmt.Errorf("commit checkpoint %d of job %q: %w", w.id, w.job, err)
	}
	w.s.finish(w)
	w.s.collectLater(w.job, retired)
	return nil
}

// commit stores the index and the commit record, deleting in the same
// transaction the commit records of the checkpoints that this one retires,
// which it returns.
func (w *writer) commit(meta Meta) ([]uint64, error) {
	if meta.Created.IsZero() {
		meta.Created = w.s.opts.Now()
	}
	type indexed struct{ key, value []byte }
	index := make([]indexed, 0, len(w.entries))
	for k, e := range w.entries {
		index = append(index, indexed{indexKey(w.job, w.id, k.op, k.key), e.marshal()})
	}
	slices.SortFunc(index, func(a, b indexed) int { return bytes.Compare(a.key, b.key) })

	// The manifest hashes the index in key order, which is how verification
	// reads it back.
	h := crc32.New(castagnoli)
	for _, x := range index {
		h.Write(x.key)
		h.Write(x.value)
		if err := w.write(x.key, x.value); err != nil {
			return nil, err
		}
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	rec := commitRecord{meta: meta, entries: uint64(len(index)), sum: h.Sum32()}
	commit := kvPair{commitKey(w.job, w.id), rec.marshal()}

	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNewLocked(w.job, w.id); err != nil {
		return nil, err
	}
	retired := s.retiredLocked(w.job, w)
	deletes := make([][]byte, len(retired))
	for i, id := range retired {
		deletes[i] = commitKey(w.job, id)
	}
	sets := make([]kvPair, 0, len(w.pending)+1)
	for k, v := range w.pending {
		sets = append(sets, kvPair{[]byte(k), v})
	}
	err := s.kv.update(append(sets, commit), deletes)
	if errors.Is(err, errTooBig) {
		// More keys than a transaction holds after all: store them first.
		if err := w.spill(); err != nil {
			return nil, err
		}
		if err := w.flush(); err != nil {
			return nil, err
		}
		err = s.kv.update([]kvPair{commit}, deletes)
	}
	if err != nil {
		return nil, err
	}
	s.committed[w.job] = append(s.committed[w.job], w.id)
	s.dropLocked(w.job, retired)
	return retired, nil
}

// flush waits until everything spilled is stored durably.
func (w *writer) flush() error {
	if w.batch == nil {
		return nil
	}
	err := w.batch.flush()
	w.batch = nil
	return err
}

func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	if err := w.start("abort"); err != nil {
		return err
	}
	defer w.s.leave()
	w.done = true
	w.discard()
	if w.s.finish(w) {
		w.s.retire(w.job)
	}
	return nil
}

// discard removes whatever the writer stored. A failure only leaves
// invisible garbage behind, which the next open removes.
func (w *writer) discard() {
	w.pending = nil
	if w.batch != nil {
		w.batch.cancel()
		w.batch = nil
	}
	if !w.spilled {
		return
	}
	err := w.s.deletePrefixes(dataPrefix(w.job, w.id), indexPrefix(w.job, w.id))
	if err != nil {
		w.s.opts.Warn(fmt.Errorf("discard checkpoint %d of job %q: %w", w.id, w.job, err))
	}
}

// entry reads the index entry at loc and sets loc.Origin.
func (s *store) entry(loc *Location) (entry, error) {
	var e entry
	var bad string
	err := s.kv.get(indexKey(loc.Job, loc.Checkpoint, loc.Operator, loc.Key), func(v []byte) error {
		e, bad = unmarshalEntry(v)
		return nil
	})
	switch {
	case errors.Is(err, errNoKey):
		return entry{}, fmt.Errorf("%v: %w", *loc, ErrNotFound)
	case err != nil:
		return entry{}, fmt.Errorf("%v: %w", *loc, err)
	case bad != "":
		return entry{}, &CorruptError{Location: *loc, Reason: bad}
	}
	loc.writtenBy(e.origin)
	return e, nil
}
