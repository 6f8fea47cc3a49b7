package state_test

import (
	"errors"
	"testing"

	"github.com/pipesql/pipesql/state"
)

func TestCheckPlan(t *testing.T) {
	agg := state.Operator{ID: "agg", Desc: "count distinct v1"}
	src := state.Operator{ID: "src", Desc: "kafka offsets v1"}
	meta := state.Meta{Plan: "fp1", Operators: []state.Operator{agg, src}}
	for _, tc := range []struct {
		name             string
		plan             string
		ops              []state.Operator
		allowNonRestored bool
		want             string // error text, "" for a match
	}{
		{"SameFingerprint", "fp1", nil, false, ""},
		{"SameOperators", "fp2", []state.Operator{src, agg}, false, ""},
		{"NewOperator", "fp2", []state.Operator{agg, src, {ID: "sink", Desc: "upsert"}}, false, ""},
		{"Dropped", "fp2", []state.Operator{src}, false,
			`checkpoint of plan "fp1" does not match plan "fp2"; operator "agg" (count distinct v1) has state but is not in the plan (allow non-restored state to drop it)`},
		{"DroppedAllowed", "fp2", []state.Operator{src}, true, ""},
		{"Changed", "fp2", []state.Operator{{ID: "agg", Desc: "count distinct v2"}, src}, true,
			`checkpoint of plan "fp1" does not match plan "fp2"; operator "agg" changed from "count distinct v1" to "count distinct v2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := meta.CheckPlan(tc.plan, tc.ops, tc.allowNonRestored)
			if tc.want == "" {
				if err != nil {
					t.Errorf("CheckPlan: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || !errors.Is(err, state.ErrPlanMismatch) {
				t.Errorf("CheckPlan: %v\nwant %s", err, tc.want)
			}
		})
	}
}
