package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// closeWait bounds how long Close waits for the discovery and commit goroutines; a
// request stuck on a hung broker finishes within its own timeout and then releases its
// client in the background.
const closeWait = 3 * time.Second

// Source reads a Kafka table: an enumerator discovers partitions on its own goroutine,
// one librdkafka consumer reads the assigned partitions, and Poll decodes records into
// rows. See the package documentation for how it behaves when brokers fail.
type Source struct {
	opts  *tableOptions
	set   *clientSettings
	log   connectors.Logger
	clock connectors.Clock

	consumer *ckafka.Consumer
	fetch    *prefetcher // takes the consumer's events out of librdkafka
	meta     *metadataClient
	enum     *enumerator
	commits  *committer // nil without a group.id
	cancel   context.CancelFunc
	logs     chan ckafka.LogEvent
	logsQuit chan struct{}

	dec *rowDecoder
	// upsertKeys decodes the key of an upsert-kafka tombstone, nil for 'kafka'.
	upsertKeys *keyDecoder
	// changelog: rows carry kinds (upsert-kafka, or a CDC value format).
	changelog   bool
	changeRows  []types.Row
	changeKinds []connectors.RowKind
	parts       map[partitionKey]*partState
	active      int // assigned and not finished
	splits      []string
	last        *partState // the partition of the previous record, to skip the map lookup

	epoch     uint64
	arena     []types.Value
	batches   []connectors.SourceBatch
	counts    []int       // rows per batch in this Poll
	pollBytes int         // key and value bytes of this Poll's rows
	polled    []polledRow // rows of this Poll in arrival order, before batching

	pendingErr   error
	lastSnapshot map[partitionKey]int64
	// deferred holds the restored partitions, handed to the reader at the first Poll:
	// not before CheckRestored has seen that the cluster is the one they belong to, so
	// that librdkafka never fetches (and resets) offsets of another cluster.
	deferred     []ckafka.TopicPartition
	deferAssign  bool
	periodic     bool
	lastPeriodic time.Time
	readerDown   atomic.Bool
	// stopping is closed when the source closes; probes are the reachability probes
	// running (probeReachable), which must end before the reader's client closes.
	stopping <-chan struct{}
	probes   sync.WaitGroup
	closed   bool

	records      atomic.Uint64
	bytes        atomic.Uint64
	skipped      atomic.Uint64
	tombstones   atomic.Uint64
	clientErrors atomic.Uint64
	assigned     atomic.Int64
}

// partState is the reader's state of one assigned partition.
type partState struct {
	key      partitionKey
	topic    *string // shared by the TopicPartitions the reader builds
	split    string
	next     int64 // next offset to read, or offsetEarliest before the first record
	stop     int64 // noStop, or where a bounded read ends
	finished bool
	lastErr  string // the partition's last error, so that a repeated one is logged once
	epoch    uint64 // the Poll that batch belongs to
	batch    int    // index of this partition's batch in that Poll
}

// polledRow is a decoded row waiting to be put into its partition's batch.
type polledRow struct {
	batch int
	row   types.Row
	kind  connectors.RowKind
}

var (
	_ connectors.Source = (*Source)(nil)
	_ connectors.Status = (*Source)(nil)
)

// NewSource opens a Kafka source; it is the factory's NewSource.
func NewSource(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
	return Open(ctx, cfg)
}

// Open opens a Kafka source. Without restored state it waits (retrying with backoff,
// for as long as ctx allows) until the cluster has listed the partitions, and fails
// with a *BrokersError naming every broker tried when ctx ends first. With restored
// state it starts at once from the checkpoint's offsets (read from the first Poll on,
// after CheckRestored), and discovery catches up in the background. Its waits and
// intervals run on cfg.Clock.
func Open(ctx context.Context, cfg connectors.SourceConfig) (*Source, error) {
	return open(ctx, cfg, true)
}

// open is Open; without prefetch, Poll takes events out of librdkafka itself (the
// benchmark compares both ways).
func open(ctx context.Context, cfg connectors.SourceConfig, prefetch bool) (*Source, error) {
	return openKafkaSource(ctx, cfg, prefetch, false)
}

// openKafkaSource opens a 'kafka' source, or an 'upsert-kafka' one (changelog.go).
func openKafkaSource(ctx context.Context, cfg connectors.SourceConfig, prefetch, upsert bool) (*Source, error) {
	clock := connectors.ClockOr(cfg.Clock)
	o, err := parseOptions(cfg.TableInfo, upsert)
	if err != nil {
		return nil, err
	}
	if err := o.checkSource(cfg.Options); err != nil {
		return nil, err
	}
	set, err := resolveProperties(cfg.Name, cfg.Options, forSource)
	if err != nil {
		return nil, err
	}
	dec, err := newRowDecoder(o, cfg)
	if err != nil {
		return nil, err
	}
	var tombstones *keyDecoder
	if upsert {
		if tombstones, err = newKeyDecoder(o, cfg); err != nil {
			return nil, err
		}
	}
	var restored []position
	if cfg.Restored != nil {
		if restored, err = decodeSnapshot(cfg.Restored); err != nil {
			return nil, fmt.Errorf("kafka source %s: %w", cfg.Name, err)
		}
	}
	log := cfg.Log
	for _, note := range set.ignored {
		log.Info("kafka source: property ignored", "table", cfg.Name, "property", note)
	}

	s := &Source{
		opts: o, set: set, log: log, clock: clock, dec: dec, upsertKeys: tombstones,
		changelog: upsert || dec.changes != nil,
		parts:     map[partitionKey]*partState{},
		logs:      make(chan ckafka.LogEvent, 256),
		logsQuit:  make(chan struct{}),
	}
	s.periodic = set.groupID != "" && set.autoCommit != nil && *set.autoCommit ||
		set.groupID != "" && set.autoCommit == nil && !checkpointing(cfg.Settings)
	s.lastPeriodic = clock.Now()
	go forwardLogs(s.logs, s.logsQuit, log, cfg.Name)

	readerConf := s.librdkafkaConfig(o.boundedMode != modeUnbounded)
	if s.consumer, err = ckafka.NewConsumer(&readerConf); err != nil {
		close(s.logsQuit)
		return nil, fmt.Errorf("kafka source %s: create consumer: %w", cfg.Name, err)
	}
	metaConf := s.librdkafkaConfig(false)
	if s.meta, err = newMetadataClient(metaConf, set.groupID, set.bootstrap); err != nil {
		s.consumer.Close()
		close(s.logsQuit)
		return nil, fmt.Errorf("kafka source %s: create metadata client: %w", cfg.Name, err)
	}
	s.enum = newEnumerator(o, set, s.meta, clock, log)
	if set.groupID != "" {
		connect := func() (*metadataClient, error) { return newMetadataClient(metaConf, set.groupID, set.bootstrap) }
		cc, err := connect()
		if err != nil {
			s.meta.close()
			s.consumer.Close()
			close(s.logsQuit)
			return nil, fmt.Errorf("kafka source %s: create commit client: %w", cfg.Name, err)
		}
		s.commits = newCommitter(cc, connect, set, log, cfg.Name)
	}

	var restoredKeys []partitionKey
	var toAssign []assignment
	for _, p := range restored {
		if !o.reads(p.key.topic) {
			log.Warn("kafka source: checkpoint has a partition of a topic the table no longer reads; it is dropped",
				"table", cfg.Name, "partition", p.key.split())
			continue
		}
		restoredKeys = append(restoredKeys, p.key)
		toAssign = append(toAssign, assignment{key: p.key, start: p.next, stop: p.stop})
	}
	if cfg.Restored != nil {
		s.enum.restore(restoredKeys)
	}

	bg, cancel := context.WithCancel(context.Background())
	s.cancel, s.stopping = cancel, bg.Done()
	if prefetch {
		s.fetch = startPrefetch(s.consumer, clock)
	}
	go s.enum.run(bg)
	if s.commits != nil {
		go s.commits.run(bg)
	}
	s.deferAssign = true
	err = s.assign(toAssign)
	s.deferAssign = false
	if err != nil {
		s.Close()
		return nil, err
	}
	if cfg.Restored == nil {
		select {
		case <-s.enum.listedOnce:
		case <-ctx.Done():
			err := s.enum.brokersError()
			s.Close()
			return nil, fmt.Errorf("kafka source %s: %w", cfg.Name, err)
		}
	}
	return s, nil
}

// reads reports whether the table reads topic (its checkpoint may be older than its options).
func (o *tableOptions) reads(topic string) bool {
	if o.pattern != nil {
		return o.pattern.MatchString(topic)
	}
	for _, t := range o.topics {
		if t == topic {
			return true
		}
	}
	return false
}

// checkpointing reports whether the job's settings turn checkpointing on.
func checkpointing(settings map[string]string) bool {
	v, ok := settings["execution.checkpointing.interval"]
	if !ok {
		return false
	}
	d, err := connectors.ParseDuration(v)
	return err == nil && d > 0
}

// librdkafkaConfig is the configuration of one of the source's clients. The source
// assigns partitions itself, stores no offsets in librdkafka and commits through the
// admin API, so librdkafka's own group machinery stays idle. librdkafka needs a group
// id even so; without the user's, one is made up and never committed to.
func (s *Source) librdkafkaConfig(eof bool) ckafka.ConfigMap {
	m := ckafka.ConfigMap{}
	for k, v := range s.set.rd {
		m[k] = v
	}
	group := s.set.groupID
	if group == "" {
		group = "pipesql-" + s.opts.table
	}
	m["group.id"] = group
	if _, ok := m["client.id"]; !ok {
		m["client.id"] = "pipesql-" + s.opts.table
	}
	m["enable.auto.commit"] = false
	m["enable.auto.offset.store"] = false
	m["enable.partition.eof"] = eof
	reset := s.set.offsetReset
	if reset == "none" {
		reset = "error"
	}
	m["auto.offset.reset"] = reset
	m["go.logs.channel.enable"] = true
	m["go.logs.channel"] = s.logs
	return m
}

// assign starts reading partitions. A partition whose bounded range is empty is
// finished at once and never assigned.
func (s *Source) assign(as []assignment) error {
	if len(as) == 0 {
		return nil
	}
	var tps []ckafka.TopicPartition
	for _, a := range as {
		if _, dup := s.parts[a.key]; dup {
			// The enumerator never hands a partition out twice; a duplicate would mean
			// reading records twice, so refuse it loudly.
			return fmt.Errorf("kafka source %s: partition %s assigned twice", s.opts.table, a.key)
		}
		topic := a.key.topic
		ps := &partState{key: a.key, topic: &topic, split: a.key.split(), next: a.start, stop: a.stop}
		s.parts[a.key] = ps
		if ps.stop == 0 || ps.stop > 0 && ps.next >= ps.stop {
			ps.finished = true
			continue
		}
		s.active++
		tps = append(tps, ckafka.TopicPartition{Topic: ps.topic, Partition: a.key.partition, Offset: ckafka.Offset(a.start)})
	}
	s.refreshSplits()
	if len(tps) == 0 {
		return nil
	}
	if s.deferAssign {
		s.deferred = append(s.deferred, tps...)
		return nil
	}
	if err := s.consumer.IncrementalAssign(tps); err != nil {
		return fmt.Errorf("kafka source %s: assign partitions: %w", s.opts.table, err)
	}
	return nil
}

func (s *Source) refreshSplits() {
	s.splits = s.splits[:0]
	for _, ps := range s.parts {
		if !ps.finished {
			s.splits = append(s.splits, ps.split)
		}
	}
	sort.Strings(s.splits)
	s.assigned.Store(int64(len(s.splits)))
}

// finish ends a bounded partition: it is unassigned so that nothing more is fetched.
func (s *Source) finish(ps *partState) {
	if ps.finished {
		return
	}
	ps.finished = true
	s.active--
	tp := ckafka.TopicPartition{Topic: ps.topic, Partition: ps.key.partition}
	if err := s.consumer.IncrementalUnassign([]ckafka.TopicPartition{tp}); err != nil {
		s.log.Warn("kafka source: unassigning a finished partition failed", "table", s.opts.table,
			"partition", ps.split, "error", err)
	}
	s.refreshSplits()
}

func (s *Source) bounded() bool { return s.opts.boundedMode != modeUnbounded }

// Poll returns the records read since the last call, grouped by partition, waiting up
// to about maxWait when none is ready. Broker trouble never makes Poll fail: librdkafka
// reconnects and the source shows as degraded meanwhile. Poll fails on a record it
// cannot decode (unless the format ignores parse errors), on a definitive problem
// (a bounded read's topic does not exist, 'group-offsets' without a committed offset
// and auto.offset.reset none) and on a fatal client error. A bounded source returns
// io.EOF once every partition reached its end.
func (s *Source) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.pendingErr != nil {
		return nil, s.pendingErr
	}
	if err := s.enum.fatalErr(); err != nil {
		return nil, err
	}
	if len(s.deferred) > 0 {
		if err := s.consumer.IncrementalAssign(s.deferred); err != nil {
			return nil, fmt.Errorf("kafka source %s: assign partitions: %w", s.opts.table, err)
		}
		s.deferred = nil
	}
	if err := s.assign(s.enum.take()); err != nil {
		return nil, err
	}
	if s.bounded() && s.active == 0 && s.enum.finished() {
		return nil, io.EOF
	}
	s.epoch++
	s.batches = nil
	s.counts = s.counts[:0]
	deadline := s.clock.Now().Add(maxWait)
	n := 0
	for n < s.set.maxPollRecords && s.pendingErr == nil {
		var wait time.Duration
		if n == 0 {
			if wait = deadline.Sub(s.clock.Now()); wait < 0 {
				break
			}
		}
		ev := s.nextEvent(wait)
		if ev == nil {
			if n > 0 || !s.clock.Now().Before(deadline) || s.bounded() && s.active == 0 {
				break
			}
			continue
		}
		switch e := ev.(type) {
		case *ckafka.Message:
			if s.record(e) {
				n++
			}
		case ckafka.PartitionEOF:
			if ps := s.lookup(e.Topic, e.Partition); ps != nil && ps.stop >= 0 && int64(e.Offset) >= ps.stop {
				s.finish(ps)
			}
		case ckafka.Error:
			if err := s.clientError(e); err != nil {
				return s.batchRows(), err
			}
		}
	}
	batches := s.batchRows()
	if s.periodic {
		if now := s.clock.Now(); now.Sub(s.lastPeriodic) >= s.set.commitInterval {
			s.lastPeriodic = now
			s.commits.request(s.positions())
		}
	}
	return batches, nil
}

// nextEvent returns the reader's next event, waiting up to wait; nil when none came.
func (s *Source) nextEvent(wait time.Duration) ckafka.Event {
	if s.fetch == nil {
		return s.consumer.Poll(int(wait / time.Millisecond))
	}
	return s.fetch.next(wait)
}

// batchRows puts the rows of this Poll into their batches: one allocation holds every
// batch's rows, each batch a slice of it.
func (s *Source) batchRows() []connectors.SourceBatch {
	if len(s.polled) == 0 {
		return s.batches
	}
	// The counters are updated once per Poll: Stats may be read from other goroutines.
	s.records.Add(uint64(len(s.polled)))
	s.bytes.Add(uint64(s.pollBytes))
	s.pollBytes = 0
	all := make([]types.Row, len(s.polled))
	off := 0
	for i, n := range s.counts {
		s.batches[i].Rows = all[off : off : off+n]
		off += n
	}
	var allKinds []connectors.RowKind
	if s.changelog {
		allKinds = make([]connectors.RowKind, len(s.polled))
		off = 0
		for i, n := range s.counts {
			s.batches[i].Kinds = allKinds[off : off : off+n]
			off += n
		}
	}
	for _, p := range s.polled {
		b := &s.batches[p.batch]
		b.Rows = append(b.Rows, p.row)
		if allKinds != nil {
			b.Kinds = append(b.Kinds, p.kind)
		}
	}
	clear(s.polled) // the rows belong to the caller now
	s.polled = s.polled[:0]
	return s.batches
}

func (s *Source) lookup(topic *string, partition int32) *partState {
	if topic == nil {
		return nil
	}
	if l := s.last; l != nil && l.key.partition == partition && l.key.topic == *topic {
		return l
	}
	ps := s.parts[partitionKey{*topic, partition}]
	if ps != nil {
		s.last = ps
	}
	return ps
}

// record takes one message; it reports whether a row was added.
func (s *Source) record(m *ckafka.Message) bool {
	tp := m.TopicPartition
	ps := s.lookup(tp.Topic, tp.Partition)
	if ps == nil || ps.finished {
		return false // fetched before the partition was finished and unassigned
	}
	if tp.Error != nil {
		s.clientErrors.Add(1)
		if msg := tp.Error.Error(); msg != ps.lastErr {
			ps.lastErr = msg
			s.log.Warn("kafka source: partition error; reading continues", "table", s.opts.table,
				"partition", ps.split, "error", tp.Error)
		}
		return false
	}
	ps.lastErr = ""
	if s.readerDown.Swap(false) {
		s.log.Warn("kafka source: brokers reachable again; reading resumed", "table", s.opts.table)
	}
	off := int64(tp.Offset)
	if ps.stop >= 0 && off >= ps.stop {
		s.finish(ps)
		return false
	}
	added := false
	badRecord := func(err error) {
		rerr := &RecordError{Table: s.opts.table, Topic: ps.key.topic, Partition: ps.key.partition,
			Offset: off, Err: fmt.Errorf("%w: %w", ErrBadRecord, err)}
		if !errors.Is(err, connectors.ErrSkipped) {
			s.pendingErr = rerr
			return
		}
		s.skip(rerr)
	}
	switch {
	case m.Value == nil && s.upsertKeys != nil:
		// upsert-kafka: a tombstone deletes its key.
		s.tombstones.Add(1)
		row := s.newRow()
		if err := s.upsertKeys.decode(m.Key, row); err != nil {
			badRecord(err)
			if s.pendingErr != nil {
				return false
			}
			break
		}
		s.addKind(ps, row, connectors.Delete)
		s.pollBytes += len(m.Key)
		added = true
	case m.Value == nil:
		// A tombstone has no row to give; Flink's Kafka source drops it too.
		s.tombstones.Add(1)
	case s.dec.changes != nil:
		rows, kinds, err := s.dec.decodeChanges(m, ps.key.topic, s.newRow, s.changeRows[:0], s.changeKinds[:0])
		if err != nil {
			badRecord(err)
			if s.pendingErr != nil {
				return false
			}
			break
		}
		for i, row := range rows {
			s.addKind(ps, row, kinds[i])
		}
		clear(rows)
		s.changeRows, s.changeKinds = rows[:0], kinds[:0]
		s.pollBytes += len(m.Key) + len(m.Value)
		added = len(rows) > 0
	default:
		row := s.newRow()
		if err := s.dec.decode(m, ps.key.topic, row); err != nil {
			rerr := &RecordError{Table: s.opts.table, Topic: ps.key.topic, Partition: ps.key.partition,
				Offset: off, Err: fmt.Errorf("%w: %w", ErrBadRecord, err)}
			if !errors.Is(err, connectors.ErrSkipped) {
				s.pendingErr = rerr
				return false
			}
			s.skip(rerr)
			break
		}
		s.add(ps, row)
		s.pollBytes += len(m.Key) + len(m.Value)
		added = true
	}
	ps.next = off + 1
	if ps.stop >= 0 && ps.next >= ps.stop {
		s.finish(ps)
	}
	return added
}

// skip counts a record the format could not parse and ignores. The job's log gets the
// first one, where it is, and the count at every power of ten, so that a stream of bad
// records is visible without a line per record; Close logs the total.
func (s *Source) skip(err *RecordError) {
	n := s.skipped.Add(1)
	switch {
	case n == 1:
		s.log.Warn("kafka source: skipping records that cannot be parsed", "table", s.opts.table, "first", err.Error())
	case isPowerOfTen(n):
		s.log.Warn("kafka source: skipping records that cannot be parsed", "table", s.opts.table, "skipped", n, "last", err.Error())
	}
}

func isPowerOfTen(n uint64) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

// Skipped returns how many records were skipped because the format ignores parse
// errors; the runtime shows it in its metrics (exec.SkipCounter).
func (s *Source) Skipped() int64 { return int64(s.skipped.Load()) }

// newRow returns a row of the produced width, carved from a shared block to save
// allocations; rows are handed to the runtime and never reused.
func (s *Source) newRow() types.Row {
	w := s.dec.width
	if len(s.arena) < w {
		s.arena = make([]types.Value, max(w, 1)*256)
	}
	row := s.arena[:w:w]
	s.arena = s.arena[w:]
	return row
}

func (s *Source) add(ps *partState, row types.Row) { s.addKind(ps, row, connectors.Insert) }

// addKind adds row with its change kind.
func (s *Source) addKind(ps *partState, row types.Row, kind connectors.RowKind) {
	if ps.epoch != s.epoch {
		ps.epoch = s.epoch
		ps.batch = len(s.batches)
		s.batches = append(s.batches, connectors.SourceBatch{Split: ps.split})
		s.counts = append(s.counts, 0)
	}
	s.counts[ps.batch]++
	s.polled = append(s.polled, polledRow{batch: ps.batch, row: row, kind: kind})
}

// clientError handles an error librdkafka reports outside a record. Only a fatal one
// ends the source: the others are connection trouble librdkafka recovers from.
func (s *Source) clientError(e ckafka.Error) error {
	if e.IsFatal() {
		return fmt.Errorf("kafka source %s: %w: %v", s.opts.table, ErrClientFatal, e)
	}
	s.clientErrors.Add(1)
	if e.Code() == ckafka.ErrAllBrokersDown && !s.readerDown.Swap(true) {
		s.log.Warn("kafka source: no broker reachable; reading resumes when one is",
			"table", s.opts.table, "brokers", strings.Join(s.brokersTried(), ", "))
		s.probes.Add(1)
		go s.probeReachable()
	}
	return nil
}

// How often a source whose reader reached no broker asks whether one answers again,
// and how long each question may wait.
const (
	probeEvery   = 500 * time.Millisecond
	probeTimeout = 500 * time.Millisecond
)

// probeReachable runs while the reader reaches no broker, asking the reader's own
// client for metadata until a broker answers, then clears readerDown. librdkafka says
// when every broker is down but never when one is back; the next record says so too,
// but a source of an idle topic would otherwise stay degraded, "no broker reachable",
// long after its brokers returned.
func (s *Source) probeReachable() {
	defer s.probes.Done()
	for s.readerDown.Load() {
		if _, err := s.consumer.GetMetadata(nil, false, int(probeTimeout/time.Millisecond)); err == nil {
			if s.readerDown.Swap(false) {
				s.log.Warn("kafka source: brokers reachable again; reading resumed", "table", s.opts.table)
			}
			return
		}
		t := s.clock.NewTimer(probeEvery)
		select {
		case <-s.stopping:
			t.Stop()
			return
		case <-t.C():
		}
	}
}

func (s *Source) brokersTried() []string {
	s.enum.mu.Lock()
	defer s.enum.mu.Unlock()
	return tried(s.set.bootstrap, s.enum.brokers)
}

// Splits returns the partitions being read, as "topic-partition".
func (s *Source) Splits() []string {
	return append([]string(nil), s.splits...)
}

// positions returns the next offset of each partition that has read a record (or
// started at a known offset).
func (s *Source) positions() map[partitionKey]int64 {
	out := make(map[partitionKey]int64, len(s.parts))
	for k, ps := range s.parts {
		if ps.next >= 0 {
			out[k] = ps.next
		}
	}
	return out
}

// Snapshot returns the position after the last record Poll returned: for every
// partition the source has, its next offset and (bounded) its end.
func (s *Source) Snapshot() ([]byte, error) {
	if s.closed {
		return nil, ErrClosed
	}
	ps := make([]position, 0, len(s.parts))
	for _, p := range s.parts {
		ps = append(ps, position{key: p.key, next: p.next, stop: p.stop})
	}
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i].key, ps[j].key
		return a.topic < b.topic || a.topic == b.topic && a.partition < b.partition
	})
	s.lastSnapshot = s.positions()
	return encodeSnapshot(ps), nil
}

// CheckpointComplete commits the offsets of the last snapshot to the consumer group
// (when 'properties.group.id' is set). The commit runs in the background; a failure is
// logged, counted and shown by Degraded, never returned: committed offsets only show
// progress, and the source restores from checkpoints.
func (s *Source) CheckpointComplete(ctx context.Context, id uint64) error {
	if s.closed {
		return ErrClosed
	}
	if s.commits == nil || !s.set.commitOnCheckpoint || s.lastSnapshot == nil {
		return nil
	}
	s.commits.request(s.lastSnapshot)
	return nil
}

// Degraded returns why the source is working in a reduced way ("" when healthy):
// partition discovery failing or slow, topics missing, no broker reachable, or commits
// failing. Reading continues in every one of these states.
func (s *Source) Degraded() string {
	var parts []string
	if d := s.enum.degraded(); d != "" {
		parts = append(parts, d)
	}
	if s.readerDown.Load() {
		parts = append(parts, "no broker reachable (tried "+strings.Join(s.brokersTried(), ", ")+")")
	}
	if s.commits != nil {
		if d := s.commits.degraded(); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, "; ")
}

// Stats are a source's counters since it opened.
type Stats struct {
	Records      uint64 // rows returned by Poll
	Bytes        uint64 // key and value bytes of those records
	Skipped      uint64 // bad records skipped because the format ignores parse errors
	Tombstones   uint64 // records without a value, which hold no row
	ClientErrors uint64 // errors librdkafka reported and recovered from (brokers down, ...)
	Partitions   int    // partitions being read

	DiscoveryAttempts    uint64
	DiscoveryFailures    uint64
	LastDiscoverySuccess time.Time     // zero before the first success
	SinceDiscovery       time.Duration // since the last successful discovery, or since opening

	CommitsSucceeded  uint64
	CommitsFailed     uint64
	CommitsSuperseded uint64 // replaced by a newer commit before being sent
}

// Stats returns the source's counters. It is safe to call from any goroutine.
func (s *Source) Stats() Stats {
	d := s.enum.stats()
	st := Stats{
		Records:              s.records.Load(),
		Bytes:                s.bytes.Load(),
		Skipped:              s.skipped.Load(),
		Tombstones:           s.tombstones.Load(),
		ClientErrors:         s.clientErrors.Load(),
		Partitions:           int(s.assigned.Load()),
		DiscoveryAttempts:    d.attempts,
		DiscoveryFailures:    d.failures,
		LastDiscoverySuccess: d.lastSuccess,
	}
	since := d.lastSuccess
	if since.IsZero() {
		since = s.enum.started
	}
	st.SinceDiscovery = s.clock.Now().Sub(since)
	if s.commits != nil {
		st.CommitsSucceeded = s.commits.succeeded.Load()
		st.CommitsFailed = s.commits.failed.Load()
		st.CommitsSuperseded = s.commits.superseded.Load()
	}
	return st
}

// Close stops discovery and commits and closes the clients. A discovery request still
// waiting on a hung broker is not waited for beyond a few seconds: its client closes in
// the background once the request times out.
func (s *Source) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if n := s.skipped.Load(); n > 0 {
		s.log.Warn("kafka source: skipped records that could not be parsed", "table", s.opts.table, "skipped", n)
	}
	s.cancel()
	if s.fetch != nil {
		s.fetch.stop()
	}
	s.probes.Wait()
	err := s.consumer.Close()
	waitDone := func() bool {
		t := s.clock.NewTimer(closeWait)
		defer t.Stop()
		for _, ch := range s.goroutines() {
			select {
			case <-ch:
			case <-t.C():
				return false
			}
		}
		return true
	}
	if waitDone() {
		s.meta.close()
		close(s.logsQuit)
	} else {
		s.log.Info("kafka source: a discovery request is still waiting for the cluster; its client closes when it ends",
			"table", s.opts.table)
		go func() {
			for _, ch := range s.goroutines() {
				<-ch
			}
			s.meta.close()
			close(s.logsQuit)
		}()
	}
	if err != nil {
		return fmt.Errorf("kafka source %s: close: %w", s.opts.table, err)
	}
	return nil
}

func (s *Source) goroutines() []chan struct{} {
	chs := []chan struct{}{s.enum.done}
	if s.commits != nil {
		chs = append(chs, s.commits.done)
	}
	return chs
}
