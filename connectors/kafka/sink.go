package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// maxDeliveryErrors is how many delivery errors a Flush reports in full; the rest are counted.
const maxDeliveryErrors = 10

// partitionRefresh is how often the round-robin partitioner re-reads the partition count.
const partitionRefresh = 5 * time.Minute

// Sink writes a Kafka table: 'kafka' appends every row as a record; 'upsert-kafka'
// writes the latest row of each primary key as a record keyed by it, and a deletion as
// a tombstone, so the topic can be compacted.
type Sink struct {
	opts  *tableOptions
	set   *clientSettings
	log   connectors.Logger
	clock connectors.Clock

	producer *ckafka.Producer
	topic    *string
	events   chan struct{} // closed when the delivery reader returns
	logs     chan ckafka.LogEvent
	logsQuit chan struct{}

	value    connectors.Encoder
	valueIdx []int // input column of each value column
	valueRow types.Row
	key      connectors.Encoder // nil: records have no key
	keyIdx   []int
	keyRow   types.Row
	valBuf   []byte
	keyBuf   []byte

	partitions     int32 // round-robin: the topic's partition count
	partitionsRead time.Time
	next           int32 // round-robin: the next partition

	// tx is the exactly-once path (sink_txn.go): records go in transactions through
	// franz-go, and producer is nil.
	tx *txnPool

	buffer      map[string]bufferedChange // upsert-kafka: last change per key
	order       []string                  // keys of buffer in arrival order
	lastFlush   time.Time
	outstanding atomic.Int64
	closed      bool
	flushes     uint64 // exactly-once without checkpoints: Flush calls, as checkpoint ids

	mu        sync.Mutex
	errs      []error // delivery errors since the last Flush (the first few)
	errCount  int
	delivered atomic.Uint64
	failed    atomic.Uint64
}

type bufferedChange struct {
	key, value []byte // value nil: a tombstone
}

var (
	_ connectors.Sink           = (*Sink)(nil)
	_ connectors.Reporter       = (*Sink)(nil)
	_ connectors.CommittingSink = exactlyOnceSink{}
)

// NewSink opens a 'kafka' sink; it is the factory's NewSink.
func NewSink(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
	return newSink(ctx, cfg, false)
}

// NewUpsertSink opens an 'upsert-kafka' sink; it is that factory's NewSink.
func NewUpsertSink(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
	return newSink(ctx, cfg, true)
}

func newSink(ctx context.Context, cfg connectors.SinkConfig, upsert bool) (connectors.Sink, error) {
	s, err := OpenSink(ctx, cfg, upsert)
	if err != nil {
		return nil, err
	}
	if s.tx != nil {
		return exactlyOnceSink{s}, nil
	}
	return s, nil
}

// exactlyOnceSink is a Sink with 'exactly-once': a connectors.CommittingSink, so that a
// job that checkpoints commits its transactions in two phases.
type exactlyOnceSink struct{ *Sink }

func (e exactlyOnceSink) PrepareCommit(ctx context.Context, id uint64) ([]byte, error) {
	return e.Sink.PrepareCommit(ctx, id)
}

func (e exactlyOnceSink) CheckpointComplete(ctx context.Context, id uint64) error {
	return e.Sink.CheckpointComplete(ctx, id)
}

// OpenSink opens a sink of 'kafka' (upsert false) or 'upsert-kafka'. With
// 'exactly-once' it registers the transactional producer with the cluster first,
// waiting as long as ctx allows. Its waits run on cfg.Clock.
func OpenSink(ctx context.Context, cfg connectors.SinkConfig, upsert bool) (*Sink, error) {
	clock := connectors.ClockOr(cfg.Clock)
	o, err := parseOptions(cfg.TableInfo, upsert)
	if err != nil {
		return nil, err
	}
	if err := o.checkSink(); err != nil {
		return nil, err
	}
	if cfg.Updating && !upsert && (o.value.factory == nil || o.value.factory.Changelog != connectors.AllChangesMode) {
		return nil, fmt.Errorf("kafka sink %s: %w; declare the table with 'connector' = 'upsert-kafka' and a PRIMARY KEY",
			cfg.Name, ErrUpdatingInput)
	}
	set, err := resolveProperties(cfg.Name, cfg.Options, forSink)
	if err != nil {
		return nil, err
	}
	for _, note := range set.ignored {
		cfg.Log.Info("kafka sink: property ignored", "table", cfg.Name, "property", note)
	}
	s := &Sink{opts: o, set: set, log: cfg.Log, clock: clock, topic: &o.topics[0], events: make(chan struct{}),
		logs: make(chan ckafka.LogEvent, 64), logsQuit: make(chan struct{})}
	if err := s.encoders(cfg); err != nil {
		return nil, err
	}
	if upsert && o.flushRows > 0 {
		s.buffer = map[string]bufferedChange{}
		s.lastFlush = clock.Now()
	}

	if o.delivery == deliveryExactlyOnce {
		if err := s.openTxnPool(ctx, cfg); err != nil {
			if s.tx != nil {
				s.closeTxn()
			}
			return nil, err
		}
		close(s.events)
		return s, nil
	}

	conf := ckafka.ConfigMap{}
	for k, v := range set.rd {
		conf[k] = v
	}
	if _, ok := conf["client.id"]; !ok {
		conf["client.id"] = "pipesql-" + cfg.Name
	}
	if _, ok := conf["partitioner"]; !ok {
		// Kafka's default partitioner: murmur2 of the key, null keys spread.
		conf["partitioner"] = "murmur2_random"
	}
	conf["go.delivery.report.fields"] = "none"
	conf["go.logs.channel.enable"] = true
	conf["go.logs.channel"] = s.logs
	go forwardLogs(s.logs, s.logsQuit, s.log, cfg.Name)
	if s.producer, err = ckafka.NewProducer(&conf); err != nil {
		close(s.logsQuit)
		return nil, fmt.Errorf("kafka sink %s: create producer: %w", cfg.Name, err)
	}
	go s.readDeliveries()
	return s, nil
}

// encoders builds the key and value encoders over the sink's input.
func (s *Sink) encoders(cfg connectors.SinkConfig) error {
	o := s.opts
	input := cfg.Input
	if len(input) == 0 {
		input = cfg.Schema
	}
	inputIdx := func(name string) (int, error) {
		i := input.Index(name)
		if i < 0 {
			return 0, fmt.Errorf("kafka sink %s: %w: column %s is not in the sink's input", o.table, ErrBadOptions, name)
		}
		return i, nil
	}
	valueCols, _ := o.valueColumns(cfg.Schema)
	for _, c := range valueCols {
		i, err := inputIdx(c.Name)
		if err != nil {
			return err
		}
		s.valueIdx = append(s.valueIdx, i)
	}
	var err error
	if o.value.factory.NewEncoder == nil {
		return fmt.Errorf("kafka sink %s: %w: format %s cannot be written", o.table, ErrBadOptions, o.value.factory.Name)
	}
	if s.value, err = o.value.factory.NewEncoder(valueCols, o.value.options); err != nil {
		return fmt.Errorf("kafka sink %s: value format %s: %w", o.table, o.value.factory.Name, err)
	}
	s.valueRow = make(types.Row, len(valueCols))
	if o.key.factory == nil {
		return nil
	}
	keyCols, keyIdx := o.keyColumns(cfg.Schema)
	for _, j := range keyIdx {
		i, err := inputIdx(cfg.Schema[j].Name)
		if err != nil {
			return err
		}
		s.keyIdx = append(s.keyIdx, i)
	}
	if o.key.factory.NewEncoder == nil {
		return fmt.Errorf("kafka sink %s: %w: format %s cannot be written", o.table, ErrBadOptions, o.key.factory.Name)
	}
	if s.key, err = o.key.factory.NewEncoder(keyCols, o.key.options); err != nil {
		return fmt.Errorf("kafka sink %s: key format %s: %w", o.table, o.key.factory.Name, err)
	}
	s.keyRow = make(types.Row, len(keyCols))
	return nil
}

// readDeliveries takes delivery reports until the producer closes.
func (s *Sink) readDeliveries() {
	defer close(s.events)
	for ev := range s.producer.Events() {
		switch e := ev.(type) {
		case *ckafka.Message:
			s.outstanding.Add(-1)
			if err := e.TopicPartition.Error; err != nil {
				s.failed.Add(1)
				s.mu.Lock()
				s.errCount++
				if len(s.errs) < maxDeliveryErrors {
					s.errs = append(s.errs, fmt.Errorf("topic %s partition %d: %w", *s.topic, e.TopicPartition.Partition, err))
				}
				s.mu.Unlock()
				if s.opts.delivery == deliveryNone {
					s.log.Warn("kafka sink: record not delivered", "table", s.opts.table, "error", err)
				}
			} else {
				s.delivered.Add(1)
			}
		case ckafka.Error:
			if e.IsFatal() {
				s.mu.Lock()
				s.errCount++
				if len(s.errs) < maxDeliveryErrors {
					s.errs = append(s.errs, fmt.Errorf("%w: %v", ErrClientFatal, e))
				}
				s.mu.Unlock()
			}
			s.log.Info("kafka sink: client error", "table", s.opts.table, "error", e)
		}
	}
}

// Write sends a batch. 'kafka' accepts inserts only, but for a changelog format
// (debezium-json ...), which writes every row with its kind as a record of its own;
// 'upsert-kafka' sends +I and +U as the key's new value, ignores -U and sends -D as a
// tombstone.
func (s *Sink) Write(ctx context.Context, batch connectors.ChangeBatch) error {
	if s.closed {
		return ErrClosed
	}
	changes, _ := s.value.(connectors.ChangeEncoder)
	if s.opts.upsert {
		changes = nil
	}
	for i, row := range batch.Rows {
		kind := connectors.Insert
		if i < len(batch.Kinds) {
			kind = batch.Kinds[i]
		}
		if !s.opts.upsert && changes == nil && kind != connectors.Insert {
			return fmt.Errorf("kafka sink %s: %w: got a %s row; use 'upsert-kafka' for updating results",
				s.opts.table, ErrUpdatingInput, kind)
		}
		if kind == connectors.UpdateBefore && changes == nil {
			continue
		}
		key, err := s.encodeKey(row)
		if err != nil {
			return err
		}
		var value []byte
		if kind != connectors.Delete || changes != nil {
			for j, k := range s.valueIdx {
				s.valueRow[j] = row[k]
			}
			if changes != nil {
				s.valBuf, err = changes.EncodeChange(s.valBuf[:0], kind, s.valueRow)
			} else {
				s.valBuf, err = s.value.Encode(s.valBuf[:0], s.valueRow)
			}
			if err != nil {
				return fmt.Errorf("kafka sink %s: encode value: %w", s.opts.table, err)
			}
			value = s.valBuf
			if value == nil {
				value = []byte{}
			}
		}
		if s.buffer != nil {
			s.bufferChange(string(key), value)
			continue
		}
		if err := s.send(ctx, key, value); err != nil {
			return err
		}
	}
	if s.buffer != nil && (len(s.buffer) >= int(s.opts.flushRows) || s.clock.Now().Sub(s.lastFlush) >= s.opts.flushInterval) {
		return s.sendBuffer(ctx)
	}
	return nil
}

func (s *Sink) encodeKey(row types.Row) ([]byte, error) {
	if s.key == nil {
		return nil, nil
	}
	for j, k := range s.keyIdx {
		s.keyRow[j] = row[k]
	}
	var err error
	if s.keyBuf, err = s.key.Encode(s.keyBuf[:0], s.keyRow); err != nil {
		return nil, fmt.Errorf("kafka sink %s: encode key: %w", s.opts.table, err)
	}
	return s.keyBuf, nil
}

// bufferChange keeps the latest change of a key (sink.buffer-flush.*), copying the
// bytes because the encode buffers are reused.
func (s *Sink) bufferChange(key string, value []byte) {
	if _, seen := s.buffer[key]; !seen {
		s.order = append(s.order, key)
	}
	var v []byte
	if value != nil {
		v = append([]byte{}, value...)
	}
	s.buffer[key] = bufferedChange{key: []byte(key), value: v}
}

func (s *Sink) sendBuffer(ctx context.Context) error {
	for _, k := range s.order {
		c := s.buffer[k]
		if err := s.send(ctx, c.key, c.value); err != nil {
			return err
		}
		delete(s.buffer, k)
	}
	s.order = s.order[:0]
	s.lastFlush = s.clock.Now()
	return nil
}

// send hands one record to librdkafka, which copies key and value. When its queue is
// full, send waits for deliveries to make room, up to max.block.ms.
func (s *Sink) send(ctx context.Context, key, value []byte) error {
	if s.tx != nil {
		return s.produceTxn(ctx, key, value)
	}
	partition, err := s.partition(key)
	if err != nil {
		return err
	}
	msg := &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: s.topic, Partition: partition}, Key: key, Value: value}
	var deadline time.Time
	for {
		err := s.producer.Produce(msg, nil)
		if err == nil {
			s.outstanding.Add(1)
			return nil
		}
		var ke ckafka.Error
		if !errors.As(err, &ke) || ke.Code() != ckafka.ErrQueueFull {
			return fmt.Errorf("kafka sink %s: produce: %w", s.opts.table, err)
		}
		now := s.clock.Now()
		if deadline.IsZero() {
			deadline = now.Add(s.set.maxBlock)
		}
		if !now.Before(deadline) {
			return fmt.Errorf("kafka sink %s: producer queue full for %s (max.block.ms): %w", s.opts.table, s.set.maxBlock, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s.producer.Flush(100)
	}
}

// partition picks the partition of a record by 'sink.partitioner'.
func (s *Sink) partition(key []byte) (int32, error) {
	switch s.opts.partitioner {
	case partitionerFixed:
		// Flink's fixed partitioner sends sink instance i to partition i modulo the
		// partition count; pipesql writes with one instance.
		return 0, nil
	case partitionerRoundRobin:
		if err := s.refreshPartitions(); err != nil {
			return 0, err
		}
		p := s.next % s.partitions
		s.next = (p + 1) % s.partitions
		return p, nil
	}
	return ckafka.PartitionAny, nil
}

func (s *Sink) refreshPartitions() error {
	now := s.clock.Now()
	if s.partitions > 0 && now.Sub(s.partitionsRead) < partitionRefresh {
		return nil
	}
	md, err := s.producer.GetMetadata(s.topic, false, int(s.set.apiTimeout/time.Millisecond))
	if err == nil {
		tm := md.Topics[*s.topic]
		if tm.Error.Code() != ckafka.ErrNoError {
			err = tm.Error
		} else if len(tm.Partitions) == 0 {
			err = fmt.Errorf("%w: %s has no partitions", ErrTopicNotFound, *s.topic)
		} else {
			s.partitions = int32(len(tm.Partitions))
			s.partitionsRead = now
		}
	}
	if err != nil && s.partitions == 0 {
		return fmt.Errorf("kafka sink %s: partitions of %s: %w", s.opts.table, *s.topic, err)
	}
	if err != nil {
		s.log.Warn("kafka sink: refreshing the partition count failed; keeping the last one", "table", s.opts.table, "error", err)
		s.partitionsRead = now
	}
	return nil
}

// Flush makes everything written durable and returns the delivery errors since the
// last Flush. 'none' sends buffered rows but does not wait; 'at-least-once' waits for
// every acknowledgement; 'exactly-once' commits the open transaction (a job that
// checkpoints calls PrepareCommit and CheckpointComplete instead).
func (s *Sink) Flush(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	if s.buffer != nil {
		if err := s.sendBuffer(ctx); err != nil {
			return err
		}
	}
	switch {
	case s.opts.delivery == deliveryNone:
		s.takeErrors()
		return nil
	case s.tx != nil:
		s.flushes++
		if err := s.preCommit(ctx, s.flushes); err != nil {
			return err
		}
		return s.commitStaged(ctx, s.flushes)
	}
	for s.producer.Flush(100) > 0 || s.outstanding.Load() > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("kafka sink %s: flush: %w", s.opts.table, err)
		}
	}
	return s.takeErrors()
}

// PrepareCommit flushes the open transaction and leaves it open, staged for checkpoint
// id; the returned state names every staged transaction (connectors.CommittingSink).
// Only the exactly-once sink is a CommittingSink.
func (s *Sink) PrepareCommit(ctx context.Context, id uint64) ([]byte, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if s.buffer != nil {
		if err := s.sendBuffer(ctx); err != nil {
			return nil, err
		}
	}
	if s.tx == nil {
		return nil, s.Flush(ctx)
	}
	if err := s.preCommit(ctx, id); err != nil {
		return nil, err
	}
	return s.tx.state()
}

// CheckpointComplete commits the transactions staged for checkpoints up to id.
func (s *Sink) CheckpointComplete(ctx context.Context, id uint64) error {
	if s.closed {
		return ErrClosed
	}
	if s.tx == nil {
		return nil
	}
	return s.commitStaged(ctx, id)
}

// takeErrors returns and clears the delivery errors gathered since the last call.
func (s *Sink) takeErrors() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errCount == 0 {
		return nil
	}
	err := fmt.Errorf("kafka sink %s: %w: %d records: %w", s.opts.table, ErrDelivery, s.errCount, errorList(s.errs))
	s.errs, s.errCount = nil, 0
	return err
}

// errorList joins errors on one line, as a log line should be.
type errorList []error

func (l errorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (l errorList) Unwrap() []error { return l }

// SinkStats are a sink's counters since it opened.
type SinkStats struct {
	Delivered uint64
	Failed    uint64
}

// Stats returns the sink's counters. It is safe to call from any goroutine.
func (s *Sink) Stats() SinkStats {
	return SinkStats{Delivered: s.delivered.Load(), Failed: s.failed.Load()}
}

// Report gives the sink's delivery counters and, with 'exactly-once', its transactions
// (connectors.Reporter).
func (s *Sink) Report() []connectors.Measure {
	ms := []connectors.Measure{
		{Name: "records_delivered_total", Help: "Records Kafka acknowledged.", Kind: connectors.Counter, Value: float64(s.delivered.Load())},
		{Name: "records_failed_total", Help: "Records Kafka did not accept.", Kind: connectors.Counter, Value: float64(s.failed.Load())},
	}
	if s.tx != nil {
		ms = append(ms, s.tx.measures()...)
	}
	return ms
}

// Close releases the producer. Records written since the last Flush are not made
// durable: an open transaction is aborted, other records get a few seconds to go out.
func (s *Sink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.tx != nil {
		s.closeTxn()
		close(s.logsQuit)
		return nil
	}
	s.producer.Flush(int(closeWait / time.Millisecond))
	s.producer.Close()
	<-s.events
	close(s.logsQuit)
	return nil
}
