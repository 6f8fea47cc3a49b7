package kafka

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

func table(opts map[string]string) connectors.TableInfo {
	base := map[string]string{
		"connector":                    "kafka",
		"topic":                        "events",
		"properties.bootstrap.servers": "b1:9092,b2:9092",
		"properties.group.id":          "g",
		"format":                       "json",
	}
	for k, v := range opts {
		if v == "" {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	return connectors.TableInfo{Name: "t", Options: base, Schema: eventSchema}
}

func TestValidateOptions(t *testing.T) {
	cases := []struct {
		name    string
		opts    map[string]string
		upsert  bool
		pk      []string
		wantErr string // "" when valid
	}{
		{"minimal", nil, false, nil, ""},
		{"topic list", map[string]string{"topic": "a; b;c"}, false, nil, ""},
		{"pattern", map[string]string{"topic": "", "topic-pattern": "events-[0-9]+"}, false, nil, ""},
		{"topic and pattern", map[string]string{"topic-pattern": "x"}, false, nil, "either 'topic' or 'topic-pattern'"},
		{"no topic", map[string]string{"topic": ""}, false, nil, "set 'topic'"},
		{"bad pattern", map[string]string{"topic": "", "topic-pattern": "("}, false, nil, "not a regular expression"},
		{"no bootstrap", map[string]string{"properties.bootstrap.servers": ""}, false, nil, "properties.bootstrap.servers"},
		{"no format", map[string]string{"format": ""}, false, nil, "set 'format'"},
		{"unknown format", map[string]string{"format": "avro-nope"}, false, nil, "unknown format"},
		{"format and value.format", map[string]string{"value.format": "json"}, false, nil, "either 'format' or 'value.format'"},
		{"no group needed to validate", map[string]string{"properties.group.id": ""}, false, nil, ""},
		{"bad startup mode", map[string]string{"scan.startup.mode": "earliest"}, false, nil, "expected one of"},
		{"specific offsets", map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:42;partition:1,offset:300"}, false, nil, ""},
		{"specific offsets missing", map[string]string{"scan.startup.mode": "specific-offsets"}, false, nil, "required when the mode is 'specific-offsets'"},
		{"specific offsets malformed", map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0;offset:42"}, false, nil, "not 'partition:<n>,offset:<n>'"},
		{"specific offsets negative", map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:-1"}, false, nil, "non-negative"},
		{"specific offsets twice", map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:1;partition:0,offset:2"}, false, nil, "given twice"},
		{"specific offsets with a topic list", map[string]string{"topic": "a;b", "scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:1"}, false, nil, "exactly one 'topic'"},
		{"timestamp missing", map[string]string{"scan.startup.mode": "timestamp"}, false, nil, "scan.startup.timestamp-millis"},
		{"timestamp", map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "1700000000000"}, false, nil, ""},
		{"bounded specific", map[string]string{"scan.bounded.mode": "specific-offsets", "scan.bounded.specific-offsets": "partition:0,offset:5"}, false, nil, ""},
		{"bounded timestamp missing", map[string]string{"scan.bounded.mode": "timestamp"}, false, nil, "scan.bounded.timestamp-millis"},
		{"bounded bad mode", map[string]string{"scan.bounded.mode": "earliest-offset"}, false, nil, "expected one of"},
		{"discovery off", map[string]string{"scan.topic-partition-discovery.interval": "0"}, false, nil, ""},
		{"discovery negative", map[string]string{"scan.topic-partition-discovery.interval": "-1"}, false, nil, ""},
		{"discovery bad", map[string]string{"scan.topic-partition-discovery.interval": "soon"}, false, nil, "duration"},
		{"idle timeout", map[string]string{"scan.watermark.idle-timeout": "30 s"}, false, nil, ""},
		{"idle timeout bad", map[string]string{"scan.watermark.idle-timeout": "x"}, false, nil, "duration"},
		{"key format without fields", map[string]string{"key.format": "json"}, false, nil, "needs 'key.fields'"},
		{"key fields without format", map[string]string{"key.fields": "id"}, false, nil, "needs 'key.format'"},
		{"key fields", map[string]string{"key.format": "json", "key.fields": "id"}, false, nil, ""},
		{"key field unknown", map[string]string{"key.format": "json", "key.fields": "nope"}, false, nil, "not a physical column"},
		{"prefix needs except key", map[string]string{"key.format": "json", "key.fields": "id", "key.fields-prefix": "i"}, false, nil, "EXCEPT_KEY"},
		{"prefix must match", map[string]string{"key.format": "json", "key.fields": "id", "key.fields-prefix": "k_",
			"value.fields-include": "EXCEPT_KEY"}, false, nil, "does not start with the prefix"},
		{"exactly once", map[string]string{"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "p"}, false, nil, ""},
		{"old semantic name", map[string]string{"sink.semantic": "EXACTLY_ONCE", "sink.transactional-id-prefix": "p"}, false, nil, ""},
		{"bad partitioner", map[string]string{"sink.partitioner": "org.my.Partitioner"}, false, nil, "expected one of"},
		{"unknown property", map[string]string{"properties.defualt.api.timeout.ms": "1"}, false, nil,
			"did you mean 'properties.default.api.timeout.ms'"},
		{"unknown librdkafka-like property", map[string]string{"properties.fetch.max.byte": "1"}, false, nil,
			"did you mean 'properties.fetch.max.bytes'"},
		{"refused property", map[string]string{"properties.partitioner.class": "x.Y"}, false, nil, "sink.partitioner"},
		{"bad translated value", map[string]string{"properties.default.api.timeout.ms": "soon"}, false, nil, "milliseconds"},
		{"upsert", map[string]string{"connector": "upsert-kafka", "format": "", "key.format": "json", "value.format": "json"}, true, []string{"id"}, ""},
		{"upsert without key", map[string]string{"connector": "upsert-kafka", "format": "", "key.format": "json", "value.format": "json"}, true, nil, "PRIMARY KEY"},
		{"upsert without key format", map[string]string{"connector": "upsert-kafka", "format": "", "value.format": "json"}, true, []string{"id"}, "key.format"},
		{"upsert with key fields", map[string]string{"connector": "upsert-kafka", "format": "", "key.format": "json", "value.format": "json",
			"key.fields": "id"}, true, []string{"id"}, "PRIMARY KEY"},
		{"upsert buffer half set", map[string]string{"connector": "upsert-kafka", "format": "", "key.format": "json", "value.format": "json",
			"sink.buffer-flush.max-rows": "10"}, true, []string{"id"}, "both be set"},
		{"upsert buffer", map[string]string{"connector": "upsert-kafka", "format": "", "key.format": "json", "value.format": "json",
			"sink.buffer-flush.max-rows": "10", "sink.buffer-flush.interval": "1 s"}, true, []string{"id"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ti := table(tc.opts)
			ti.PrimaryKey = tc.pk
			err := Validate(ti, tc.upsert)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("Validate passed, want an error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("Validate: %v, want it to contain %q", err, tc.wantErr)
			}
			if err != nil {
				var oe *connectors.OptionError
				if !errors.As(err, &oe) || oe.Table != "t" {
					t.Errorf("error %v is not an *OptionError naming the table", err)
				}
			}
		})
	}
}

// TestRoleChecks covers what is checked only when a table is read or only when written.
func TestRoleChecks(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    map[string]string
		sink    bool
		wantErr string
	}{
		{"group offsets need a group", map[string]string{"properties.group.id": ""}, false, "group-offsets"},
		{"bounded group offsets need a group", map[string]string{"properties.group.id": "", "scan.startup.mode": "earliest-offset",
			"scan.bounded.mode": "group-offsets"}, false, "group-offsets"},
		{"earliest without group", map[string]string{"properties.group.id": "", "scan.startup.mode": "earliest-offset"}, false, ""},
		{"a sink needs no group", map[string]string{"properties.group.id": ""}, true, ""},
		{"exactly once needs a prefix", map[string]string{"sink.delivery-guarantee": "exactly-once"}, true, "transactional id prefix"},
		{"a sink writes one topic", map[string]string{"topic": "a;b"}, true, "exactly one topic"},
		{"a sink has no pattern", map[string]string{"topic": "", "topic-pattern": "a.*"}, true, "exactly one topic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ti := table(c.opts)
			o, err := parseOptions(ti, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.sink {
				err = o.checkSink()
			} else {
				err = o.checkSource(ti.Options)
			}
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("got %v, want %q", err, c.wantErr)
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"kafka", "upsert-kafka"} {
		f, ok := connectors.Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		if f.Validate == nil || f.NewSink == nil {
			t.Errorf("%s lacks Validate or NewSink", name)
		}
	}
	if f, _ := connectors.Lookup("kafka"); f.NewSource == nil {
		t.Error("kafka cannot be read")
	}
}

func TestParsedModes(t *testing.T) {
	o, err := parseOptions(table(map[string]string{
		"scan.startup.mode":                       "specific-offsets",
		"scan.startup.specific-offsets":           " partition:0, offset:42 ; partition:1,offset:300;",
		"scan.topic-partition-discovery.interval": "30s",
	}), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 42, 1: 300}; !reflect.DeepEqual(o.startupOffsets, want) {
		t.Errorf("offsets %v, want %v", o.startupOffsets, want)
	}
	if o.discoveryInterval != 30*time.Second {
		t.Errorf("interval %v", o.discoveryInterval)
	}
	for v, want := range map[string]time.Duration{"": defaultDiscoveryInterval, "5 min": 5 * time.Minute, "300000": 5 * time.Minute, "0": 0, "-1 s": 0} {
		o, err := parseOptions(table(map[string]string{"scan.topic-partition-discovery.interval": v}), false)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if o.discoveryInterval != want {
			t.Errorf("interval %q = %v, want %v", v, o.discoveryInterval, want)
		}
	}
	// Flink's KafkaSource property is the fallback.
	o, err = parseOptions(table(map[string]string{"properties.partition.discovery.interval.ms": "1500"}), false)
	if err != nil || o.discoveryInterval != 1500*time.Millisecond {
		t.Errorf("partition.discovery.interval.ms: %v %v", o.discoveryInterval, err)
	}
}

func TestKeyValueColumns(t *testing.T) {
	schema := types.Schema{{Name: "k_a", Type: types.TypeInt}, {Name: "v", Type: types.TypeString}, {Name: "k_b", Type: types.TypeInt}}
	ti := table(map[string]string{"key.format": "json", "key.fields": "k_b;k_a", "key.fields-prefix": "k_", "value.fields-include": "EXCEPT_KEY"})
	ti.Schema = schema
	o, err := parseOptions(ti, false)
	if err != nil {
		t.Fatal(err)
	}
	kc, ki := o.keyColumns(schema)
	if got := strings.Join(kc.Names(), ","); got != "b,a" || !reflect.DeepEqual(ki, []int{2, 0}) {
		t.Errorf("key columns %s %v", got, ki)
	}
	vc, vi := o.valueColumns(schema)
	if got := strings.Join(vc.Names(), ","); got != "v" || !reflect.DeepEqual(vi, []int{1}) {
		t.Errorf("value columns %s %v", got, vi)
	}
}

func TestResolveProperties(t *testing.T) {
	opts := map[string]string{
		"properties.bootstrap.servers":       "b1:9092, b2:9092",
		"properties.group.id":                "g",
		"properties.default.api.timeout.ms":  "600000",
		"properties.request.timeout.ms":      "5000",
		"properties.max.block.ms":            "600000",
		"properties.max.poll.records":        "100",
		"properties.session.timeout.ms":      "10000",
		"properties.key.deserializer":        "org.apache.kafka.common.serialization.StringDeserializer",
		"properties.auto.offset.reset":       "latest",
		"properties.enable.auto.commit":      "true",
		"properties.metadata.max.age.ms":     "30000",
		"properties.security.protocol":       "SASL_SSL",
		"properties.sasl.mechanism":          "SCRAM-SHA-256",
		"properties.sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3\"cret";`,
		"properties.fetch.max.wait.ms":       "200",
		"properties.buffer.memory":           "33554432",
		"properties.receive.buffer.bytes":    "-1",
		"properties.fetch.max.bytes":         "1048576",
		"properties.client.id.prefix":        "dau",
		"properties.ssl.truststore.type":     "PEM",
		"properties.ssl.truststore.location": "/etc/ca.pem",
	}
	src, err := resolveProperties("t", opts, forSource)
	if err != nil {
		t.Fatal(err)
	}
	wantRD := map[string]string{
		"bootstrap.servers":                  "b1:9092, b2:9092",
		"socket.timeout.ms":                  "5000",
		"topic.metadata.refresh.interval.ms": "30000",
		"security.protocol":                  "sasl_ssl",
		"sasl.mechanism":                     "SCRAM-SHA-256",
		"sasl.username":                      "alice",
		"sasl.password":                      `s3"cret`,
		"fetch.wait.max.ms":                  "200",
		"queue.buffering.max.kbytes":         "32768",
		"socket.receive.buffer.bytes":        "0",
		"fetch.max.bytes":                    "1048576",
		"client.id":                          "dau-source",
		"ssl.ca.location":                    "/etc/ca.pem",
		"reconnect.backoff.max.ms":           "1000", // the Java client's default
	}
	if !reflect.DeepEqual(src.rd, wantRD) {
		t.Errorf("librdkafka configuration:\n got %v\nwant %v", src.rd, wantRD)
	}
	if src.apiTimeout != 10*time.Minute || src.maxBlock != 10*time.Minute || src.maxPollRecords != 100 ||
		src.offsetReset != "latest" || src.autoCommit == nil || !*src.autoCommit || src.groupID != "g" ||
		!reflect.DeepEqual(src.bootstrap, []string{"b1:9092", "b2:9092"}) {
		t.Errorf("pipesql settings: %+v", src)
	}
	if len(src.ignored) != 2 {
		t.Errorf("ignored: %v, want session.timeout.ms and key.deserializer", src.ignored)
	}
	sink, err := resolveProperties("t", opts, forSink)
	if err != nil {
		t.Fatal(err)
	}
	if sink.rd["request.timeout.ms"] != "5000" || sink.rd["socket.timeout.ms"] != "" || sink.rd["client.id"] != "dau-sink" {
		t.Errorf("sink librdkafka configuration: %v", sink.rd)
	}

	// An explicit librdkafka property wins over the Java property that maps onto it.
	both, err := resolveProperties("t", map[string]string{
		"properties.request.timeout.ms": "5000", "properties.socket.timeout.ms": "7000"}, forSource)
	if err != nil || both.rd["socket.timeout.ms"] != "7000" {
		t.Errorf("precedence: %v %v", both.rd, err)
	}

	for _, bad := range []map[string]string{
		{"properties.ssl.truststore.location": "/etc/truststore.jks"},
		{"properties.ssl.keystore.type": "JKS"},
		{"properties.sasl.jaas.config": "com.sun.security.auth.module.LdapLoginModule required;"},
		{"properties.transactional.id": "x"},
		{"properties.auto.offset.reset": "sometimes"},
	} {
		_, err := resolveProperties("t", bad, forSource)
		if err == nil {
			t.Errorf("%v accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "s3") {
			t.Errorf("error shows a secret: %v", err)
		}
	}
	// Secrets never appear in errors.
	_, err = resolveProperties("t", map[string]string{"properties.sasl.jaas.config": `x.PlainLoginModule required username="u";`}, forSource)
	if err == nil || strings.Contains(err.Error(), `username="u"`) {
		t.Errorf("jaas error %v", err)
	}
}

// TestPropertyTranslations checks the table the README shows: every entry is a
// property the source and the sink accept (or refuse with a reason), and none is
// listed twice.
func TestPropertyTranslations(t *testing.T) {
	seen := map[string]bool{}
	values := map[string]string{
		"sasl.jaas.config":             `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		"ssl.truststore.location":      "/ca.pem",
		"ssl.truststore.type":          "PEM",
		"ssl.keystore.type":            "PKCS12",
		"auto.offset.reset":            "earliest",
		"enable.auto.commit":           "false",
		"commit.offsets.on.checkpoint": "true",
		"exclude.internal.topics":      "true",
		"security.protocol":            "PLAINTEXT",
	}
	for _, tr := range PropertyTranslations() {
		if seen[tr.Java] {
			t.Errorf("%s listed twice", tr.Java)
		}
		seen[tr.Java] = true
		if tr.Meaning == "" {
			t.Errorf("%s has no meaning", tr.Java)
		}
		v, ok := values[tr.Java]
		if !ok {
			v = "1000"
		}
		opts := map[string]string{"properties." + tr.Java: v}
		if tr.Java == "ssl.truststore.location" {
			opts["properties.ssl.truststore.type"] = "PEM"
		}
		_, err := resolveProperties("t", opts, forSource)
		if errors.Is(err, ErrUnknownProperty) {
			t.Errorf("%s is listed but unknown", tr.Java)
		}
		if err != nil && !errors.Is(err, ErrUnsupportedProperty) {
			t.Errorf("%s = %s: %v", tr.Java, v, err)
		}
		if errors.Is(err, ErrUnsupportedProperty) && !strings.Contains(tr.Meaning, "cannot") && !strings.Contains(tr.Meaning, "derives") {
			t.Errorf("%s is refused but its meaning does not say so: %s", tr.Java, tr.Meaning)
		}
	}
	for _, java := range []string{"default.api.timeout.ms", "request.timeout.ms", "max.block.ms", "retry.backoff.ms",
		"max.poll.records", "max.poll.interval.ms", "session.timeout.ms", "heartbeat.interval.ms", "key.deserializer",
		"value.deserializer", "auto.offset.reset", "enable.auto.commit", "metadata.max.age.ms",
		"partition.discovery.interval.ms", "security.protocol", "sasl.jaas.config", "client.id", "fetch.max.bytes"} {
		if !seen[java] {
			t.Errorf("%s is not in the translation table", java)
		}
	}
}

func TestSnapshotEncoding(t *testing.T) {
	ps := []position{
		{key: partitionKey{"events", 0}, next: 42, stop: noStop},
		{key: partitionKey{"events", 1}, next: offsetEarliest, stop: 100},
		{key: partitionKey{"other", 2147483647}, next: 1 << 40, stop: 0},
	}
	b := encodeSnapshot(ps)
	if b[0] != snapshotVersion {
		t.Errorf("first byte %d, want the version %d", b[0], snapshotVersion)
	}
	got, err := decodeSnapshot(b)
	if err != nil || !reflect.DeepEqual(got, ps) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	empty, err := decodeSnapshot(encodeSnapshot(nil))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty snapshot: %v %v", empty, err)
	}
	for i := 0; i < len(b); i++ {
		if _, err := decodeSnapshot(b[:i]); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("truncated to %d bytes: %v", i, err)
		}
	}
	bad := append([]byte{}, b...)
	bad[0] = 7
	if _, err := decodeSnapshot(bad); !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), "version 7") {
		t.Errorf("wrong version: %v", err)
	}
	if _, err := decodeSnapshot(append(b, 0)); !errors.Is(err, ErrBadSnapshot) {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		n        int
		lo, hi   time.Duration
	}{
		{5 * time.Minute, 1, 400 * time.Millisecond, 600 * time.Millisecond},
		{5 * time.Minute, 3, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{5 * time.Minute, 50, 24 * time.Second, 36 * time.Second},
		{time.Second, 50, 800 * time.Millisecond, 1200 * time.Millisecond},
	} {
		for _, j := range []float64{0, 0.5, 0.999} {
			e := &enumerator{opts: &tableOptions{discoveryInterval: c.interval}, jitter: func() float64 { return j }}
			if d := e.backoff(c.n); d < c.lo || d > c.hi {
				t.Errorf("backoff(%d) with interval %v and jitter %v = %v, want in [%v, %v]", c.n, c.interval, j, d, c.lo, c.hi)
			}
		}
	}
}

// TestEnumeratorNeverDrops feeds the enumerator listings that lack partitions, as an
// answer during an outage may: nothing known is dropped, nothing is handed out twice.
func TestEnumeratorNeverDrops(t *testing.T) {
	o, err := parseOptions(table(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnumerator(o, &clientSettings{apiTimeout: time.Second}, nil, connectors.WallClock{}, newTestLog(t))
	e.restore([]partitionKey{{"events", 0}, {"events", 1}})
	e.record(&listing{partitions: map[string][]int32{"events": {0}}})
	if len(e.unresolved) != 0 || !e.known[partitionKey{"events", 1}] {
		t.Fatalf("after a listing without partition 1: unresolved %v, known %v", e.unresolved, e.known)
	}
	e.record(&listing{partitions: map[string][]int32{"events": {0, 1, 2}}})
	e.record(&listing{partitions: map[string][]int32{"events": {2}}})
	if len(e.unresolved) != 1 || e.unresolved[partitionKey{"events", 2}] {
		t.Errorf("unresolved %v, want events-2 as a new (earliest) partition", e.unresolved)
	}
	if len(e.known) != 2 {
		t.Errorf("known %v", e.known)
	}
}

// The Java client's reconnect backoff is the default, unless the table sets either
// backoff, whose meaning librdkafka then keeps.
func TestReconnectBackoffDefault(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want map[string]string
	}{
		{map[string]string{}, map[string]string{"reconnect.backoff.max.ms": "1000"}},
		{map[string]string{"properties.reconnect.backoff.max.ms": "5000"}, map[string]string{"reconnect.backoff.max.ms": "5000"}},
		{map[string]string{"properties.reconnect.backoff.ms": "2000"}, map[string]string{"reconnect.backoff.ms": "2000"}},
	} {
		tc.opts["properties.bootstrap.servers"] = "b:9092"
		tc.want["bootstrap.servers"] = "b:9092"
		set, err := resolveProperties("t", tc.opts, forSource)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(set.rd, tc.want) {
			t.Errorf("%v: librdkafka configuration %v, want %v", tc.opts, set.rd, tc.want)
		}
	}
}
