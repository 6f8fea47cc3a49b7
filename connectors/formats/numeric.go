package formats

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/types"
)

// maxDecimalExponent bounds the exponent of a decimal literal we scale. A DECIMAL has at
// most 38 digits, so anything beyond is an overflow (or rounds to zero) anyway; the
// bound keeps '1e999999999' from allocating a billion-digit number.
const maxDecimalExponent = 1000

var bigTen = big.NewInt(10)

// floorDiv is a/b rounded towards negative infinity: time units converted down stay
// on the earlier instant before 1970, as Java's Math.floorDiv (parquet, avro).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// parseDecimal reads a decimal number ("-12.50", "1e3", "  7 ") into DECIMAL(prec, scale),
// rounding half up to scale as Flink's DecimalData.fromBigDecimal does. ok is false when
// s is not a number; null is true when the number does not fit prec digits, which Flink
// turns into NULL.
func parseDecimal(s []byte, prec, scale int) (v types.Value, null, ok bool) {
	s = trimSpace(s)
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var mant []byte
	fracDigits := 0
	seenDot, seenDigit := false, false
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			seenDigit = true
			if len(mant) > 0 || c != '0' {
				mant = append(mant, c)
			}
			if seenDot {
				fracDigits++
			}
		case c == '.' && !seenDot:
			seenDot = true
		default:
			goto exponent
		}
	}
exponent:
	if !seenDigit {
		return types.Value{}, false, false
	}
	exp := 0
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return types.Value{}, false, false
		}
		e, rest, ok := parseSmallInt(s[i+1:])
		if !ok || len(rest) != 0 {
			return types.Value{}, false, false
		}
		exp = e
	}
	if len(mant) == 0 {
		return types.DecimalValue(new(big.Rat)), false, true
	}
	// value = mant * 10^(exp - fracDigits); unscaled = round(value * 10^scale).
	k := exp - fracDigits + scale
	unscaled := new(big.Int)
	switch {
	case k >= 0:
		if len(mant)+k > prec {
			return types.Value{}, true, true
		}
		unscaled.SetString(string(mant), 10)
		unscaled.Mul(unscaled, pow10(k))
	case -k > len(mant):
		// every digit is dropped and the first dropped one is an implied zero
	default:
		keep := len(mant) + k
		if keep > 0 {
			unscaled.SetString(string(mant[:keep]), 10)
		}
		if mant[keep] >= '5' {
			unscaled.Add(unscaled, big.NewInt(1))
		}
	}
	if len(unscaled.String()) > prec && unscaled.Sign() != 0 {
		return types.Value{}, true, true
	}
	if neg {
		unscaled.Neg(unscaled)
	}
	return types.DecimalValue(new(big.Rat).SetFrac(unscaled, pow10(scale))), false, true
}

// parseSmallInt reads an optionally signed integer, clamping its magnitude to
// maxDecimalExponent+prec headroom so huge exponents stay cheap.
func parseSmallInt(b []byte) (int, []byte, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	i, n := 0, 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if n < 10*maxDecimalExponent {
			n = n*10 + int(b[i]-'0')
		}
		i++
	}
	if i == 0 {
		return 0, b, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}

// roundUnscaled returns r * 10^scale rounded half up (away from zero), the unscaled
// value of r as DECIMAL(_, scale).
func roundUnscaled(r *big.Rat, scale int) *big.Int {
	num := new(big.Int).Mul(r.Num(), pow10(scale))
	den := r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// |m| * 2 >= den rounds away from zero
	m.Abs(m)
	m.Lsh(m, 1)
	if m.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// appendJavaDecimal appends r as DECIMAL(_, scale) the way java.math.BigDecimal prints
// it: toString (scientific notation for tiny values) unless plain, then toPlainString.
func appendJavaDecimal(dst []byte, r *big.Rat, scale int, plain bool) []byte {
	u := roundUnscaled(r, scale)
	if u.Sign() < 0 {
		dst = append(dst, '-')
		u.Neg(u)
	}
	coef := u.String()
	adjusted := -scale + len(coef) - 1
	if plain || adjusted >= -6 {
		if scale == 0 {
			return append(dst, coef...)
		}
		if len(coef) <= scale {
			dst = append(dst, "0."...)
			for i := len(coef); i < scale; i++ {
				dst = append(dst, '0')
			}
			return append(dst, coef...)
		}
		dst = append(dst, coef[:len(coef)-scale]...)
		dst = append(dst, '.')
		return append(dst, coef[len(coef)-scale:]...)
	}
	dst = append(dst, coef[0])
	if len(coef) > 1 {
		dst = append(dst, '.')
		dst = append(dst, coef[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted > 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(adjusted), 10)
}

// appendJavaFloat appends f as Java's Double.toString (bitSize 64) or Float.toString
// (bitSize 32) prints it: "1.0", "0.001", "1.0E7", "1.5E-4", "NaN", "Infinity". Flink's
// JSON (through Jackson), CSV and print output all go through these.
func appendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if bitSize == 32 {
		f = float64(float32(f))
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bitSize)
		if !strings.Contains(string(dst[start:]), ".") {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	s := strconv.FormatFloat(f, 'e', -1, bitSize)
	e := strings.IndexByte(s, 'e')
	mant, exp := s[:e], s[e+1:]
	dst = append(dst, mant...)
	if !strings.Contains(mant, ".") {
		dst = append(dst, ".0"...)
	}
	dst = append(dst, 'E')
	n, _ := strconv.Atoi(exp)
	return strconv.AppendInt(dst, int64(n), 10)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}
