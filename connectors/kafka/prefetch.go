package kafka

import (
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/pipesql/pipesql/connectors"
)

// Prefetch sizes: events are handed over in batches of up to prefetchBatch, and at
// most prefetchDepth batches wait, so the prefetcher holds at most a few thousand
// records beyond librdkafka's own queue.
const (
	prefetchBatch = 512
	prefetchDepth = 4
)

// prefetcher takes the reader's events out of librdkafka on its own goroutine and
// hands them to the source's goroutine in batches, in order. Taking an event out of
// librdkafka costs a cgo call and a copy of the record, about as much as decoding it
// into a row; done here, it overlaps the decoding (and the runtime's processing between
// Polls) instead of adding to it. The prefetcher only moves events: every decision
// (what a record means, where a partition stands) stays with the source's goroutine, so
// positions and snapshots describe exactly the rows Poll returned.
type prefetcher struct {
	consumer *ckafka.Consumer
	clock    connectors.Clock
	batches  chan []ckafka.Event
	quit     chan struct{}
	done     chan struct{}

	cur []ckafka.Event // the batch being handed out, by next
	pos int
}

// startPrefetch starts polling consumer.
func startPrefetch(consumer *ckafka.Consumer, clock connectors.Clock) *prefetcher {
	f := &prefetcher{
		consumer: consumer, clock: clock,
		batches: make(chan []ckafka.Event, prefetchDepth),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go f.run()
	return f
}

// idlePoll is how long one librdkafka poll waits when nothing is ready; it bounds how
// long stop waits for the goroutine.
const idlePoll = 100 // milliseconds

func (f *prefetcher) run() {
	defer close(f.done)
	for {
		select {
		case <-f.quit:
			return
		default:
		}
		ev := f.consumer.Poll(idlePoll)
		if ev == nil {
			continue
		}
		batch := make([]ckafka.Event, 1, prefetchBatch)
		batch[0] = ev
		for len(batch) < prefetchBatch {
			ev := f.consumer.Poll(0)
			if ev == nil {
				break
			}
			batch = append(batch, ev)
		}
		select {
		case f.batches <- batch:
		case <-f.quit:
			return
		}
	}
}

// next returns the next event, waiting up to wait for one (not at all when wait <= 0);
// nil when none came.
func (f *prefetcher) next(wait time.Duration) ckafka.Event {
	if f.pos < len(f.cur) {
		return f.take()
	}
	select {
	case b := <-f.batches:
		f.cur, f.pos = b, 0
		return f.take()
	default:
	}
	if wait <= 0 {
		return nil
	}
	t := f.clock.NewTimer(wait)
	defer t.Stop()
	select {
	case b := <-f.batches:
		f.cur, f.pos = b, 0
		return f.take()
	case <-t.C():
		return nil
	}
}

func (f *prefetcher) take() ckafka.Event {
	ev := f.cur[f.pos]
	f.cur[f.pos] = nil // the record belongs to the source now
	f.pos++
	return ev
}

// stop ends the goroutine; the consumer may be closed once stop returns. Events not
// handed out are dropped: the source's positions never included them.
func (f *prefetcher) stop() {
	select {
	case <-f.quit:
	default:
		close(f.quit)
	}
	<-f.done
}
