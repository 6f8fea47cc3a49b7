package exec

import (
	"encoding/hex"
	"math"
	"math/big"
	"testing"

	"github.com/pipesql/pipesql/types"
)

// Group keys choose key groups and state values are in checkpoints: their bytes are
// pinned here, as state version 1 and the key groups of existing checkpoints have them.
func TestStateAndKeyLayout(t *testing.T) {
	dec := func(s string) types.Value {
		r, _ := new(big.Rat).SetString(s)
		return types.DecimalValue(r)
	}
	for _, tc := range []struct {
		v          types.Value
		state, key string
	}{
		{types.IntValue(types.Int, 7), "040e", "040e"},
		{types.StringValue("ab"), "0a026162", "0a026162"},
		{types.DoubleValue(math.Copysign(0, -1)), "070000000000000080", "070000000000000000"},
		{dec("-1.50"), "08042d332f32", "08042d332f32"},
		{types.ArrayValue([]types.Value{types.DateValue(1)}), "12010c02", "12010c02"},
	} {
		state := hex.EncodeToString(appendStateValue(nil, tc.v))
		key := hex.EncodeToString(appendKey(nil, tc.v))
		if state != tc.state || key != tc.key {
			t.Errorf("%v: state %s and key %s, want %s and %s", tc.v, state, key, tc.state, tc.key)
		}
	}
	row := types.Row{dec("2.25"), types.NullValue}
	d := &stateDecoder{data: appendStateRow(nil, row)}
	if got := d.row(); d.finish() != nil || !rowsEqual(got, row) {
		t.Errorf("decimal row read back as %v (%v)", got, d.err)
	}
}
