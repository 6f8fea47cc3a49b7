package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/types"
)

func TestRoundTripWithMetadata(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 3)
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	var rs []kafkatest.Record
	for id := 0; id < 90; id++ {
		rs = append(rs, kafkatest.Record{
			Partition: int32(id % 3),
			Key:       []byte("k" + strconv.Itoa(id)),
			Value:     eventJSON(id),
			Headers:   []kafkatest.Header{{Key: "h", Value: []byte{byte(id)}}},
			Timestamp: ts.Add(time.Duration(id) * time.Millisecond),
		})
	}
	c.Produce(t, "events", rs...)

	log := newTestLog(t)
	cfg := sourceConfig(c, log, "events", nil)
	bytesT := types.Type{Kind: types.Bytes}
	// The plan reads n and id (in that order), then metadata.
	cfg.Produce = []connectors.ProducedColumn{
		{Name: "id", Type: types.TypeBigInt},
		{Name: "n", Type: types.TypeInt},
		{Name: "topic", Type: types.TypeString, MetadataKey: "topic"},
		{Name: "part", Type: types.TypeBigInt, MetadataKey: "partition"},
		{Name: "off", Type: types.TypeBigInt, MetadataKey: "offset"},
		{Name: "ts", Type: types.TimestampLTZType(3), MetadataKey: "timestamp"},
		{Name: "tt", Type: types.TypeString, MetadataKey: "timestamp-type"},
		{Name: "hs", Type: types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &bytesT}, MetadataKey: "headers"},
		{Name: "le", Type: types.TypeInt, MetadataKey: "leader-epoch"},
	}
	src := openSource(t, cfg)
	r := newReader(t, src)
	r.count(90)

	offsets := map[int32]int64{}
	for id := 0; id < 90; id++ {
		row := r.rows[int64(id)]
		p := int64(id % 3)
		want := []string{
			strconv.Itoa(id), strconv.Itoa(id % 100), "events", strconv.FormatInt(p, 10),
			strconv.FormatInt(offsets[int32(p)], 10),
			types.FormatTimestamp(ts.Add(time.Duration(id)*time.Millisecond).UnixMicro(), 3),
			"CreateTime", fmt.Sprintf("{h=x'%02x'}", id),
		}
		offsets[int32(p)]++
		for i, w := range want {
			if got := row[i].String(); got != w {
				t.Errorf("id %d column %s = %s, want %s", id, cfg.Produce[i].Name, got, w)
			}
		}
		if row[8].IsNull() {
			t.Errorf("id %d: leader-epoch is NULL", id)
		}
	}
	for split, n := range r.bySplit {
		if n != 30 {
			t.Errorf("split %s has %d rows, want 30", split, n)
		}
	}
	if got := strings.Join(src.Splits(), ","); got != "events-0,events-1,events-2" {
		t.Errorf("Splits() = %s", got)
	}
	if st := src.Stats(); st.Records != 90 || st.Partitions != 3 || st.DiscoveryAttempts == 0 {
		t.Errorf("stats: %+v", st)
	}
	if d := src.Degraded(); d != "" {
		t.Errorf("Degraded() = %q on a healthy cluster", d)
	}
}

// TestKeyAndValueFormats reads key columns from the record key ('EXCEPT_KEY' with a
// prefix) and the rest from the value.
func TestKeyAndValueFormats(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "kv", 1)
	c.Produce(t, "kv",
		kafkatest.Record{Key: []byte(`{"id":7}`), Value: []byte(`{"id":999,"user":"a","n":1}`)},
		kafkatest.Record{Key: nil, Value: []byte(`{"user":"b","n":2}`)},
	)
	schema := types.Schema{
		{Name: "k_id", Type: types.TypeBigInt},
		{Name: "user", Type: types.TypeString},
		{Name: "n", Type: types.TypeInt},
	}
	cfg := sourceConfig(c, newTestLog(t), "kv", map[string]string{
		"format":               "",
		"value.format":         "json",
		"key.format":           "json",
		"key.fields":           "k_id",
		"key.fields-prefix":    "k_",
		"value.fields-include": "EXCEPT_KEY",
	})
	cfg.Schema = schema
	cfg.Produce = []connectors.ProducedColumn{
		{Name: "user", Type: types.TypeString},
		{Name: "k_id", Type: types.TypeBigInt},
	}
	src := openSource(t, cfg)
	var rows []types.Row
	deadline := time.Now().Add(testDeadline)
	for len(rows) < 2 && time.Now().Before(deadline) {
		bs, err := src.Poll(context.Background(), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			rows = append(rows, b.Rows...)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("read %d rows, want 2", len(rows))
	}
	if got := fmt.Sprint(rows[0]); got != "[a 7]" {
		t.Errorf("row 0 = %s, want [a 7]", got)
	}
	if got := fmt.Sprint(rows[1]); got != "[b NULL]" {
		t.Errorf("row 1 = %s, want [b NULL] (no key)", got)
	}
}

func TestStartupModes(t *testing.T) {
	c := kafkatest.NewCluster(t, 3)
	c.CreateTopic(t, "events", 2)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []kafkatest.Record
	for id := 0; id < 40; id++ {
		// ids 0..39: partition id%2, timestamp base + id seconds.
		rs = append(rs, kafkatest.Record{Partition: int32(id % 2), Value: eventJSON(id), Timestamp: base.Add(time.Duration(id) * time.Second)})
	}
	c.Produce(t, "events", rs...)
	c.Commit(t, "g1", "events", map[int32]int64{0: 15, 1: 5}) // partition 0 from id 30, partition 1 from id 11

	cases := []struct {
		name string
		opts map[string]string
		want func(id int) bool
	}{
		{"earliest", map[string]string{"scan.startup.mode": "earliest-offset"}, func(int) bool { return true }},
		{"latest", map[string]string{"scan.startup.mode": "latest-offset"}, func(int) bool { return false }},
		{"group", map[string]string{"scan.startup.mode": "group-offsets", "properties.group.id": "g1"},
			func(id int) bool { return id%2 == 0 && id >= 30 || id%2 == 1 && id >= 11 }},
		{"group-default-mode", map[string]string{"scan.startup.mode": "", "properties.group.id": "g1"},
			func(id int) bool { return id%2 == 0 && id >= 30 || id%2 == 1 && id >= 11 }},
		{"group-without-commit-earliest", map[string]string{"scan.startup.mode": "group-offsets", "properties.group.id": "fresh"},
			func(int) bool { return true }},
		{"group-without-commit-latest", map[string]string{"scan.startup.mode": "group-offsets", "properties.group.id": "fresh",
			"properties.auto.offset.reset": "latest"}, func(int) bool { return false }},
		{"timestamp", map[string]string{"scan.startup.mode": "timestamp",
			"scan.startup.timestamp-millis": strconv.FormatInt(base.Add(25*time.Second).UnixMilli(), 10)},
			func(id int) bool { return id >= 25 }},
		{"timestamp-after-all", map[string]string{"scan.startup.mode": "timestamp",
			"scan.startup.timestamp-millis": strconv.FormatInt(base.Add(time.Hour).UnixMilli(), 10)},
			func(int) bool { return false }},
		{"specific", map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:18;partition:1,offset:2"},
			func(id int) bool { return id%2 == 0 && id >= 36 || id%2 == 1 && id >= 5 }},
		{"specific-unnamed-partition-uses-group", map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:19", "properties.group.id": "g1"},
			func(id int) bool { return id == 38 || id%2 == 1 && id >= 11 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]string{"scan.bounded.mode": "latest-offset"}
			for k, v := range tc.opts {
				opts[k] = v
			}
			src := openSource(t, sourceConfig(c, newTestLog(t), "events", opts))
			r := newReader(t, src)
			r.toEOF()
			n := 0
			for id := 0; id < 40; id++ {
				_, got := r.rows[int64(id)]
				if got != tc.want(id) {
					t.Errorf("id %d read = %v, want %v", id, got, tc.want(id))
				}
				if tc.want(id) {
					n++
				}
			}
			if len(r.rows) != n {
				t.Errorf("read %d rows, want %d", len(r.rows), n)
			}
		})
	}

	t.Run("group-without-commit-none", func(t *testing.T) {
		src := openSource(t, sourceConfig(c, newTestLog(t), "events", map[string]string{
			"scan.startup.mode": "group-offsets", "properties.group.id": "fresh", "properties.auto.offset.reset": "none"}))
		r := newReader(t, src)
		deadline := time.Now().Add(testDeadline)
		for time.Now().Before(deadline) {
			if err := r.poll(); err != nil {
				if !errors.Is(err, ErrNoCommittedOffset) {
					t.Fatalf("poll: %v, want ErrNoCommittedOffset", err)
				}
				return
			}
		}
		t.Fatal("no error for a group without committed offsets and auto.offset.reset none")
	})
}

func TestBoundedModes(t *testing.T) {
	c := kafkatest.NewCluster(t, 2)
	c.CreateTopic(t, "events", 2)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []kafkatest.Record
	for id := 0; id < 40; id++ {
		rs = append(rs, kafkatest.Record{Partition: int32(id % 2), Value: eventJSON(id), Timestamp: base.Add(time.Duration(id) * time.Second)})
	}
	c.Produce(t, "events", rs...)
	c.Commit(t, "g1", "events", map[int32]int64{0: 5, 1: 10}) // up to id 8 and id 19

	cases := []struct {
		name string
		opts map[string]string
		want func(id int) bool
	}{
		{"latest", map[string]string{"scan.bounded.mode": "latest-offset"}, func(int) bool { return true }},
		{"group", map[string]string{"scan.bounded.mode": "group-offsets", "properties.group.id": "g1"},
			func(id int) bool { return id%2 == 0 && id < 10 || id%2 == 1 && id < 20 }},
		{"timestamp", map[string]string{"scan.bounded.mode": "timestamp",
			"scan.bounded.timestamp-millis": strconv.FormatInt(base.Add(12*time.Second).UnixMilli(), 10)},
			func(id int) bool { return id < 12 }},
		{"specific", map[string]string{"scan.bounded.mode": "specific-offsets",
			"scan.bounded.specific-offsets": "partition:1,offset:3"},
			func(id int) bool { return id%2 == 1 && id < 6 }},
		{"specific-from-group-start", map[string]string{"scan.bounded.mode": "specific-offsets",
			"scan.bounded.specific-offsets": "partition:0,offset:7;partition:1,offset:12",
			"scan.startup.mode":             "group-offsets", "properties.group.id": "g1"},
			func(id int) bool { return id%2 == 0 && id >= 10 && id < 14 || id%2 == 1 && id >= 21 && id < 25 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := openSource(t, sourceConfig(c, newTestLog(t), "events", tc.opts))
			r := newReader(t, src)
			r.toEOF()
			n := 0
			for id := 0; id < 40; id++ {
				_, got := r.rows[int64(id)]
				if got != tc.want(id) {
					t.Errorf("id %d read = %v, want %v", id, got, tc.want(id))
				}
				if tc.want(id) {
					n++
				}
			}
			if len(r.rows) != n {
				t.Errorf("read %d rows, want %d", len(r.rows), n)
			}
			// After the end, Poll keeps saying io.EOF.
			if _, err := src.Poll(context.Background(), time.Millisecond); !errors.Is(err, io.EOF) {
				t.Errorf("second Poll after the end: %v, want io.EOF", err)
			}
		})
	}

	t.Run("missing-topic", func(t *testing.T) {
		src := openSource(t, sourceConfig(c, newTestLog(t), "nope", map[string]string{"scan.bounded.mode": "latest-offset"}))
		_, err := src.Poll(context.Background(), 100*time.Millisecond)
		if !errors.Is(err, ErrTopicNotFound) {
			t.Fatalf("poll of a bounded read of a missing topic: %v, want ErrTopicNotFound", err)
		}
	})
}
