package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
)

// Exactly-once: a two-phase commit over Kafka transactions
//
// At a checkpoint barrier the sink flushes the open transaction and leaves it open
// (pre-commit): its transactional id, producer id and epoch go into the checkpoint. When
// the checkpoint completes, the transaction is committed. A job restored from a
// checkpoint commits what that checkpoint staged (EndTxn with the stored producer id and
// epoch: the previous process may have died before it could), then fences every id of
// its pool with InitProducerID, which aborts whatever the dead process left open, so
// read_committed consumers never wait for a transaction nobody will end.
//
// librdkafka cannot do the recovery step: it neither exposes a transaction's producer
// id and epoch nor ends another producer's transaction. So this path produces through
// franz-go (kgo), whose ProducerID gives both, and whose raw requests end a restored
// transaction. The other delivery guarantees, and the source, stay on librdkafka.
//
// Ids come from a small pool, prefix-<subtask>-<index>, reused round robin, so brokers
// see the same few producer ids however long the job runs. At most one transaction is
// open; one is staged per checkpoint still being written (more while checkpoints fail,
// up to execution.checkpointing.tolerable-failed-checkpoints); and an id whose
// transaction was committed is reused only after the next checkpoint completes, so that
// the checkpoint which staged it, while it is the latest, never names a transaction the
// id has since begun.

const (
	txnStateVersion = 1
	// basePoolSize is the pool with every checkpoint completing: the open transaction,
	// the one staged for the checkpoint being written, and one committed but still
	// named by the latest completed checkpoint.
	basePoolSize = 3
	maxPoolSize  = 16
	// sinkSubtask is the sink instance's index in its ids: pipesql writes a table with one.
	sinkSubtask = 0
	// defaultTxnTimeout is the Java client's transaction.timeout.ms.
	defaultTxnTimeout = 60 * time.Second
)

// CommitDelayEnv, set to a duration, makes the exactly-once Kafka sink wait that
// long before committing the transactions of a completed checkpoint, after writing
// CommitAnnouncement and the checkpoint's id on stderr. It is for the crash test,
// which kills the process between the checkpoint's completion and the commit; nothing
// else sets it.
const CommitDelayEnv = "PIPESQL_TEST_KAFKA_COMMIT_DELAY"

// CommitAnnouncement starts the line written before each delayed commit.
const CommitAnnouncement = "pipesql-test: committing kafka transactions of checkpoint"

// txnState is the sink's checkpointed state, JSON behind a version byte.
type txnState struct {
	Prefix string      `json:"prefix"`
	Pool   int         `json:"pool"`
	Staged []stagedTxn `json:"staged"`
}

// stagedTxn is a transaction flushed at a barrier and not yet committed.
type stagedTxn struct {
	Checkpoint    uint64 `json:"checkpoint"`
	Index         int    `json:"index"`
	TransactionID string `json:"transactional_id"`
	ProducerID    int64  `json:"producer_id"`
	Epoch         int16  `json:"epoch"`
	at            time.Time
}

type slotState uint8

const (
	slotFree    slotState = iota
	slotOpen              // the transaction rows go to
	slotStaged            // flushed at a barrier, waiting for its checkpoint
	slotCooling           // committed; named by the latest completed checkpoint
)

// txnPool is the exactly-once part of a Sink.
type txnPool struct {
	prefix  string
	ids     []string
	clients []*kgo.Client // nil until the id is first used
	opts    []kgo.Opt     // of every client of the pool
	timeout time.Duration

	slots     []slotState
	coolUntil []uint64 // slotCooling: free once a checkpoint after this one completes
	next      int      // where the round robin looks first
	open      int      // index of the open transaction, -1 for none
	staged    []stagedTxn

	commitDelay time.Duration // CommitDelayEnv

	committed, aborted atomic.Uint64
	lingering          uint64 // aborted at start: left open by an earlier process
	recovered          uint64 // committed at start for the restored checkpoint
	commitTimes        histogram
}

// commitBuckets are the upper bounds, in seconds, of the barrier-to-commit histogram.
var commitBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(commitBuckets)+1)
	}
	i := sort.SearchFloat64s(commitBuckets, v)
	h.counts[i]++
	h.sum += v
	h.n++
}

func (h *histogram) measure(name, help string) connectors.Measure {
	m := connectors.Measure{Name: name, Help: help, Kind: connectors.Histogram, Value: h.sum, Count: h.n}
	var cum uint64
	for i, b := range commitBuckets {
		if h.counts != nil {
			cum += h.counts[i]
		}
		m.Buckets = append(m.Buckets, connectors.Bucket{UpperBound: b, Count: cum})
	}
	return m
}

// poolSize is how many ids a sink needs: basePoolSize, plus one for each checkpoint that
// may fail in a row without failing the job (its transaction stays staged until a later
// checkpoint covers it).
func poolSize(settings map[string]string) int {
	v := config.Read(settings)
	n := basePoolSize
	if v.IsSet(config.CheckpointTolerable) {
		if t := v.Int(config.CheckpointTolerable); v.Err() == nil && t > 0 {
			n += t
		}
	}
	return min(n, maxPoolSize)
}

// transactionalID is the id of index i of a pool.
func transactionalID(prefix string, i int) string {
	return prefix + "-" + strconv.Itoa(sinkSubtask) + "-" + strconv.Itoa(i)
}

// transactionTimeout is the table's transaction.timeout.ms, else the Java default.
func transactionTimeout(options map[string]string) (time.Duration, error) {
	v, ok := options[propertiesPrefix+"transaction.timeout.ms"]
	if !ok {
		return defaultTxnTimeout, nil
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%w: transaction.timeout.ms must be a positive number of milliseconds, got %q", ErrBadOptions, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// ValidateWrite checks a kafka or upsert-kafka table written by a job against the job's
// settings: with 'exactly-once', a transaction stays open for a checkpoint interval and
// then until its checkpoint completes, so an interval that is not shorter than
// transaction.timeout.ms would have the broker abort every transaction before its
// commit. upsert selects the rules of 'upsert-kafka'. It is the factories' ValidateWrite.
func ValidateWrite(t connectors.TableInfo, settings map[string]string, upsert bool) error {
	o, err := parseOptions(t, upsert)
	if err != nil || o.delivery != deliveryExactlyOnce {
		return nil // Validate reports bad options
	}
	timeout, err := transactionTimeout(t.Options)
	if err != nil {
		return fmt.Errorf("kafka sink %s: %w", t.Name, err)
	}
	v := config.Read(settings)
	interval := v.Duration(config.CheckpointInterval)
	if v.Err() != nil || interval <= 0 {
		return nil
	}
	if interval >= timeout {
		return fmt.Errorf("kafka sink %s: %w: 'execution.checkpointing.interval' (%s) is not shorter than 'properties.transaction.timeout.ms' (%s): "+
			"an exactly-once transaction stays open for an interval and then until its checkpoint completes, so the broker would abort it first; "+
			"raise transaction.timeout.ms (up to the brokers' transaction.max.timeout.ms) or checkpoint more often",
			t.Name, ErrBadOptions, interval, timeout)
	}
	return nil
}

// kgoOptions are the franz-go options of the exactly-once path, from the table's
// properties. Properties that would change how the clients connect, which this path
// does not translate yet, are refused rather than ignored.
func kgoOptions(table string, set *clientSettings, o *tableOptions) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(set.bootstrap...), kgo.RequiredAcks(kgo.AllISRAcks())}
	switch o.partitioner {
	case partitionerFixed:
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	case partitionerRoundRobin:
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	default:
		// murmur2 of the key as Kafka's default partitioner (and librdkafka's
		// murmur2_random), so keys land where the other guarantees put them.
		opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	}
	ms := func(k string) (time.Duration, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(set.rd[k]), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("kafka sink %s: %w: properties.%s must be milliseconds, got %q", table, ErrBadOptions, k, set.rd[k])
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	keys := make([]string, 0, len(set.rd))
	for k := range set.rd {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := set.rd[k]
		switch k {
		case "bootstrap.servers", "metadata.broker.list", "transaction.timeout.ms", "partitioner",
			"reconnect.backoff.ms", "reconnect.backoff.max.ms", "enable.idempotence", "socket.timeout.ms",
			"socket.connection.setup.timeout.ms", "topic.metadata.refresh.interval.ms", "retries", "retry.backoff.ms",
			"message.send.max.retries", "queue.buffering.max.messages", "queue.buffering.max.kbytes", "batch.num.messages",
			"max.in.flight.requests.per.connection", "max.in.flight", "retry.backoff.max.ms", "connections.max.idle.ms",
			"socket.receive.buffer.bytes", "socket.send.buffer.bytes", "client.rack", "check.crcs",
			// a consumer's, when a table read and written carries them
			"group.id", "group.instance.id", "auto.offset.reset", "enable.auto.offset.store", "enable.partition.eof",
			"enable.auto.commit", "auto.commit.interval.ms", "fetch.max.bytes", "fetch.min.bytes", "fetch.wait.max.ms",
			"max.partition.fetch.bytes", "max.poll.interval.ms", "session.timeout.ms", "heartbeat.interval.ms",
			"partition.assignment.strategy", "isolation.level":
			// Set from elsewhere, a consumer's, or tuning of librdkafka's own queues and
			// sockets that franz-go handles its way.
		case "allow.auto.create.topics":
			if strings.EqualFold(strings.TrimSpace(v), "true") {
				opts = append(opts, kgo.AllowAutoTopicCreation())
			}
		case "batch.size", "message.max.bytes":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("kafka sink %s: %w: properties.%s must be a positive number of bytes, got %q", table, ErrBadOptions, k, v)
			}
			opts = append(opts, kgo.ProducerBatchMaxBytes(int32(n)))
		case "client.id":
			opts = append(opts, kgo.ClientID(v))
		case "acks", "request.required.acks":
			if a := strings.TrimSpace(strings.ToLower(v)); a != "all" && a != "-1" {
				return nil, fmt.Errorf("kafka sink %s: %w: 'exactly-once' needs acks=all, got properties.acks=%s", table, ErrBadOptions, v)
			}
		case "security.protocol":
			if !strings.EqualFold(strings.TrimSpace(v), "plaintext") {
				return nil, fmt.Errorf("kafka sink %s: %w: 'exactly-once' does not support security.protocol=%s yet (only PLAINTEXT)", table, ErrBadOptions, v)
			}
		case "linger.ms", "queue.buffering.max.ms":
			d, err := ms(k)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.ProducerLinger(d))
		case "delivery.timeout.ms", "message.timeout.ms":
			d, err := ms(k)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.RecordDeliveryTimeout(d))
		case "request.timeout.ms":
			d, err := ms(k)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.ProduceRequestTimeout(d))
		case "compression.type", "compression.codec":
			var c kgo.CompressionCodec
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "none":
				c = kgo.NoCompression()
			case "gzip":
				c = kgo.GzipCompression()
			case "snappy":
				c = kgo.SnappyCompression()
			case "lz4":
				c = kgo.Lz4Compression()
			case "zstd":
				c = kgo.ZstdCompression()
			default:
				return nil, fmt.Errorf("kafka sink %s: %w: unknown compression %q", table, ErrBadOptions, v)
			}
			opts = append(opts, kgo.ProducerBatchCompression(c))
		default:
			return nil, fmt.Errorf("kafka sink %s: %w: properties.%s is not supported with 'sink.delivery-guarantee' = 'exactly-once' yet "+
				"(its transactions go through another client than librdkafka; see the README's Kafka section)", table, ErrBadOptions, k)
		}
	}
	return opts, nil
}

// kgoLogger passes franz-go's warnings and errors on to the job's log: its errors at
// warning level and its warnings at info, as the sink recovers from them itself or
// reports them through its own errors.
type kgoLogger struct {
	log   connectors.Logger
	table string
}

func (l kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	args := append([]any{"table", l.table}, keyvals...)
	if level == kgo.LogLevelError {
		l.log.Warn("kafka sink: client: "+msg, args...)
	} else if level <= kgo.LogLevelWarn {
		l.log.Info("kafka sink: client: "+msg, args...)
	}
}

// openTxnPool prepares the exactly-once path of s: it commits what the restored state
// staged, then fences every id of the pool, aborting what an earlier process left open.
func (s *Sink) openTxnPool(ctx context.Context, cfg connectors.SinkConfig) error {
	o := s.opts
	timeout, err := transactionTimeout(cfg.Options)
	if err != nil {
		return fmt.Errorf("kafka sink %s: %w", cfg.Name, err)
	}
	common, err := kgoOptions(cfg.Name, s.set, o)
	if err != nil {
		return err
	}
	if _, ok := s.set.rd["client.id"]; !ok {
		common = append(common, kgo.ClientID("pipesql-"+cfg.Name))
	}
	common = append(common, kgo.WithLogger(kgoLogger{log: s.log, table: cfg.Name}))
	p := &txnPool{prefix: o.transactionPrefix, opts: common, timeout: timeout, open: -1}
	n := poolSize(cfg.Settings)
	var restored txnState
	if cfg.Restored != nil {
		if len(cfg.Restored) < 1 || cfg.Restored[0] != txnStateVersion {
			return fmt.Errorf("kafka sink %s: %w: unknown state version", cfg.Name, ErrBadSinkState)
		}
		if err := json.Unmarshal(cfg.Restored[1:], &restored); err != nil {
			return fmt.Errorf("kafka sink %s: %w: %v", cfg.Name, ErrBadSinkState, err)
		}
		if restored.Prefix == p.prefix {
			n = max(n, restored.Pool) // a smaller pool now: still fence the old ids
		}
	}
	for i := range n {
		p.ids = append(p.ids, transactionalID(p.prefix, i))
	}
	p.clients = make([]*kgo.Client, n)
	p.slots = make([]slotState, n)
	p.coolUntil = make([]uint64, n)
	if d, err := time.ParseDuration(os.Getenv(CommitDelayEnv)); err == nil && d > 0 {
		p.commitDelay = d
	}
	s.tx = p

	admin, err := kgo.NewClient(common...)
	if err != nil {
		return fmt.Errorf("kafka sink %s: %w", cfg.Name, err)
	}
	defer admin.Close()
	// 1. Commit what the restored checkpoint staged: that checkpoint completed, so its
	// rows are output, whether or not the previous process got to commit them.
	for _, st := range restored.Staged {
		if err := s.recoverCommit(ctx, admin, st); err != nil {
			return err
		}
	}
	if restored.Prefix != "" && restored.Prefix != p.prefix {
		s.log.Warn("kafka sink: 'sink.transactional-id-prefix' changed since the checkpoint; transactions of the old prefix are not fenced",
			"table", o.table, "old", restored.Prefix, "new", p.prefix)
	}
	// 2. Fence every id of the pool.
	return s.fencePool(ctx, admin)
}

// recoverCommit ends a restored checkpoint's transaction with a commit.
func (s *Sink) recoverCommit(ctx context.Context, admin *kgo.Client, st stagedTxn) error {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = st.TransactionID
	req.ProducerID = st.ProducerID
	req.ProducerEpoch = st.Epoch
	req.Commit = true
	err := retryTxnRequest(ctx, func() (int16, error) {
		r, err := req.RequestWith(ctx, admin)
		if err != nil {
			return 0, err
		}
		return r.ErrorCode, nil
	})
	switch {
	case err == nil:
		s.tx.recovered++
		s.tx.committed.Add(1)
		s.log.Info("kafka sink: committed the transaction of the restored checkpoint", "table", s.opts.table,
			"checkpoint", st.Checkpoint, "transactional_id", st.TransactionID, "producer_id", st.ProducerID, "epoch", st.Epoch)
		return nil
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.InvalidTxnState),
		errors.Is(err, kerr.InvalidProducerIDMapping):
		// The transaction is no longer open: the previous process committed it (and the
		// id moved on), or the broker aborted it after transaction.timeout.ms.
		s.log.Warn("kafka sink: the transaction of the restored checkpoint had already ended: committed by the previous run, "+
			"or aborted by the broker after transaction.timeout.ms (then its rows are lost)", "table", s.opts.table,
			"checkpoint", st.Checkpoint, "transactional_id", st.TransactionID, "producer_id", st.ProducerID, "epoch", st.Epoch, "error", err)
		return nil
	}
	return fmt.Errorf("kafka sink %s: commit the transaction %s of restored checkpoint %d: %w", s.opts.table, st.TransactionID, st.Checkpoint, err)
}

// retryTxnRequest sends a transaction coordinator request until it succeeds or fails for
// a reason that retrying does not change (kgo retries the coordinator lookup itself).
func retryTxnRequest(ctx context.Context, send func() (int16, error)) error {
	backoff := 50 * time.Millisecond
	for {
		code, err := send()
		if err == nil {
			err = kerr.ErrorForCode(code)
		}
		if err == nil {
			return nil
		}
		retriable := errors.Is(err, kerr.ConcurrentTransactions) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
			errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable) || kerr.IsRetriable(err)
		if !retriable || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// fencePool finds the open transactions of the pool's ids (DescribeTransactions, where
// the brokers have it), then initializes every id, which aborts them, and reports what
// it aborted.
func (s *Sink) fencePool(ctx context.Context, admin *kgo.Client) error {
	p := s.tx
	ongoing := map[string]kmsg.DescribeTransactionsResponseTransactionState{}
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = p.ids
	for _, shard := range admin.RequestSharded(ctx, dreq) {
		if shard.Err != nil {
			continue // an old broker: the aborts are still done, only not itemized
		}
		for _, ts := range shard.Resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			if ts.ErrorCode == 0 && ts.State == "Ongoing" {
				ongoing[ts.TransactionalID] = ts
			}
		}
	}
	for _, id := range p.ids {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = kmsg.StringPtr(id)
		req.TransactionTimeoutMillis = int32(p.timeout / time.Millisecond)
		err := retryTxnRequest(ctx, func() (int16, error) {
			r, err := req.RequestWith(ctx, admin)
			if err != nil {
				return 0, err
			}
			return r.ErrorCode, nil
		})
		if err != nil {
			return fmt.Errorf("kafka sink %s: fence transactional id %s: %w", s.opts.table, id, err)
		}
		if ts, ok := ongoing[id]; ok {
			p.lingering++
			p.aborted.Add(1)
			var parts []string
			for _, t := range ts.Topics {
				for _, part := range t.Partitions {
					parts = append(parts, fmt.Sprintf("%s-%d", t.Topic, part))
				}
			}
			started := ""
			if ts.StartTimestamp > 0 {
				started = time.UnixMilli(ts.StartTimestamp).UTC().Format(time.RFC3339Nano)
			}
			s.log.Warn("kafka sink: aborted a lingering transaction left open by an earlier run", "table", s.opts.table,
				"transactional_id", id, "producer_id", ts.ProducerID, "epoch", ts.ProducerEpoch, "started", started,
				"partitions", strings.Join(parts, ","))
		}
	}
	s.log.Info("kafka sink: transactional ids fenced", "table", s.opts.table,
		"ids", fmt.Sprintf("%s..%s", p.ids[0], p.ids[len(p.ids)-1]), "aborted", p.lingering, "recovered", p.recovered)
	return nil
}

// client returns the producer of index i, creating it on first use.
func (p *txnPool) client(i int) (*kgo.Client, error) {
	if p.clients[i] != nil {
		return p.clients[i], nil
	}
	opts := append(append([]kgo.Opt{}, p.opts...), kgo.TransactionalID(p.ids[i]), kgo.TransactionTimeout(p.timeout))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	p.clients[i] = cl
	return cl, nil
}

// begin opens a transaction on the next free id.
func (s *Sink) beginTxn() error {
	p := s.tx
	for k := range len(p.ids) {
		i := (p.next + k) % len(p.ids)
		if p.slots[i] != slotFree {
			continue
		}
		cl, err := p.client(i)
		if err != nil {
			return fmt.Errorf("kafka sink %s: %w", s.opts.table, err)
		}
		if err := cl.BeginTransaction(); err != nil {
			return fmt.Errorf("kafka sink %s: begin transaction: %w", s.opts.table, err)
		}
		p.slots[i], p.open, p.next = slotOpen, i, (i+1)%len(p.ids)
		return nil
	}
	return fmt.Errorf("kafka sink %s: %w: all %d transactional ids hold transactions waiting for a checkpoint to complete "+
		"(checkpoints keep failing: see execution.checkpointing.tolerable-failed-checkpoints)", s.opts.table, ErrDelivery, len(p.ids))
}

// produceTxn hands one record to the open transaction; franz-go keeps the slices, so
// they are copied from the reused encode buffers.
func (s *Sink) produceTxn(ctx context.Context, key, value []byte) error {
	p := s.tx
	if p.open < 0 {
		if err := s.beginTxn(); err != nil {
			return err
		}
	}
	rec := &kgo.Record{Topic: *s.topic}
	if key != nil {
		rec.Key = append(make([]byte, 0, len(key)), key...)
	}
	if value != nil {
		rec.Value = append(make([]byte, 0, len(value)), value...)
	}
	s.outstanding.Add(1)
	p.clients[p.open].Produce(ctx, rec, s.txnDelivered)
	return nil
}

func (s *Sink) txnDelivered(r *kgo.Record, err error) {
	s.outstanding.Add(-1)
	if err == nil {
		s.delivered.Add(1)
		return
	}
	s.failed.Add(1)
	s.mu.Lock()
	s.errCount++
	if len(s.errs) < maxDeliveryErrors {
		s.errs = append(s.errs, fmt.Errorf("topic %s partition %d: %w", r.Topic, r.Partition, err))
	}
	s.mu.Unlock()
}

// preCommit flushes the open transaction and stages it for checkpoint id, open.
func (s *Sink) preCommit(ctx context.Context, id uint64) error {
	p := s.tx
	if p.open < 0 {
		return nil
	}
	cl := p.clients[p.open]
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka sink %s: flush: %w", s.opts.table, err)
	}
	if err := s.takeErrors(); err != nil {
		return err
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("kafka sink %s: producer id of %s: %w", s.opts.table, p.ids[p.open], err)
	}
	p.staged = append(p.staged, stagedTxn{Checkpoint: id, Index: p.open, TransactionID: p.ids[p.open],
		ProducerID: pid, Epoch: epoch, at: s.clock.Now()})
	p.slots[p.open], p.open = slotStaged, -1
	return nil
}

// state is what the checkpoint keeps of the pool.
func (p *txnPool) state() ([]byte, error) {
	staged := p.staged
	if staged == nil {
		staged = []stagedTxn{}
	}
	b, err := json.Marshal(txnState{Prefix: p.prefix, Pool: len(p.ids), Staged: staged})
	if err != nil {
		return nil, err
	}
	return append([]byte{txnStateVersion}, b...), nil
}

// commitStaged commits the transactions staged for checkpoints up to id.
func (s *Sink) commitStaged(ctx context.Context, id uint64) error {
	p := s.tx
	for i, st := range p.slots {
		if st == slotCooling && p.coolUntil[i] < id {
			p.slots[i] = slotFree
		}
	}
	if len(p.staged) == 0 || p.staged[0].Checkpoint > id {
		return nil
	}
	if p.commitDelay > 0 {
		fmt.Fprintf(os.Stderr, "%s %d\n", CommitAnnouncement, id)
		time.Sleep(p.commitDelay)
	}
	for len(p.staged) > 0 && p.staged[0].Checkpoint <= id {
		st := p.staged[0]
		if err := p.clients[st.Index].EndTransaction(ctx, kgo.TryCommit); err != nil {
			return fmt.Errorf("kafka sink %s: %w: commit the transaction %s of checkpoint %d: %v", s.opts.table, ErrDelivery, st.TransactionID, st.Checkpoint, err)
		}
		p.committed.Add(1)
		p.commitTimes.observe(s.clock.Now().Sub(st.at).Seconds())
		p.slots[st.Index], p.coolUntil[st.Index] = slotCooling, id
		p.staged = p.staged[1:]
	}
	return nil
}

// closeTxn aborts the open and staged transactions (their checkpoints did not complete
// here; a restart commits the staged one its checkpoint names) and closes the producers.
func (s *Sink) closeTxn() {
	p := s.tx
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if p.open >= 0 {
		cl := p.clients[p.open]
		if err := cl.AbortBufferedRecords(ctx); err == nil {
			if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
				s.log.Warn("kafka sink: aborting the open transaction failed", "table", s.opts.table, "error", err)
			} else {
				p.aborted.Add(1)
			}
		}
		p.open = -1
	}
	// Staged transactions are left open: if their checkpoint completed without telling
	// us, the next run commits them; if not, it aborts them when it fences the pool.
	for _, cl := range p.clients {
		if cl != nil {
			cl.Close()
		}
	}
}

// pending is how many transactions are open or staged.
func (p *txnPool) pending() int {
	n := len(p.staged)
	if p.open >= 0 {
		n++
	}
	return n
}

// txnMeasures are the exactly-once sink's measures (connectors.Reporter).
func (p *txnPool) measures() []connectors.Measure {
	return []connectors.Measure{
		{Name: "transactions_committed_total", Help: "Kafka transactions committed, those of a restored checkpoint included.", Kind: connectors.Counter, Value: float64(p.committed.Load())},
		{Name: "transactions_aborted_total", Help: "Kafka transactions aborted: lingering ones of an earlier run fenced at start, and the open one at close.", Kind: connectors.Counter, Value: float64(p.aborted.Load())},
		{Name: "transactions_pending", Help: "Kafka transactions open or staged, waiting for their checkpoint to complete.", Kind: connectors.Gauge, Value: float64(p.pending())},
		{Name: "transactional_ids", Help: "Transactional ids in the sink's pool.", Kind: connectors.Gauge, Value: float64(len(p.ids))},
		p.commitTimes.measure("transaction_commit_seconds", "Time from the checkpoint barrier that staged a transaction to its commit."),
	}
}
