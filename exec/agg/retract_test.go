package agg

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// TestRetracting adds and retracts random values (NULLs included) and checks every
// retracting aggregate against the same call computed from scratch over the values that
// remain, after each change and after a snapshot and restore.
func TestRetracting(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Prec: 10, Scale: 2}
	calls := []struct {
		fn       planner.AggFunc
		distinct bool
		arg, res types.Type
	}{
		{planner.AggCount, false, types.TypeInt, types.TypeBigInt},
		{planner.AggSum, false, types.TypeInt, types.TypeInt},
		{planner.AggAvg, false, types.TypeBigInt, types.TypeBigInt},
		{planner.AggSum, false, dec, types.Type{Kind: types.Decimal, Prec: 38, Scale: 2}},
		{planner.AggMin, false, types.TypeInt, types.TypeInt},
		{planner.AggMax, false, types.TypeString, types.TypeString},
		{planner.AggMax, true, types.TypeInt, types.TypeInt},
		{planner.AggCount, true, types.TypeInt, types.TypeBigInt},
		{planner.AggCount, true, types.TypeString, types.TypeBigInt},
		{planner.AggSum, true, types.TypeInt, types.TypeInt},
		{planner.AggAvg, true, dec, types.Type{Kind: types.Decimal, Prec: 38, Scale: 6}},
	}
	for _, c := range calls {
		name := fmt.Sprintf("%s(distinct=%v,%s)", c.fn, c.distinct, c.arg)
		t.Run(name, func(t *testing.T) {
			call := planner.AggCall{Func: c.fn, Arg: 0, Distinct: c.distinct, Filter: -1, T: c.res, Name: "a"}
			f, err := NewRetracting(call, c.arg)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			value := func() types.Value {
				n := rng.IntN(12) - 3
				switch {
				case n == -3:
					return types.NullValue
				case c.arg.Kind == types.Decimal:
					return types.DecimalValue(big.NewRat(int64(n*125), 100))
				case c.arg.IsString():
					return types.StringValue(fmt.Sprintf("s%d", n))
				}
				return types.IntValue(c.arg.Kind, int64(n))
			}
			b := f.NewBuffer()
			var live []types.Value
			for step := range 600 {
				if len(live) > 0 && rng.IntN(5) < 2 {
					i := rng.IntN(len(live))
					if err := b.(Retracter).Retract(live[i]); err != nil {
						t.Fatal(err)
					}
					live = slices.Delete(live, i, i+1)
				} else {
					v := value()
					if err := b.Add(v); err != nil {
						t.Fatal(err)
					}
					live = append(live, v)
				}
				if step%50 == 49 {
					snap, err := b.AppendSnapshot(nil)
					if err != nil {
						t.Fatal(err)
					}
					g, err := NewRetracting(call, c.arg)
					if err != nil {
						t.Fatal(err)
					}
					if b, err = g.RestoreBuffer(snap); err != nil {
						t.Fatalf("step %d: restore: %v", step, err)
					}
				}
				plain := call
				plain.State = ""
				ref, err := New(plain, c.arg)
				if err != nil {
					t.Fatal(err)
				}
				want := ref.NewBuffer()
				for _, v := range live {
					if err := want.Add(v); err != nil {
						t.Fatal(err)
					}
				}
				if got, w := b.Result(), want.Result(); !types.Equal(got, w) && !(got.IsNull() && w.IsNull()) {
					t.Fatalf("step %d (%d values): got %v, want %v", step, len(live), got, w)
				}
			}
		})
	}
}
