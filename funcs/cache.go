package funcs

import "sync"

// boundedCache remembers compiled forms (regular expressions, date layouts, zones) of
// arguments that vary per row but usually take few values. Past cacheSize entries it
// starts over rather than grow without bound on a column of distinct patterns.
type boundedCache[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

const cacheSize = 256

func (c *boundedCache[V]) get(key string, build func(string) (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build(key)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheSize {
		c.m = make(map[string]V)
	}
	c.m[key] = v
	c.mu.Unlock()
	return v, nil
}
