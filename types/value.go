package types

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Value is one SQL value. The zero Value is NULL.
//
// Values are small and copied by value; no constructor allocates except for
// decimals and composite values. The representation per kind:
//   - BOOLEAN: n is 0 or 1
//   - TINYINT..BIGINT: n
//   - FLOAT, DOUBLE: n holds math.Float64bits
//   - DECIMAL: x holds a *big.Rat (exact), or, for one built by DecimalScaledValue,
//     x holds its scale (0..18) and n its unscaled digits: n / 10^scale, no big.Rat
//   - CHAR, VARCHAR, BYTES: s
//   - DATE: n is days since 1970-01-01
//   - TIME: n is microseconds since midnight
//   - TIMESTAMP: n is microseconds since 1970-01-01 00:00:00 of the wall clock (no zone)
//   - TIMESTAMP_LTZ: n is microseconds since the Unix epoch (an instant, UTC)
//   - INTERVAL DAY TO SECOND: n is microseconds; INTERVAL YEAR TO MONTH: n is months
//   - ARRAY, ROW: x holds []Value; MAP: x holds []MapEntry
type Value struct {
	k Kind
	n int64
	s string
	x any
}

// MapEntry is one key and value of a MAP value.
type MapEntry struct{ Key, Value Value }

// NullValue is the SQL NULL.
var NullValue = Value{}

// Constructors.
func BoolValue(b bool) Value {
	if b {
		return Value{k: Boolean, n: 1}
	}
	return Value{k: Boolean}
}
func IntValue(k Kind, n int64) Value         { return Value{k: k, n: n} }
func BigIntValue(n int64) Value              { return Value{k: BigInt, n: n} }
func DoubleValue(f float64) Value            { return Value{k: Double, n: int64(math.Float64bits(f))} }
func FloatValue(f float64) Value             { return Value{k: Float, n: int64(math.Float64bits(f))} }
func StringValue(s string) Value             { return Value{k: Varchar, s: s} }
func BytesValue(b []byte) Value              { return Value{k: Bytes, s: string(b)} }
func DecimalValue(r *big.Rat) Value          { return Value{k: Decimal, x: r} }
func DateValue(days int64) Value             { return Value{k: Date, n: days} }
func TimeValue(micros int64) Value           { return Value{k: Time, n: micros} }
func TimestampValue(micros int64) Value      { return Value{k: Timestamp, n: micros} }
func TimestampLTZValue(micros int64) Value   { return Value{k: TimestampLTZ, n: micros} }
func IntervalValue(micros int64) Value       { return Value{k: IntervalDayTime, n: micros} }
func IntervalMonthsValue(months int64) Value { return Value{k: IntervalYearMonth, n: months} }
func ArrayValue(elems []Value) Value         { return composite(Array, elems) }
func RowValue(fields []Value) Value          { return composite(Struct, fields) }
func MapValue(entries []MapEntry) Value      { return Value{k: Map, x: entries} }

// decScale is the scale of a DECIMAL held in n; a one-byte value in an interface does
// not allocate.
type decScale uint8

// MaxScaledDecimal is the largest scale DecimalScaledValue takes.
const MaxScaledDecimal = 18

// DecimalScaledValue returns the DECIMAL unscaled / 10^scale (scale 0..MaxScaledDecimal)
// without allocating: arithmetic on decimals that fit an int64 stays off big.Rat.
func DecimalScaledValue(unscaled int64, scale int) Value {
	return Value{k: Decimal, n: unscaled, x: decScale(scale)}
}

// Scaled returns a DECIMAL held as unscaled / 10^scale; ok is false for one held as a
// big.Rat (use Rat).
func (v Value) Scaled() (unscaled int64, scale int, ok bool) {
	if s, isScaled := v.x.(decScale); isScaled && v.k == Decimal {
		return v.n, int(s), true
	}
	return 0, 0, false
}

// Pow10 holds 10^0 .. 10^18.
var Pow10 = func() (p [MaxScaledDecimal + 1]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// Kind returns the kind of v; NULL values have kind Null.
func (v Value) Kind() Kind { return v.k }

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return v.k == Null }

// Bool returns a BOOLEAN value.
func (v Value) Bool() bool { return v.n != 0 }

// Int returns the integer of an integer, DATE, TIME, TIMESTAMP or INTERVAL value.
func (v Value) Int() int64 { return v.n }

// Float returns a FLOAT or DOUBLE value; integers and decimals convert.
func (v Value) Float() float64 {
	switch v.k {
	case Float, Double:
		return math.Float64frombits(uint64(v.n))
	case Decimal:
		if n, scale, ok := v.Scaled(); ok && n <= 1<<53 && n >= -1<<53 {
			return float64(n) / float64(Pow10[scale]) // both exact: one correctly rounded division
		}
		f, _ := v.Rat().Float64()
		return f
	}
	return float64(v.n)
}

// Str returns the string of a CHAR, VARCHAR or BYTES value.
func (v Value) Str() string { return v.s }

// Rat returns a DECIMAL value; integers convert exactly.
func (v Value) Rat() *big.Rat {
	switch v.k {
	case Decimal:
		if s, ok := v.x.(decScale); ok {
			return new(big.Rat).SetFrac64(v.n, Pow10[s])
		}
		return v.x.(*big.Rat)
	case Float, Double:
		r := new(big.Rat)
		r.SetFloat64(v.Float())
		return r
	}
	return new(big.Rat).SetInt64(v.n)
}

// Elems returns the elements of an ARRAY or the fields of a ROW value.
func (v Value) Elems() []Value {
	p, _ := v.x.(*Value)
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, v.n)
}

// composite holds the elements of an ARRAY or ROW as a pointer to the first and the
// count: a pointer in an interface does not allocate, a slice would (its header, once
// per value: a Nexmark source makes a ROW per event).
func composite(k Kind, elems []Value) Value {
	return Value{k: k, n: int64(len(elems)), x: unsafe.SliceData(elems)}
}

// Entries returns the entries of a MAP value.
func (v Value) Entries() []MapEntry {
	e, _ := v.x.([]MapEntry)
	return e
}

// Time returns a TIMESTAMP (as UTC wall clock) or TIMESTAMP_LTZ (as an instant in UTC) value.
func (v Value) Time() time.Time { return time.UnixMicro(v.n).UTC() }

// Compare orders two non-NULL values of comparable kinds: -1, 0 or +1.
// Numbers compare across kinds; NULL sorts first.
func Compare(a, b Value) int {
	if a.k == Null || b.k == Null {
		switch {
		case a.k == b.k:
			return 0
		case a.k == Null:
			return -1
		default:
			return 1
		}
	}
	switch {
	case isIntKind(a.k) && isIntKind(b.k), a.k == b.k && isTemporal(a.k), a.k == Boolean && b.k == Boolean:
		return cmpInt(a.n, b.n)
	case isNumKind(a.k) && isNumKind(b.k):
		if a.k == Decimal || b.k == Decimal {
			if a.k != Float && a.k != Double && b.k != Float && b.k != Double {
				if x, sx, ok := a.Scaled(); ok {
					if y, sy, ok := b.Scaled(); ok && sx == sy {
						return cmpInt(x, y)
					}
				}
				return a.Rat().Cmp(b.Rat())
			}
		}
		x, y := a.Float(), b.Float()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case isStrKind(a.k) && isStrKind(b.k):
		return strings.Compare(a.s, b.s)
	case a.k == Array && b.k == Array, a.k == Struct && b.k == Struct:
		ae, be := a.Elems(), b.Elems()
		for i := 0; i < len(ae) && i < len(be); i++ {
			if c := Compare(ae[i], be[i]); c != 0 {
				return c
			}
		}
		return cmpInt(int64(len(ae)), int64(len(be)))
	}
	return strings.Compare(a.String(), b.String())
}

// Equal reports whether two values are equal as SQL compares them, treating NULL as
// equal to NULL (the grouping semantics, not the = operator's).
func Equal(a, b Value) bool { return Compare(a, b) == 0 }

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isIntKind(k Kind) bool  { return k >= TinyInt && k <= BigInt }
func isNumKind(k Kind) bool  { return k >= TinyInt && k <= Decimal }
func isStrKind(k Kind) bool  { return k == Char || k == Varchar || k == Bytes }
func isTemporal(k Kind) bool { return k >= Date && k <= IntervalYearMonth }

// String formats v the way Flink's print connector and SQL client show it:
// NULL as "NULL" (callers may choose "<NULL>"), timestamps as 2024-01-02 03:04:05.678,
// dates as 2024-01-02, booleans as TRUE/FALSE.
func (v Value) String() string {
	switch v.k {
	case Null:
		return "NULL"
	case Boolean:
		if v.n != 0 {
			return "TRUE"
		}
		return "FALSE"
	case TinyInt, SmallInt, Int, BigInt:
		return strconv.FormatInt(v.n, 10)
	case Float:
		return strconv.FormatFloat(v.Float(), 'G', -1, 32)
	case Double:
		return formatDouble(v.Float())
	case Decimal:
		return formatRat(v.Rat())
	case Char, Varchar:
		return v.s
	case Bytes:
		return fmt.Sprintf("x'%x'", v.s)
	case Date:
		return string(AppendDate(make([]byte, 0, 10), v.n))
	case Time:
		_, tod := SplitMicros(v.n)
		return string(AppendTime(make([]byte, 0, 8), tod-tod%microsPerSecond, 0))
	case Timestamp, TimestampLTZ:
		return FormatTimestamp(v.n, 3)
	case IntervalDayTime:
		return formatInterval(v.n)
	case IntervalYearMonth:
		sign := "+"
		n := v.n
		if n < 0 {
			sign, n = "-", -n
		}
		return fmt.Sprintf("%s%d-%02d", sign, n/12, n%12)
	case Array:
		return "[" + joinValues(v.Elems()) + "]"
	case Struct:
		return "(" + joinValues(v.Elems()) + ")"
	case Map:
		var b strings.Builder
		b.WriteString("{")
		for i, e := range v.Entries() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.Key.String())
			b.WriteString("=")
			b.WriteString(e.Value.String())
		}
		b.WriteString("}")
		return b.String()
	}
	return fmt.Sprintf("?%d", v.k)
}

// FormatTimestamp formats microseconds since the epoch as yyyy-MM-dd HH:mm:ss with
// prec fractional digits (Flink shows TIMESTAMP(3) as 2024-01-02 03:04:05.678).
func FormatTimestamp(micros int64, prec int) string {
	if prec < 6 {
		unit := int64(microsPerSecond)
		for i := max(prec, 0); i > 0; i-- {
			unit /= 10
		}
		r := micros % unit
		if r < 0 {
			r += unit // toward the past, as the fraction of a time before 1970 is
		}
		micros -= r
	}
	return string(AppendTimestamp(make([]byte, 0, 32), micros, ' ', max(prec, 0)))
}

func formatDouble(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'G', -1, 64)
}

func formatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(18)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func formatInterval(micros int64) string {
	sign := "+"
	if micros < 0 {
		sign, micros = "-", -micros
	}
	d := micros / 86_400_000_000
	rest := micros % 86_400_000_000
	h := rest / 3_600_000_000
	m := rest / 60_000_000 % 60
	s := rest / 1_000_000 % 60
	ms := rest / 1000 % 1000
	return fmt.Sprintf("%s%d %02d:%02d:%02d.%03d", sign, d, h, m, s, ms)
}

func joinValues(vs []Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, ", ")
}

// Row is one record: values in schema order.
type Row []Value
