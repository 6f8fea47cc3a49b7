package exec

import (
	"context"
	"testing"
	"time"

	"github.com/pipesql/pipesql/types"
)

// An outbox counts the time its sends wait for room downstream (backpressure), and
// only that: sends that find room add nothing.
func TestOutboxBackpressure(t *testing.T) {
	ctx := context.Background()
	ch := make(chan event, 1)
	var m opMetrics
	out := newOutbox(ch, 1, &m.out)
	out.blocked = &m.blocked
	row := types.Row{types.BigIntValue(1)}

	if err := out.emit(ctx, 0, row); err != nil { // room in the queue
		t.Fatal(err)
	}
	if got := m.blocked.Load(); got != 0 {
		t.Fatalf("a send that found room counted %v blocked", time.Duration(got))
	}
	// The queue is full: a send waits until the receiver takes an event. The receiver
	// gives the sender longer each round to reach its wait.
	for round := 1; m.blocked.Load() == 0; round++ {
		if round > 100 {
			t.Fatal("no send was counted as blocked")
		}
		sent := make(chan error)
		go func() { sent <- out.emit(ctx, 0, row) }()
		time.Sleep(time.Duration(round) * time.Millisecond)
		<-ch
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
	if got, want := m.snapshot().Backpressured, time.Duration(m.blocked.Load()); got != want || got <= 0 {
		t.Errorf("OperatorMetrics.Backpressured %v, want %v > 0", got, want)
	}
}
