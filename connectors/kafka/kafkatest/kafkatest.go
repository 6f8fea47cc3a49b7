package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errBrokerGone is what a removed or downed broker answers: returning an error from a
// kfake control function closes the client's connection.
var errBrokerGone = errors.New("kafkatest: broker is gone")

// requestTimeout bounds every request the helpers make, so a test with a broken cluster
// fails instead of hanging.
const requestTimeout = 30 * time.Second

// Cluster is an in-process multi-broker Kafka cluster.
type Cluster struct {
	kc    *kfake.Cluster
	addrs map[int32]string // node id -> host:port, as started or added

	clientMu sync.Mutex
	client   *kgo.Client

	mu          sync.Mutex
	gone        map[int32]bool // nodes removed hard
	down        bool           // Outage in force
	controlOnce sync.Once
	listeners   []*outageListener
}

// Record is one record to produce. Partition is where it goes (records are never
// spread by a partitioner, so tests know where each one is).
type Record struct {
	Partition int32
	Key       []byte // nil: no key
	Value     []byte // nil: a tombstone
	Headers   []Header
	Timestamp time.Time // zero: the time of producing
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// NewCluster starts a cluster of n brokers (node ids 0 to n-1) and closes it when the
// test ends. opts are passed to kfake (SeedTopics, BrokerConfigs, ...).
func NewCluster(t testing.TB, n int, opts ...kfake.Opt) *Cluster {
	t.Helper()
	c := &Cluster{addrs: map[int32]string{}, gone: map[int32]bool{}}
	listen := func(network, address string) (net.Listener, error) {
		l, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		ol := &outageListener{Listener: l, c: c}
		c.mu.Lock()
		c.listeners = append(c.listeners, ol)
		c.mu.Unlock()
		return ol, nil
	}
	all := append([]kfake.Opt{kfake.NumBrokers(n), kfake.ListenFn(listen)}, opts...)
	kc, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("kafkatest: start cluster: %v", err)
	}
	c.kc = kc
	for i, a := range kc.ListenAddrs() {
		c.addrs[int32(i)] = a
	}
	t.Cleanup(c.close)
	return c
}

func (c *Cluster) close() {
	c.resetClient()
	c.kc.Close()
}

// resetClient drops the helpers' client, so the next one starts with fresh metadata.
func (c *Cluster) resetClient() {
	c.clientMu.Lock()
	defer c.clientMu.Unlock()
	if c.client != nil {
		c.client.Close()
		c.client = nil
	}
}

// Kfake returns the underlying cluster for what the helpers do not cover.
func (c *Cluster) Kfake() *kfake.Cluster { return c.kc }

// Nodes returns the node ids of the brokers not removed, sorted.
func (c *Cluster) Nodes() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int32
	for n := range c.addrs {
		if !c.gone[n] {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Addr returns the host:port of a node.
func (c *Cluster) Addr(node int32) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addrs[node]
}

// Bootstrap returns the addresses of the given nodes joined by commas, the form of
// 'properties.bootstrap.servers'. Without nodes it names every broker.
func (c *Cluster) Bootstrap(nodes ...int32) string {
	if len(nodes) == 0 {
		nodes = c.Nodes()
	}
	var parts []string
	for _, n := range nodes {
		parts = append(parts, c.Addr(n))
	}
	return strings.Join(parts, ",")
}

// kgoClient is the independent client the helpers produce and administer with.
func (c *Cluster) kgoClient() (*kgo.Client, error) {
	c.clientMu.Lock()
	defer c.clientMu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	var seeds []string
	for _, n := range c.Nodes() {
		seeds = append(seeds, c.Addr(n))
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(16<<20),
		kgo.MetadataMinAge(50*time.Millisecond),
	)
	if err != nil {
		return nil, err
	}
	c.client = cl
	return cl, nil
}

// CreateTopic creates topic with the given number of partitions.
func (c *Cluster) CreateTopic(t testing.TB, topic string, partitions int32) {
	t.Helper()
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = partitions
	rt.ReplicationFactor = 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(requestTimeout / time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("kafkatest: create topic %s: %v", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			t.Fatalf("kafkatest: create topic %s: %v", topic, err)
		}
	}
}

// DeleteTopic deletes topic; creating it again gives it a new topic id.
func (c *Cluster) DeleteTopic(t testing.TB, topic string) {
	t.Helper()
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.TopicNames = append(req.TopicNames, topic)
	req.TimeoutMillis = int32(requestTimeout / time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("kafkatest: delete topic %s: %v", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			t.Fatalf("kafkatest: delete topic %s: %v", topic, err)
		}
	}
	c.resetClient() // its metadata has the old topic id
}

// AddPartitions grows topic by n partitions.
func (c *Cluster) AddPartitions(t testing.TB, topic string, n int) {
	t.Helper()
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	current, _ := c.describe(t, topic)
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic = topic
	rt.Count = current + int32(n)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(requestTimeout / time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("kafkatest: add partitions to %s: %v", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			t.Fatalf("kafkatest: add partitions to %s: %v", topic, err)
		}
	}
	// The client maps records to the partitions it knew; a new one sees them all.
	c.resetClient()
}

// describe returns the partition count and the id of topic.
func (c *Cluster) describe(t testing.TB, topic string) (int32, [16]byte) {
	t.Helper()
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("kafkatest: metadata of %s: %v", topic, err)
	}
	for _, mt := range resp.Topics {
		if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
			t.Fatalf("kafkatest: metadata of %s: %v", topic, err)
		}
		return int32(len(mt.Partitions)), mt.TopicID
	}
	t.Fatalf("kafkatest: metadata of %s: no such topic", topic)
	return 0, [16]byte{}
}

// Produce writes records to topic and waits until every one is acknowledged.
func (c *Cluster) Produce(t testing.TB, topic string, records ...Record) {
	t.Helper()
	if err := c.TryProduce(topic, records...); err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
}

// TryProduce is Produce returning the error, for use outside the test goroutine.
func (c *Cluster) TryProduce(topic string, records ...Record) error {
	cl, err := c.kgoClient()
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	rs := make([]*kgo.Record, len(records))
	for i, r := range records {
		kr := &kgo.Record{Topic: topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		rs[i] = kr
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce to %s: %w", topic, err)
	}
	return nil
}

// ReadAll reads every record of topic from the earliest offset up to the end offsets as
// they are when ReadAll starts, with read_committed isolation (aborted transactions and
// open ones are not returned).
func (c *Cluster) ReadAll(t testing.TB, topic string) []*kgo.Record {
	t.Helper()
	ends := c.endOffsets(t, topic)
	parts := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			parts[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(parts) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control records (transaction markers) are returned so that the last offset
		// before the end is always seen, even when it is a marker.
		kgo.KeepControlRecords(),
	)
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var out []*kgo.Record
	done := map[int32]bool{}
	for len(done) < len(parts) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("kafkatest: read %s: %v (read %d records)", topic, err, len(out))
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("kafkatest: read %s[%d]: %v", topic, p, err) })
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			// A partition is done when its record at end-1 was returned: a fetch may
			// stop short of the end (a big record fills it), so the last stable offset
			// of the answer says nothing about what this client has read.
			for _, r := range fp.Records {
				if r.Offset >= ends[r.Partition] {
					continue
				}
				if r.Offset+1 >= ends[r.Partition] {
					done[r.Partition] = true
				}
				if !r.Attrs.IsControl() {
					out = append(out, r)
				}
			}
		})
	}
	return out
}

// endOffsets returns the last stable offset of each partition of topic.
func (c *Cluster) endOffsets(t testing.TB, topic string) map[int32]int64 {
	t.Helper()
	n, _ := c.describe(t, topic)
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < n; p++ {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	out := map[int32]int64{}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			t.Fatalf("kafkatest: list offsets of %s: %v", topic, shard.Err)
		}
		for _, rt := range shard.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					t.Fatalf("kafkatest: list offsets of %s[%d]: %v", topic, rp.Partition, err)
				}
				out[rp.Partition] = rp.Offset
			}
		}
	}
	return out
}

// Committed returns the offsets group has committed for topic, by partition.
func (c *Cluster) Committed(t testing.TB, group, topic string) map[int32]int64 {
	t.Helper()
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("kafkatest: offset fetch of %s: %v", group, err)
	}
	out := map[int32]int64{}
	if resp.ErrorCode == kerr.GroupIDNotFound.Code {
		return out // a group that never committed
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("kafkatest: offset fetch of %s: %v", group, err)
	}
	for _, rt := range resp.Topics {
		if rt.Topic != topic {
			continue
		}
		for _, rp := range rt.Partitions {
			if rp.Offset >= 0 {
				out[rp.Partition] = rp.Offset
			}
		}
	}
	return out
}

// installGoneControl fails every request that reaches a removed broker, or any broker
// during an Outage. It is installed on first use so that clusters without failures pay
// nothing per request.
func (c *Cluster) installGoneControl() {
	c.controlOnce.Do(func() {
		c.kc.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
			c.kc.KeepControl()
			node := c.kc.CurrentNode()
			c.mu.Lock()
			fail := c.down || c.gone[node]
			c.mu.Unlock()
			if fail {
				return nil, errBrokerGone, true
			}
			return nil, nil, false
		})
	})
}

// RemoveBrokerHard removes a broker the way a decommissioned broker disappears: its
// listener closes, its open connections are cut on their next request, and the
// partitions it led move to the remaining brokers.
func (c *Cluster) RemoveBrokerHard(node int32) error {
	c.installGoneControl()
	c.mu.Lock()
	c.gone[node] = true
	c.mu.Unlock()
	if err := c.kc.RemoveNode(node); err != nil {
		return fmt.Errorf("kafkatest: remove node %d: %w", node, err)
	}
	return nil
}

// Outage makes every broker unreachable: new connections are closed at once and open
// ones on their next request. The returned function ends the outage.
func (c *Cluster) Outage() (restore func()) {
	c.installGoneControl()
	c.mu.Lock()
	c.down = true
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.down = false
		c.mu.Unlock()
	}
}

func (c *Cluster) isDown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down
}

// outageListener closes connections accepted during an Outage.
type outageListener struct {
	net.Listener
	c *Cluster
}

func (l *outageListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if !l.c.isDown() {
			return conn, nil
		}
		conn.Close()
	}
}

// HangMetadata holds every Metadata request (from every client) until until is closed,
// as a broker whose metadata requests time out. Requests behind a held one on the same
// connection wait too, as the Kafka protocol answers a connection's requests in order.
func (c *Cluster) HangMetadata(until <-chan struct{}) {
	c.kc.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case <-until:
			c.kc.DropControl()
			return nil, nil, false
		default:
		}
		c.kc.KeepControl()
		c.kc.SleepControl(func() { <-until })
		return nil, nil, false
	})
}

// HangMetadataFor is HangMetadata for a fixed duration.
func (c *Cluster) HangMetadataFor(d time.Duration) {
	until := make(chan struct{})
	time.AfterFunc(d, func() { close(until) })
	c.HangMetadata(until)
}

// FailCoordinator makes group's coordinator unavailable: finding it, committing and
// fetching its offsets answer COORDINATOR_NOT_AVAILABLE. The returned function restores it.
func (c *Cluster) FailCoordinator(group string) (restore func()) {
	h := c.kc.Fault(kfake.Fault{
		Keys:  []kmsg.Key{kmsg.FindCoordinator, kmsg.OffsetCommit, kmsg.OffsetFetch},
		Group: group,
		Err:   kerr.CoordinatorNotAvailable,
		Count: -1,
	})
	return h.Remove
}

// Commit commits offsets (partition -> next offset) for group, as a consumer would.
func (c *Cluster) Commit(t testing.TB, group, topic string, offsets map[int32]int64) {
	t.Helper()
	cl, err := c.kgoClient()
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = group
	req.Generation = -1
	_, id := c.describe(t, topic)
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rt.TopicID = id
	for p, off := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition = p
		rp.Offset = off
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("kafkatest: commit for %s: %v", group, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				t.Fatalf("kafkatest: commit for %s %s[%d]: %v", group, topic, rp.Partition, err)
			}
		}
	}
}
