package state

import (
	"slices"
	"strings"
	"sync"
)

// NewMemory returns a Store that keeps checkpoints in memory, for tests. It
// behaves like the Badger store (checksums, verification, retention), but
// nothing survives Close. It panics if opts are invalid.
func NewMemory(opts Options) Store {
	opts, err := opts.withDefaults()
	if err != nil {
		panic("state.NewMemory: " + err.Error())
	}
	s, err := newStore(&memKV{m: make(map[string][]byte)}, opts)
	if err != nil {
		panic("state.NewMemory: " + err.Error()) // an empty map cannot fail
	}
	return s
}

// memKV is a map. Stored slices are never modified, only replaced, so
// values can be handed out without holding the lock.
type memKV struct {
	mu sync.RWMutex
	m  map[string][]byte
}

func (m *memKV) get(key []byte, fn func(value []byte) error) error {
	m.mu.RLock()
	v, ok := m.m[string(key)]
	m.mu.RUnlock()
	if !ok {
		return errNoKey
	}
	return fn(v)
}

func (m *memKV) scan(prefix []byte, values bool, fn func(key, value []byte) error) error {
	m.mu.RLock()
	var keys []string
	for k := range m.m {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	m.mu.RUnlock()
	slices.Sort(keys)
	for _, k := range keys {
		var v []byte
		if values {
			m.mu.RLock()
			var ok bool
			v, ok = m.m[k]
			m.mu.RUnlock()
			if !ok {
				continue // deleted since the listing
			}
		}
		if err := fn([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

func (m *memKV) update(sets []kvPair, deletes [][]byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range sets {
		m.m[string(p.key)] = p.value
	}
	for _, k := range deletes {
		delete(m.m, string(k))
	}
	return nil
}

// batch writes straight through: the store never relies on a batch being
// invisible before flush.
func (m *memKV) batch() kvBatch { return memBatch{m} }
func (m *memKV) path() string   { return "" }
func (m *memKV) close() error   { return nil }

type memBatch struct{ m *memKV }

func (b memBatch) set(key, value []byte) error { return b.m.update([]kvPair{{key, value}}, nil) }
func (b memBatch) delete(key []byte) error     { return b.m.update(nil, [][]byte{key}) }
func (b memBatch) flush() error                { return nil }
func (b memBatch) cancel()                     {}
