// Package demo runs pipesql's DAU example with no outside service: an in-process,
// multi-broker Kafka-protocol cluster (franz-go's kfake), a generator that fills the
// events topic with realistic clicks, and a viewer that follows the results topic.
//
// The generator runs event time faster than the wall clock (by default one simulated
// hour per second), so that days close, and daily windows fire, every 24 seconds.
// Clicks come from several apps with skewed popularity and a Zipf-distributed user
// population; a few arrive out of order (within the job's watermark bound) and a few are
// late by a day, which the job drops and counts.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is an in-process Kafka-protocol cluster.
type Cluster struct {
	kf    *kfake.Cluster
	Addrs []string
}

// ErrPortInUse is returned when a port the cluster needs is taken.
var ErrPortInUse = errors.New("port in use")

// StartCluster starts brokers brokers listening on 127.0.0.1 from firstPort up, with the
// given topics and partition counts.
func StartCluster(brokers, firstPort int, topics map[string]int32) (*Cluster, error) {
	ports := make([]int, brokers)
	for i := range ports {
		ports[i] = firstPort + i
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[i]))
		if err != nil {
			return nil, fmt.Errorf("%w: 127.0.0.1:%d (the embedded cluster listens on %d..%d, where the job's bootstrap servers point)",
				ErrPortInUse, ports[i], firstPort, firstPort+brokers-1)
		}
		l.Close()
	}
	opts := []kfake.Opt{kfake.NumBrokers(brokers), kfake.Ports(ports...)}
	for name, n := range topics {
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	kf, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting the embedded cluster: %w", err)
	}
	return &Cluster{kf: kf, Addrs: kf.ListenAddrs()}, nil
}

// Close stops the cluster.
func (c *Cluster) Close() { c.kf.Close() }

// GeneratorOptions shape the generated clicks.
type GeneratorOptions struct {
	Topic        string
	Brokers      []string
	EventsPerSec int           // wall-clock rate
	Speedup      time.Duration // simulated time per wall-clock second
	Start        time.Time     // simulated time of the first event
	Apps         []string
	Users        int
	Seed         uint64
}

// Stats counts what the generator produced.
type Stats struct {
	mu       sync.Mutex
	Produced int64
	Late     int64
	SimTime  time.Time
}

// Snapshot returns a copy of the counters.
func (s *Stats) Snapshot() (produced, late int64, simTime time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Produced, s.Late, s.SimTime
}

// Generate produces clicks until ctx is done.
func Generate(ctx context.Context, opts GeneratorOptions, stats *Stats) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(opts.Brokers...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(rng, 1.1, 4, uint64(opts.Users-1))
	appWeights := make([]int, len(opts.Apps)) // app i is half as popular as app i-1
	total := 0
	for i := range opts.Apps {
		appWeights[i] = 1 << (len(opts.Apps) - i)
		total += appWeights[i]
	}
	pickApp := func() string {
		n := rng.IntN(total)
		for i, w := range appWeights {
			if n < w {
				return opts.Apps[i]
			}
			n -= w
		}
		return opts.Apps[0]
	}
	actions := []string{"view", "view", "view", "click", "click", "add_to_cart", "purchase"}

	const tick = 50 * time.Millisecond
	perTick := max(1, opts.EventsPerSec*int(tick)/int(time.Second))
	simPerTick := time.Duration(float64(opts.Speedup) * tick.Seconds())
	sim := opts.Start
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	var produceErr error
	var errMu sync.Mutex
	for {
		select {
		case <-ctx.Done():
			cl.Flush(context.Background())
			errMu.Lock()
			defer errMu.Unlock()
			return produceErr
		case <-ticker.C:
		}
		late := int64(0)
		for i := 0; i < perTick; i++ {
			ts := sim.Add(time.Duration(int64(simPerTick) * int64(i) / int64(perTick)))
			// Out of order within the job's 5 s watermark bound.
			ts = ts.Add(-time.Duration(rng.Int64N(int64(4 * time.Second))))
			if rng.IntN(1000) == 0 {
				ts = ts.Add(-24 * time.Hour) // late: its day closed long ago
				late++
			}
			user := "u-" + strconv.FormatUint(zipf.Uint64()+1, 10)
			value, _ := json.Marshal(map[string]any{
				"app":        pickApp(),
				"user_id":    user,
				"action":     actions[rng.IntN(len(actions))],
				"event_time": ts.UnixMilli(),
			})
			cl.Produce(ctx, &kgo.Record{Topic: opts.Topic, Key: []byte(user), Value: value}, func(_ *kgo.Record, err error) {
				if err != nil && !errors.Is(err, context.Canceled) {
					errMu.Lock()
					produceErr = err
					errMu.Unlock()
				}
			})
		}
		sim = sim.Add(simPerTick)
		stats.mu.Lock()
		stats.Produced += int64(perTick)
		stats.Late += late
		stats.SimTime = sim
		stats.mu.Unlock()
	}
}

// Table is the latest value per key of an upsert (compacted) topic, as the viewer sees it.
type Table struct {
	mu   sync.Mutex
	rows map[string]map[string]any // key JSON -> value
}

// Follow reads topic from the beginning until ctx is done, keeping the latest value of
// each key; a tombstone deletes the key.
func Follow(ctx context.Context, brokers []string, topic string, t *Table) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	t.mu.Lock()
	if t.rows == nil {
		t.rows = map[string]map[string]any{}
	}
	t.mu.Unlock()
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if r.Value == nil {
				delete(t.rows, string(r.Key))
				return
			}
			var v map[string]any
			if json.Unmarshal(r.Value, &v) == nil {
				t.rows[string(r.Key)] = v
			}
		})
	}
	return nil
}

// Rows returns the table's rows as strings in the order of cols, sorted.
func (t *Table) Rows(cols []string) [][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var rows [][]string
	for _, v := range t.rows {
		row := make([]string, len(cols))
		for i, c := range cols {
			switch x := v[c].(type) {
			case nil:
				row[i] = "NULL"
			case float64:
				row[i] = strconv.FormatFloat(x, 'f', -1, 64)
			default:
				row[i] = fmt.Sprint(x)
			}
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return strings.Join(rows[i], "\x00") < strings.Join(rows[j], "\x00") })
	return rows
}
