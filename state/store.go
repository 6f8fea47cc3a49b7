package state

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// chunkSize bounds each stored piece of a value. A chunk plus its checksum
// stays under Badger's value threshold (1 MiB), so values live in Badger's
// LSM tree, where compaction reclaims deleted checkpoints. Values in the
// value log would only be reclaimed after compactions that a tree of small
// keys rarely triggers, and the log would grow with every checkpoint.
const chunkSize = 1<<20 - 1<<10

// store implements Store on any kv; Badger and memory differ only in kv.
type store struct {
	kv   kv
	opts Options

	mu        sync.Mutex
	closed    bool
	committed map[string][]uint64 // completed checkpoint ids per job, ascending
	writers   map[ckpt]*writer
	pins      map[ckpt]int // how many writers reuse from a checkpoint

	calls      sync.WaitGroup // calls in progress, for Close
	collecting sync.WaitGroup // background collections, for Close
	collectMu  sync.Mutex     // one collection at a time
}

type ckpt struct {
	job string
	id  uint64
}

var _ Store = (*store)(nil)

// newStore loads the completed checkpoints from kv and removes what
// unfinished commits and retention passes left behind.
func newStore(kv kv, opts Options) (*store, error) {
	s := &store{
		kv:        kv,
		opts:      opts,
		committed: make(map[string][]uint64),
		writers:   make(map[ckpt]*writer),
		pins:      make(map[ckpt]int),
	}
	err := kv.scan([]byte{tagCommit}, false, func(k, _ []byte) error {
		job, id, ok := parseCommitKey(k)
		if !ok {
			s.opts.Warn(fmt.Errorf("%s: ignoring malformed commit key %q", kv.path(), k))
			return nil
		}
		s.committed[job] = append(s.committed[job], id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load checkpoints: %w", err)
	}
	if err := s.sweep(); err != nil {
		return nil, fmt.Errorf("remove unfinished checkpoints: %w", err)
	}
	return s, nil
}

// enter registers a call, so that Close waits for it.
func (s *store) enter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.calls.Add(1)
	return nil
}

func (s *store) leave() { s.calls.Done() }

func (s *store) Begin(job string, id uint64) (Writer, error) {
	if job == "" {
		return nil, errors.New("begin checkpoint: empty job key")
	}
	if id == 0 {
		return nil, fmt.Errorf("begin checkpoint of job %q: checkpoint ids start at 1", job)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("begin checkpoint %d of job %q: %w", id, job, err)
	}
	defer s.leave()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNewLocked(job, id); err != nil {
		return nil, fmt.Errorf("begin checkpoint: %w", err)
	}
	c := ckpt{job, id}
	if s.writers[c] != nil {
		return nil, fmt.Errorf("begin checkpoint %d of job %q: already being written: %w", id, job, ErrStaleID)
	}
	w := &writer{
		s:       s,
		job:     job,
		id:      id,
		entries: make(map[opKey]entry),
		pinned:  make(map[uint64]bool),
		pending: make(map[string][]byte),
	}
	s.writers[c] = w
	return w, nil
}

func (s *store) checkNewLocked(job string, id uint64) error {
	ids := s.committed[job]
	if n := len(ids); n > 0 && id <= ids[n-1] {
		return fmt.Errorf("checkpoint %d of job %q is not newer than completed checkpoint %d: %w",
			id, job, ids[n-1], ErrStaleID)
	}
	return nil
}

func (s *store) Completed(job string) ([]uint64, error) {
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("list checkpoints of job %q: %w", job, err)
	}
	defer s.leave()
	return s.completed(job), nil
}

// completed returns job's completed ids, newest first.
func (s *store) completed(job string) []uint64 {
	s.mu.Lock()
	ids := slices.Clone(s.committed[job])
	s.mu.Unlock()
	slices.Reverse(ids)
	return ids
}

func (s *store) Open(job string, id uint64) (Checkpoint, error) {
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("open checkpoint %d of job %q: %w", id, job, err)
	}
	defer s.leave()
	return s.open(job, id)
}

func (s *store) Latest(job string) (Checkpoint, error) {
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("latest checkpoint of job %q: %w", job, err)
	}
	defer s.leave()

	// A checkpoint that retention deletes while we look means a newer one
	// completed meanwhile: list again to find it.
	for range 3 {
		var corrupt []error
		deleted := false
		for _, id := range s.completed(job) {
			cp, err := s.open(job, id)
			switch {
			case err == nil:
				for _, err := range corrupt {
					s.opts.Warn(fmt.Errorf("latest checkpoint: skipped a newer one: %w", err))
				}
				return cp, nil
			case errors.Is(err, ErrCorrupt):
				corrupt = append(corrupt, err)
			case errors.Is(err, ErrNotFound):
				deleted = true
			default:
				return nil, fmt.Errorf("latest checkpoint of job %q: %w", job, err)
			}
		}
		if len(corrupt) > 0 && !deleted {
			return nil, fmt.Errorf("latest checkpoint of job %q: none of %d completed checkpoints passes verification; the newest: %w",
				job, len(corrupt), corrupt[0])
		}
		if !deleted {
			break
		}
	}
	return nil, fmt.Errorf("latest checkpoint of job %q: %w", job, ErrNotFound)
}

func (s *store) Path() string { return s.kv.path() }

func (s *store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	writers := make([]*writer, 0, len(s.writers))
	for _, w := range s.writers {
		writers = append(writers, w)
	}
	s.mu.Unlock()

	s.calls.Wait()
	s.collecting.Wait()
	// No writer call can be running now, and none can start.
	for _, w := range writers {
		if w.batch != nil {
			w.batch.cancel()
		}
	}
	return s.kv.close()
}

// finish forgets a writer that committed or aborted, and reports whether
// it kept checkpoints from retirement.
func (s *store) finish(w *writer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writers, ckpt{w.job, w.id})
	for from := range w.pinned {
		c := ckpt{w.job, from}
		if s.pins[c]--; s.pins[c] <= 0 {
			delete(s.pins, c)
		}
	}
	return len(w.pinned) > 0
}

// pin keeps checkpoint from of job from being deleted while w reuses it.
func (s *store) pin(w *writer, from uint64) error {
	if w.pinned[from] {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.committed[w.job], from) {
		return fmt.Errorf("%v: %w", Location{Path: s.kv.path(), Job: w.job, Checkpoint: from}, ErrNotFound)
	}
	s.pins[ckpt{w.job, from}]++
	w.pinned[from] = true
	return nil
}

// deletePrefixes deletes every key under the prefixes.
func (s *store) deletePrefixes(prefixes ...[]byte) error {
	b := s.kv.batch()
	for _, p := range prefixes {
		err := s.kv.scan(p, false, func(k, _ []byte) error {
			return b.delete(slices.Clone(k))
		})
		if err != nil {
			b.cancel()
			return err
		}
	}
	return b.flush()
}
