package kafka

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/types"
)

func sinkConfig(c *kafkatest.Cluster, log *testLog, topic string, schema types.Schema, pk []string, extra map[string]string) connectors.SinkConfig {
	opts := map[string]string{
		"connector":                    "kafka",
		"topic":                        topic,
		"properties.bootstrap.servers": c.Bootstrap(),
		"format":                       "json",
	}
	for k, v := range extra {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	return connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Options: opts, Schema: schema, PrimaryKey: pk},
		Input:     schema,
		Settings:  map[string]string{},
		Log:       log,
	}
}

func openSink(t testing.TB, cfg connectors.SinkConfig, upsert bool) *Sink {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	s, err := OpenSink(ctx, cfg, upsert)
	if err != nil {
		t.Fatalf("open sink: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func eventRow(id int) types.Row {
	return types.Row{types.BigIntValue(int64(id)), types.StringValue(fmt.Sprintf("u%d", id%7)), types.IntValue(types.Int, int64(id%100))}
}

func inserts(from, to int) connectors.ChangeBatch {
	var b connectors.ChangeBatch
	for id := from; id < to; id++ {
		b.Kinds = append(b.Kinds, connectors.Insert)
		b.Rows = append(b.Rows, eventRow(id))
	}
	return b
}

func TestSinkAppend(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "out", 4)
	s := openSink(t, sinkConfig(c, newTestLog(t), "out", eventSchema, nil, map[string]string{
		"key.format": "json", "key.fields": "id",
	}), false)
	ctx := context.Background()
	if err := s.Write(ctx, inserts(0, 100)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs := c.ReadAll(t, "out")
	if len(recs) != 100 {
		t.Fatalf("%d records, want 100", len(recs))
	}
	parts := map[int32]bool{}
	for _, r := range recs {
		var id int
		if _, err := fmt.Sscanf(string(r.Key), `{"id":%d}`, &id); err != nil {
			t.Fatalf("key %q: %v", r.Key, err)
		}
		if want := string(eventJSON(id)); string(r.Value) != want {
			t.Errorf("value %s, want %s", r.Value, want)
		}
		parts[r.Partition] = true
	}
	if len(parts) < 2 {
		t.Errorf("keyed records all went to %v: the default partitioner hashes keys", parts)
	}
	if st := s.Stats(); st.Delivered != 100 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}

	// The source reads what the sink wrote.
	src := openSource(t, sourceConfig(c, newTestLog(t), "out", map[string]string{"scan.bounded.mode": "latest-offset"}))
	r := newReader(t, src)
	r.toEOF()
	r.checkIDs(0, 100)
	for id, row := range r.rows {
		if got, want := fmt.Sprint(row), fmt.Sprint(eventRow(int(id))); got != want {
			t.Errorf("row %s, want %s", got, want)
		}
	}

	if err := s.Write(ctx, connectors.ChangeBatch{Kinds: []connectors.RowKind{connectors.UpdateAfter}, Rows: []types.Row{eventRow(1)}}); !errors.Is(err, ErrUpdatingInput) {
		t.Errorf("writing an update: %v, want ErrUpdatingInput", err)
	}
	cfg := sinkConfig(c, newTestLog(t), "out", eventSchema, nil, nil)
	cfg.Updating = true
	if _, err := OpenSink(ctx, cfg, false); !errors.Is(err, ErrUpdatingInput) {
		t.Errorf("opening on updating input: %v, want ErrUpdatingInput", err)
	}
	cfg = sinkConfig(c, newTestLog(t), "a;b", eventSchema, nil, nil)
	if _, err := OpenSink(ctx, cfg, false); err == nil {
		t.Error("a sink accepted a topic list")
	}
}

func TestSinkPartitioners(t *testing.T) {
	c := kafkatest.NewCluster(t, 2)
	ctx := context.Background()
	for _, p := range []string{"fixed", "round-robin"} {
		t.Run(p, func(t *testing.T) {
			c.CreateTopic(t, p, 4)
			s := openSink(t, sinkConfig(c, newTestLog(t), p, eventSchema, nil, map[string]string{"sink.partitioner": p}), false)
			if err := s.Write(ctx, inserts(0, 100)); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			count := map[int32]int{}
			for _, r := range c.ReadAll(t, p) {
				count[r.Partition]++
			}
			want := map[int32]int{0: 100}
			if p == "round-robin" {
				want = map[int32]int{0: 25, 1: 25, 2: 25, 3: 25}
			}
			if fmt.Sprint(count) != fmt.Sprint(want) {
				t.Errorf("records per partition %v, want %v", count, want)
			}
		})
	}
}

func TestUpsertSink(t *testing.T) {
	c := kafkatest.NewCluster(t, 2)
	schema := types.Schema{{Name: "day", Type: types.TypeString}, {Name: "dau", Type: types.TypeBigInt}}
	row := func(day string, n int64) types.Row { return types.Row{types.StringValue(day), types.BigIntValue(n)} }
	changes := connectors.ChangeBatch{
		Kinds: []connectors.RowKind{connectors.Insert, connectors.Insert, connectors.UpdateBefore, connectors.UpdateAfter, connectors.Delete},
		Rows:  []types.Row{row("d1", 1), row("d2", 5), row("d1", 1), row("d1", 2), row("d2", 5)},
	}
	opts := map[string]string{"connector": "upsert-kafka", "format": "", "key.format": "json", "value.format": "json",
		"value.fields-include": "EXCEPT_KEY"}
	type rec struct{ key, value string }
	read := func(topic string) []rec {
		var out []rec
		for _, r := range c.ReadAll(t, topic) {
			v := "<tombstone>"
			if r.Value != nil {
				v = string(r.Value)
			}
			out = append(out, rec{string(r.Key), v})
		}
		return out
	}
	ctx := context.Background()

	t.Run("every-change", func(t *testing.T) {
		c.CreateTopic(t, "dau", 1)
		s := openSink(t, sinkConfig(c, newTestLog(t), "dau", schema, []string{"day"}, opts), true)
		if err := s.Write(ctx, changes); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		want := []rec{{`{"day":"d1"}`, `{"dau":1}`}, {`{"day":"d2"}`, `{"dau":5}`}, {`{"day":"d1"}`, `{"dau":2}`}, {`{"day":"d2"}`, "<tombstone>"}}
		if got := read("dau"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("records\n got %v\nwant %v", got, want)
		}
	})

	t.Run("buffered", func(t *testing.T) {
		c.CreateTopic(t, "dau-buffered", 1)
		buffered := map[string]string{"sink.buffer-flush.max-rows": "100", "sink.buffer-flush.interval": "1 h"}
		for k, v := range opts {
			buffered[k] = v
		}
		s := openSink(t, sinkConfig(c, newTestLog(t), "dau-buffered", schema, []string{"day"}, buffered), true)
		if err := s.Write(ctx, changes); err != nil {
			t.Fatal(err)
		}
		if got := read("dau-buffered"); len(got) != 0 {
			t.Errorf("records before Flush: %v", got)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		want := []rec{{`{"day":"d1"}`, `{"dau":2}`}, {`{"day":"d2"}`, "<tombstone>"}}
		if got := read("dau-buffered"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("records\n got %v\nwant %v", got, want)
		}
	})
}

func TestExactlyOnceSink(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "txn", 2)
	ctx := context.Background()
	cfg := sinkConfig(c, newTestLog(t), "txn", eventSchema, nil, map[string]string{
		"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "dau",
	})
	s := openSink(t, cfg, false)
	if err := s.Write(ctx, inserts(0, 10)); err != nil {
		t.Fatal(err)
	}
	if got := len(c.ReadAll(t, "txn")); got != 0 {
		t.Errorf("%d records visible before the transaction committed", got)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(c.ReadAll(t, "txn")); got != 10 {
		t.Errorf("%d records after Flush, want 10", got)
	}
	// A second transaction, then Close without Flush: it is aborted.
	if err := s.Write(ctx, inserts(10, 15)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The source reads committed records only.
	src := openSource(t, sourceConfig(c, newTestLog(t), "txn", map[string]string{"scan.bounded.mode": "latest-offset"}))
	r := newReader(t, src)
	r.toEOF()
	r.checkIDs(0, 10)
}

func TestSinkDeliveryError(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	s := openSink(t, sinkConfig(c, newTestLog(t), "missing", eventSchema, nil, map[string]string{
		"properties.delivery.timeout.ms": "1500",
	}), false)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if err := s.Write(ctx, inserts(0, 3)); err != nil {
		t.Fatal(err)
	}
	err := s.Flush(ctx)
	if !errors.Is(err, ErrDelivery) {
		t.Fatalf("Flush: %v, want ErrDelivery", err)
	}
	t.Logf("delivery error: %v", err)
	if st := s.Stats(); st.Failed != 3 {
		t.Errorf("stats %+v", st)
	}
	// The errors were reported once.
	if err := s.Flush(ctx); err != nil {
		t.Errorf("second Flush: %v", err)
	}
}
