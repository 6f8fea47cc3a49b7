package kafka

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/pipesql/pipesql/connectors"
)

// committer writes offsets to the consumer group on its own goroutine, so that a slow
// or unavailable group coordinator never holds up reading. Commits only show progress
// (lag monitoring); the source restores from pipesql's checkpoints. So a failed commit
// is a warning and a counter, and when commits queue up only the newest is sent.
//
// It commits through a client of its own, and replaces it after a failed commit.
// librdkafka can keep sending a group's commits to the coordinator it found first:
// with the enumerator's client doing the commits too, every commit timed out for as
// long as TestCommitCoordinatorGone ran once the coordinator's broker was gone, and the
// source stayed degraded. A new client finds the coordinator afresh.
type committer struct {
	client  *metadataClient // used and replaced by run only
	connect func() (*metadataClient, error)
	set     *clientSettings
	log     connectors.Logger
	table   string

	signal chan struct{} // a commit is waiting
	done   chan struct{} // run returned

	mu      sync.Mutex
	next    map[partitionKey]int64 // the newest offsets not yet sent; nil when none
	lastErr error                  // of the last attempt; nil after a success

	succeeded  atomic.Uint64
	failed     atomic.Uint64
	superseded atomic.Uint64
}

func newCommitter(client *metadataClient, connect func() (*metadataClient, error), set *clientSettings, log connectors.Logger, table string) *committer {
	return &committer{
		client: client, connect: connect, set: set, log: log, table: table,
		signal: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
}

// request queues offsets for committing, replacing offsets queued and not yet sent.
func (c *committer) request(offsets map[partitionKey]int64) {
	if len(offsets) == 0 {
		return
	}
	c.mu.Lock()
	if c.next != nil {
		c.superseded.Add(1)
	}
	c.next = offsets
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

func (c *committer) run(ctx context.Context) {
	defer close(c.done)
	defer func() { c.client.close() }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.signal:
		}
		c.mu.Lock()
		offsets := c.next
		c.next = nil
		c.mu.Unlock()
		if offsets == nil {
			continue
		}
		err := c.client.commit(ctx, c.set.apiTimeout, offsets)
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		prev := c.lastErr
		c.lastErr = err
		c.mu.Unlock()
		if err != nil {
			n := c.failed.Add(1)
			if prev == nil || n%10 == 0 {
				c.log.Warn("kafka source: committing offsets failed; reading continues and the next commit retries",
					"table", c.table, "group", c.set.groupID, "failures", n, "error", err)
			}
			if fresh, cerr := c.connect(); cerr == nil {
				c.client.close()
				c.client = fresh
			}
			continue
		}
		c.succeeded.Add(1)
		if prev != nil {
			// At the level of the warning it ends, so that whoever saw one sees the other.
			c.log.Warn("kafka source: committing offsets works again", "table", c.table, "group", c.set.groupID,
				"failures", c.failed.Load())
		}
	}
}

// degraded returns why commits are failing, or "".
func (c *committer) degraded() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == nil {
		return ""
	}
	return "committing offsets to group " + c.set.groupID + " failing: " + c.lastErr.Error()
}
