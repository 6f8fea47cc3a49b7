// Package statetest checks that a state.Store behaves as package state
// documents, the way testing/fstest checks an fs.FS. Every Store
// implementation runs the same Suite:
//
//	func TestBadger(t *testing.T) {
//		statetest.Suite{
//			Open: func(t *testing.T, dir string, opts state.Options) (state.Store, error) {
//				return state.OpenBadger(dir, opts)
//			},
//			Persistent: true,
//		}.Run(t)
//	}
package statetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/state"
)

// Suite describes the Store implementation under test.
type Suite struct {
	// Open opens the store kept in dir, an empty directory from t.TempDir
	// the first time. The suite closes every store it opens. Required.
	Open func(t *testing.T, dir string, opts state.Options) (state.Store, error)

	// Persistent says that a store opened again on dir after Close sees what
	// was committed before, and that its errors name dir as Location.Path.
	// It enables the reopen tests.
	Persistent bool

	// Damage, if set, enables the corruption tests. It applies damage to the
	// stored bytes of the value of key of operator in checkpoint id of job,
	// or to the checkpoint's own record when operator is "". damage
	// returning nil means the bytes are deleted.
	Damage func(s state.Store, job string, id uint64, operator, key string, damage func([]byte) []byte) error

	// CountValues, if set, counts the values a store holds, referenced or
	// not, so that the suite can check that nothing is left behind.
	CountValues func(s state.Store) (int, error)
}

// Run runs the suite as subtests of t.
func (s Suite) Run(t *testing.T) {
	t.Run("Commit", s.testCommit)
	t.Run("Keys", s.testKeys)
	t.Run("Uncommitted", s.testUncommitted)
	t.Run("Abort", s.testAbort)
	t.Run("StaleID", s.testStaleID)
	t.Run("Retention", s.testRetention)
	t.Run("Incremental", s.testIncremental)
	t.Run("ReuseKeepsSource", s.testReuseKeepsSource)
	t.Run("Reopen", s.testReopen)
	t.Run("Corrupt", s.testCorrupt)
	t.Run("Large", s.testLarge)
	t.Run("ConcurrentReaders", s.testConcurrentReaders)
	t.Run("ConcurrentJobs", s.testConcurrentJobs)
	t.Run("Closed", s.testClosed)
}

// contents is what a checkpoint holds: operator -> key -> value.
type contents map[string]map[string]string

// warnings collects what a store passes to Options.Warn.
type warnings struct {
	mu   sync.Mutex
	errs []error
}

func (w *warnings) add(err error) {
	w.mu.Lock()
	w.errs = append(w.errs, err)
	w.mu.Unlock()
}

func (w *warnings) take() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	errs := w.errs
	w.errs = nil
	return errs
}

var epoch = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// store is a store under test with the directory it lives in.
type store struct {
	state.Store
	dir  string
	warn *warnings
}

// open opens a store on a new directory.
func (s Suite) open(t *testing.T, retained int) *store {
	return s.reopen(t, t.TempDir(), retained)
}

func (s Suite) reopen(t *testing.T, dir string, retained int) *store {
	t.Helper()
	w := &warnings{}
	opts := state.Options{NumRetained: retained, Warn: w.add, Now: func() time.Time { return epoch }}
	st, err := s.Open(t, dir, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &store{Store: st, dir: dir, warn: w}
}

func (s Suite) countValues(t *testing.T, st *store, want int) {
	t.Helper()
	if s.CountValues == nil {
		return
	}
	n, err := s.CountValues(st.Store)
	if err != nil {
		t.Fatalf("count values: %v", err)
	}
	if n != want {
		t.Errorf("store holds %d values, want %d", n, want)
	}
}

func begin(t *testing.T, st state.Store, job string, id uint64) state.Writer {
	t.Helper()
	w, err := st.Begin(job, id)
	if err != nil {
		t.Fatalf("Begin(%q, %d): %v", job, id, err)
	}
	return w
}

func put(t *testing.T, w state.Writer, c contents) {
	t.Helper()
	for op, kv := range c {
		for k, v := range kv {
			if err := w.Put(op, k, []byte(v)); err != nil {
				t.Fatalf("Put(%q, %q): %v", op, k, err)
			}
		}
	}
}

func reuse(t *testing.T, w state.Writer, op, key string, from uint64) {
	t.Helper()
	if err := w.Reuse(op, key, from); err != nil {
		t.Fatalf("Reuse(%q, %q, %d): %v", op, key, from, err)
	}
}

func commit(t *testing.T, w state.Writer, meta state.Meta) {
	t.Helper()
	if err := w.Commit(meta); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// write commits checkpoint id of job holding c.
func write(t *testing.T, st state.Store, job string, id uint64, c contents) {
	t.Helper()
	w := begin(t, st, job, id)
	put(t, w, c)
	commit(t, w, state.Meta{Plan: "plan"})
}

// generation returns distinct contents for checkpoint id.
func generation(id uint64) contents {
	return contents{
		"agg":    {"w1": fmt.Sprint("a", id), "w2": fmt.Sprint("b", id)},
		"source": {"p0": fmt.Sprint(100 * id)},
	}
}

func count(c contents) int {
	n := 0
	for _, kv := range c {
		n += len(kv)
	}
	return n
}

// check verifies that cp holds exactly want, through Operators, Scan and Get.
func check(t *testing.T, cp state.Checkpoint, want contents) {
	t.Helper()
	ops := slices.Sorted(maps.Keys(want))
	if got := cp.Operators(); !slices.Equal(got, ops) {
		t.Errorf("checkpoint %d: Operators() = %q, want %q", cp.ID(), got, ops)
	}
	for _, op := range ops {
		wantKeys := slices.Sorted(maps.Keys(want[op]))
		var keys []string
		err := cp.Scan(op, func(key string, value []byte) error {
			keys = append(keys, key)
			if string(value) != want[op][key] {
				t.Errorf("checkpoint %d: Scan(%q) key %q = %q, want %q", cp.ID(), op, key, value, want[op][key])
			}
			return nil
		})
		if err != nil {
			t.Errorf("checkpoint %d: Scan(%q): %v", cp.ID(), op, err)
		}
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("checkpoint %d: Scan(%q) keys = %q, want %q", cp.ID(), op, keys, wantKeys)
		}
		for _, k := range wantKeys {
			v, err := cp.Get(op, k)
			if err != nil || string(v) != want[op][k] {
				t.Errorf("checkpoint %d: Get(%q, %q) = %q, %v; want %q", cp.ID(), op, k, v, err, want[op][k])
			}
		}
	}
}

func latest(t *testing.T, st state.Store, job string, id uint64) state.Checkpoint {
	t.Helper()
	cp, err := st.Latest(job)
	if err != nil {
		t.Fatalf("Latest(%q): %v", job, err)
	}
	if cp.ID() != id || cp.Job() != job {
		t.Fatalf("Latest(%q) = checkpoint %d of job %q, want %d", job, cp.ID(), cp.Job(), id)
	}
	return cp
}

func completed(t *testing.T, st state.Store, job string, want ...uint64) {
	t.Helper()
	ids, err := st.Completed(job)
	if err != nil {
		t.Fatalf("Completed(%q): %v", job, err)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("Completed(%q) = %v, want %v", job, ids, want)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one wrapping %v", what, err, target)
	}
}

func (s Suite) testCommit(t *testing.T) {
	st := s.open(t, 1)
	_, err := st.Latest("dau")
	wantErr(t, "Latest of a new job", err, state.ErrNotFound)
	completed(t, st, "dau")

	w := begin(t, st, "dau", 1)
	put(t, w, generation(1))
	meta := state.Meta{
		Plan:      "fp-1",
		Operators: []state.Operator{{ID: "agg", Desc: "count distinct v1"}, {ID: "source", Desc: "kafka offsets"}},
		Props:     map[string]string{"version": "0.1"},
	}
	commit(t, w, meta)

	cp := latest(t, st, "dau", 1)
	check(t, cp, generation(1))
	got := cp.Meta()
	meta.Created = epoch
	if got.Plan != meta.Plan || !got.Created.Equal(epoch) || !slices.Equal(got.Operators, meta.Operators) ||
		!maps.Equal(got.Props, meta.Props) {
		t.Errorf("Meta() = %+v, want %+v", got, meta)
	}
	completed(t, st, "dau", 1)

	cp, err = st.Open("dau", 1)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	check(t, cp, generation(1))
	_, err = cp.Get("agg", "nope")
	wantErr(t, "Get of a missing key", err, state.ErrNotFound)
	_, err = st.Open("dau", 2)
	wantErr(t, "Open of a missing checkpoint", err, state.ErrNotFound)
	_, err = st.Latest("other")
	wantErr(t, "Latest of another job", err, state.ErrNotFound)

	// A zero Created is filled in; a set one is kept.
	created := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	w = begin(t, st, "dau", 2)
	commit(t, w, state.Meta{Created: created})
	if got := latest(t, st, "dau", 2).Meta().Created; !got.Equal(created) {
		t.Errorf("Created = %v, want %v", got, created)
	}
}

func (s Suite) testKeys(t *testing.T) {
	st := s.open(t, 1)
	// Prefixes of one another, binary bytes and empty strings must not mix.
	c := contents{
		"a":  {"": "empty key", "k": "", "k\x00": "nul", "\xff\x00\x01": "binary"},
		"ab": {"k": "other operator"},
		"b":  {"kk": "x"},
	}
	write(t, st, "j", 1, c)
	write(t, st, "j\x00", 5, contents{"a": {"k": "other job"}})
	write(t, st, "jj", 3, contents{"a": {"k": "third job"}})
	check(t, latest(t, st, "j", 1), c)
	check(t, latest(t, st, "j\x00", 5), contents{"a": {"k": "other job"}})
	check(t, latest(t, st, "jj", 3), contents{"a": {"k": "third job"}})
	completed(t, st, "j", 1)

	w := begin(t, st, "j", 2)
	if err := w.Put("", "k", nil); err == nil {
		t.Error("Put with an empty operator: no error")
	}
	// A later Put of the same key replaces the earlier one, also when the
	// earlier value was larger.
	put(t, w, contents{"a": {"k": string(make([]byte, 3<<20))}})
	put(t, w, contents{"a": {"k": "short"}})
	commit(t, w, state.Meta{})
	check(t, latest(t, st, "j", 2), contents{"a": {"k": "short"}})
	s.countValues(t, st, 1+1+1)
}

func (s Suite) testUncommitted(t *testing.T) {
	st := s.open(t, 1)
	write(t, st, "dau", 1, generation(1))
	w := begin(t, st, "dau", 2)
	put(t, w, generation(2))
	check(t, latest(t, st, "dau", 1), generation(1))
	completed(t, st, "dau", 1)
	_, err := st.Open("dau", 2)
	wantErr(t, "Open of an uncommitted checkpoint", err, state.ErrNotFound)
	commit(t, w, state.Meta{})
	check(t, latest(t, st, "dau", 2), generation(2))
}

func (s Suite) testAbort(t *testing.T) {
	st := s.open(t, 1)
	write(t, st, "dau", 1, generation(1))
	w := begin(t, st, "dau", 2)
	put(t, w, generation(2))
	reuse(t, w, "agg", "w1", 1)
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}
	wantErr(t, "Put after Abort", w.Put("agg", "w1", nil), state.ErrClosed)
	wantErr(t, "Commit after Abort", w.Commit(state.Meta{}), state.ErrClosed)
	check(t, latest(t, st, "dau", 1), generation(1))
	completed(t, st, "dau", 1)
	s.countValues(t, st, count(generation(1)))

	// The id is free again.
	write(t, st, "dau", 2, generation(2))
	check(t, latest(t, st, "dau", 2), generation(2))
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after the id was committed again: %v", err)
	}
	check(t, latest(t, st, "dau", 2), generation(2))
}

func (s Suite) testStaleID(t *testing.T) {
	st := s.open(t, 1)
	if _, err := st.Begin("dau", 0); err == nil {
		t.Error("Begin with id 0: no error")
	}
	if _, err := st.Begin("", 1); err == nil {
		t.Error("Begin with an empty job: no error")
	}
	w1 := begin(t, st, "dau", 1)
	_, err := st.Begin("dau", 1)
	wantErr(t, "Begin of an id being written", err, state.ErrStaleID)
	write(t, st, "dau", 2, generation(2))
	put(t, w1, generation(1))
	wantErr(t, "Commit older than the latest", w1.Commit(state.Meta{}), state.ErrStaleID)
	check(t, latest(t, st, "dau", 2), generation(2))
	_, err = st.Begin("dau", 2)
	wantErr(t, "Begin of a completed id", err, state.ErrStaleID)
	// Other jobs count their own ids.
	write(t, st, "other", 1, generation(1))
	s.countValues(t, st, 2*count(generation(1)))
}

func (s Suite) testRetention(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3} {
		t.Run(fmt.Sprint("NumRetained=", n), func(t *testing.T) {
			st := s.open(t, n)
			for id := uint64(1); id <= 5; id++ {
				write(t, st, "dau", id, generation(id))
			}
			kept := max(n, 1)
			var want []uint64
			for id := uint64(5); id > uint64(5-kept); id-- {
				want = append(want, id)
				cp, err := st.Open("dau", id)
				if err != nil {
					t.Fatalf("Open(%d): %v", id, err)
				}
				check(t, cp, generation(id))
			}
			completed(t, st, "dau", want...)
			_, err := st.Open("dau", uint64(5-kept))
			wantErr(t, "Open of a deleted checkpoint", err, state.ErrNotFound)
			s.countValues(t, st, kept*count(generation(1)))
		})
	}
}

func (s Suite) testIncremental(t *testing.T) {
	st := s.open(t, 1)
	write(t, st, "dau", 1, contents{"agg": {"w1": "a1", "w2": "b1", "w3": "c1"}, "src": {"p0": "o1"}})

	w := begin(t, st, "dau", 2)
	put(t, w, contents{"agg": {"w3": "c2"}, "src": {"p0": "o2"}})
	reuse(t, w, "agg", "w1", 1)
	reuse(t, w, "agg", "w2", 1)
	commit(t, w, state.Meta{})
	completed(t, st, "dau", 2)
	cp2 := latest(t, st, "dau", 2)
	check(t, cp2, contents{"agg": {"w1": "a1", "w2": "b1", "w3": "c2"}, "src": {"p0": "o2"}})
	s.countValues(t, st, 4)

	w = begin(t, st, "dau", 3)
	err := w.Reuse("agg", "w1", 1)
	wantErr(t, "Reuse from a deleted checkpoint", err, state.ErrNotFound)
	err = w.Reuse("agg", "nope", 2)
	wantErr(t, "Reuse of a missing key", err, state.ErrNotFound)
	if err := w.Reuse("agg", "w1", 3); err == nil {
		t.Error("Reuse from the checkpoint itself: no error")
	}
	reuse(t, w, "agg", "w1", 2) // written by 1, reused by 2
	reuse(t, w, "agg", "w2", 2)
	put(t, w, contents{"agg": {"w2": "b3"}}) // Put after Reuse wins
	put(t, w, contents{"src": {"p0": "o3"}})
	reuse(t, w, "src", "p0", 2) // Reuse after Put wins
	commit(t, w, state.Meta{})  // w3 is dropped
	completed(t, st, "dau", 3)
	check(t, latest(t, st, "dau", 3), contents{"agg": {"w1": "a1", "w2": "b3"}, "src": {"p0": "o2"}})
	s.countValues(t, st, 3)

	// Retention deleted checkpoint 2 under a reader that had it open.
	_, err = cp2.Get("agg", "w3")
	wantErr(t, "Get from a checkpoint deleted by retention", err, state.ErrNotFound)
}

func (s Suite) testReuseKeepsSource(t *testing.T) {
	st := s.open(t, 1)
	write(t, st, "dau", 1, generation(1))
	w3 := begin(t, st, "dau", 3)
	reuse(t, w3, "agg", "w1", 1)
	write(t, st, "dau", 2, generation(2))
	// Checkpoint 1 stays while w3 reuses from it.
	completed(t, st, "dau", 2, 1)
	reuse(t, w3, "agg", "w2", 1)
	commit(t, w3, state.Meta{})
	completed(t, st, "dau", 3)
	check(t, latest(t, st, "dau", 3), contents{"agg": {"w1": "a1", "w2": "b1"}})
	s.countValues(t, st, 2)

	// An aborted writer releases what it reused from too.
	w5 := begin(t, st, "dau", 5)
	reuse(t, w5, "agg", "w1", 3)
	write(t, st, "dau", 4, generation(4))
	completed(t, st, "dau", 4, 3)
	if err := w5.Abort(); err != nil {
		t.Fatal(err)
	}
	completed(t, st, "dau", 4)
	s.countValues(t, st, count(generation(4)))
}

func (s Suite) testReopen(t *testing.T) {
	if !s.Persistent {
		t.Skip("store is not persistent")
	}
	dir := t.TempDir()
	st := s.reopen(t, dir, 2)
	write(t, st, "dau", 1, generation(1))
	w := begin(t, st, "dau", 2)
	put(t, w, contents{"agg": {"w2": "b2"}})
	reuse(t, w, "agg", "w1", 1)
	reuse(t, w, "source", "p0", 1)
	commit(t, w, state.Meta{Plan: "fp"})
	left := begin(t, st, "dau", 3) // never committed
	put(t, left, generation(3))
	for i := range 4 { // enough for a store to write some of it out
		if err := left.Put("big", fmt.Sprint(i), randomBytes(uint64(i), 1<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantErr(t, "Put after Close", left.Put("agg", "w1", nil), state.ErrClosed)

	st = s.reopen(t, dir, 1)
	completed(t, st, "dau", 2, 1)
	cp := latest(t, st, "dau", 2)
	check(t, cp, contents{"agg": {"w1": "a1", "w2": "b2"}, "source": {"p0": "100"}})
	if cp.Meta().Plan != "fp" {
		t.Errorf("Meta().Plan = %q after reopening", cp.Meta().Plan)
	}
	s.countValues(t, st, count(generation(1))+1)

	// Checkpoint 3's leftovers are gone and its id is free.
	w = begin(t, st, "dau", 3)
	reuse(t, w, "agg", "w1", 2)
	commit(t, w, state.Meta{})
	completed(t, st, "dau", 3)
	check(t, latest(t, st, "dau", 3), contents{"agg": {"w1": "a1"}})
	s.countValues(t, st, 1)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st = s.reopen(t, dir, 1)
	check(t, latest(t, st, "dau", 3), contents{"agg": {"w1": "a1"}})
	s.countValues(t, st, 1)
}

func (s Suite) testCorrupt(t *testing.T) {
	if s.Damage == nil {
		t.Skip("no Damage hook")
	}
	damages := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"FlipByte", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"Truncate", func(b []byte) []byte { return b[:len(b)-3] }},
		{"Extend", func(b []byte) []byte { return append(b, 0) }},
		{"Delete", func([]byte) []byte { return nil }},
	}
	for _, d := range damages {
		for _, where := range []struct{ op, key string }{{"agg", "w2"}, {"", ""}} {
			name := d.name + "/Value"
			if where.op == "" {
				name = d.name + "/CommitRecord"
			}
			t.Run(name, func(t *testing.T) {
				s.testFallback(t, where.op, where.key, d.damage)
			})
		}
	}
	t.Run("ReusedValue", s.testCorruptReused)
	t.Run("NothingLeft", s.testCorruptAll)
	t.Run("Get", s.testCorruptGet)
}

// damage applies d to the value of key of operator in checkpoint id.
func (s Suite) damage(t *testing.T, st *store, id uint64, op, key string, d func([]byte) []byte) {
	t.Helper()
	if err := s.Damage(st.Store, "dau", id, op, key, d); err != nil {
		t.Fatalf("damage checkpoint %d %q %q: %v", id, op, key, err)
	}
}

func flip(b []byte) []byte { b[0] ^= 1; return b }

// corruptAt checks that err is a *CorruptError naming the location.
func (s Suite) corruptAt(t *testing.T, st *store, err error, want state.Location) {
	t.Helper()
	var ce *state.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a *state.CorruptError", err)
	}
	if s.Persistent {
		want.Path = st.dir
	}
	if got := ce.Location; got != want {
		t.Errorf("corrupt location = %+v, want %+v (error %v)", ce.Location, want, err)
	}
	if ce.Reason == "" {
		t.Errorf("corrupt error without reason: %v", err)
	}
}

func (s Suite) testFallback(t *testing.T, op, key string, d func([]byte) []byte) {
	st := s.open(t, 3)
	for id := uint64(1); id <= 3; id++ {
		write(t, st, "dau", id, generation(id))
	}
	s.damage(t, st, 3, op, key, d)

	check(t, latest(t, st, "dau", 2), generation(2))
	warns := st.warn.take()
	if len(warns) != 1 {
		t.Fatalf("Latest warned %d times, want once for checkpoint 3: %v", len(warns), warns)
	}
	want := state.Location{Job: "dau", Checkpoint: 3, Operator: op, Key: key}
	s.corruptAt(t, st, warns[0], want)
	_, err := st.Open("dau", 3)
	wantErr(t, "Open of the damaged checkpoint", err, state.ErrCorrupt)
	s.corruptAt(t, st, err, want)
	// Completed does not verify; the damaged id stays taken.
	completed(t, st, "dau", 3, 2, 1)
	_, err = st.Begin("dau", 3)
	wantErr(t, "Begin of the damaged id", err, state.ErrStaleID)
	write(t, st, "dau", 4, generation(4))
	check(t, latest(t, st, "dau", 4), generation(4))
}

func (s Suite) testCorruptReused(t *testing.T) {
	st := s.open(t, 3)
	write(t, st, "dau", 1, generation(1))
	write(t, st, "dau", 2, generation(2))
	w := begin(t, st, "dau", 3)
	reuse(t, w, "agg", "w1", 2)
	commit(t, w, state.Meta{})
	// Damaging the value damages both checkpoints that hold it.
	s.damage(t, st, 3, "agg", "w1", flip)
	check(t, latest(t, st, "dau", 1), generation(1))
	warns := st.warn.take()
	if len(warns) != 2 {
		t.Fatalf("Latest warned %d times, want twice: %v", len(warns), warns)
	}
	s.corruptAt(t, st, warns[0], state.Location{Job: "dau", Checkpoint: 3, Operator: "agg", Key: "w1", Origin: 2})
	s.corruptAt(t, st, warns[1], state.Location{Job: "dau", Checkpoint: 2, Operator: "agg", Key: "w1"})
}

func (s Suite) testCorruptAll(t *testing.T) {
	st := s.open(t, 1)
	write(t, st, "dau", 1, generation(1))
	write(t, st, "dau", 2, generation(2))
	s.damage(t, st, 2, "source", "p0", flip)
	_, err := st.Latest("dau")
	if errors.Is(err, state.ErrNotFound) || !errors.Is(err, state.ErrCorrupt) {
		t.Fatalf("Latest with only a corrupt checkpoint: %v, want an error wrapping ErrCorrupt only", err)
	}
	s.corruptAt(t, st, err, state.Location{Job: "dau", Checkpoint: 2, Operator: "source", Key: "p0"})
}

func (s Suite) testCorruptGet(t *testing.T) {
	st := s.open(t, 1)
	big := string(randomBytes(1, 3<<20)) // several chunks in a chunked store
	write(t, st, "dau", 1, contents{"agg": {"big": big, "small": "x"}})
	cp := latest(t, st, "dau", 1)
	s.damage(t, st, 1, "agg", "big", flip)
	_, err := cp.Get("agg", "big")
	s.corruptAt(t, st, err, state.Location{Job: "dau", Checkpoint: 1, Operator: "agg", Key: "big"})
	err = cp.Scan("agg", func(string, []byte) error { return nil })
	s.corruptAt(t, st, err, state.Location{Job: "dau", Checkpoint: 1, Operator: "agg", Key: "big"})
	if v, err := cp.Get("agg", "small"); err != nil || string(v) != "x" {
		t.Errorf("Get of an intact value = %q, %v", v, err)
	}
}

func randomBytes(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

func (s Suite) testLarge(t *testing.T) {
	const blobs, size = 24, 4 << 20
	st := s.open(t, 1)
	write(t, st, "dau", 1, generation(1))
	w := begin(t, st, "dau", 2)
	for i := range blobs {
		if err := w.Put("agg", fmt.Sprintf("window-%02d", i), randomBytes(uint64(i), size)); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		if i == blobs/2 {
			check(t, latest(t, st, "dau", 1), generation(1))
		}
	}
	commit(t, w, state.Meta{})
	cp := latest(t, st, "dau", 2)
	n := 0
	err := cp.Scan("agg", func(key string, value []byte) error {
		if want := randomBytes(uint64(n), size); key != fmt.Sprintf("window-%02d", n) || !bytes.Equal(value, want) {
			t.Errorf("Scan: value %d (%q) differs", n, key)
		}
		n++
		return nil
	})
	if err != nil || n != blobs {
		t.Fatalf("Scan: %d values, %v", n, err)
	}
	v, err := cp.Get("agg", "window-07")
	if err != nil || !bytes.Equal(v, randomBytes(7, size)) {
		t.Errorf("Get(window-07): %v", err)
	}
	s.countValues(t, st, blobs)
}

// testConcurrentReaders reads the latest checkpoint from several goroutines
// while new ones are committed and old ones deleted. A reader must see one
// checkpoint whole, or ErrNotFound once retention deleted it.
func (s Suite) testConcurrentReaders(t *testing.T) {
	st := s.open(t, 2)
	value := func(id uint64, key int) []byte { return randomBytes(id<<8|uint64(key), 64<<10) }
	const keys = 8
	writeBig := func(id uint64) {
		w := begin(t, st, "dau", id)
		for k := range keys {
			if err := w.Put("agg", fmt.Sprint(k), value(id, k)); err != nil {
				t.Error(err)
			}
		}
		commit(t, w, state.Meta{Plan: fmt.Sprint(id)})
	}
	writeBig(1)

	done := make(chan struct{})
	var wg, reading sync.WaitGroup
	for range 4 {
		reading.Add(1)
		wg.Go(func() {
			var first sync.Once
			defer first.Do(reading.Done)
			for {
				select {
				case <-done:
					return
				default:
				}
				cp, err := st.Latest("dau")
				if err != nil {
					t.Errorf("Latest: %v", err)
					return
				}
				if cp.Meta().Plan != fmt.Sprint(cp.ID()) {
					t.Errorf("checkpoint %d has the meta of %q", cp.ID(), cp.Meta().Plan)
				}
				for k := range keys {
					v, err := cp.Get("agg", fmt.Sprint(k))
					if errors.Is(err, state.ErrNotFound) {
						break // deleted by retention meanwhile
					}
					if err != nil || !bytes.Equal(v, value(cp.ID(), k)) {
						t.Errorf("checkpoint %d key %d: wrong value, %v", cp.ID(), k, err)
						return
					}
				}
				first.Do(reading.Done)
			}
		})
	}
	reading.Wait()
	for id := uint64(2); id <= 12; id++ {
		writeBig(id)
	}
	close(done)
	wg.Wait()
	completed(t, st, "dau", 12, 11)
}

func (s Suite) testConcurrentJobs(t *testing.T) {
	st := s.open(t, 1)
	var wg sync.WaitGroup
	for j := range 4 {
		wg.Go(func() {
			job := fmt.Sprint("job-", j)
			for id := uint64(1); id <= 5; id++ {
				w, err := st.Begin(job, id)
				if err != nil {
					t.Error(err)
					return
				}
				for op, kv := range generation(id) {
					for k, v := range kv {
						if err := w.Put(op, k, []byte(v)); err != nil {
							t.Error(err)
						}
					}
				}
				if id > 1 {
					if err := w.Reuse("extra", "k", id-1); err != nil {
						t.Error(err)
					}
				} else if err := w.Put("extra", "k", []byte(job)); err != nil {
					t.Error(err)
				}
				if err := w.Commit(state.Meta{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for j := range 4 {
		job := fmt.Sprint("job-", j)
		want := generation(5)
		want["extra"] = map[string]string{"k": job}
		check(t, latest(t, st, job, 5), want)
	}
	s.countValues(t, st, 4*(count(generation(5))+1))
}

func (s Suite) testClosed(t *testing.T) {
	st := s.open(t, 1)
	write(t, st, "dau", 1, generation(1))
	cp := latest(t, st, "dau", 1)
	w := begin(t, st, "dau", 2)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := st.Begin("dau", 3)
	wantErr(t, "Begin after Close", err, state.ErrClosed)
	_, err = st.Latest("dau")
	wantErr(t, "Latest after Close", err, state.ErrClosed)
	_, err = st.Completed("dau")
	wantErr(t, "Completed after Close", err, state.ErrClosed)
	_, err = st.Open("dau", 1)
	wantErr(t, "Open after Close", err, state.ErrClosed)
	_, err = cp.Get("agg", "w1")
	wantErr(t, "Get after Close", err, state.ErrClosed)
	wantErr(t, "Put after Close", w.Put("agg", "w1", nil), state.ErrClosed)
	wantErr(t, "Commit after Close", w.Commit(state.Meta{}), state.ErrClosed)
}
