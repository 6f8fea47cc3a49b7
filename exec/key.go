package exec

import (
	"github.com/pipesql/pipesql/types"
)

// keyEncoding encodes group keys: two values encode to the same bytes exactly when
// GROUP BY puts them in the same group (NULLs together, 0.0 with -0.0, decimals by
// value); the encoding is self-delimiting so several keys concatenate. It is exact
// about kinds, which a group key column's one type makes harmless, and spells decimals
// as state does. The bytes are an in-memory grouping key, but they also choose a
// group's key group (keyGroupOf), so they must not change without a state version.
const keyEncoding = types.FoldFloats | types.TextDecimals

func appendKey(dst []byte, v types.Value) []byte { return types.AppendValue(dst, v, keyEncoding) }

// appendRowKey appends the key of the columns cols of row.
func appendRowKey(dst []byte, row types.Row, cols []int) []byte {
	for _, c := range cols {
		dst = appendKey(dst, row[c])
	}
	return dst
}

// keyValues copies the columns cols of row; group state keeps them to emit the key.
func keyValues(row types.Row, cols []int) types.Row {
	if len(cols) == 0 {
		return nil
	}
	k := make(types.Row, len(cols))
	for i, c := range cols {
		k[i] = row[c]
	}
	return k
}

// rowsEqual reports whether two rows hold equal values, NULL equal to NULL.
func rowsEqual(a, b types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind() != b[i].Kind() || !types.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
