package agg

import (
	"strings"
	"testing"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

func orderedCall(fn planner.AggFunc, sep string) planner.AggCall {
	return planner.AggCall{Func: fn, Arg: 0, Filter: -1, Separator: sep}
}

// TestOrderedMergeKeepsArrivalOrder: buffers merged in any order give the values in the
// order they were added, as window slices merged out of order must.
func TestOrderedMergeKeepsArrivalOrder(t *testing.T) {
	for _, tc := range []struct {
		fn   planner.AggFunc
		want string
	}{
		{planner.AggFirstValue, "a"},
		{planner.AggLastValue, "e"},
		{planner.AggListAgg, "a-b-c-d-e"},
		{planner.AggArrayAgg, "[a, b, NULL, c, d, e]"},
	} {
		f, err := New(orderedCall(tc.fn, "-"), types.TypeString)
		if err != nil {
			t.Fatal(err)
		}
		early, late := f.NewBuffer(), f.NewBuffer()
		// a and c to the early buffer, b to the late one, then d, e to the early one.
		for _, step := range []struct {
			b Buffer
			v types.Value
		}{{early, types.StringValue("a")}, {late, types.StringValue("b")}, {late, types.NullValue}, {early, types.StringValue("c")}, {late, types.StringValue("d")}, {early, types.StringValue("e")}} {
			if err := step.b.Add(step.v); err != nil {
				t.Fatal(err)
			}
		}
		for _, order := range [][2]Buffer{{early, late}, {late, early}} {
			into := f.NewBuffer()
			for _, b := range order {
				if err := into.Merge(b); err != nil {
					t.Fatal(err)
				}
			}
			if got := into.Result().String(); got != tc.want {
				t.Errorf("%s merged: %s, want %s", tc.fn, got, tc.want)
			}
		}
	}
}

// TestOrderedSnapshot: a restored buffer has its values, and values added after the
// restore come after them even in a Func that restarted its numbering.
func TestOrderedSnapshot(t *testing.T) {
	f, _ := NewRetracting(orderedCall(planner.AggListAgg, ","), types.TypeString)
	b := f.NewBuffer()
	for _, s := range []string{"x", "y", "x", "z"} {
		b.Add(types.StringValue(s))
	}
	if err := b.(Retracter).Retract(types.StringValue("x")); err != nil {
		t.Fatal(err)
	}
	snap, err := b.AppendSnapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewRetracting(orderedCall(planner.AggListAgg, ","), types.TypeString)
	other := g.NewBuffer() // numbered 0, before the restore moves the counter
	other.Add(types.StringValue("w"))
	r, err := g.RestoreBuffer(snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Result().Str(); got != "y,x,z" {
		t.Fatalf("restored: %s, want y,x,z (the first x retracted)", got)
	}
	late := g.NewBuffer()
	late.Add(types.StringValue("v"))
	if err := r.Merge(late); err != nil {
		t.Fatal(err)
	}
	if got := r.Result().Str(); got != "y,x,z,v" {
		t.Errorf("after a restore: %s, want y,x,z,v", got)
	}
	snap[len(snap)/2] ^= 0xff
	if _, err := g.RestoreBuffer(snap); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("damaged snapshot: %v", err)
	}
	if _, err := New(orderedCall(planner.AggListAgg, ","), types.TypeInt); err == nil {
		t.Errorf("LISTAGG of INT compiled")
	}
}
