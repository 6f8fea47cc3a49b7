package state_test

import (
	"fmt"

	"github.com/pipesql/pipesql/state"
)

// An aggregate keeps one value per window. The second checkpoint rewrites
// only the window that changed and reuses the other from the first.
func Example() {
	st := state.NewMemory(state.Options{NumRetained: 1})
	defer st.Close()

	w, _ := st.Begin("dau", 1)
	w.Put("agg", "2024-03-01", []byte("bitmap of day 1"))
	w.Put("agg", "2024-03-02", []byte("bitmap of day 2, partial"))
	w.Put("source", "events/0", []byte("offset 1000"))
	w.Commit(state.Meta{Plan: "fp"})

	w, _ = st.Begin("dau", 2)
	w.Reuse("agg", "2024-03-01", 1)
	w.Put("agg", "2024-03-02", []byte("bitmap of day 2"))
	w.Put("source", "events/0", []byte("offset 2000"))
	w.Commit(state.Meta{Plan: "fp"})

	cp, err := st.Latest("dau")
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, _ := st.Completed("dau")
	fmt.Println("checkpoint", cp.ID(), "retained", ids)
	for _, op := range cp.Operators() {
		cp.Scan(op, func(key string, value []byte) error {
			fmt.Printf("%s %s: %s\n", op, key, value)
			return nil
		})
	}
	// Output:
	// checkpoint 2 retained [2]
	// agg 2024-03-01: bitmap of day 1
	// agg 2024-03-02: bitmap of day 2
	// source events/0: offset 2000
}
