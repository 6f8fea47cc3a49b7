package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// badRecords are records a JSON source must not take silently, each between two good ones.
var badRecords = []struct {
	name  string
	value []byte
}{
	{"invalid-json", []byte(`{"id":1,"user":`)},
	{"wrong-type", []byte(`{"id":"one","user":"u","n":1}`)},
	{"empty-value", []byte{}},
	{"oversized-invalid", append(append([]byte(`{"id":1,"pad":"`), bytes.Repeat([]byte("x"), 900_000)...), '}')},
}

func TestBadRecords(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	for i, bad := range badRecords {
		topic := "bad-" + bad.name
		c.CreateTopic(t, topic, 1)
		c.Produce(t, topic,
			kafkatest.Record{Value: eventJSON(100 + i)},
			kafkatest.Record{Value: bad.value},
			kafkatest.Record{Value: eventJSON(200 + i)},
		)
		t.Run(bad.name, func(t *testing.T) {
			src := openSource(t, sourceConfig(c, newTestLog(t), topic, nil))
			r := newReader(t, src)
			deadline := time.Now().Add(testDeadline)
			var err error
			for err == nil && time.Now().Before(deadline) {
				err = r.poll()
			}
			var re *RecordError
			if !errors.As(err, &re) || !errors.Is(err, ErrBadRecord) {
				t.Fatalf("poll: %v, want a *RecordError wrapping ErrBadRecord", err)
			}
			if re.Topic != topic || re.Partition != 0 || re.Offset != 1 {
				t.Errorf("error at %s/%d/%d, want %s/0/1", re.Topic, re.Partition, re.Offset, topic)
			}
			prefix := fmt.Sprintf("kafka source events: topic %s partition 0 offset 1: ", topic)
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not start with %q", err, prefix)
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error is %d bytes long: a bad record must not flood the log", len(err.Error()))
			}
			if _, ok := r.rows[int64(100+i)]; !ok {
				t.Errorf("the good record before the bad one was not returned")
			}
			if _, ok := r.rows[int64(200+i)]; ok {
				t.Errorf("the record after the bad one was returned")
			}
			// The error stays: the job must restart from its checkpoint.
			if _, err2 := src.Poll(context.Background(), time.Millisecond); !errors.Is(err2, ErrBadRecord) {
				t.Errorf("next poll: %v, want the same error", err2)
			}
			// The snapshot ends before the bad record.
			snap, _ := src.Snapshot()
			ps, _ := decodeSnapshot(snap)
			if len(ps) != 1 || ps[0].next != 1 {
				t.Errorf("snapshot %+v, want next offset 1", ps)
			}
		})
	}

	t.Run("ignore-parse-errors", func(t *testing.T) {
		topic := "bad-mixed"
		c.CreateTopic(t, topic, 1)
		var rs []kafkatest.Record
		for i, bad := range badRecords {
			rs = append(rs, kafkatest.Record{Value: eventJSON(i)}, kafkatest.Record{Value: bad.value})
		}
		rs = append(rs, kafkatest.Record{Value: nil}, kafkatest.Record{Value: eventJSON(99)}) // a tombstone, then a good one
		c.Produce(t, topic, rs...)
		src := openSource(t, sourceConfig(c, newTestLog(t), topic, map[string]string{"json.ignore-parse-errors": "true"}))
		r := newReader(t, src)
		r.count(len(badRecords) + 1)
		st := src.Stats()
		if st.Skipped != uint64(len(badRecords)) || st.Tombstones != 1 {
			t.Errorf("skipped %d and %d tombstones, want %d and 1", st.Skipped, st.Tombstones, len(badRecords))
		}
		snap, _ := src.Snapshot()
		ps, _ := decodeSnapshot(snap)
		if want := int64(len(rs)); len(ps) != 1 || ps[0].next != want {
			t.Errorf("snapshot %+v, want next offset %d (past every skipped record)", ps, want)
		}
	})

	t.Run("oversized-valid", func(t *testing.T) {
		topic := "big"
		c.CreateTopic(t, topic, 1)
		big := []byte(fmt.Sprintf(`{"id":7,"user":"%s","n":1}`, strings.Repeat("u", 900_000)))
		c.Produce(t, topic, kafkatest.Record{Value: big}, kafkatest.Record{Value: eventJSON(8)})
		src := openSource(t, sourceConfig(c, newTestLog(t), topic, map[string]string{
			"properties.fetch.message.max.bytes": "65536", // smaller than the record: librdkafka must grow it
		}))
		r := newReader(t, src)
		r.count(2)
		if got := len(r.rows[7][1].Str()); got != 900_000 {
			t.Errorf("user of the big record has %d bytes", got)
		}
	})
}

// TestRestore stops a source after a snapshot and starts another from it: together they
// read every record exactly once, whatever the startup mode says.
func TestRestore(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 3)
	produceEvents(t, c, "events", 3, 0, 300)

	first := openSource(t, sourceConfig(c, newTestLog(t), "events", nil))
	r1 := newReader(t, first)
	r1.until("some rows", func() bool { return len(r1.rows) >= 100 })
	snap, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // rows read after the snapshot are not part of the cut
		if err := r1.poll(); err != nil {
			t.Fatal(err)
		}
	}
	cut := map[int64]bool{}
	ps, err := decodeSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		for id := int64(p.key.partition); id < 300; id += 3 {
			if (id / 3) < p.next {
				cut[id] = true
			}
		}
	}
	first.Close()
	produceEvents(t, c, "events", 3, 300, 330)

	cfg := sourceConfig(c, newTestLog(t), "events", map[string]string{"scan.startup.mode": "latest-offset"})
	cfg.Restored = snap
	second := openSource(t, cfg)
	r2 := newReader(t, second)
	r2.count(330 - len(cut))
	for id := int64(0); id < 330; id++ {
		_, in1 := cut[id]
		_, in2 := r2.rows[id]
		if in1 == in2 {
			t.Errorf("id %d: before the cut %v, read after restore %v", id, in1, in2)
		}
	}

	t.Run("bad-snapshot", func(t *testing.T) {
		cfg := sourceConfig(c, newTestLog(t), "events", nil)
		cfg.Restored = []byte{9, 9}
		_, err := Open(context.Background(), cfg)
		if !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("Open with a bad snapshot: %v", err)
		}
	})
}
