package exec

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// TestJoinStateTTLHint: the STATE_TTL hint's retention of one side (Join.LeftTTL or
// RightTTL) applies to that side's rows only, over table.exec.state.ttl or none.
func TestJoinStateTTLHint(t *testing.T) {
	for _, c := range []struct {
		name              string
		leftTTL, rightTTL time.Duration
		settings          map[string]string
		want              []string
	}{
		// The left rows expire after 1 h: only x (30 min after them) joins.
		{"left 1h", time.Hour, 0, nil, []string{"+I(1, a, 1, x)"}},
		// The hint names the right side only: the left rows are kept for ever.
		{"right 1h", 0, time.Hour, nil, []string{"+I(1, a, 1, x)", "+I(1, a, 1, y)", "+I(2, b, 2, z)"}},
		// The hint's 2 h for the left side overrides table.exec.state.ttl's 1 h.
		{"left 2h over 1h", 2 * time.Hour, 0, map[string]string{"table.exec.state.ttl": "1 h"},
			[]string{"+I(1, a, 1, x)", "+I(1, a, 1, y)", "+I(2, b, 2, z)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newFakeClock()
			schema := types.Schema{{Name: "k", Type: types.TypeBigInt}, {Name: "v", Type: types.TypeString}}
			row := func(k int64, v string) types.Row { return types.Row{types.BigIntValue(k), types.StringValue(v)} }
			var j *Job
			joined := func(n int64) func() {
				return func() {
					for {
						for _, m := range j.Metrics().Operators {
							if m.Name == "join" && m.RecordsIn >= n {
								return
							}
						}
						time.Sleep(time.Millisecond)
					}
				}
			}
			left := &memSource{clock: clock, bounded: true, steps: []pollStep{
				{batches: []connectors.SourceBatch{{Split: "l", Rows: []types.Row{row(1, "a"), row(2, "b")}}}},
			}}
			right := &memSource{clock: clock, bounded: true, steps: []pollStep{
				{hook: joined(2), advance: 30 * time.Minute,
					batches: []connectors.SourceBatch{{Split: "r", Rows: []types.Row{row(1, "x")}}}},
				{hook: joined(3), advance: time.Hour, batches: []connectors.SourceBatch{{Split: "r", Rows: []types.Row{row(1, "y"), row(2, "z")}}}},
			}}
			join := &planner.Join{
				Left: scanOf("l", schema, left), Right: scanOf("r", schema, right), Type: planner.InnerJoin,
				LeftKeys: []int{0}, RightKeys: []int{0}, KeyTypes: []types.Type{types.TypeBigInt},
				Out:     append(append(types.Schema(nil), schema...), schema...),
				LeftTTL: c.leftTTL, RightTTL: c.rightTTL,
			}
			sink := &memSink{}
			var err error
			j, err = NewJob(program(c.settings, sinkOf("out", join, sink, planner.InsertOnly)), Options{Clock: clock, BatchSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := sink.changes()
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("changes %v, want %v", got, c.want)
			}
		})
	}
}
