package state

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Retention happens in two steps. A commit retires the completed
// checkpoints beyond Options.NumRetained by deleting their commit records
// in the same transaction as its own; from then on they are gone. Then a
// background collection deletes their index entries and every value that
// no remaining checkpoint refers to. The sweep at open removes what a crash
// left: index entries of checkpoints without a commit record, and values no
// completed checkpoint refers to.
//
// A value written by checkpoint O under operator/key is referred to by
// checkpoint R >= O when R's index entry for operator/key names origin O;
// the entry's size says how many of the value's chunks are in use.
//
// Collection is safe against concurrent writers: a writer can only come to
// refer to a value by reusing it from a completed checkpoint that refers to
// it, and that checkpoint is pinned, so it cannot retire, and it keeps the
// value alive.

// retiredLocked returns the completed checkpoints of job beyond
// NumRetained, counting the one that committing (if not nil) adds, except
// those pinned by writers other than committing.
func (s *store) retiredLocked(job string, committing *writer) []uint64 {
	ids := s.committed[job]
	extra := len(ids) - s.opts.NumRetained
	if committing != nil {
		extra++
	}
	var retired []uint64
	for _, id := range ids[:max(0, min(extra, len(ids)))] {
		// A checkpoint that a writer reuses from stays until the writer
		// ends. The committing writer's own references are in the index
		// committed with it.
		pins := s.pins[ckpt{job, id}]
		if committing != nil && committing.pinned[id] {
			pins--
		}
		if pins == 0 {
			retired = append(retired, id)
		}
	}
	return retired
}

func (s *store) dropLocked(job string, retired []uint64) {
	s.committed[job] = slices.DeleteFunc(s.committed[job], func(id uint64) bool {
		return slices.Contains(retired, id)
	})
}

// retire retires what writers no longer keep, outside a commit.
func (s *store) retire(job string) {
	s.mu.Lock()
	retired := s.retiredLocked(job, nil)
	if len(retired) == 0 {
		s.mu.Unlock()
		return
	}
	deletes := make([][]byte, len(retired))
	for i, id := range retired {
		deletes[i] = commitKey(job, id)
	}
	err := s.kv.update(nil, deletes)
	if err == nil {
		s.dropLocked(job, retired)
	}
	s.mu.Unlock()
	if err != nil {
		s.opts.Warn(fmt.Errorf("retire checkpoints %v of job %q: %w", retired, job, err))
		return
	}
	s.collectLater(job, retired)
}

// collectLater collects retired checkpoints in the background. Failures
// only leave garbage for the next sweep, so they go to Warn.
func (s *store) collectLater(job string, retired []uint64) {
	if len(retired) == 0 {
		return
	}
	s.collecting.Add(1)
	go func() {
		defer s.collecting.Done()
		if err := s.collect(job, retired); err != nil {
			s.opts.Warn(fmt.Errorf("delete retired checkpoints %v of job %q: %w", retired, job, err))
		}
	}()
}

// collect deletes the index of retired checkpoints and the values that no
// remaining checkpoint refers to.
func (s *store) collect(job string, retired []uint64) error {
	s.collectMu.Lock()
	defer s.collectMu.Unlock()
	s.mu.Lock()
	remaining := slices.Clone(s.committed[job])
	s.mu.Unlock()

	b := s.kv.batch()
	for _, id := range retired {
		err := s.kv.scan(indexPrefix(job, id), true, func(k, v []byte) error {
			if err := b.delete(slices.Clone(k)); err != nil {
				return err
			}
			_, _, op, key, ok := parseIndexKey(k)
			e, bad := unmarshalEntry(v)
			if !ok || bad != "" {
				return nil // its value, if any, is left to the next sweep
			}
			live, err := s.liveChunks(job, remaining, op, key, e.origin)
			if err != nil || live > 0 {
				return err
			}
			for c := range e.chunks() {
				if err := b.delete(dataKey(job, e.origin, op, key, c)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.cancel()
			return err
		}
	}
	return b.flush()
}

// liveChunks returns how many chunks of the value of operator/key written by
// checkpoint origin are referred to by one of the checkpoints ids of job:
// zero if the value is garbage. An unreadable index entry keeps every chunk,
// to be safe.
func (s *store) liveChunks(job string, ids []uint64, op, key string, origin uint64) (uint32, error) {
	for _, id := range ids {
		if id < origin {
			continue
		}
		var e entry
		var bad string
		err := s.kv.get(indexKey(job, id, op, key), func(v []byte) error {
			e, bad = unmarshalEntry(v)
			return nil
		})
		if errors.Is(err, errNoKey) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if bad != "" {
			return math.MaxUint32, nil
		}
		if e.origin == origin {
			return e.chunks(), nil
		}
	}
	return 0, nil
}

// sweep removes what interrupted commits and collections left behind. It
// runs before the store is shared, so it needs no locks.
func (s *store) sweep() error {
	b := s.kv.batch()
	err := s.kv.scan([]byte{tagIndex}, false, func(k, _ []byte) error {
		job, id, _, _, ok := parseIndexKey(k)
		if !ok || slices.Contains(s.committed[job], id) {
			return nil
		}
		return b.delete(slices.Clone(k))
	})
	if err != nil {
		b.cancel()
		return err
	}

	// Chunks of one value are adjacent: look it up once per value. Chunks
	// beyond its length are left from a replaced Put.
	var last struct {
		job, op, key string
		origin       uint64
		live         uint32
	}
	started := false
	err = s.kv.scan([]byte{tagData}, false, func(k, _ []byte) error {
		job, origin, op, key, chunk, ok := parseDataKey(k)
		if !ok {
			return nil
		}
		if !started || job != last.job || origin != last.origin || op != last.op || key != last.key {
			live, err := s.liveChunks(job, s.committed[job], op, key, origin)
			if err != nil {
				return err
			}
			last.job, last.origin, last.op, last.key, last.live = job, origin, op, key, live
			started = true
		}
		if chunk < last.live {
			return nil
		}
		return b.delete(slices.Clone(k))
	})
	if err != nil {
		b.cancel()
		return err
	}
	return b.flush()
}
