package planner

import (
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// NullsFirst reports whether k puts NULL before every value: as written (NULLS FIRST|LAST)
// or by Flink's default, which treats NULL as the smallest value.
func (k SortKey) NullsFirst() bool {
	return k.Nulls == parser.NullsFirst || k.Nulls == parser.NullsDefault && !k.Desc
}

// Compare orders the values a and b of k's column as k orders them: -1, 0 or +1.
func (k SortKey) Compare(a, b types.Value) int {
	if an, bn := a.IsNull(), b.IsNull(); an || bn {
		switch {
		case an && bn:
			return 0
		case an == k.NullsFirst():
			return -1
		default:
			return 1
		}
	}
	c := types.Compare(a, b)
	if k.Desc {
		return -c
	}
	return c
}

// CompareRows orders the rows a and b by keys, 0 when they tie on every key.
func CompareRows(keys []SortKey, a, b types.Row) int {
	for _, k := range keys {
		if c := k.Compare(a[k.Col], b[k.Col]); c != 0 {
			return c
		}
	}
	return 0
}

// NullsState is the null order in a state description, empty for Flink's default order so
// that the descriptions of plans written before NULLS FIRST|LAST existed do not change.
func (k SortKey) NullsState() string {
	if k.NullsFirst() == !k.Desc {
		return ""
	}
	if k.NullsFirst() {
		return " nulls=first"
	}
	return " nulls=last"
}
