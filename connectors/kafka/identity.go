package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
)

// The identity of what a source reads (connectors.Identified): the cluster id and, for
// each topic read, its topic id and partition count. Names alone do not tell a topic
// apart from one deleted and created again, or a cluster from a new one with the same
// topic names; offsets of one applied to the other would skip or repeat records, or
// (with the watermark restored) drop every record as late.

// identityVersion is the first byte of an encoded identity.
const identityVersion = 1

// describeTimeout bounds the identity lookups discovery makes besides its listing; a
// cluster that does not answer them leaves the identity as it is until the next attempt.
const describeTimeout = 10 * time.Second

// clusterIdentity is what a source has read: the cluster and its topics.
type clusterIdentity struct {
	// Cluster is the cluster id, "" when the cluster did not say.
	Cluster string          `json:"cluster,omitempty"`
	Topics  []topicIdentity `json:"topics"`
}

// topicIdentity is one topic of a clusterIdentity.
type topicIdentity struct {
	Name string `json:"name"`
	// ID is the topic id (base64, as Kafka's tools show it), "" when unknown.
	ID string `json:"id,omitempty"`
	// Partitions is how many partitions the topic had, 0 when unknown.
	Partitions int `json:"partitions,omitempty"`
}

func (ci *clusterIdentity) topic(name string) *topicIdentity {
	for i := range ci.Topics {
		if ci.Topics[i].Name == name {
			return &ci.Topics[i]
		}
	}
	return nil
}

// String describes the identity for error messages: "Kafka cluster 'abc' (topic
// clicks id 3fX…, 3 partitions)".
func (ci *clusterIdentity) String() string {
	var b strings.Builder
	if ci.Cluster != "" {
		fmt.Fprintf(&b, "Kafka cluster '%s'", ci.Cluster)
	} else {
		b.WriteString("a Kafka cluster without a cluster id")
	}
	var topics []string
	for _, t := range ci.Topics {
		s := "topic " + t.Name
		var attrs []string
		if t.ID != "" {
			attrs = append(attrs, "id "+t.ID)
		}
		if t.Partitions > 0 {
			attrs = append(attrs, fmt.Sprintf("%d partitions", t.Partitions))
		}
		if len(attrs) > 0 {
			s += " " + strings.Join(attrs, ", ")
		}
		topics = append(topics, s)
	}
	if len(topics) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(topics, "; "))
	}
	return b.String()
}

func encodeIdentity(ci *clusterIdentity) ([]byte, error) {
	b, err := json.Marshal(ci)
	if err != nil {
		return nil, err
	}
	return append([]byte{identityVersion}, b...), nil
}

func decodeIdentity(b []byte) (*clusterIdentity, error) {
	if len(b) == 0 || b[0] != identityVersion {
		return nil, fmt.Errorf("%w: unknown identity version", ErrBadSnapshot)
	}
	ci := &clusterIdentity{}
	if err := json.Unmarshal(b[1:], ci); err != nil {
		return nil, fmt.Errorf("%w: identity: %v", ErrBadSnapshot, err)
	}
	return ci, nil
}

// zeroUUID is how librdkafka shows a topic id the broker did not send.
var zeroUUID = ckafka.UUID{}.String()

// describe looks up the cluster id and the ids and partition counts of topics. A topic
// the cluster does not have is left out of the answer.
func (c *metadataClient) describe(ctx context.Context, timeout time.Duration, topics []string) (*clusterIdentity, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ci := &clusterIdentity{}
	id, err := c.admin.ClusterID(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster id: %w", err)
	}
	ci.Cluster = id
	if len(topics) == 0 {
		return ci, nil
	}
	res, err := c.admin.DescribeTopics(ctx, ckafka.NewTopicCollectionOfTopicNames(topics), ckafka.SetAdminRequestTimeout(timeout))
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	var problems []string
	for _, d := range res.TopicDescriptions {
		switch d.Error.Code() {
		case ckafka.ErrNoError:
		case ckafka.ErrUnknownTopicOrPart, ckafka.ErrUnknownTopic:
			continue
		default:
			problems = append(problems, fmt.Sprintf("topic %s: %v", d.Name, d.Error))
			continue
		}
		t := topicIdentity{Name: d.Name, Partitions: len(d.Partitions)}
		if s := d.TopicID.String(); s != zeroUUID && s != "" {
			t.ID = s
		}
		ci.Topics = append(ci.Topics, t)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("describe topics: %s", strings.Join(problems, "; "))
	}
	sort.Slice(ci.Topics, func(i, j int) bool { return ci.Topics[i].Name < ci.Topics[j].Name })
	return ci, nil
}

// learn takes in what a describe answered.
func (e *enumerator) learn(ci *clusterIdentity) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ci.Cluster != "" {
		e.cluster = ci.Cluster
	}
	e.clusterKnown = true
	for _, t := range ci.Topics {
		e.topicIDs[t.Name] = t.ID
	}
}

// describeNew looks up the identity of the cluster and of listed topics not described
// before, after a successful listing. A failure is not a failure of discovery: the
// identity is looked up again at the next attempt.
func (e *enumerator) describeNew(ctx context.Context, l *listing) {
	e.mu.Lock()
	var topics []string
	for t := range l.partitions {
		if _, done := e.topicIDs[t]; !done {
			topics = append(topics, t)
		}
	}
	for t, parts := range l.partitions {
		e.partitionCounts[t] = max(e.partitionCounts[t], len(parts))
	}
	need := !e.clusterKnown || len(topics) > 0
	e.mu.Unlock()
	if !need {
		return
	}
	sort.Strings(topics)
	ci, err := e.client.describe(ctx, min(e.settings.apiTimeout, describeTimeout), topics)
	if err != nil {
		return
	}
	e.learn(ci)
}

// identityOf is the identity of the partitions in keys, as far as the enumerator knows it.
func (e *enumerator) identityOf(keys []partitionKey) *clusterIdentity {
	e.mu.Lock()
	defer e.mu.Unlock()
	ci := &clusterIdentity{Cluster: e.cluster}
	counts := map[string]int{}
	for _, k := range keys {
		counts[k.topic] = max(counts[k.topic], int(k.partition)+1)
	}
	for topic, n := range counts {
		ci.Topics = append(ci.Topics, topicIdentity{Name: topic, ID: e.topicIDs[topic], Partitions: max(n, e.partitionCounts[topic])})
	}
	sort.Slice(ci.Topics, func(i, j int) bool { return ci.Topics[i].Name < ci.Topics[j].Name })
	return ci
}

var _ connectors.Identified = (*Source)(nil)

// Identity returns the cluster id and the id and partition count of every topic the
// source has partitions of, as discovery learnt them.
func (s *Source) Identity() ([]byte, error) {
	keys := make([]partitionKey, 0, len(s.parts))
	for k := range s.parts {
		keys = append(keys, k)
	}
	return encodeIdentity(s.enum.identityOf(keys))
}

// CheckRestored refuses to resume from offsets of another input: another cluster, a
// topic deleted and created again (another topic id, or fewer partitions where the
// cluster has no ids), a restored offset beyond a partition's end or before its start.
// While the cluster does not answer, it retries with backoff until ctx ends.
func (s *Source) CheckRestored(ctx context.Context, saved []byte) error {
	var want *clusterIdentity
	if saved != nil {
		var err error
		if want, err = decodeIdentity(saved); err != nil {
			return fmt.Errorf("kafka source %s: %w", s.opts.table, err)
		}
	}
	topicSet := map[string]bool{}
	var positioned []partitionKey // restored partitions with an offset to check
	for k, ps := range s.parts {
		topicSet[k.topic] = true
		if ps.next >= 0 {
			positioned = append(positioned, k)
		}
	}
	if want != nil {
		for _, t := range want.Topics {
			if s.opts.reads(t.Name) {
				topicSet[t.Name] = true
			}
		}
	}
	topics := make([]string, 0, len(topicSet))
	for t := range topicSet {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	sortKeys(positioned)

	for attempt := 1; ; attempt++ {
		cur, starts, ends, err := s.currentInput(ctx, topics, positioned)
		if err == nil {
			s.enum.learn(cur)
			return s.compareInput(want, cur, starts, ends, positioned)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kafka source %s: checking that the cluster is the one the checkpoint read: %w", s.opts.table, context.Cause(ctx))
		}
		if attempt == 1 || attempt%10 == 0 {
			s.log.Warn("kafka source: cannot check that the cluster is the one the checkpoint read; retrying before reading",
				"table", s.opts.table, "attempt", attempt, "error", err)
		}
		t := s.clock.NewTimer(s.enum.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
	}
}

// currentInput looks up the identity of topics and the start and end offsets of keys.
func (s *Source) currentInput(ctx context.Context, topics []string, keys []partitionKey) (*clusterIdentity, map[partitionKey]int64, map[partitionKey]int64, error) {
	timeout := s.set.apiTimeout
	cur, err := s.meta.describe(ctx, timeout, topics)
	if err != nil {
		return nil, nil, nil, err
	}
	var present []partitionKey
	for _, k := range keys {
		if t := cur.topic(k.topic); t != nil && int(k.partition) < t.Partitions {
			present = append(present, k)
		}
	}
	query := func(spec ckafka.OffsetSpec) (map[partitionKey]int64, error) {
		qs := make([]offsetQuery, len(present))
		for i, k := range present {
			qs[i] = offsetQuery{key: k, spec: spec}
		}
		return s.meta.listOffsets(ctx, timeout, qs)
	}
	starts, err := query(ckafka.EarliestOffsetSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	ends, err := query(ckafka.LatestOffsetSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	return cur, starts, ends, nil
}

// compareInput is the verdict of CheckRestored.
func (s *Source) compareInput(want, cur *clusterIdentity, starts, ends map[partitionKey]int64, keys []partitionKey) error {
	var reasons []string
	if want != nil {
		if want.Cluster != "" && cur.Cluster != "" && want.Cluster != cur.Cluster {
			reasons = append(reasons, "another Kafka cluster")
		} else {
			for _, w := range want.Topics {
				if !s.opts.reads(w.Name) {
					continue
				}
				c := cur.topic(w.Name)
				switch {
				case c == nil:
					reasons = append(reasons, fmt.Sprintf("topic %s no longer exists", w.Name))
				case w.ID != "" && c.ID != "" && w.ID != c.ID:
					reasons = append(reasons, fmt.Sprintf("topic %s was deleted and created again", w.Name))
				case c.Partitions < w.Partitions:
					reasons = append(reasons, fmt.Sprintf("topic %s has %d partitions, the checkpoint read %d", w.Name, c.Partitions, w.Partitions))
				}
			}
		}
	}
	var saved, now []string
	if len(reasons) == 0 {
		for _, k := range keys {
			next := s.parts[k].next
			if cur.topic(k.topic) == nil {
				reasons = append(reasons, fmt.Sprintf("topic %s does not exist", k.topic))
				continue
			}
			start, hasStart := starts[k]
			end, hasEnd := ends[k]
			switch {
			case !hasStart || !hasEnd:
				reasons = append(reasons, fmt.Sprintf("partition %s does not exist", k))
			case next > end:
				reasons = append(reasons, fmt.Sprintf("offset %d of %s is beyond the partition's end %d", next, k, end))
			case next < start:
				reasons = append(reasons, fmt.Sprintf("offset %d of %s is before the partition's start %d (deleted by retention, or another topic)", next, k, start))
			default:
				continue
			}
			saved = append(saved, fmt.Sprintf("%s at offset %d", k, next))
			if hasStart && hasEnd {
				now = append(now, fmt.Sprintf("%s holding offsets %d to %d", k, start, end))
			}
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	e := &connectors.InputMismatchError{Table: s.opts.table, Reason: strings.Join(reasons, "; ")}
	if want != nil {
		e.Saved = want.String()
	} else {
		e.Saved = "a Kafka cluster it did not record"
	}
	e.Current = cur.String()
	if len(saved) > 0 {
		e.Saved += ", " + strings.Join(saved, ", ")
	}
	if len(now) > 0 {
		e.Current += ", " + strings.Join(now, ", ")
	}
	return e
}
