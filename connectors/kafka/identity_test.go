package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
)

// restoredSource is a source restored at offset next of clicks-0 and clicks-1, as
// CheckRestored sees it before its first Poll.
func restoredSource(next int64) *Source {
	s := &Source{opts: &tableOptions{table: "events", topics: []string{"clicks"}}, parts: map[partitionKey]*partState{}}
	for p := int32(0); p < 2; p++ {
		k := partitionKey{"clicks", p}
		s.parts[k] = &partState{key: k, next: next, stop: noStop}
	}
	return s
}

func TestCompareInput(t *testing.T) {
	saved := &clusterIdentity{Cluster: "prod-a", Topics: []topicIdentity{{Name: "clicks", ID: "AAAA", Partitions: 2}}}
	keys := []partitionKey{{"clicks", 0}, {"clicks", 1}}
	ranges := func(start, end int64) (map[partitionKey]int64, map[partitionKey]int64) {
		s, e := map[partitionKey]int64{}, map[partitionKey]int64{}
		for _, k := range keys {
			s[k], e[k] = start, end
		}
		return s, e
	}
	cases := []struct {
		name       string
		next       int64
		cur        clusterIdentity
		start, end int64
		want       []string // in the error, "" for none
	}{
		{name: "same input", next: 50, cur: *saved, start: 0, end: 100},
		{name: "caught up", next: 100, cur: *saved, start: 0, end: 100},
		{name: "other cluster", next: 50, start: 0, end: 100,
			cur:  clusterIdentity{Cluster: "prod-b", Topics: []topicIdentity{{Name: "clicks", ID: "BBBB", Partitions: 2}}},
			want: []string{"another Kafka cluster", "Kafka cluster 'prod-a'", "Kafka cluster 'prod-b'", "table events"}},
		{name: "recreated topic", next: 50, start: 0, end: 100,
			cur:  clusterIdentity{Cluster: "prod-a", Topics: []topicIdentity{{Name: "clicks", ID: "CCCC", Partitions: 2}}},
			want: []string{"topic clicks was deleted and created again", "id AAAA", "id CCCC"}},
		{name: "fewer partitions without ids", next: 50, start: 0, end: 100,
			cur:  clusterIdentity{Cluster: "prod-a", Topics: []topicIdentity{{Name: "clicks", Partitions: 1}}},
			want: []string{"topic clicks has 1 partitions, the checkpoint read 2"}},
		{name: "beyond the end", next: 500, cur: *saved, start: 0, end: 20,
			want: []string{"offset 500 of clicks-0 is beyond the partition's end 20", "clicks-0 at offset 500", "clicks-0 holding offsets 0 to 20"}},
		{name: "before the start", next: 5, cur: *saved, start: 100, end: 200,
			want: []string{"offset 5 of clicks-1 is before the partition's start 100"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := restoredSource(c.next)
			starts, ends := ranges(c.start, c.end)
			err := s.compareInput(saved, &c.cur, starts, ends, keys)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var me *connectors.InputMismatchError
			if !errors.As(err, &me) || !errors.Is(err, connectors.ErrInputMismatch) {
				t.Fatalf("err = %v, want an *InputMismatchError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// A checkpoint written before sources recorded their identity still has its offsets
// checked.
func TestCompareInputWithoutSavedIdentity(t *testing.T) {
	s := restoredSource(500)
	keys := []partitionKey{{"clicks", 0}, {"clicks", 1}}
	cur := &clusterIdentity{Cluster: "c", Topics: []topicIdentity{{Name: "clicks", Partitions: 2}}}
	ends := map[partitionKey]int64{keys[0]: 20, keys[1]: 20}
	starts := map[partitionKey]int64{keys[0]: 0, keys[1]: 0}
	if err := s.compareInput(nil, cur, starts, ends, keys); !errors.Is(err, connectors.ErrInputMismatch) {
		t.Fatalf("err = %v, want a mismatch", err)
	}
	ends[keys[0]], ends[keys[1]] = 600, 600
	if err := s.compareInput(nil, cur, starts, ends, keys); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

func TestIdentityRoundTrip(t *testing.T) {
	ci := &clusterIdentity{Cluster: "x", Topics: []topicIdentity{{Name: "a", ID: "id", Partitions: 3}, {Name: "b"}}}
	b, err := encodeIdentity(ci)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeIdentity(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != ci.String() {
		t.Fatalf("decoded %s, want %s", got, ci)
	}
	if _, err := decodeIdentity([]byte{9}); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("bad version: err = %v", err)
	}
}

// Against a real cluster: a source restored on the cluster and topic it read resumes; on
// the topic deleted and created again (same name, new topic id, fewer records) it is
// refused, naming both topic ids and the offset beyond the new partition's end.
func TestCheckRestoredAgainstCluster(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "clicks", 2)
	produceEvents(t, c, "clicks", 2, 0, 20)
	log := newTestLog(t)
	cfg := sourceConfig(c, log, "clicks", nil)
	src := openSource(t, cfg)
	newReader(t, src).count(20)
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ident, err := src.Identity()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := decodeIdentity(ident)
	if err != nil {
		t.Fatal(err)
	}
	if st := saved.topic("clicks"); saved.Cluster == "" || st == nil || st.ID == "" || st.Partitions != 2 {
		t.Fatalf("identity %s, want the cluster id and the topic's id and 2 partitions", saved)
	}
	src.Close()

	check := func() error {
		t.Helper()
		cfg.Restored = snap
		src := openSource(t, cfg)
		defer src.Close()
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		defer cancel()
		return src.CheckRestored(ctx, ident)
	}
	if err := check(); err != nil {
		t.Fatalf("the same cluster and topic: %v", err)
	}

	c.DeleteTopic(t, "clicks")
	c.CreateTopic(t, "clicks", 2)
	produceEvents(t, c, "clicks", 2, 0, 4)
	err = check()
	var me *connectors.InputMismatchError
	if !errors.As(err, &me) {
		t.Fatalf("recreated topic: %v, want an *InputMismatchError", err)
	}
	if !strings.Contains(err.Error(), "topic clicks was deleted and created again") || !strings.Contains(err.Error(), "id "+saved.Topics[0].ID) {
		t.Errorf("the refusal does not name the recreated topic and its old id: %v", err)
	}
	t.Log(err)
}
