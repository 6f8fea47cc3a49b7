package exec

import (
	"sync"
	"sync/atomic"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// RecentRowsKept is how many of its latest rows a sink (or a SELECT's collect) keeps
// for whoever asks (the web console's results view).
const RecentRowsKept = 50

// RecentRow is one of the latest rows a sink wrote, with its change kind.
type RecentRow struct {
	Kind connectors.RowKind
	Row  types.Row
}

// recentRows keeps the latest rows a sink wrote, in a ring. It keeps nothing until
// they are first asked for (Job.RecentRows): a job nobody looks at pays one atomic load
// per batch.
type recentRows struct {
	schema types.Schema
	wanted atomic.Bool

	mu    sync.Mutex
	ring  [RecentRowsKept]RecentRow
	next  int // where the next row goes
	n     int // rows in the ring
	total int64
}

// add keeps the last rows of a batch written; kinds nil: all inserts.
func (r *recentRows) add(kinds []connectors.RowKind, rows []types.Row) {
	if r == nil || !r.wanted.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(rows))
	for i := max(0, len(rows)-RecentRowsKept); i < len(rows); i++ {
		k := connectors.Insert
		if i < len(kinds) {
			k = kinds[i]
		}
		r.ring[r.next] = RecentRow{Kind: k, Row: rows[i]}
		r.next = (r.next + 1) % RecentRowsKept
		r.n = min(r.n+1, RecentRowsKept)
	}
}

// latest returns the rows kept, oldest first, and how many rows were written since
// they were first asked for; the first call starts keeping them.
func (r *recentRows) latest() ([]RecentRow, int64) {
	r.wanted.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RecentRow, 0, r.n)
	for i := range r.n {
		out = append(out, r.ring[(r.next-r.n+i+RecentRowsKept)%RecentRowsKept])
	}
	return out, r.total
}

// RecentRows returns the latest rows (at most RecentRowsKept, oldest first) written by
// the operator at index op of Metrics().Operators, with their columns and how many
// rows it wrote since they were first asked for. ok is false when the operator is not
// a sink or a collect. The first call for an operator starts keeping its rows, so it
// returns none. It is safe to call concurrently with Run.
func (j *Job) RecentRows(op int) (cols types.Schema, rows []RecentRow, written int64, ok bool) {
	i := 0
	for _, ps := range j.pipelines {
		i += len(ps.sources)
		for _, spec := range ps.ops {
			if i == op {
				r := spec.recent
				if r == nil {
					return nil, nil, 0, false
				}
				rows, written = r.latest()
				return r.schema, rows, written, true
			}
			i++
		}
	}
	return nil, nil, 0, false
}
