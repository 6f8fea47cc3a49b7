package exec

import (
	"encoding/binary"
	"math"

	"github.com/pipesql/pipesql/types"
)

// appendKey appends a compact encoding of v to dst. Two values encode to the same bytes
// exactly when GROUP BY puts them in the same group: NULLs together, 0.0 with -0.0,
// decimals by value. The encoding is self-delimiting so several keys can be concatenated.
// It is an in-memory grouping key, not a stable serialization (checkpoints store the key
// values themselves).
func appendKey(dst []byte, v types.Value) []byte {
	k := v.Kind()
	dst = append(dst, byte(k))
	switch k {
	case types.Null:
	case types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.BigInt,
		types.Date, types.Time, types.Timestamp, types.TimestampLTZ,
		types.IntervalDayTime, types.IntervalYearMonth:
		dst = binary.AppendVarint(dst, v.Int())
	case types.Float, types.Double:
		f := v.Float()
		if f == 0 {
			f = 0 // -0.0 groups with 0.0
		}
		if math.IsNaN(f) {
			f = math.NaN() // one NaN bit pattern
		}
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	case types.Decimal:
		s := v.Rat().RatString()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	case types.Char, types.Varchar, types.Bytes:
		s := v.Str()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	case types.Array, types.Struct:
		elems := v.Elems()
		dst = binary.AppendUvarint(dst, uint64(len(elems)))
		for _, e := range elems {
			dst = appendKey(dst, e)
		}
	case types.Map:
		entries := v.Entries()
		dst = binary.AppendUvarint(dst, uint64(len(entries)))
		for _, e := range entries {
			dst = appendKey(dst, e.Key)
			dst = appendKey(dst, e.Value)
		}
	default:
		s := v.String()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

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
