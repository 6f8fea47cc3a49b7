package kafka

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnknownProperty is returned (inside an *OptionError) when a 'properties.*' key is
	// neither a librdkafka property nor a Java-client property pipesql translates. The
	// message names the closest valid key.
	ErrUnknownProperty = errors.New("unknown Kafka property")
	// ErrUnsupportedProperty is returned when a property is known but cannot be honoured
	// here, such as a JKS trust store or a Java class name.
	ErrUnsupportedProperty = errors.New("unsupported Kafka property")
	// ErrBadOptions is returned when options contradict each other or a value is malformed:
	// both 'topic' and 'topic-pattern', a startup mode without its offsets, a bad
	// 'scan.startup.specific-offsets' string.
	ErrBadOptions = errors.New("invalid Kafka table options")
	// ErrNoBrokerReachable is returned by NewSource when its context ends before any broker
	// answered; the error lists every broker that was tried.
	ErrNoBrokerReachable = errors.New("no broker reachable")
	// ErrTopicNotFound is returned by a bounded source when the cluster answered and a
	// topic it must read does not exist (an unbounded source waits for it instead).
	ErrTopicNotFound = errors.New("topic not found")
	// ErrNoCommittedOffset is returned when 'scan.startup.mode' is 'group-offsets', a
	// partition has no committed offset and 'properties.auto.offset.reset' is 'none'.
	ErrNoCommittedOffset = errors.New("no committed offset")
	// ErrBadRecord is returned (inside a *RecordError) when a record's key or value
	// cannot be decoded and the format does not ignore parse errors.
	ErrBadRecord = errors.New("bad record")
	// ErrBadSnapshot is returned by NewSource when the restored state is not a snapshot
	// this version of the source wrote.
	ErrBadSnapshot = errors.New("bad Kafka source snapshot")
	// ErrUpdatingInput is returned by the 'kafka' sink, which writes an append-only log,
	// when its input carries updates or deletes; use 'upsert-kafka' for those.
	ErrUpdatingInput = errors.New("kafka sink accepts insert-only input")
	// ErrDelivery is returned (wrapped) by Sink.Flush when Kafka did not accept records.
	ErrDelivery = errors.New("kafka delivery failed")
	// ErrClientFatal is returned when librdkafka reports a fatal error: the client cannot
	// continue (for example a fenced transactional producer) and the job must restart.
	ErrClientFatal = errors.New("fatal Kafka client error")
	// ErrBadSinkState is returned when an exactly-once sink is restored from state it
	// cannot read.
	ErrBadSinkState = errors.New("bad Kafka sink state")
	// ErrClosed is returned by a source or sink used after Close.
	ErrClosed = errors.New("kafka connector closed")
)

// RecordError says which record could not be read, like fs.PathError says which file.
type RecordError struct {
	Table     string
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("kafka source %s: topic %s partition %d offset %d: %v", e.Table, e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// BrokersError is ErrNoBrokerReachable with the brokers that were tried and the last
// error the client gave.
type BrokersError struct {
	Tried []string
	Last  error
}

func (e *BrokersError) Error() string {
	msg := fmt.Sprintf("%v (tried %s)", ErrNoBrokerReachable, strings.Join(e.Tried, ", "))
	if e.Last != nil {
		msg += ": " + e.Last.Error()
	}
	return msg
}

func (e *BrokersError) Unwrap() []error {
	if e.Last == nil {
		return []error{ErrNoBrokerReachable}
	}
	return []error{ErrNoBrokerReachable, e.Last}
}
