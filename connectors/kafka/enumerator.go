package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
)

// Discovery retry backoff: the first retry after a failure waits about minBackoff, each
// further one twice as long, up to the discovery interval and never more than maxBackoff,
// with ±20% jitter so that many sources do not retry in step.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// assignment is a partition handed from the enumerator to the reader, with where
// reading starts and (for a bounded read) where it ends.
type assignment struct {
	key   partitionKey
	start int64 // next offset to read, or offsetEarliest
	stop  int64 // offset at which reading ends (exclusive), or noStop
}

// enumerator owns the partition assignment. It lists partitions on its own goroutine
// every discovery interval and hands partitions it has not handed out before to the
// reader. A failed or hung listing changes nothing the reader has: partitions are only
// ever added, never taken away, so an answer that lacks a partition during an outage
// cannot drop it. This is the decision side of the source ("what is assigned"), kept
// apart from connection state, which only ever delays it.
type enumerator struct {
	opts     *tableOptions
	settings *clientSettings
	client   *metadataClient
	clock    connectors.Clock
	log      connectors.Logger
	jitter   func() float64 // in [0, 1)
	bounded  bool

	listedOnce chan struct{} // closed after the first successful listing
	done       chan struct{} // closed when run returns

	mu         sync.Mutex
	known      map[partitionKey]bool // handed to the reader or restored: never handed out again
	unresolved map[partitionKey]bool // listed, start not yet known; true: a startup partition
	pending    []assignment
	listed     bool
	restored   bool
	fatal      error
	brokers    []string
	missing    []string
	leaderless []partitionKey // in the last listing
	complete   bool           // bounded or discovery off: the one listing needed is done

	// The identity of what is read (identity.go): the cluster id, and the topic id
	// ("" when the cluster has none) and largest partition count of each topic listed.
	cluster         string
	clusterKnown    bool
	topicIDs        map[string]string
	partitionCounts map[string]int

	attempts    uint64
	failures    uint64
	consecutive int
	started     time.Time
	lastSuccess time.Time
	lastErr     error
	inFlight    time.Time // start of the running attempt; zero when none
}

func newEnumerator(opts *tableOptions, settings *clientSettings, client *metadataClient, clock connectors.Clock, log connectors.Logger) *enumerator {
	return &enumerator{
		opts:       opts,
		settings:   settings,
		client:     client,
		clock:      clock,
		log:        log,
		jitter:     rand.Float64,
		bounded:    opts.boundedMode != modeUnbounded,
		listedOnce: make(chan struct{}),
		done:       make(chan struct{}),
		known:      map[partitionKey]bool{},
		unresolved: map[partitionKey]bool{},
		started:    clock.Now(),

		topicIDs:        map[string]string{},
		partitionCounts: map[string]int{},
	}
}

// restore marks partitions from a checkpoint as known: the reader already has them.
func (e *enumerator) restore(keys []partitionKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.restored = true
	for _, k := range keys {
		e.known[k] = true
	}
}

// run lists partitions until ctx ends: at once, then every discovery interval, and
// after a failure again with backoff.
func (e *enumerator) run(ctx context.Context) {
	defer close(e.done)
	var wait time.Duration
	for {
		if wait > 0 {
			t := e.clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
		if ctx.Err() != nil {
			return
		}
		ok := e.attempt(ctx)
		e.mu.Lock()
		finished := e.complete || e.fatal != nil
		n := e.consecutive
		e.mu.Unlock()
		if finished {
			return
		}
		if ok {
			wait = e.opts.discoveryInterval
		} else {
			wait = e.backoff(n)
		}
	}
}

func (e *enumerator) backoff(n int) time.Duration {
	limit := maxBackoff
	if iv := e.opts.discoveryInterval; iv > 0 && iv < limit {
		limit = max(iv, 100*time.Millisecond)
	}
	d := minBackoff
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return time.Duration(float64(d) * (0.8 + 0.4*e.jitter()))
}

// attempt runs one listing and resolves the start offsets of new partitions. It
// reports whether everything succeeded.
func (e *enumerator) attempt(ctx context.Context) bool {
	now := e.clock.Now()
	e.mu.Lock()
	e.attempts++
	e.inFlight = now
	e.mu.Unlock()

	// The timeout bounds the whole attempt: the listing and the offset lookups after it.
	actx, cancel := context.WithTimeout(ctx, e.settings.apiTimeout)
	defer cancel()
	l, err := e.client.listPartitions(e.settings.apiTimeout, e.opts.topics, e.opts.pattern, e.settings.excludeInternal)
	if l != nil {
		e.record(l)
	}
	if err == nil {
		err = e.resolve(actx)
	}
	if l != nil && ctx.Err() == nil {
		e.describeNew(ctx, l)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	e.inFlight = time.Time{}
	if err != nil {
		if ctx.Err() != nil {
			return false // closing: not a failure of the cluster
		}
		e.failures++
		e.consecutive++
		e.lastErr = err
		if e.consecutive == 1 || e.consecutive%10 == 0 {
			e.log.Warn("kafka source: partition discovery failed; readers keep their partitions and discovery retries",
				"table", e.opts.table, "attempt", e.consecutive, "error", e.describeLocked(err))
		}
		return false
	}
	if e.consecutive > 0 {
		// At the level of the warning it ends, so that whoever saw one sees the other.
		e.log.Warn("kafka source: partition discovery recovered", "table", e.opts.table, "failed_attempts", e.consecutive,
			"failing_for", e.clock.Now().Sub(e.failingSince()).Round(time.Second))
	}
	e.consecutive = 0
	e.lastErr = nil
	e.lastSuccess = e.clock.Now()
	if (e.bounded || e.opts.discoveryInterval <= 0) && len(e.unresolved) == 0 {
		e.complete = true
	}
	return true
}

// failingSince is when discovery last worked (or started); e.mu is held.
func (e *enumerator) failingSince() time.Time {
	if e.lastSuccess.IsZero() {
		return e.started
	}
	return e.lastSuccess
}

// record takes in a listing: partitions not seen before wait for their start offsets.
func (e *enumerator) record(l *listing) {
	e.mu.Lock()
	defer e.mu.Unlock()
	initial := !e.listed && !e.restored
	for topic, parts := range l.partitions {
		for _, p := range parts {
			k := partitionKey{topic, p}
			if e.known[k] {
				continue
			}
			if _, waiting := e.unresolved[k]; !waiting {
				e.unresolved[k] = initial
			}
		}
	}
	if len(l.brokers) > 0 {
		e.brokers = l.brokers
	}
	if strings.Join(e.missing, ",") != strings.Join(l.missing, ",") && len(l.missing) > 0 {
		e.log.Warn("kafka source: topics not found; waiting for them", "table", e.opts.table, "topics", strings.Join(l.missing, ", "))
	}
	e.missing = l.missing
	if len(l.leaderless) > 0 && partitionList(l.leaderless) != partitionList(e.leaderless) {
		e.log.Warn("kafka source: partitions without a leader; reading them waits for one", "table", e.opts.table,
			"partitions", partitionList(l.leaderless))
	}
	if len(l.leaderless) == 0 && len(e.leaderless) > 0 {
		e.log.Warn("kafka source: every partition has a leader again", "table", e.opts.table)
	}
	e.leaderless = l.leaderless
	if e.bounded && len(l.missing) > 0 && e.fatal == nil {
		e.fatal = fmt.Errorf("kafka source %s: %w: %s", e.opts.table, ErrTopicNotFound, strings.Join(l.missing, ", "))
	}
	if !e.listed {
		e.listed = true
		close(e.listedOnce)
	}
}

// resolve finds where each listed-but-unassigned partition starts (and, when bounded,
// ends) and queues it for the reader. A partition whose lookup failed stays unresolved
// for the next attempt.
func (e *enumerator) resolve(ctx context.Context) error {
	e.mu.Lock()
	var startup, fresh []partitionKey
	for k, initial := range e.unresolved {
		if initial {
			startup = append(startup, k)
		} else {
			fresh = append(fresh, k)
		}
	}
	e.mu.Unlock()
	if len(startup)+len(fresh) == 0 {
		return nil
	}
	sortKeys(startup)
	sortKeys(fresh)

	r := &offsetResolver{e: e, ctx: ctx}
	starts := map[partitionKey]int64{}
	for _, k := range fresh {
		// New partitions start at the earliest offset, so that nothing written to them
		// before they were discovered is missed.
		starts[k] = offsetEarliest
	}
	r.starts(startup, starts)
	stops := map[partitionKey]int64{}
	if e.bounded {
		r.stops(append(append([]partitionKey(nil), startup...), fresh...), stops)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	var ready []assignment
	for _, k := range append(startup, fresh...) {
		start, ok := starts[k]
		if !ok {
			continue
		}
		stop := int64(noStop)
		if e.bounded {
			if stop, ok = stops[k]; !ok {
				continue
			}
		}
		ready = append(ready, assignment{key: k, start: start, stop: stop})
		delete(e.unresolved, k)
		e.known[k] = true
	}
	e.pending = append(e.pending, ready...)
	if r.fatal != nil && e.fatal == nil {
		e.fatal = r.fatal
	}
	return errors.Join(r.errs...)
}

// take returns the partitions queued for the reader since the last call.
func (e *enumerator) take() []assignment {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.pending
	e.pending = nil
	return out
}

// finished reports whether a bounded source has been given every partition it will get.
func (e *enumerator) finished() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.complete && len(e.pending) == 0
}

func (e *enumerator) fatalErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fatal
}

// describeLocked says what a discovery error means, naming the brokers when none answered.
func (e *enumerator) describeLocked(err error) string {
	if e.client.allDown.Load() || isTransport(err) {
		return (&BrokersError{Tried: tried(e.client.bootstrap, e.brokers), Last: err}).Error()
	}
	if isTimeout(err) {
		return fmt.Sprintf("the cluster did not answer within %s (brokers %s): %v", e.settings.apiTimeout,
			strings.Join(tried(e.client.bootstrap, e.brokers), ", "), err)
	}
	return err.Error()
}

// brokersError is the error of a source whose first listing never succeeded.
func (e *enumerator) brokersError() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return &BrokersError{Tried: tried(e.client.bootstrap, e.brokers), Last: e.lastErr}
}

func isTransport(err error) bool {
	var ke ckafka.Error
	if errors.As(err, &ke) {
		switch ke.Code() {
		case ckafka.ErrTransport, ckafka.ErrAllBrokersDown:
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	var ke ckafka.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ke) && ke.Code() == ckafka.ErrTimedOut
}

// degraded returns why discovery is not healthy, or "".
func (e *enumerator) degraded() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var parts []string
	now := e.clock.Now()
	switch {
	case e.consecutive > 0:
		since := e.lastSuccess
		if since.IsZero() {
			since = e.started
		}
		parts = append(parts, fmt.Sprintf("partition discovery failing for %s (%d attempts): %s",
			now.Sub(since).Round(time.Second), e.consecutive, e.describeLocked(e.lastErr)))
	case !e.inFlight.IsZero():
		slow := e.settings.apiTimeout
		if iv := e.opts.discoveryInterval; iv > 0 && iv < slow {
			slow = iv
		}
		if waited := now.Sub(e.inFlight); waited > slow {
			parts = append(parts, fmt.Sprintf("partition discovery waiting for the cluster for %s", waited.Round(time.Second)))
		}
	}
	if len(e.missing) > 0 {
		parts = append(parts, "topics not found: "+strings.Join(e.missing, ", "))
	}
	if len(e.leaderless) > 0 {
		parts = append(parts, fmt.Sprintf("%d partitions without a leader, not read until one is elected: %s",
			len(e.leaderless), partitionList(e.leaderless)))
	}
	return strings.Join(parts, "; ")
}

// discoveryStats are the enumerator's counters.
type discoveryStats struct {
	attempts, failures uint64
	lastSuccess        time.Time
}

func (e *enumerator) stats() discoveryStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return discoveryStats{attempts: e.attempts, failures: e.failures, lastSuccess: e.lastSuccess}
}

// offsetResolver looks up start and stop offsets for one attempt, collecting failures.
type offsetResolver struct {
	e     *enumerator
	ctx   context.Context
	errs  []error
	fatal error
}

func (r *offsetResolver) fail(err error) { r.errs = append(r.errs, err) }

// remaining is the time left before ctx's deadline, at least a millisecond.
func remaining(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return defaultAPITimeout
	}
	return max(time.Until(d), time.Millisecond)
}

// query looks up spec for every partition of keys.
func (r *offsetResolver) query(keys []partitionKey, spec ckafka.OffsetSpec) map[partitionKey]int64 {
	qs := make([]offsetQuery, len(keys))
	for i, k := range keys {
		qs[i] = offsetQuery{key: k, spec: spec}
	}
	out, err := r.e.client.listOffsets(r.ctx, remaining(r.ctx), qs)
	if err != nil {
		r.fail(err)
	}
	return out
}

// atTimestamp returns the first offset at or after ts (milliseconds), or the end
// offset when no record is that recent yet.
func (r *offsetResolver) atTimestamp(keys []partitionKey, ts int64) map[partitionKey]int64 {
	out := r.query(keys, ckafka.NewOffsetSpecForTimestamp(ts))
	var none []partitionKey
	for k, off := range out {
		if off < 0 {
			none = append(none, k)
			delete(out, k)
		}
	}
	for k, off := range r.query(none, ckafka.LatestOffsetSpec) {
		out[k] = off
	}
	return out
}

func (r *offsetResolver) committed(keys []partitionKey) map[partitionKey]int64 {
	if len(keys) == 0 {
		return nil
	}
	out, err := r.e.client.committed(r.ctx, remaining(r.ctx), keys)
	if err != nil {
		r.fail(err)
	}
	return out
}

// orReset applies 'auto.offset.reset' to partitions the group has no offset for.
func (r *offsetResolver) orReset(committed map[partitionKey]int64, into map[partitionKey]int64) {
	var latest []partitionKey
	var none []string
	for k, off := range committed {
		switch {
		case off >= 0:
			into[k] = off
		case r.e.settings.offsetReset == "latest":
			latest = append(latest, k)
		case r.e.settings.offsetReset == "none":
			none = append(none, k.split())
		default:
			into[k] = offsetEarliest
		}
	}
	for k, off := range r.query(latest, ckafka.LatestOffsetSpec) {
		into[k] = off
	}
	if len(none) > 0 {
		sort.Strings(none)
		r.fatal = fmt.Errorf("kafka source %s: %w in group %s for %s and 'properties.auto.offset.reset' is none",
			r.e.opts.table, ErrNoCommittedOffset, r.e.settings.groupID, strings.Join(none, ", "))
	}
}

// starts resolves where startup partitions begin, by 'scan.startup.mode'.
func (r *offsetResolver) starts(keys []partitionKey, into map[partitionKey]int64) {
	if len(keys) == 0 {
		return
	}
	o := r.e.opts
	switch o.startupMode {
	case modeEarliest:
		for _, k := range keys {
			into[k] = offsetEarliest
		}
	case modeLatest:
		for k, off := range r.query(keys, ckafka.LatestOffsetSpec) {
			into[k] = off
		}
	case modeTimestamp:
		for k, off := range r.atTimestamp(keys, o.startupTimestamp) {
			into[k] = off
		}
	case modeSpecific:
		// Partitions the option does not name start at the group's committed offset,
		// else by 'auto.offset.reset', as Flink's specified-offsets initializer does.
		var rest []partitionKey
		for _, k := range keys {
			if off, ok := o.startupOffsets[k.partition]; ok {
				into[k] = off
			} else {
				rest = append(rest, k)
			}
		}
		if r.e.settings.groupID == "" {
			for _, k := range rest {
				into[k] = offsetEarliest
			}
		} else {
			r.orReset(r.committed(rest), into)
		}
	case modeGroup:
		ends := map[partitionKey]int64{}
		r.orReset(r.committed(keys), ends)
		for k, off := range ends {
			into[k] = max(off, 0) // "earliest" as an end reads nothing
		}
	}
}

// stops resolves where a bounded read of keys ends, by 'scan.bounded.mode'.
func (r *offsetResolver) stops(keys []partitionKey, into map[partitionKey]int64) {
	if len(keys) == 0 {
		return
	}
	o := r.e.opts
	switch o.boundedMode {
	case modeLatest:
		for k, off := range r.query(keys, ckafka.LatestOffsetSpec) {
			into[k] = off
		}
	case modeTimestamp:
		for k, off := range r.atTimestamp(keys, o.boundedTimestamp) {
			into[k] = off
		}
	case modeSpecific:
		for _, k := range keys {
			if off, ok := o.boundedOffsets[k.partition]; ok {
				into[k] = off
			} else {
				// As in Flink: a partition without an end offset is not read at all.
				into[k] = 0
			}
		}
	case modeGroup:
		ends := map[partitionKey]int64{}
		r.orReset(r.committed(keys), ends)
		for k, off := range ends {
			into[k] = max(off, 0) // "earliest" as an end reads nothing
		}
	}
}
