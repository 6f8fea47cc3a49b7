package difftest

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Class is the kind of a normalized value: what both engines' results are turned into
// before they are compared.
type Class uint8

// The classes of Val.
const (
	Null Class = iota
	Int
	Float // DOUBLE, FLOAT and DECIMAL
	Str
	Bool
	Time // TIMESTAMP: I holds microseconds of the wall clock
	Date // DATE: I holds days since 1970-01-01
)

// Val is one normalized result value.
type Val struct {
	C Class
	I int64
	F float64
	S string
}

// Row is one normalized result row.
type Row []Val

func (v Val) String() string {
	switch v.C {
	case Null:
		return "NULL"
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Float:
		return strconv.FormatFloat(v.F, 'g', -1, 64)
	case Str:
		return strconv.Quote(v.S)
	case Bool:
		if v.I != 0 {
			return "TRUE"
		}
		return "FALSE"
	case Time:
		return time.UnixMicro(v.I).UTC().Format("2006-01-02 15:04:05.000")
	case Date:
		return time.Unix(v.I*86400, 0).UTC().Format("2006-01-02")
	}
	return "?"
}

func (r Row) String() string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = v.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// key is an exact key of the row's values other than floats, which are compared with a
// tolerance instead.
func (r Row) key() string {
	var b strings.Builder
	for _, v := range r {
		if v.C == Float || v.C == Int {
			b.WriteString("n|")
			continue
		}
		b.WriteString(v.String())
		b.WriteByte('|')
	}
	return b.String()
}

// number reports v as a float when it is a number.
func (v Val) number() (float64, bool) {
	switch v.C {
	case Int:
		return float64(v.I), true
	case Float:
		return v.F, true
	}
	return 0, false
}

// equal compares two values; numbers compare across Int and Float, floats with a
// relative tolerance (sums of doubles depend on the order rows are added in).
func (v Val) equal(w Val) bool {
	if v.C == Int && w.C == Int {
		return v.I == w.I
	}
	a, ok1 := v.number()
	b, ok2 := w.number()
	if ok1 && ok2 {
		if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
			return true
		}
		diff := math.Abs(a - b)
		return diff <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || diff < 1e-12
	}
	return v == w
}

func (r Row) equal(s Row) bool {
	if len(r) != len(s) {
		return false
	}
	for i := range r {
		if !r[i].equal(s[i]) {
			return false
		}
	}
	return true
}

// Diff compares two multisets of rows and returns a description of the difference, or
// "" when they are equal. Rows are matched within groups of equal non-numeric values,
// greedily, numbers with tolerance.
func Diff(got, want []Row) string {
	groups := map[string][]Row{}
	for _, r := range want {
		groups[r.key()] = append(groups[r.key()], r)
	}
	var extra []Row
	for _, r := range got {
		g := groups[r.key()]
		i := slices.IndexFunc(g, r.equal)
		if i < 0 {
			extra = append(extra, r)
			continue
		}
		groups[r.key()] = slices.Delete(g, i, i+1)
	}
	var missing []Row
	for _, g := range groups {
		missing = append(missing, g...)
	}
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows only in pipesql, %d rows only in DuckDB\n", len(extra), len(missing))
	for _, r := range SortRows(extra) {
		fmt.Fprintf(&b, "  pipesql only: %s\n", r)
	}
	for _, r := range SortRows(missing) {
		fmt.Fprintf(&b, "  duckdb only:  %s\n", r)
	}
	return b.String()
}

// SortRows returns the rows sorted by their text, for printing.
func SortRows(rows []Row) []Row {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b Row) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// FormatRows prints rows one a line, sorted.
func FormatRows(rows []Row) string {
	var b strings.Builder
	for _, r := range SortRows(rows) {
		b.WriteString("  ")
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	if len(rows) == 0 {
		b.WriteString("  (no rows)\n")
	}
	return b.String()
}
