package state

import (
	"errors"
	"maps"
	"slices"
)

// Damage applies damage to the stored bytes of a value: the first chunk of
// key of operator as checkpoint id of job refers to it, or the commit record
// of the checkpoint when operator is "". damage returning nil deletes the
// bytes. It is for tests of corruption handling.
func Damage(s Store, job string, id uint64, operator, key string, damage func([]byte) []byte) error {
	st := s.(*store)
	k := commitKey(job, id)
	if operator != "" {
		loc := Location{Job: job, Checkpoint: id, Operator: operator, Key: key}
		e, err := st.entry(&loc)
		if err != nil {
			return err
		}
		k = dataKey(job, e.origin, operator, key, 0)
	}
	var raw []byte
	err := st.kv.get(k, func(v []byte) error {
		raw = slices.Clone(v)
		return nil
	})
	if err != nil {
		return err
	}
	if raw = damage(raw); raw == nil {
		return st.kv.update(nil, [][]byte{k})
	}
	return st.kv.update([]kvPair{{k, raw}}, nil)
}

// CountValues returns how many values s stores, so that tests can see
// garbage: values that no completed checkpoint refers to count, and so does
// each chunk beyond the length of the value that refers to it.
func CountValues(s Store) (int, error) {
	st := s.(*store)
	st.collecting.Wait()
	st.mu.Lock()
	committed := maps.Clone(st.committed)
	st.mu.Unlock()
	n := 0
	var last []byte
	var live uint32
	err := st.kv.scan([]byte{tagData}, false, func(k, _ []byte) error {
		job, origin, op, key, chunk, ok := parseDataKey(k)
		if !ok {
			return errors.New("malformed data key")
		}
		value := k[:len(k)-4] // without the chunk number
		if !slices.Equal(value, last) {
			n++
			last = slices.Clone(value)
			var err error
			if live, err = st.liveChunks(job, committed[job], op, key, origin); err != nil {
				return err
			}
		} else if chunk >= live {
			n++
		}
		return nil
	})
	return n, err
}
