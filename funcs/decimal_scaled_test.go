package funcs

import (
	"math"
	"math/big"
	"testing"

	"github.com/pipesql/pipesql/types"
)

// TestScaledDecimalMatchesRat checks the scaled path of + - * and of rounding to a
// DECIMAL(p, s) against the big.Rat path on values around the int64 edges.
func TestScaledDecimalMatchesRat(t *testing.T) {
	nums := []int64{0, 1, -1, 5, -5, 15, -15, 908, 49, 50, -50, 999999, 123456789012345678,
		math.MaxInt64, math.MinInt64, math.MaxInt64 / 10, 1 << 53, -(1 << 53) - 1}
	var vals []types.Value
	for _, n := range nums {
		vals = append(vals, types.BigIntValue(n))
		for _, s := range []int{0, 1, 3, 18} {
			vals = append(vals, types.DecimalScaledValue(n, s))
		}
	}
	asRat := func(v types.Value) types.Value { return types.DecimalValue(v.Rat()) }
	for _, a := range vals {
		if f, want := a.Float(), func() float64 { f, _ := a.Rat().Float64(); return f }(); f != want {
			t.Errorf("Float(%s) = %v, want %v", a, f, want)
		}
		for _, prec := range []int{1, 4, 18, 19, 23, 38} {
			for _, scale := range []int{0, 1, 2, 3, 18} {
				if scale > prec {
					continue
				}
				got, err := Coerce(a, types.Type{Kind: types.Decimal, Prec: prec, Scale: scale}, nil)
				if err != nil {
					t.Fatal(err)
				}
				want, ok := fitDecimal(a.Rat(), prec, scale)
				switch {
				case !ok && !got.IsNull():
					t.Errorf("DECIMAL(%d,%d) of %s = %s, want NULL", prec, scale, a, got)
				case ok && (got.IsNull() || got.Rat().Cmp(want) != 0):
					t.Errorf("DECIMAL(%d,%d) of %s = %s, want %s", prec, scale, a, got, want.RatString())
				}
			}
		}
		for _, b := range vals {
			if a.Kind() == types.BigInt && b.Kind() == types.BigInt {
				continue
			}
			for _, op := range []byte{'+', '-', '*'} {
				got, err := arith(nil, op, a, b)
				if err != nil {
					t.Fatal(err)
				}
				want, err := arith(nil, op, asRat(a), asRat(b))
				if err != nil {
					t.Fatal(err)
				}
				if got.Rat().Cmp(want.Rat()) != 0 {
					t.Errorf("%s %c %s = %s, want %s", a, op, b, got, want)
				}
				if c := types.Compare(got, want); c != 0 {
					t.Errorf("Compare(%s, %s) = %d", got, want, c)
				}
			}
		}
	}
}

// BenchmarkDecimalMulRound is Nexmark q1's 0.908 * price rounded to DECIMAL(23, 3): the
// scaled path against the big.Rat path (baseline) on the same values.
func BenchmarkDecimalMulRound(b *testing.B) {
	to := types.Type{Kind: types.Decimal, Prec: 23, Scale: 3}
	run := func(b *testing.B, rate types.Value) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			v, err := arith(nil, '*', rate, types.BigIntValue(int64(1000+i%100000)))
			if err != nil {
				b.Fatal(err)
			}
			if v, err = Coerce(v, to, nil); err != nil || v.IsNull() {
				b.Fatal(v, err)
			}
		}
	}
	b.Run("rat", func(b *testing.B) { run(b, types.DecimalValue(big.NewRat(908, 1000))) })
	b.Run("scaled", func(b *testing.B) { run(b, types.DecimalScaledValue(908, 3)) })
}
