package difftest

import (
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
)

// TestDiff checks the comparison the differential test relies on: multisets, numbers
// across INT and DOUBLE, a relative tolerance for doubles, and exact everything else.
func TestDiff(t *testing.T) {
	i := func(n int64) Val { return Val{C: Int, I: n} }
	f := func(x float64) Val { return Val{C: Float, F: x} }
	s := func(x string) Val { return Val{C: Str, S: x} }
	tests := []struct {
		name      string
		got, want []Row
		equal     bool
	}{
		{"order does not matter", []Row{{i(1), s("a")}, {i(2), s("b")}}, []Row{{i(2), s("b")}, {i(1), s("a")}}, true},
		{"multiplicity matters", []Row{{i(1)}, {i(1)}}, []Row{{i(1)}}, false},
		{"int equals float", []Row{{i(3)}}, []Row{{f(3)}}, true},
		{"float tolerance", []Row{{f(0.1 + 0.2)}}, []Row{{f(0.3)}}, true},
		{"float difference", []Row{{f(0.3001)}}, []Row{{f(0.3)}}, false},
		{"null is not zero", []Row{{Val{}}}, []Row{{i(0)}}, false},
		{"strings exact", []Row{{s("a ")}}, []Row{{s("a")}}, false},
		{"times exact", []Row{{Val{C: Time, I: 1000}}}, []Row{{Val{C: Time, I: 1001}}}, false},
		{"a bool is not an int", []Row{{Val{C: Bool, I: 1}}}, []Row{{i(1)}}, false},
	}
	for _, tt := range tests {
		d := Diff(tt.got, tt.want)
		if (d == "") != tt.equal {
			t.Errorf("%s: Diff = %q, want equal %v", tt.name, d, tt.equal)
		}
	}
}

// TestChangelog checks that a changelog's final state is what its changes leave, and
// that a retraction of a row that is not there is an error.
func TestChangelog(t *testing.T) {
	var c changelog
	a, b := Row{{C: Str, S: "a"}, {C: Int, I: 1}}, Row{{C: Str, S: "a"}, {C: Int, I: 2}}
	c.apply(connectors.Insert, a)
	c.apply(connectors.UpdateBefore, a)
	c.apply(connectors.UpdateAfter, b)
	c.apply(connectors.Insert, a)
	c.apply(connectors.Delete, a)
	if c.err != nil {
		t.Fatal(c.err)
	}
	if d := Diff(c.rows(), []Row{b}); d != "" {
		t.Fatal(d)
	}
	c.apply(connectors.Delete, a)
	if c.err == nil || !strings.Contains(c.err.Error(), "not in the result") {
		t.Fatalf("retracting a missing row: err = %v", c.err)
	}
}
