package kafkatest

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Decommission takes brokers away the way decommissioning them without reassigning
// their partitions does on a cluster whose topics have one replica: each broker goes
// away hard (RemoveBrokerHard), and the partitions of topic it led are left without a
// leader. Metadata answers LEADER_NOT_AVAILABLE for them, and fetches, produces and
// offset lookups of them NOT_LEADER_OR_FOLLOWER, while the other partitions are served
// by the remaining brokers. It returns those partitions, sorted, and a function that
// brings the brokers back with their node ids and addresses and gives the partitions
// their leaders again.
func (c *Cluster) Decommission(topic string, nodes ...int32) (leaderless []int32, restore func() error, err error) {
	infos := c.kc.PartitionInfos(topic)
	if infos == nil {
		return nil, nil, fmt.Errorf("kafkatest: decommission: no topic %s", topic)
	}
	leaders := map[int32]int32{} // partition -> its leader before
	for _, p := range infos {
		l := c.kc.LeaderFor(topic, p.Partition)
		leaders[p.Partition] = l
		if slices.Contains(nodes, l) {
			leaderless = append(leaderless, p.Partition)
		}
	}
	slices.Sort(leaderless)
	ports := map[int32]int{}
	for _, n := range nodes {
		_, port, err := net.SplitHostPort(c.Addr(n))
		if err != nil {
			return nil, nil, fmt.Errorf("kafkatest: decommission: node %d: %w", n, err)
		}
		ports[n], _ = strconv.Atoi(port)
	}
	var faults *kfake.FaultHandle
	if len(leaderless) > 0 {
		// Installed before the brokers go, so that no client sees the partitions led
		// by a remaining broker in between.
		faults = c.kc.Fault(
			kfake.Fault{Keys: []kmsg.Key{kmsg.Metadata}, Topic: topic, Partitions: leaderless,
				Err: kerr.LeaderNotAvailable, Count: -1},
			kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch, kmsg.Produce, kmsg.ListOffsets, kmsg.OffsetForLeaderEpoch},
				Topic: topic, Partitions: leaderless, Err: kerr.NotLeaderForPartition, Count: -1},
		)
	}
	for _, n := range nodes {
		if err := c.RemoveBrokerHard(n); err != nil {
			return leaderless, nil, err
		}
	}
	// RemoveNode moved every leader about; the partitions of the remaining brokers stay
	// where they were, as they would.
	var errs []error
	for p, n := range leaders {
		if !slices.Contains(nodes, n) {
			if err := c.kc.MoveTopicPartition(topic, p, n); err != nil {
				errs = append(errs, fmt.Errorf("kafkatest: lead %s[%d] from node %d: %w", topic, p, n, err))
			}
		}
	}
	c.resetClient() // its connections went with the brokers
	if err := errors.Join(errs...); err != nil {
		return leaderless, nil, err
	}
	restore = func() error {
		var errs []error
		for _, n := range nodes {
			if _, _, err := c.kc.AddNode(n, ports[n]); err != nil {
				errs = append(errs, fmt.Errorf("kafkatest: bring back node %d: %w", n, err))
				continue
			}
			c.mu.Lock()
			delete(c.gone, n)
			c.mu.Unlock()
		}
		// AddNode moved leaders about; every partition goes back to the broker that
		// led it, which is what a broker coming back with its log does.
		for p, n := range leaders {
			if err := c.kc.MoveTopicPartition(topic, p, n); err != nil {
				errs = append(errs, fmt.Errorf("kafkatest: lead %s[%d] from node %d: %w", topic, p, n, err))
			}
		}
		if faults != nil {
			faults.Remove()
		}
		c.resetClient()
		return errors.Join(errs...)
	}
	return leaderless, restore, nil
}
