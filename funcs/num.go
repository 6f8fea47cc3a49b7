package funcs

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/types"
)

var (
	bigOne = big.NewInt(1)
	bigTen = big.NewInt(10)
)

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// scaled returns r * 10^scale rounded HALF_UP (halves away from zero), as Java's
// BigDecimal.setScale(scale, HALF_UP) does.
func scaled(r *big.Rat, scale int) *big.Int {
	num := new(big.Int).Set(r.Num())
	den := new(big.Int).Set(r.Denom())
	if scale >= 0 {
		num.Mul(num, pow10(scale))
	} else {
		den.Mul(den, pow10(-scale))
	}
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// |m| * 2 >= den rounds away from zero.
	m.Abs(m).Lsh(m, 1)
	if m.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, bigOne)
		} else {
			q.Add(q, bigOne)
		}
	}
	return q
}

// roundRat rounds r to scale fractional digits, HALF_UP.
func roundRat(r *big.Rat, scale int) *big.Rat {
	if r.IsInt() && scale >= 0 {
		return r
	}
	q := scaled(r, scale)
	if scale >= 0 {
		return new(big.Rat).SetFrac(q, pow10(scale))
	}
	return new(big.Rat).SetInt(q.Mul(q, pow10(-scale)))
}

// fitDecimal rounds r to DECIMAL(prec, scale) and reports whether it fits. prec 0 means
// the type is not known: r is returned unchanged.
func fitDecimal(r *big.Rat, prec, scale int) (*big.Rat, bool) {
	if prec <= 0 {
		return r, true
	}
	q := scaled(r, scale)
	if len(new(big.Int).Abs(q).String()) > prec && q.Sign() != 0 {
		return nil, false
	}
	return new(big.Rat).SetFrac(q, pow10(scale)), true
}

// formatDecimal writes r with exactly scale fractional digits, as Java's
// BigDecimal.toPlainString does for a DECIMAL(p, scale); scale < 0 trims trailing zeros.
func formatDecimal(r *big.Rat, scale int) string {
	if scale < 0 {
		if r.IsInt() {
			return r.Num().String()
		}
		s := r.FloatString(18)
		s = strings.TrimRight(s, "0")
		return strings.TrimSuffix(s, ".")
	}
	q := scaled(r, scale)
	neg := q.Sign() < 0
	digits := new(big.Int).Abs(q).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// ratFromFloat converts a double the way Java's BigDecimal.valueOf(double) does: through
// its shortest decimal representation, so 2.675 is 2.675 and not 2.67499999...
func ratFromFloat(f float64, bits int) (*big.Rat, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bits))
	return r, ok
}

// parseDecimalText parses a decimal literal: optional sign, digits with one optional
// point, optional exponent. big.Rat alone would also take fractions like "1/3".
func parseDecimalText(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default:
			return nil, false
		}
	}
	if !digits {
		return nil, false
	}
	// An exponent like 1e999999999 would have big.Rat compute a billion-digit power.
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if exp, err := strconv.Atoi(s[i+1:]); err != nil || exp > 1000 || exp < -1000 {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// ratToInt64 truncates r toward zero and keeps the low 64 bits, as Java's
// BigDecimal.longValue() does.
func ratToInt64(r *big.Rat) int64 {
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if q.IsInt64() {
		return q.Int64()
	}
	mask := new(big.Int).Lsh(bigOne, 64)
	q.Mod(q, mask) // non-negative
	return int64(q.Uint64())
}

// wrapInt narrows n to the width of an integer kind, wrapping like a Java cast.
func wrapInt(k types.Kind, n int64) int64 {
	switch k {
	case types.TinyInt:
		return int64(int8(n))
	case types.SmallInt:
		return int64(int16(n))
	case types.Int:
		return int64(int32(n))
	}
	return n
}

// floatToInt converts like Java's (long) d / (int) d casts: NaN is 0, out of range
// saturates; TINYINT and SMALLINT narrow from int.
func floatToInt(k types.Kind, f float64) int64 {
	if math.IsNaN(f) {
		return 0
	}
	if k == types.BigInt {
		switch {
		case f >= math.MaxInt64:
			return math.MaxInt64
		case f <= math.MinInt64:
			return math.MinInt64
		}
		return int64(f)
	}
	var n int64
	switch {
	case f >= math.MaxInt32:
		n = math.MaxInt32
	case f <= math.MinInt32:
		n = math.MinInt32
	default:
		n = int64(f)
	}
	return wrapInt(k, n)
}

// javaDouble formats f as Java's Double.toString (bits 64) or Float.toString (bits 32):
// plain notation between 10^-3 and 10^7, computerized scientific notation outside, always
// with a fractional digit: 1.0, 0.001, 1.0E7, 1.234E-5.
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.234E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// parseJavaInt parses an integer the way Flink casts a STRING to an integer: optional
// sign, digits, and an optional fractional part that is checked and dropped. bits is the
// target width; a value out of range is an error, not a wrap.
func parseJavaInt(s string, bits int) (int64, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "empty input"
	}
	neg := false
	i := 0
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i++
		if len(s) == 1 {
			return 0, "no digits"
		}
	}
	intPart := s[i:]
	frac := ""
	if dot := strings.IndexByte(intPart, '.'); dot >= 0 {
		intPart, frac = intPart[:dot], intPart[dot+1:]
	}
	for j := 0; j < len(frac); j++ {
		if frac[j] < '0' || frac[j] > '9' {
			return 0, "invalid character"
		}
	}
	if intPart == "" {
		if frac == "" {
			return 0, "no digits"
		}
		return 0, ""
	}
	for j := 0; j < len(intPart); j++ {
		if intPart[j] < '0' || intPart[j] > '9' {
			return 0, "invalid character"
		}
	}
	u, err := strconv.ParseUint(intPart, 10, 64)
	limit := uint64(1) << (bits - 1)
	if err != nil || (!neg && u >= limit) || (neg && u > limit) {
		return 0, "overflow"
	}
	if neg {
		return int64(-u), ""
	}
	return int64(u), ""
}

// parseJavaDouble parses like Java's Double.parseDouble: surrounding whitespace, an
// optional d/f suffix, NaN and Infinity.
func parseJavaDouble(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 'd', 'D', 'f', 'F':
			if c := s[n-2]; c >= '0' && c <= '9' || c == '.' {
				s = s[:n-1]
			}
		}
	}
	switch s {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, false // Go would also take "inf", "0x1p3" and "1_000"
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // Java gives Infinity or 0 too
		}
		return 0, false
	}
	return f, true
}

func f32(f float64) float64 { return float64(float32(f)) }
