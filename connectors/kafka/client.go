package kafka

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Offsets that are not positions in a log.
const (
	offsetEarliest = -2 // start at the earliest offset the partition still has
	noStop         = -1 // an unbounded partition
)

// partitionKey names one partition.
type partitionKey struct {
	topic     string
	partition int32
}

// split is the name Source.Splits and SourceBatch.Split use: "topic-partition".
func (k partitionKey) split() string { return k.topic + "-" + strconv.Itoa(int(k.partition)) }

func (k partitionKey) String() string { return k.split() }

func (k partitionKey) topicPartition(offset int64) ckafka.TopicPartition {
	t := k.topic
	return ckafka.TopicPartition{Topic: &t, Partition: k.partition, Offset: ckafka.Offset(offset)}
}

func sortKeys(keys []partitionKey) {
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
}

// metadataClient is the enumerator's connection to the cluster: its own librdkafka
// handle, separate from the readers', so that a metadata request stuck on a broker
// connection never holds up a fetch. It lists partitions, looks up offsets and commits
// them, each call bounded by a timeout.
type metadataClient struct {
	consumer  *ckafka.Consumer // never assigned: only its metadata and admin functions are used
	admin     *ckafka.AdminClient
	groupID   string // the user's group; "" when none
	bootstrap []string

	allDown atomic.Bool // librdkafka said every broker is down, until the next answer
}

func newMetadataClient(rd ckafka.ConfigMap, groupID string, bootstrap []string) (*metadataClient, error) {
	c, err := ckafka.NewConsumer(&rd)
	if err != nil {
		return nil, err
	}
	a, err := ckafka.NewAdminClientFromConsumer(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &metadataClient{consumer: c, admin: a, groupID: groupID, bootstrap: bootstrap}, nil
}

func (c *metadataClient) close() {
	c.admin.Close()
	c.consumer.Close()
}

// drainEvents reads the client's pending events (it is never assigned, so they are
// errors and statistics) and notes whether librdkafka considers every broker down.
func (c *metadataClient) drainEvents() {
	for i := 0; i < 1000; i++ {
		ev := c.consumer.Poll(0)
		if ev == nil {
			return
		}
		if e, ok := ev.(ckafka.Error); ok && e.Code() == ckafka.ErrAllBrokersDown {
			c.allDown.Store(true)
		}
	}
}

// listing is the answer of one metadata request.
type listing struct {
	partitions map[string][]int32 // topic -> partitions, for the topics that exist
	missing    []string           // named topics the cluster does not know
	brokers    []string           // host:port of every broker in the answer
	// leaderless are the partitions listed without a leader (their brokers are gone
	// and no replica took over): nothing can read them until one is elected.
	leaderless []partitionKey
}

// listPartitions lists the partitions of topics, or of every topic matching pattern.
func (c *metadataClient) listPartitions(timeout time.Duration, topics []string, pattern *regexp.Regexp, excludeInternal bool) (*listing, error) {
	ms := int(max(timeout/time.Millisecond, 1))
	var md *ckafka.Metadata
	var err error
	if len(topics) == 1 {
		md, err = c.consumer.GetMetadata(&topics[0], false, ms)
	} else {
		md, err = c.consumer.GetMetadata(nil, true, ms)
	}
	c.drainEvents()
	if err != nil {
		return nil, err
	}
	c.allDown.Store(false)
	l := &listing{partitions: map[string][]int32{}}
	for _, b := range md.Brokers {
		l.brokers = append(l.brokers, b.Host+":"+strconv.Itoa(b.Port))
	}
	sort.Strings(l.brokers)
	var problems []string
	add := func(tm ckafka.TopicMetadata) {
		if tm.Error.Code() != ckafka.ErrNoError {
			if tm.Error.Code() == ckafka.ErrUnknownTopicOrPart || tm.Error.Code() == ckafka.ErrUnknownTopic {
				l.missing = append(l.missing, tm.Topic)
			} else {
				problems = append(problems, fmt.Sprintf("topic %s: %v", tm.Topic, tm.Error))
			}
		}
		// A topic with an error may still list partitions; keep what is listed.
		for _, p := range tm.Partitions {
			l.partitions[tm.Topic] = append(l.partitions[tm.Topic], p.ID)
			if p.Leader < 0 || p.Error.Code() == ckafka.ErrLeaderNotAvailable || p.Error.Code() == ckafka.ErrNotLeaderForPartition {
				l.leaderless = append(l.leaderless, partitionKey{tm.Topic, p.ID})
			}
		}
	}
	if pattern != nil {
		for name, tm := range md.Topics {
			if excludeInternal && strings.HasPrefix(name, "__") {
				continue
			}
			if pattern.MatchString(name) {
				add(tm)
			}
		}
	} else {
		for _, name := range topics {
			tm, ok := md.Topics[name]
			if !ok {
				l.missing = append(l.missing, name)
				continue
			}
			add(tm)
		}
	}
	sort.Strings(l.missing)
	sortKeys(l.leaderless)
	if len(problems) > 0 {
		sort.Strings(problems)
		return l, fmt.Errorf("metadata incomplete: %s", strings.Join(problems, "; "))
	}
	return l, nil
}

// offsetQuery is what to look up for one partition.
type offsetQuery struct {
	key  partitionKey
	spec ckafka.OffsetSpec
}

// listOffsets resolves offset specs (earliest, latest, a timestamp) to offsets. A
// partition that failed is left out of the result and named in the error.
func (c *metadataClient) listOffsets(ctx context.Context, timeout time.Duration, qs []offsetQuery) (map[partitionKey]int64, error) {
	out := map[partitionKey]int64{}
	if len(qs) == 0 {
		return out, nil
	}
	req := make(map[ckafka.TopicPartition]ckafka.OffsetSpec, len(qs))
	for _, q := range qs {
		req[q.key.topicPartition(0)] = q.spec
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.admin.ListOffsets(ctx, req, ckafka.SetAdminRequestTimeout(timeout),
		ckafka.SetAdminIsolationLevel(ckafka.IsolationLevelReadCommitted))
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	var failed []string
	for tp, info := range res.ResultInfos {
		key := partitionKey{topic: *tp.Topic, partition: tp.Partition}
		if info.Error.Code() != ckafka.ErrNoError {
			failed = append(failed, fmt.Sprintf("%s: %v", key, info.Error))
			continue
		}
		out[key] = int64(info.Offset)
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return out, fmt.Errorf("list offsets: %s", strings.Join(failed, "; "))
	}
	return out, nil
}

// committed returns the group's committed offsets; a partition without one maps to -1.
func (c *metadataClient) committed(ctx context.Context, timeout time.Duration, keys []partitionKey) (map[partitionKey]int64, error) {
	out := map[partitionKey]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	tps := make([]ckafka.TopicPartition, len(keys))
	for i, k := range keys {
		tps[i] = k.topicPartition(0)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.admin.ListConsumerGroupOffsets(ctx,
		[]ckafka.ConsumerGroupTopicPartitions{{Group: c.groupID, Partitions: tps}},
		ckafka.SetAdminRequireStableOffsets(true))
	var ke ckafka.Error
	if errors.As(err, &ke) && ke.Code() == ckafka.ErrGroupIDNotFound {
		// A group that never committed may not exist at all: it has no offsets.
		for _, k := range keys {
			out[k] = -1
		}
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("committed offsets of group %s: %w", c.groupID, err)
	}
	var failed []string
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			key := partitionKey{topic: *tp.Topic, partition: tp.Partition}
			if tp.Error != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", key, tp.Error))
				continue
			}
			off := int64(tp.Offset)
			if off < 0 {
				off = -1
			}
			out[key] = off
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return out, fmt.Errorf("committed offsets of group %s: %s", c.groupID, strings.Join(failed, "; "))
	}
	return out, nil
}

// commit writes offsets to the group. It does not join the group, so it works while no
// consumer of the group is active, which is the case for a pipesql source.
func (c *metadataClient) commit(ctx context.Context, timeout time.Duration, offsets map[partitionKey]int64) error {
	tps := make([]ckafka.TopicPartition, 0, len(offsets))
	for k, off := range offsets {
		tps = append(tps, k.topicPartition(off))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.admin.AlterConsumerGroupOffsets(ctx,
		[]ckafka.ConsumerGroupTopicPartitions{{Group: c.groupID, Partitions: tps}},
		ckafka.SetAdminRequestTimeout(timeout))
	if err != nil {
		return err
	}
	// Partitions fail together, for one reason (the coordinator moved or is gone): each
	// reason is said once, with the partitions it hit, so that the warning is one line.
	hit := map[string][]partitionKey{}
	first := map[string]error{}
	var reasons []string
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error == nil {
				continue
			}
			msg := tp.Error.Error()
			if _, seen := first[msg]; !seen {
				first[msg] = tp.Error
				reasons = append(reasons, msg)
			}
			hit[msg] = append(hit[msg], partitionKey{topic: *tp.Topic, partition: tp.Partition})
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	sort.Strings(reasons)
	errs := make(errorList, len(reasons))
	for i, msg := range reasons {
		errs[i] = fmt.Errorf("%w (%s)", first[msg], partitionList(hit[msg]))
	}
	return errs
}

// partitionList names partitions in order, the first few of a long list.
func partitionList(keys []partitionKey) string {
	const shown = 4
	sortKeys(keys)
	names := make([]string, 0, shown+1)
	for i, k := range keys {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(keys)-shown))
			break
		}
		names = append(names, k.split())
	}
	return strings.Join(names, ", ")
}

// tried lists the brokers a client can have tried: the bootstrap brokers and those the
// last metadata answer named.
func tried(bootstrap, known []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{bootstrap, known} {
		for _, b := range list {
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	return out
}
