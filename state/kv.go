package state

import "errors"

// kv is the ordered key-value storage under a store: Badger or a map.
// Commits are atomic through update; bulk data too big for one
// transaction goes through batches.
type kv interface {
	// get calls fn with the value of key, or returns errNoKey. value is
	// only valid during fn.
	get(key []byte, fn func(value []byte) error) error
	// scan calls fn for each key with prefix, in key order, with its value
	// when values is set (nil otherwise). key and value are only valid
	// during fn.
	scan(prefix []byte, values bool, fn func(key, value []byte) error) error
	// update writes sets and deletes in one atomic, durable transaction.
	// If they do not fit in one, it writes nothing and returns errTooBig.
	update(sets []kvPair, deletes [][]byte) error
	// batch returns a writer for many keys, neither atomic nor visible in
	// any particular order until flush.
	batch() kvBatch
	// path names the storage in errors; empty for memory.
	path() string
	close() error
}

// kvBatch writes many keys. It owns the slices passed to it.
type kvBatch interface {
	set(key, value []byte) error
	delete(key []byte) error
	// flush returns once everything is written durably. The batch cannot
	// be used afterwards.
	flush() error
	// cancel drops what was not written yet.
	cancel()
}

type kvPair struct{ key, value []byte }

var (
	errNoKey  = errors.New("no such key")
	errTooBig = errors.New("too big for one transaction")
)
