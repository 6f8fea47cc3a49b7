package agg_test

import (
	"fmt"

	"github.com/pipesql/pipesql/exec/agg"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// A daily-active-users count: COUNT(DISTINCT user_id) over strings, checkpointed and
// restored.
func ExampleNew() {
	call := planner.AggCall{Func: planner.AggCount, Arg: 0, Distinct: true, Filter: -1,
		T: types.TypeBigInt.WithNotNull(true), Name: "dau"}
	f, err := agg.New(call, types.TypeString)
	if err != nil {
		panic(err)
	}
	day := f.NewBuffer()
	for _, user := range []string{"ana", "bo", "ana", "cy"} {
		if err := day.Add(types.StringValue(user)); err != nil {
			panic(err)
		}
	}
	_ = day.Add(types.NullValue) // ignored, as SQL does
	fmt.Println(f.StateKind(), day.Result())

	// Checkpoint: the dictionary (shared by all days) and the buffer.
	shared, _ := f.AppendShared(nil)
	snap, _ := day.AppendSnapshot(nil)

	// Restore into a new Func: shared state first.
	g, _ := agg.New(call, types.TypeString)
	if err := g.RestoreShared(shared); err != nil {
		panic(err)
	}
	restored, err := g.RestoreBuffer(snap)
	if err != nil {
		panic(err)
	}
	_ = restored.Add(types.StringValue("bo"))
	_ = restored.Add(types.StringValue("dee"))
	fmt.Println(restored.Result())
	// Output:
	// roaring bitmap + dictionary 3
	// 4
}
