package funcs

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/pipesql/pipesql/types"
)

// DECIMALs whose digits fit an int64 are held scaled (types.DecimalScaledValue): the
// arithmetic and rounding here work on the int64 and its scale, and fall back to the
// big.Rat path (decimalArith, fitDecimal) whenever a step would overflow. Both paths give
// the same exact values; the scaled one only avoids allocating.

// scaledOf returns an integer, or a DECIMAL held scaled, as unscaled digits and scale.
func scaledOf(v types.Value) (int64, int, bool) {
	if isIntKind(v.Kind()) {
		return v.Int(), 0, true
	}
	return v.Scaled()
}

func mul64(a, b int64) (int64, bool) {
	if a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

func add64(a, b int64) (int64, bool) {
	c := a + b
	return c, (a^c)&(b^c) >= 0
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// rescale multiplies n by 10^by, by >= 0.
func rescale(n int64, by int) (int64, bool) {
	if by > types.MaxScaledDecimal {
		return 0, n == 0
	}
	return mul64(n, types.Pow10[by])
}

// scaledArith computes a op b for + - * on integers and scaled DECIMALs, exactly; ok is
// false when an operand is not scaled or the result would not fit.
func scaledArith(op byte, a, b types.Value) (types.Value, bool) {
	x, sx, ok := scaledOf(a)
	if !ok {
		return types.NullValue, false
	}
	y, sy, ok := scaledOf(b)
	if !ok {
		return types.NullValue, false
	}
	switch op {
	case '+', '-':
		s := max(sx, sy)
		x, okx := rescale(x, s-sx)
		y, oky := rescale(y, s-sy)
		if !okx || !oky || y == math.MinInt64 {
			return types.NullValue, false
		}
		if op == '-' {
			y = -y
		}
		r, ok := add64(x, y)
		if !ok {
			return types.NullValue, false
		}
		return types.DecimalScaledValue(r, s), true
	case '*':
		s := sx + sy
		if s > types.MaxScaledDecimal {
			return types.NullValue, false
		}
		r, ok := mul64(x, y)
		if !ok {
			return types.NullValue, false
		}
		return types.DecimalScaledValue(r, s), true
	}
	return types.NullValue, false
}

// fitScaled rounds an integer or scaled DECIMAL HALF_UP to DECIMAL(prec, scale) as
// fitDecimal does: fits is false when it has more than prec digits. handled is false when
// v is not scaled or the result would not fit an int64: the caller then takes the big.Rat
// path.
func fitScaled(v types.Value, prec, scale int) (out types.Value, fits, handled bool) {
	x, sx, ok := scaledOf(v)
	if !ok || scale < 0 || scale > types.MaxScaledDecimal {
		return types.NullValue, false, false
	}
	var n int64
	if scale >= sx {
		if n, ok = rescale(x, scale-sx); !ok {
			return types.NullValue, false, false
		}
	} else {
		p := types.Pow10[sx-scale]
		n = x / p
		if r := abs64(x % p); r*2 >= p { // |r| < p <= 10^18: no overflow
			if x < 0 {
				n--
			} else {
				n++
			}
		}
	}
	if prec > 0 && prec <= types.MaxScaledDecimal && abs64(n) >= types.Pow10[prec] {
		return types.NullValue, false, true
	}
	return types.DecimalScaledValue(n, scale), true, true
}

// ratDecimal returns r, which fitDecimal rounded to scale fractional digits, held scaled
// when its digits fit an int64, else as the big.Rat.
func ratDecimal(r *big.Rat, scale int) types.Value {
	if scale >= 0 && scale <= types.MaxScaledDecimal && r.Num().IsInt64() && r.Denom().IsInt64() {
		p, d := types.Pow10[scale], r.Denom().Int64()
		if p%d == 0 {
			if n, ok := mul64(r.Num().Int64(), p/d); ok {
				return types.DecimalScaledValue(n, scale)
			}
		}
	}
	return types.DecimalValue(r)
}
