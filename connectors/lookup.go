package connectors

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pipesql/pipesql/types"
)

// LookupSource is what a connector that supports lookup joins opens: it finds the rows
// of its table whose key columns equal a key, when the join asks (Flink's
// LookupTableSource). A lookup join calls it from one goroutine.
type LookupSource interface {
	// Lookup returns the rows (every physical column, in declaration order) whose
	// LookupConfig.Keys columns equal key, in that order; none is fine.
	Lookup(ctx context.Context, key types.Row) ([]types.Row, error)
	Close() error
}

// LookupConfig is the input of a LookupFactory.
type LookupConfig struct {
	TableInfo
	// Keys are the columns looked up by, in the order of the key rows.
	Keys     []string
	Settings map[string]string
	Log      Logger
	Clock    Clock
}

// LookupFactory opens a LookupSource of a table of one connector.
type LookupFactory func(ctx context.Context, cfg LookupConfig) (LookupSource, error)

var (
	lookupMu sync.RWMutex
	lookups  = map[string]LookupFactory{}
)

// RegisterLookup says that connector name supports lookup joins, opened by f. The
// connector registers it next to its Factory; a connector without one cannot be the
// dimension of a lookup join.
func RegisterLookup(name string, f LookupFactory) {
	lookupMu.Lock()
	defer lookupMu.Unlock()
	if _, dup := lookups[name]; dup {
		panic(fmt.Sprintf("connectors: lookup of %s registered twice", name))
	}
	lookups[name] = f
}

// LookupOf returns the lookup factory of connector name.
func LookupOf(name string) (LookupFactory, bool) {
	lookupMu.RLock()
	defer lookupMu.RUnlock()
	f, ok := lookups[name]
	return f, ok
}

// LookupCacheOptions configure a lookup cache with Flink's option names
// (lookup.cache = 'PARTIAL' and lookup.partial-cache.*).
type LookupCacheOptions struct {
	// MaxRows is how many keys the cache holds at most (lookup.partial-cache.max-rows);
	// the least recently used go first. 0 means no cache.
	MaxRows int
	// ExpireAfterWrite drops a key that long after it was looked up in the table;
	// ExpireAfterAccess that long after it was last read from the cache. 0 is never.
	ExpireAfterWrite, ExpireAfterAccess time.Duration
	// CacheMissing keeps keys without rows too (lookup.partial-cache.cache-missing-key).
	CacheMissing bool
}

// LookupCache is Flink's PARTIAL lookup cache: the rows of keys looked up lately, each
// forgotten after its expiry or when the cache is full. It is used by one goroutine.
type LookupCache struct {
	opts  LookupCacheOptions
	clock Clock
	m     map[string]*cacheEntry
	// an intrusive LRU list: head is the most recently used.
	head, tail *cacheEntry
}

type cacheEntry struct {
	key               string
	rows              []types.Row
	written, accessed time.Time
	prev, next        *cacheEntry
}

// NewLookupCache returns an empty cache; clock nil is the wall clock.
func NewLookupCache(opts LookupCacheOptions, clock Clock) *LookupCache {
	return &LookupCache{opts: opts, clock: ClockOr(clock), m: map[string]*cacheEntry{}}
}

// Get returns the cached rows of key and whether it was cached and fresh.
func (c *LookupCache) Get(key string) ([]types.Row, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	now := c.clock.Now()
	if (c.opts.ExpireAfterWrite > 0 && now.Sub(e.written) >= c.opts.ExpireAfterWrite) ||
		(c.opts.ExpireAfterAccess > 0 && now.Sub(e.accessed) >= c.opts.ExpireAfterAccess) {
		c.remove(e)
		return nil, false
	}
	e.accessed = now
	c.unlink(e)
	c.pushFront(e)
	return e.rows, true
}

// Put caches the rows of key, evicting the least recently used key when full.
func (c *LookupCache) Put(key string, rows []types.Row) {
	if c.opts.MaxRows <= 0 || (len(rows) == 0 && !c.opts.CacheMissing) {
		return
	}
	if e, ok := c.m[key]; ok {
		c.remove(e)
	}
	now := c.clock.Now()
	e := &cacheEntry{key: key, rows: rows, written: now, accessed: now}
	c.m[key] = e
	c.pushFront(e)
	for len(c.m) > c.opts.MaxRows {
		c.remove(c.tail)
	}
}

// Len is how many keys are cached.
func (c *LookupCache) Len() int { return len(c.m) }

func (c *LookupCache) remove(e *cacheEntry) {
	c.unlink(e)
	delete(c.m, e.key)
}

func (c *LookupCache) unlink(e *cacheEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else if c.head == e {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else if c.tail == e {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (c *LookupCache) pushFront(e *cacheEntry) {
	e.next = c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}
