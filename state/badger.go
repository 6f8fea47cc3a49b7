package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// OpenBadger opens (creating if needed) a Store in Badger directory dir.
// Only one process may have a directory open. Opening removes what an
// interrupted commit or retention pass left behind.
//
// Writes are synced to disk: a Commit that returned survives a crash of the
// machine. Badger errors are reported as text; no Badger type leaves this
// package.
func OpenBadger(dir string, opts Options) (Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("open state in %s: %w", dir, err)
	}
	bopts := badger.DefaultOptions(dir).
		WithLogger(badgerLogger{opts.Warn}).
		WithSyncWrites(true).
		WithNumVersionsToKeep(1).
		// Small tables and logs keep a store on a test's temp dir small and
		// fast to open; checkpoints are written in chunks well below these.
		WithMemTableSize(16 << 20).
		WithValueLogFileSize(64 << 20).
		// Chunks (see chunkSize) stay below this, so values live in the LSM
		// tree where compaction reclaims them.
		WithValueThreshold(1 << 20).
		// Checkpoint data is mostly serialized bitmaps that compress poorly;
		// without compression Badger needs no block cache.
		WithCompression(options.None).
		WithBlockCacheSize(0).
		WithNumCompactors(2).
		WithMetricsEnabled(false).
		// Commits are serialized by the store itself.
		WithDetectConflicts(false)
	if err := removeEmptyMemtables(dir); err != nil {
		return nil, fmt.Errorf("open state in %s: %w", dir, err)
	}
	db, err := badger.Open(bopts)
	if err != nil {
		return nil, fmt.Errorf("open state in %s: %v", dir, err)
	}
	s, err := newStore(&badgerKV{db: db, dir: dir}, opts)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open state in %s: %w", dir, err)
	}
	return s, nil
}

// removeEmptyMemtables deletes the memtable files of length zero in dir. A process
// killed right after Badger created a memtable file, before it sized the file, leaves
// it empty, and Badger's Open then fails on it ("Create a new file",
// dgraph-io/badger#2207). A file of length zero holds no entry, so nothing is lost.
func removeEmptyMemtables(dir string) error {
	mems, err := filepath.Glob(filepath.Join(dir, "*.mem"))
	if err != nil {
		return err
	}
	for _, m := range mems {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			if err := os.Remove(m); err != nil {
				return err
			}
		}
	}
	return nil
}

type badgerKV struct {
	db  *badger.DB
	dir string
}

// flatten turns a Badger error into text, so that Badger types stay here.
func flatten(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(err.Error())
}

func (b *badgerKV) get(key []byte, fn func(value []byte) error) error {
	var fnErr error
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			fnErr = fn(v)
			return fnErr
		})
	})
	switch {
	case fnErr != nil:
		return fnErr
	case errors.Is(err, badger.ErrKeyNotFound):
		return errNoKey
	}
	return flatten(err)
}

func (b *badgerKV) scan(prefix []byte, values bool, fn func(key, value []byte) error) error {
	var fnErr error
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if !values {
				if fnErr = fn(item.Key(), nil); fnErr != nil {
					return fnErr
				}
				continue
			}
			err := item.Value(func(v []byte) error {
				fnErr = fn(item.Key(), v)
				return fnErr
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	return flatten(err)
}

func (b *badgerKV) update(sets []kvPair, deletes [][]byte) error {
	err := b.db.Update(func(txn *badger.Txn) error {
		for _, p := range sets {
			if err := txn.Set(p.key, p.value); err != nil {
				return err
			}
		}
		for _, k := range deletes {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, badger.ErrTxnTooBig) {
		return errTooBig
	}
	return flatten(err)
}

func (b *badgerKV) batch() kvBatch { return &badgerBatch{wb: b.db.NewWriteBatch()} }
func (b *badgerKV) path() string   { return b.dir }
func (b *badgerKV) close() error   { return flatten(b.db.Close()) }

// badgerBatch wraps a WriteBatch, which splits into as many transactions as
// needed and commits them in the background.
type badgerBatch struct {
	wb   *badger.WriteBatch
	done bool
}

func (b *badgerBatch) set(key, value []byte) error { return flatten(b.wb.Set(key, value)) }
func (b *badgerBatch) delete(key []byte) error     { return flatten(b.wb.Delete(key)) }

func (b *badgerBatch) flush() error {
	b.done = true
	return flatten(b.wb.Flush())
}

func (b *badgerBatch) cancel() {
	if !b.done {
		b.done = true
		b.wb.Cancel()
	}
}

// badgerLogger passes Badger's errors to Options.Warn and drops the rest.
type badgerLogger struct{ warn func(error) }

func (l badgerLogger) Errorf(format string, args ...any) {
	l.warn(fmt.Errorf("badger: %s", strings.TrimSpace(fmt.Sprintf(format, args...))))
}
func (badgerLogger) Warningf(string, ...any) {}
func (badgerLogger) Infof(string, ...any)    {}
func (badgerLogger) Debugf(string, ...any)   {}
