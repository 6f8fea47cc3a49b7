package agg

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// aggCase is one aggregate call, a generator of its input and the expected state kind.
type aggCase struct {
	name string
	call planner.AggCall
	arg  types.Type
	gen  func(r *rand.Rand) types.Value // non-NULL values; the harness adds NULLs
	kind planner.StateKind
}

func decimalType(p, s int) types.Type { return types.Type{Kind: types.Decimal, Prec: p, Scale: s} }

var (
	tTinyInt  = types.Type{Kind: types.TinyInt}
	tSmallInt = types.Type{Kind: types.SmallInt}
	tFloat    = types.Type{Kind: types.Float}
	tBytes    = types.Type{Kind: types.Bytes}
	tCount    = types.TypeBigInt.WithNotNull(true)
	tIntArray = types.Type{Kind: types.Array, Elem: &types.TypeInt}
)

func call(fn planner.AggFunc, distinct bool, t types.Type) planner.AggCall {
	return planner.AggCall{Func: fn, Arg: 0, Distinct: distinct, Filter: -1, T: t, Name: "a"}
}

func withState(c planner.AggCall, k planner.StateKind) planner.AggCall { c.State = k; return c }

func genInt(lo, hi int64) func(r *rand.Rand) types.Value {
	return func(r *rand.Rand) types.Value { return types.IntValue(types.Int, lo+r.Int64N(hi-lo+1)) }
}

func genKind(k types.Kind, lo, hi int64) func(r *rand.Rand) types.Value {
	return func(r *rand.Rand) types.Value { return types.IntValue(k, lo+r.Int64N(hi-lo+1)) } // any kind of one int64
}

// genBigInt mixes the value shapes a BIGINT id column has: small dense ids, negative
// values, values just past 2^32 and sparse 64-bit values (hashes, snowflakes).
func genBigInt(r *rand.Rand) types.Value {
	switch r.IntN(4) {
	case 0:
		return types.BigIntValue(r.Int64N(500))
	case 1:
		return types.BigIntValue(-r.Int64N(200))
	case 2:
		return types.BigIntValue(1<<32 - 100 + r.Int64N(200))
	}
	return types.BigIntValue(int64(mix64(uint64(r.IntN(300)))))
}

func genString(r *rand.Rand) types.Value {
	if r.IntN(20) == 0 {
		return types.StringValue(strings.Repeat("long", 40+r.IntN(3)))
	}
	return types.StringValue(fmt.Sprintf("user-%d", r.IntN(400)))
}

func genDouble(r *rand.Rand) types.Value {
	if r.IntN(10) == 0 {
		return types.DoubleValue(float64(r.IntN(3)) - 1) // -1, 0, 1: exact duplicates
	}
	return types.DoubleValue(float64(r.IntN(1000))/8 - 40)
}

func genDecimal(r *rand.Rand) types.Value {
	return types.DecimalValue(big.NewRat(r.Int64N(20000)-10000, 100))
}

func genIntArray(r *rand.Rand) types.Value {
	elems := make([]types.Value, r.IntN(3))
	for i := range elems {
		elems[i] = types.IntValue(types.Int, r.Int64N(4))
	}
	return types.ArrayValue(elems)
}

var cases = []aggCase{
	{"count(*)", planner.AggCall{Func: planner.AggCount, Arg: -1, Filter: -1, T: tCount}, types.Type{},
		func(*rand.Rand) types.Value { return types.BoolValue(true) }, planner.StateCounter},
	{"count(int)", call(planner.AggCount, false, tCount), types.TypeInt, genInt(-5, 5), planner.StateCounter},
	{"sum(int) wraps", call(planner.AggSum, false, types.TypeInt), types.TypeInt, genInt(math.MaxInt32-1000, math.MaxInt32), planner.StateSum},
	{"sum(tinyint)", call(planner.AggSum, false, tTinyInt), tTinyInt, genKind(types.TinyInt, -128, 127), planner.StateSum},
	{"sum(bigint)", call(planner.AggSum, false, types.TypeBigInt), types.TypeBigInt, genBigInt, planner.StateSum},
	{"sum(double)", call(planner.AggSum, false, types.TypeDouble), types.TypeDouble, genDouble, planner.StateSum},
	{"sum(float)", call(planner.AggSum, false, tFloat), tFloat, genDouble, planner.StateSum},
	{"sum(decimal)", call(planner.AggSum, false, decimalType(38, 2)), decimalType(10, 2), genDecimal, planner.StateSum},
	{"avg(int) truncates", call(planner.AggAvg, false, types.TypeInt), types.TypeInt, genInt(-1000, 999), planner.StateAvg},
	{"avg(smallint)", call(planner.AggAvg, false, tSmallInt), tSmallInt, genKind(types.SmallInt, -300, 200), planner.StateAvg},
	{"avg(double)", call(planner.AggAvg, false, types.TypeDouble), types.TypeDouble, genDouble, planner.StateAvg},
	{"avg(decimal)", call(planner.AggAvg, false, decimalType(38, 6)), decimalType(10, 2), genDecimal, planner.StateAvg},
	{"min(int)", call(planner.AggMin, false, types.TypeInt), types.TypeInt, genInt(-1e6, 1e6), planner.StateMinMax},
	{"max(string)", call(planner.AggMax, false, types.TypeString), types.TypeString, genString, planner.StateMinMax},
	{"min(double)", call(planner.AggMin, false, types.TypeDouble), types.TypeDouble, genDouble, planner.StateMinMax},
	{"max(timestamp)", call(planner.AggMax, false, types.TimestampType(3)), types.TimestampType(3),
		genKind(types.Timestamp, 1.7e15, 1.8e15), planner.StateMinMax},
	{"min(decimal)", call(planner.AggMin, true, decimalType(10, 2)), decimalType(10, 2), genDecimal, planner.StateMinMax},
	{"count(distinct int)", call(planner.AggCount, true, tCount), types.TypeInt, genInt(-300, 300), planner.StateRoaring32},
	{"count(distinct int) sparse", call(planner.AggCount, true, tCount), types.TypeInt, genInt(math.MinInt32, math.MaxInt32), planner.StateRoaring32},
	{"count(distinct tinyint)", call(planner.AggCount, true, tCount), tTinyInt, genKind(types.TinyInt, -128, 127), planner.StateRoaring32},
	{"count(distinct date)", call(planner.AggCount, true, tCount), types.TypeDate, genKind(types.Date, 19000, 19400), planner.StateRoaring32},
	{"count(distinct boolean)", call(planner.AggCount, true, tCount), types.TypeBoolean, genKind(types.Boolean, 0, 1), planner.StateRoaring32},
	{"count(distinct bigint)", call(planner.AggCount, true, tCount), types.TypeBigInt, genBigInt, planner.StateRoaring64},
	{"count(distinct string)", call(planner.AggCount, true, tCount), types.TypeString, genString, planner.StateRoaringDict},
	{"count(distinct bytes)", call(planner.AggCount, true, tCount), tBytes,
		func(r *rand.Rand) types.Value { return types.BytesValue([]byte{byte(r.IntN(50)), 0}) }, planner.StateRoaringDict},
	{"count(distinct double)", call(planner.AggCount, true, tCount), types.TypeDouble, genDouble, planner.StateRoaringDict},
	{"count(distinct timestamp)", call(planner.AggCount, true, tCount), types.TimestampType(3),
		genKind(types.Timestamp, 1.7e15, 1.7e15+500), planner.StateRoaringDict},
	{"count(distinct decimal)", call(planner.AggCount, true, tCount), decimalType(10, 2), genDecimal, planner.StateRoaringDict},
	{"count(distinct array)", call(planner.AggCount, true, tCount), tIntArray, genIntArray, planner.StateRoaringDict},
	{"approx_count_distinct(string)", call(planner.AggApproxCountDi, false, tCount), types.TypeString, genString, planner.StateRoaringDict},
	{"count(distinct bigint) as dictionary", withState(call(planner.AggCount, true, tCount), planner.StateRoaringDict),
		types.TypeBigInt, genBigInt, planner.StateRoaringDict},
	{"count(distinct int) as roaring64", withState(call(planner.AggCount, true, tCount), planner.StateRoaring64),
		types.TypeInt, genInt(-300, 300), planner.StateRoaring64},
	{"count(distinct timestamp) as roaring64", withState(call(planner.AggCount, true, tCount), planner.StateRoaring64),
		types.TimestampType(3), genKind(types.Timestamp, -1000, 1000), planner.StateRoaring64},
	{"count(distinct string) as value set", withState(call(planner.AggCount, true, tCount), planner.StateDistinctValues),
		types.TypeString, genString, planner.StateDistinctValues},
	{"sum(distinct int)", call(planner.AggSum, true, types.TypeInt), types.TypeInt, genInt(-50, 50), planner.StateDistinctValues},
	{"avg(distinct double)", call(planner.AggAvg, true, types.TypeDouble), types.TypeDouble, genDouble, planner.StateDistinctValues},
	{"sum(distinct decimal)", call(planner.AggSum, true, decimalType(38, 2)), decimalType(10, 2), genDecimal, planner.StateDistinctValues},
	{"max(distinct string) as value set", withState(call(planner.AggMax, true, types.TypeString), planner.StateDistinctValues),
		types.TypeString, genString, planner.StateDistinctValues},
}

// reference computes the aggregate the obvious way, over all values at once.
func reference(c aggCase, vals []types.Value) types.Value {
	var in []types.Value
	seen := map[string]bool{}
	distinct := c.call.Distinct || c.call.Func == planner.AggApproxCountDi
	for _, v := range vals {
		if v.IsNull() {
			continue
		}
		key := v.String()
		switch v.Kind() {
		case types.Timestamp, types.Time, types.TimestampLTZ:
			key = fmt.Sprint(v.Int()) // String shows milliseconds only
		case types.Double:
			if v.Float() == 0 {
				key = "0" // -0.0 = 0.0
			}
		}
		if distinct && seen[key] {
			continue
		}
		seen[key] = true
		in = append(in, v)
	}
	t := c.call.T
	switch c.call.Func {
	case planner.AggCount, planner.AggApproxCountDi:
		return types.BigIntValue(int64(len(in)))
	case planner.AggMin, planner.AggMax:
		if len(in) == 0 {
			return types.NullValue
		}
		best := in[0]
		for _, v := range in[1:] {
			if cmp := types.Compare(v, best); c.call.Func == planner.AggMin && cmp < 0 || c.call.Func == planner.AggMax && cmp > 0 {
				best = v
			}
		}
		return best
	}
	if len(in) == 0 {
		return types.NullValue
	}
	n := int64(len(in))
	switch {
	case t.IsInteger():
		var s int64
		for _, v := range in {
			s += v.Int()
		}
		if c.call.Func == planner.AggAvg {
			s /= n
		}
		return intResult(t.Kind, s)
	case t.Kind == types.Decimal:
		s := new(big.Rat)
		for _, v := range in {
			s.Add(s, v.Rat())
		}
		if c.call.Func == planner.AggAvg {
			s.Quo(s, big.NewRat(n, 1))
			// round half up at the result scale, by hand
			scaled := new(big.Rat).Mul(s, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
			f, _ := scaled.Float64()
			r := math.Round(f) // half away from zero, like HALF_UP
			s = new(big.Rat).Quo(big.NewRat(int64(r), 1), new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
		}
		return types.DecimalValue(s)
	}
	var s float64
	for _, v := range in {
		s += v.Float()
	}
	if c.call.Func == planner.AggAvg {
		s /= float64(n)
	}
	if t.Kind == types.Float {
		return types.FloatValue(float64(float32(s)))
	}
	return types.DoubleValue(s)
}

// sameResult compares results; float sums may differ in the last bits when merges
// change the order of additions.
func sameResult(got, want types.Value) bool {
	if got.IsNull() || want.IsNull() {
		return got.IsNull() && want.IsNull()
	}
	if got.Kind() != want.Kind() {
		return false
	}
	if got.Kind() == types.Double || got.Kind() == types.Float {
		d := math.Abs(got.Float() - want.Float())
		return d <= 1e-6*math.Max(1, math.Abs(want.Float()))
	}
	return types.Compare(got, want) == 0
}

func genValues(r *rand.Rand, c aggCase, n int) []types.Value {
	vals := make([]types.Value, n)
	for i := range vals {
		if c.call.Arg >= 0 && r.IntN(10) == 0 {
			continue // NULL
		}
		vals[i] = c.gen(r)
	}
	return vals
}

func mustNew(t testing.TB, c planner.AggCall, arg types.Type) Func {
	t.Helper()
	f, err := New(c, arg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func addAll(t testing.TB, b Buffer, vals []types.Value) {
	t.Helper()
	for _, v := range vals {
		if err := b.Add(v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAgainstReference(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			f := mustNew(t, c.call, c.arg)
			if f.StateKind() != c.kind {
				t.Fatalf("state kind %q, want %q", f.StateKind(), c.kind)
			}
			for _, n := range []int{0, 1, 10, 2000} {
				vals := genValues(r, c, n)
				b := f.NewBuffer()
				addAll(t, b, vals)
				if got, want := b.Result(), reference(c, vals); !sameResult(got, want) {
					t.Fatalf("n=%d: got %v (%s), want %v (%s)", n, got, got.Kind(), want, want.Kind())
				}
			}
			// all-NULL input: COUNT is 0, everything else NULL
			b := f.NewBuffer()
			addAll(t, b, make([]types.Value, 5))
			if got, want := b.Result(), reference(c, make([]types.Value, 5)); c.call.Arg >= 0 && !sameResult(got, want) {
				t.Fatalf("all NULL: got %v, want %v", got, want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			f := mustNew(t, c.call, c.arg)
			vals := genValues(r, c, 3000)
			// split unevenly into 4 buffers, one of them empty, and merge
			cuts := []int{0, 0, 700, 2500, len(vals)}
			total := f.NewBuffer()
			for j := 0; j+1 < len(cuts); j++ {
				part := f.NewBuffer()
				addAll(t, part, vals[cuts[j]:cuts[j+1]])
				if err := total.Merge(part); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := total.Result(), reference(c, vals); !sameResult(got, want) {
				t.Fatalf("merged: got %v, want %v", got, want)
			}
			// merging a buffer into itself adds its content again (counts double, sets stay)
			other := mustNew(t, c.call, c.arg)
			if err := total.Merge(other.NewBuffer()); !errors.Is(err, ErrMerge) {
				t.Fatalf("merge across Funcs: got %v, want ErrMerge", err)
			}
		})
	}
}

// snapshotRoundTrip checkpoints f's shared state and buffer, restores both into a new
// Func, and returns the restored Func and buffer.
func snapshotRoundTrip(t *testing.T, c aggCase, f Func, b Buffer) (Func, Buffer) {
	t.Helper()
	shared, err := f.AppendShared(nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := b.AppendSnapshot([]byte("prefix")) // appends: the prefix must survive
	if err != nil {
		t.Fatal(err)
	}
	if string(snap[:6]) != "prefix" {
		t.Fatalf("AppendSnapshot clobbered dst")
	}
	snap = snap[6:]
	if snap[0] != snapshotVersion {
		t.Fatalf("snapshot starts with %d, want the version byte %d", snap[0], snapshotVersion)
	}
	g := mustNew(t, c.call, c.arg)
	if err := g.RestoreShared(shared); err != nil {
		t.Fatal(err)
	}
	rb, err := g.RestoreBuffer(snap)
	if err != nil {
		t.Fatal(err)
	}
	return g, rb
}

func TestSnapshotRoundTrip(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 13))
			f := mustNew(t, c.call, c.arg)
			first, second := genValues(r, c, 1500), genValues(r, c, 1500)
			for _, vals := range [][]types.Value{nil, first} {
				b := f.NewBuffer()
				addAll(t, b, vals)
				if !b.Dirty() {
					t.Fatal("a new buffer must be dirty until its first snapshot")
				}
				g, rb := snapshotRoundTrip(t, c, f, b)
				if b.Dirty() {
					t.Fatal("dirty after AppendSnapshot")
				}
				if rb.Dirty() {
					t.Fatal("a restored buffer must not be dirty")
				}
				if got, want := rb.Result(), b.Result(); !sameResult(got, want) {
					t.Fatalf("restored %v, want %v", got, want)
				}
				// the restored buffer keeps working: more input gives the same result as
				// the original fed with everything
				addAll(t, rb, second)
				if got, want := rb.Result(), reference(c, append(slices.Clone(vals), second...)); !sameResult(got, want) {
					t.Fatalf("restored then added: got %v, want %v", got, want)
				}
				_ = g
			}
		})
	}
}

func TestDirty(t *testing.T) {
	f := mustNew(t, call(planner.AggCount, true, tCount), types.TypeString)
	b := f.NewBuffer()
	mustAdd := func(v types.Value) {
		t.Helper()
		if err := b.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd(types.StringValue("a"))
	if _, err := b.AppendSnapshot(nil); err != nil {
		t.Fatal(err)
	}
	mustAdd(types.StringValue("a"))
	mustAdd(types.NullValue)
	if b.Dirty() {
		t.Fatal("adding a value already counted must not make the buffer dirty")
	}
	mustAdd(types.StringValue("b"))
	if !b.Dirty() {
		t.Fatal("a new distinct value must make the buffer dirty")
	}
	if _, err := b.AppendSnapshot(nil); err != nil {
		t.Fatal(err)
	}
	other := f.NewBuffer()
	if err := other.Add(types.StringValue("b")); err != nil {
		t.Fatal(err)
	}
	if err := b.Merge(other); err != nil || b.Dirty() {
		t.Fatalf("merging a subset: err %v, dirty %v; want nil, false", err, b.Dirty())
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		call planner.AggCall
		arg  types.Type
		want error
	}{
		{"sum of string", call(planner.AggSum, false, types.TypeString), types.TypeString, ErrUnsupported},
		{"count(distinct *)", planner.AggCall{Func: planner.AggCount, Arg: -1, Distinct: true, T: tCount}, types.Type{}, ErrUnsupported},
		{"unknown function", call("MEDIAN", false, types.TypeInt), types.TypeInt, ErrUnsupported},
		{"max of map", call(planner.AggMax, false, types.Type{Kind: types.Map}), types.Type{Kind: types.Map}, ErrUnsupported},
		{"32-bit bitmap for bigint", withState(call(planner.AggCount, true, tCount), planner.StateRoaring32), types.TypeBigInt, ErrStateKind},
		{"roaring64 for string", withState(call(planner.AggCount, true, tCount), planner.StateRoaring64), types.TypeString, ErrStateKind},
		{"counter for count distinct", withState(call(planner.AggCount, true, tCount), planner.StateCounter), types.TypeInt, ErrStateKind},
		{"bitmap for sum", withState(call(planner.AggSum, false, types.TypeInt), planner.StateRoaring32), types.TypeInt, ErrStateKind},
		{"unknown state kind", withState(call(planner.AggSum, false, types.TypeInt), "hyperloglog"), types.TypeInt, ErrStateKind},
		{"sum of double as int", call(planner.AggSum, false, types.TypeInt), types.TypeDouble, ErrUnsupported},
		{"count returning string", call(planner.AggCount, true, types.TypeString), types.TypeInt, ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.call, tc.arg)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var ce *CallError
			if !errors.As(err, &ce) || ce.Call == "" {
				t.Fatalf("error %v does not name the call", err)
			}
		})
	}
}

func TestAddRejectsWrongValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		call planner.AggCall
		arg  types.Type
		v    types.Value
	}{
		{"string into int bitmap", call(planner.AggCount, true, tCount), types.TypeInt, types.StringValue("1")},
		{"int beyond 32 bits", call(planner.AggCount, true, tCount), types.TypeInt, types.IntValue(types.Int, 1<<40)},
		{"int into string dictionary", call(planner.AggCount, true, tCount), types.TypeString, types.BigIntValue(1)},
		{"string into bigint", call(planner.AggCount, true, tCount), types.TypeBigInt, types.StringValue("x")},
		{"string into sum", call(planner.AggSum, false, types.TypeInt), types.TypeInt, types.StringValue("x")},
		{"int into max(string)", call(planner.AggMax, false, types.TypeString), types.TypeString, types.BigIntValue(3)},
		{"double into sum(distinct int)", call(planner.AggSum, true, types.TypeInt), types.TypeInt, types.DoubleValue(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustNew(t, tc.call, tc.arg).NewBuffer()
			if err := b.Add(tc.v); !errors.Is(err, ErrValueType) {
				t.Fatalf("got %v, want ErrValueType", err)
			}
		})
	}
}

// TestDistinctEquality checks that values SQL calls equal count once.
func TestDistinctEquality(t *testing.T) {
	for _, tc := range []struct {
		name string
		arg  types.Type
		vals []types.Value
		want int64
	}{
		{"zero and negative zero", types.TypeDouble, []types.Value{types.DoubleValue(0), types.DoubleValue(math.Copysign(0, -1))}, 1},
		{"NaNs", types.TypeDouble, []types.Value{types.DoubleValue(math.NaN()), types.DoubleValue(-math.NaN())}, 1},
		{"decimal scales", decimalType(10, 2), []types.Value{types.DecimalValue(big.NewRat(1, 2)), types.DecimalValue(big.NewRat(50, 100))}, 1},
		{"int kinds of one column", types.TypeInt, []types.Value{types.IntValue(types.Int, 7), types.IntValue(types.SmallInt, 7)}, 1},
		{"min and max int", types.TypeInt, []types.Value{types.IntValue(types.Int, math.MinInt32), types.IntValue(types.Int, math.MaxInt32), types.IntValue(types.Int, 0)}, 3},
		{"bigint across 2^32", types.TypeBigInt, []types.Value{types.BigIntValue(1<<32 - 1), types.BigIntValue(1 << 32), types.BigIntValue(-1), types.BigIntValue(math.MinInt64), types.BigIntValue(math.MaxInt64), types.BigIntValue(0)}, 6},
		{"empty string and arrays", tIntArray, []types.Value{types.ArrayValue(nil), types.ArrayValue([]types.Value{types.NullValue}), types.ArrayValue([]types.Value{types.IntValue(types.Int, 0)})}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustNew(t, call(planner.AggCount, true, tCount), tc.arg).NewBuffer()
			addAll(t, b, tc.vals)
			addAll(t, b, tc.vals)
			if got := b.Result(); got.Int() != tc.want {
				t.Fatalf("got %v, want %d", got, tc.want)
			}
		})
	}
}
