package exec

import (
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// recentRows keeps nothing until asked, then the last RecentRowsKept rows written,
// oldest first, with their kinds.
func TestRecentRows(t *testing.T) {
	var r recentRows
	row := func(n int) types.Row { return types.Row{types.BigIntValue(int64(n))} }
	r.add(nil, []types.Row{row(1), row(2)})
	if rows, n := r.latest(); len(rows) != 0 || n != 0 {
		t.Fatalf("before being asked: %d rows kept, %d counted; want none", len(rows), n)
	}
	var rows []types.Row
	var kinds []connectors.RowKind
	for i := range 2*RecentRowsKept + 7 {
		rows = append(rows, row(i))
		kinds = append(kinds, connectors.RowKind(i%4))
	}
	r.add(kinds[:3], rows[:3])
	r.add(nil, rows[3:5]) // inserts
	r.add(kinds[5:], rows[5:])
	got, n := r.latest()
	if n != int64(len(rows)) || len(got) != RecentRowsKept {
		t.Fatalf("%d rows kept, %d counted; want %d, %d", len(got), n, RecentRowsKept, len(rows))
	}
	for i, g := range got {
		j := len(rows) - RecentRowsKept + i
		if g.Row[0].Int() != int64(j) || g.Kind != kinds[j] {
			t.Fatalf("row %d: %s %v, want %s %d", i, g.Kind, g.Row, kinds[j], j)
		}
	}
	r.add(nil, rows[:1])
	if got, _ := r.latest(); got[len(got)-1].Row[0].Int() != 0 || got[len(got)-1].Kind != connectors.Insert || got[0].Row[0].Int() != int64(len(rows)-RecentRowsKept+1) {
		t.Errorf("after one more row: first %v, last %s %v", got[0].Row, got[len(got)-1].Kind, got[len(got)-1].Row)
	}
}
