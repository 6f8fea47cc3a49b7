package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// The exactly-once sink as exec drives it in a job that checkpoints: PrepareCommit at
// each barrier, CheckpointComplete after the checkpoint's completed marker, and a new
// sink opened with the stored state after a crash.

func exactlyOnceConfig(c *kafkatest.Cluster, log *testLog, topic string, restored []byte) connectors.SinkConfig {
	cfg := sinkConfig(c, log, topic, eventSchema, nil, map[string]string{
		"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "eo",
	})
	cfg.Restored = restored
	return cfg
}

func openCommitting(t testing.TB, cfg connectors.SinkConfig) exactlyOnceSink {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	s, err := NewSink(ctx, cfg)
	if err != nil {
		t.Fatalf("open sink: %v", err)
	}
	eo, ok := s.(exactlyOnceSink)
	if !ok {
		t.Fatalf("an exactly-once sink is a %T, not a CommittingSink", s)
	}
	t.Cleanup(func() { eo.Close() })
	return eo
}

// crash drops the sink as a killed process would: its producers go away without ending
// their transactions.
func crash(s exactlyOnceSink) {
	s.closed = true
	for _, cl := range s.tx.clients {
		if cl != nil {
			cl.Close()
		}
	}
}

// committedIDs reads the ids of the rows a read_committed consumer sees, counting each.
func committedIDs(t testing.TB, c *kafkatest.Cluster, topic string) map[int]int {
	t.Helper()
	got := map[int]int{}
	for _, r := range c.ReadAll(t, topic) {
		var row struct{ ID int }
		if err := json.Unmarshal(r.Value, &row); err != nil {
			t.Fatalf("record %q: %v", r.Value, err)
		}
		got[row.ID]++
	}
	return got
}

func wantIDs(t testing.TB, got map[int]int, from, to int) {
	t.Helper()
	var bad []string
	for id := from; id < to; id++ {
		if got[id] != 1 {
			bad = append(bad, fmt.Sprintf("%d seen %d times", id, got[id]))
		}
	}
	for id, n := range got {
		if id < from || id >= to {
			bad = append(bad, fmt.Sprintf("%d (x%d) should not be there", id, n))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("read_committed sees %d ids, want exactly [%d, %d): %s", len(got), from, to, strings.Join(bad[:min(len(bad), 10)], "; "))
	}
}

func measure(s exactlyOnceSink, name string) float64 {
	for _, m := range s.Report() {
		if m.Name == name {
			return m.Value
		}
	}
	return -1
}

func TestExactlyOnceTwoPhase(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "eo", 3)
	ctx := context.Background()
	s := openCommitting(t, exactlyOnceConfig(c, newTestLog(t), "eo", nil))
	if err := s.Write(ctx, inserts(0, 50)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PrepareCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Pre-committed is not committed: nothing visible, and the next rows go on.
	wantIDs(t, committedIDs(t, c, "eo"), 0, 0)
	if err := s.Write(ctx, inserts(50, 80)); err != nil {
		t.Fatal(err)
	}
	if got := measure(s, "transactions_pending"); got != 2 {
		t.Errorf("%v transactions pending, want 2 (one staged, one open)", got)
	}
	if err := s.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, committedIDs(t, c, "eo"), 0, 50)
	if _, err := s.PrepareCommit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointComplete(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, committedIDs(t, c, "eo"), 0, 80)
	if got := measure(s, "transactions_committed_total"); got != 2 {
		t.Errorf("%v transactions committed, want 2", got)
	}
	var hist connectors.Measure
	for _, m := range s.Report() {
		if m.Name == "transaction_commit_seconds" {
			hist = m
		}
	}
	if hist.Kind != connectors.Histogram || hist.Count != 2 || hist.Buckets[len(hist.Buckets)-1].Count != 2 {
		t.Errorf("barrier-to-commit histogram %+v, want two observations", hist)
	}
}

// A crash after the checkpoint completed and before the sink committed: the restored
// sink commits the checkpoint's transaction, aborts the one opened after it, and says so.
func TestExactlyOnceRecoveryCommitsStagedAndAbortsLingering(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "eo", 2)
	ctx := context.Background()
	s := openCommitting(t, exactlyOnceConfig(c, newTestLog(t), "eo", nil))
	if err := s.Write(ctx, inserts(0, 40)); err != nil {
		t.Fatal(err)
	}
	state, err := s.PrepareCommit(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, inserts(40, 60)); err != nil { // after the barrier: replayed on restore
		t.Fatal(err)
	}
	if err := s.tx.clients[s.tx.open].Flush(ctx); err != nil {
		t.Fatal(err)
	}
	crash(s)
	wantIDs(t, committedIDs(t, c, "eo"), 0, 0) // both transactions still open

	log := newTestLog(t)
	r := openCommitting(t, exactlyOnceConfig(c, log, "eo", state))
	wantIDs(t, committedIDs(t, c, "eo"), 0, 40)
	if !log.contains("committed the transaction of the restored checkpoint") || !log.contains("checkpoint=7") {
		t.Errorf("the recovery commit was not logged:\n%s", strings.Join(log.lines, "\n"))
	}
	if !log.contains("aborted a lingering transaction") || !log.contains("transactional_id=eo-0-1") {
		t.Errorf("the aborted transaction was not reported:\n%s", strings.Join(log.lines, "\n"))
	}
	if got := measure(r, "transactions_aborted_total"); got != 1 {
		t.Errorf("%v transactions aborted, want 1", got)
	}
	// The job replays from checkpoint 7: rows 40..60 again, then more.
	if err := r.Write(ctx, inserts(40, 70)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PrepareCommit(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckpointComplete(ctx, 8); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, committedIDs(t, c, "eo"), 0, 70)

	// Restored again from 7 (as if 8 had not completed in that run): the commit of 7
	// is not repeated as a duplicate.
	r.Close()
	openCommitting(t, exactlyOnceConfig(c, newTestLog(t), "eo", state))
	wantIDs(t, committedIDs(t, c, "eo"), 0, 70)
}

// A checkpoint that fails after the sink pre-committed (its storage write failed, and
// the job restarts from the checkpoint before): the staged transaction is aborted, and
// the replayed rows are seen once.
func TestExactlyOnceFailedCheckpointNoDuplicate(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "eo", 2)
	ctx := context.Background()
	s := openCommitting(t, exactlyOnceConfig(c, newTestLog(t), "eo", nil))
	if err := s.Write(ctx, inserts(0, 30)); err != nil {
		t.Fatal(err)
	}
	good, err := s.PrepareCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, inserts(30, 50)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PrepareCommit(ctx, 2); err != nil { // checkpoint 2 then fails: no CheckpointComplete
		t.Fatal(err)
	}
	s.Close() // the run fails; the restart strategy rebuilds the pipeline from checkpoint 1
	r := openCommitting(t, exactlyOnceConfig(c, newTestLog(t), "eo", good))
	if err := r.Write(ctx, inserts(30, 50)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PrepareCommit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckpointComplete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, committedIDs(t, c, "eo"), 0, 50)

	// A failed checkpoint the job tolerates: its transaction stays staged and the next
	// completed checkpoint commits it with its own.
	if err := r.Write(ctx, inserts(50, 60)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PrepareCommit(ctx, 4); err != nil { // fails, tolerated
		t.Fatal(err)
	}
	if err := r.Write(ctx, inserts(60, 70)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PrepareCommit(ctx, 5); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, committedIDs(t, c, "eo"), 0, 50)
	if err := r.CheckpointComplete(ctx, 5); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, committedIDs(t, c, "eo"), 0, 70)
}

// TestTransactionalIDPoolBound runs 10,000 checkpoints, each with rows, and checks with
// the cluster's own list of transactional ids that the sink used no more than its pool.
func TestTransactionalIDPoolBound(t *testing.T) {
	checkpoints := 10_000
	if testing.Short() {
		checkpoints = 1_000
	}
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "eo", 2)
	ctx := context.Background()
	s := openCommitting(t, exactlyOnceConfig(c, newTestLog(t), "eo", nil))
	began := time.Now()
	for id := 1; id <= checkpoints; id++ {
		if err := s.Write(ctx, inserts(id, id+1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PrepareCommit(ctx, uint64(id)); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckpointComplete(ctx, uint64(id)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d checkpoints in %s", checkpoints, time.Since(began))
	if got := measure(s, "transactions_committed_total"); got != float64(checkpoints) {
		t.Errorf("%v transactions committed, want %d", got, checkpoints)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ids := map[string]bool{}
	for _, shard := range cl.RequestSharded(ctx, kmsg.NewPtrListTransactionsRequest()) {
		if shard.Err != nil {
			t.Fatal(shard.Err)
		}
		for _, ts := range shard.Resp.(*kmsg.ListTransactionsResponse).TransactionStates {
			ids[ts.TransactionalID] = true
		}
	}
	if len(ids) == 0 || len(ids) > basePoolSize {
		t.Fatalf("the brokers know %d transactional ids (%v), want 1 to %d", len(ids), ids, basePoolSize)
	}
	for id := range ids {
		if !strings.HasPrefix(id, "eo-0-") {
			t.Errorf("transactional id %s is not of the pool eo-0-<n>", id)
		}
	}
	wantIDs(t, committedIDs(t, c, "eo"), 1, checkpoints+1)
}

func TestTransactionTimeoutAgainstInterval(t *testing.T) {
	info := connectors.TableInfo{Name: "out", Schema: eventSchema, Options: map[string]string{
		"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "x:9092", "format": "json",
		"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "p",
		"properties.transaction.timeout.ms": "30000",
	}}
	err := ValidateWrite(info, map[string]string{"execution.checkpointing.interval": "1 min"}, false)
	if err == nil || !strings.Contains(err.Error(), "'execution.checkpointing.interval' (1m0s) is not shorter than 'properties.transaction.timeout.ms' (30s)") {
		t.Fatalf("interval over the timeout: %v", err)
	}
	if err := ValidateWrite(info, map[string]string{"execution.checkpointing.interval": "10 s"}, false); err != nil {
		t.Fatalf("interval under the timeout: %v", err)
	}
	delete(info.Options, "properties.transaction.timeout.ms") // the default, 60 s
	if err := ValidateWrite(info, map[string]string{"execution.checkpointing.interval": "2 min"}, false); err == nil {
		t.Fatal("an interval over the default timeout passed")
	}
	info.Options["sink.delivery-guarantee"] = "at-least-once"
	if err := ValidateWrite(info, map[string]string{"execution.checkpointing.interval": "2 min"}, false); err != nil {
		t.Fatalf("at-least-once has no transactions: %v", err)
	}
}

// The franz-go options of the exactly-once path: properties it translates or ignores,
// and those it refuses rather than silently dropping (security settings).
func TestExactlyOnceProperties(t *testing.T) {
	base := map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "b:9092", "format": "json",
		"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "p"}
	for _, tc := range []struct {
		props map[string]string
		err   string
	}{
		{map[string]string{"properties.group.id": "g", "properties.linger.ms": "5", "properties.compression.type": "lz4",
			"properties.batch.size": "65536", "properties.acks": "all", "properties.client.id": "c"}, ""},
		{map[string]string{"properties.acks": "1"}, "needs acks=all"},
		{map[string]string{"properties.security.protocol": "SASL_SSL", "properties.sasl.mechanism": "PLAIN"}, "not supported"},
	} {
		opts := map[string]string{}
		for k, v := range base {
			opts[k] = v
		}
		for k, v := range tc.props {
			opts[k] = v
		}
		info := connectors.TableInfo{Name: "out", Options: opts, Schema: eventSchema}
		o, err := parseOptions(info, false)
		if err != nil {
			t.Fatal(err)
		}
		set, err := resolveProperties("out", opts, forSink)
		if err != nil {
			t.Fatal(err)
		}
		_, err = kgoOptions("out", set, o)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.props, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: %v, want an error saying %q", tc.props, err, tc.err)
		}
	}
}
