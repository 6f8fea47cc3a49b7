package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		key, value string
		err        error  // nil: accepted
		msg        string // part of the error, or of the warning when err is nil; "" for neither
	}{
		{"table.local-time-zone", "Asia/Shanghai", nil, ""},
		{"table.local-time-zone", "Asia/Shangai", ErrInvalidValue, "unknown time zone 'Asia/Shangai'"},
		{"table.exec.source.idle-timeout", "30 s", nil, ""},
		{"table.exec.source.idle-timeout", "soon", ErrInvalidValue, "invalid value 'soon' for setting 'table.exec.source.idle-timeout': expected a duration"},
		{"execution.checkpointing.num-retained", "0", ErrInvalidValue, "must be at least 1"},
		{"state.checkpoints.num-retained", "0", ErrInvalidValue, "for setting 'state.checkpoints.num-retained': must be at least 1"},
		{"restart-strategy.type", "sometimes", ErrInvalidValue, "expected one of none"},
		{"restart-strategy.exponential-delay.jitter-factor", "2", ErrInvalidValue, "between 0 and 1"},
		{"state.checkpoints.dir", "file:///tmp/ck", nil, ""},
		{"state.checkpoints.dir", "s3://bucket/ck", ErrInvalidValue, "the s3 file system is not supported"},
		// No effect: accepted with a warning saying why.
		{"parallelism.default", "4", nil, "setting 'parallelism.default' has no effect in pipesql: pipesql runs each job in one process"},
		{"parallelism.default", "four", ErrInvalidValue, "expected an integer"},
		{"table.exec.state.ttl", "1 h", nil, ""},
		{"table.exec.state.ttl", "an hour", ErrInvalidValue, ""},
		{"execution.runtime-mode", "batch", nil, "always runs in streaming mode"},
		// High availability: NONE is accepted; the services pipesql lacks are refused.
		{"high-availability.type", "NONE", nil, "has no effect in pipesql: a job runs in one process"},
		{"high-availability", "zookeeper", ErrInvalidValue, "pipesql has no zookeeper high availability: a job runs in one process"},
		{"high-availability.type", "KUBERNETES", ErrInvalidValue, "pipesql has no kubernetes high availability"},
		{"high-availability.type", "org.example.MyHAFactory", ErrInvalidValue, "expected NONE"},
		// Typos of declared keys fail, naming the key.
		{"table.local-timezone", "UTC", ErrUnknownKey, "unknown setting 'table.local-timezone': did you mean 'table.local-time-zone'?"},
		{"execution.checkpointing.intervall", "10 s", ErrUnknownKey, "did you mean 'execution.checkpointing.interval'?"},
		{"state.checkpoint.dir", "/tmp", ErrUnknownKey, "did you mean 'state.checkpoints.dir'?"},
		// Flink keys pipesql does not declare: a warning, not a failure.
		{"table.optimizer.some-future-switch", "true", nil, "setting 'table.optimizer.some-future-switch' is not known to pipesql and has no effect"},
		{"taskmanager.memory.network.fraction", "0.2", nil, "not known to pipesql"},
		{"state.backend.rocksdb.memory.managed", "true", nil, "not known to pipesql"},
		// Anything else fails.
		{"my.own.key", "anything", ErrUnknownKey, "unknown setting 'my.own.key': not a key pipesql or Flink reads"},
		{"pipeline.nmae", "x", ErrUnknownKey, "did you mean 'pipeline.name'?"},
		{"pipesql.restore.freshstart", "true", ErrUnknownKey, "did you mean 'pipesql.restore.fresh'?"},
	}
	for _, tt := range tests {
		warning, err := Validate(tt.key, tt.value)
		switch {
		case tt.err == nil && err != nil:
			t.Errorf("Validate(%q, %q) = %v, want nil", tt.key, tt.value, err)
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("Validate(%q, %q) = %v, want %v", tt.key, tt.value, err, tt.err)
		case tt.err != nil && !strings.Contains(err.Error(), tt.msg):
			t.Errorf("Validate(%q, %q) = %q, want it to contain %q", tt.key, tt.value, err, tt.msg)
		case tt.err == nil && tt.msg == "" && warning != "":
			t.Errorf("Validate(%q, %q) warns %q, want no warning", tt.key, tt.value, warning)
		case tt.err == nil && !strings.Contains(warning, tt.msg):
			t.Errorf("Validate(%q, %q) warns %q, want it to contain %q", tt.key, tt.value, warning, tt.msg)
		}
	}
}

// A typical Flink job file sets these; none of them may fail.
func TestFlinkJobFileKeys(t *testing.T) {
	for _, kv := range [][2]string{
		{"execution.runtime-mode", "streaming"},
		{"parallelism.default", "8"},
		{"pipeline.name", "nexmark-q5"},
		{"execution.checkpointing.interval", "3 min"},
		{"execution.checkpointing.mode", "EXACTLY_ONCE"},
		{"execution.checkpointing.unaligned.enabled", "true"},
		{"state.backend.type", "rocksdb"},
		{"state.backend.incremental", "true"},
		{"state.checkpoints.dir", "file:///tmp/checkpoints"},
		{"table.exec.mini-batch.enabled", "true"},
		{"table.exec.mini-batch.allow-latency", "2 s"},
		{"table.exec.mini-batch.size", "5000"},
		{"table.optimizer.agg-phase-strategy", "TWO_PHASE"},
		{"table.optimizer.distinct-agg.split.enabled", "true"},
		{"table.exec.state.ttl", "1 d"},
		{"table.exec.sink.not-null-enforcer", "drop"},
		{"taskmanager.numberOfTaskSlots", "4"},
		{"taskmanager.memory.process.size", "4g"},
		{"pipeline.object-reuse", "true"},
		{"restart-strategy", "fixed-delay"},
		{"sql-client.execution.result-mode", "tableau"},
		{"sql-client.verbose", "true"},
		{"table.exec.resource.default-parallelism", "4"},
	} {
		if _, err := Validate(kv[0], kv[1]); err != nil {
			t.Errorf("Validate(%q, %q) = %v", kv[0], kv[1], err)
		}
	}
}

func TestTable(t *testing.T) {
	for _, k := range Keys() {
		if k.HasEffect() && (k.ReadBy == "" || k.Doc == "") {
			t.Errorf("%s has an effect but no reader or doc", k.Name)
		}
		if (k.Type == Enum) != (len(k.Enum) > 0) {
			t.Errorf("%s: type %s with enum %v", k.Name, k.Type, k.Enum)
		}
		ns, _, _ := strings.Cut(k.Name, ".")
		found := ns == "pipesql"
		for _, n := range flinkNamespaces {
			found = found || n == ns
		}
		if !found {
			t.Errorf("%s is in no Flink namespace", k.Name)
		}
	}
}

func TestValues(t *testing.T) {
	v := Read(map[string]string{
		CheckpointInterval:       "10 s",
		CheckpointDirOld:         "file:///tmp/a/",
		SavepointDir:             "file:/tmp/b",
		CheckpointNumRetainedOld: "3",
		CheckpointMode:           "at_least_once",
		ExpJitter:                "0.5",
		IgnoreUnclaimedState:     "TRUE",
	})
	if got := v.Duration(CheckpointInterval); got != 10*time.Second {
		t.Errorf("interval = %v", got)
	}
	if got := v.Duration(CheckpointTimeout); got != 10*time.Minute {
		t.Errorf("timeout default = %v", got)
	}
	if got := v.Dir(CheckpointDir); got != "/tmp/a" {
		t.Errorf("checkpoint dir through its alias = %q", got)
	}
	if got := v.Dir(SavepointDir); got != "/tmp/b" {
		t.Errorf("savepoint dir = %q", got)
	}
	if got := v.Int(CheckpointNumRetained); got != 3 {
		t.Errorf("num-retained through its alias = %d", got)
	}
	if got := v.Enum(CheckpointMode); got != "AT_LEAST_ONCE" {
		t.Errorf("mode = %q", got)
	}
	if got := v.Float(ExpJitter); got != 0.5 {
		t.Errorf("jitter = %v", got)
	}
	if got := v.Float(ExpMultiplier); got != 1.5 {
		t.Errorf("multiplier default = %v", got)
	}
	if !v.Bool(IgnoreUnclaimedState) || v.Bool(FreshStart) {
		t.Errorf("bools wrong")
	}
	if v.IsSet(RestartType) || !v.IsSet(CheckpointDir) {
		t.Errorf("IsSet wrong")
	}
	if err := v.Err(); err != nil {
		t.Errorf("Err = %v", err)
	}

	bad := Read(map[string]string{CheckpointNumRetained: "0", CheckpointTimeout: "soon"})
	if got := bad.Int(CheckpointNumRetained); got != 1 {
		t.Errorf("invalid value read as %d, want the default", got)
	}
	bad.Duration(CheckpointTimeout)
	var e *Error
	if err := bad.Err(); !errors.As(err, &e) || e.Key != CheckpointNumRetained || !strings.Contains(err.Error(), "must be at least 1") {
		t.Errorf("Err = %v, want the first error, naming %s", err, CheckpointNumRetained)
	}
}

func TestLocalDir(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"/tmp/x", "/tmp/x", ""},
		{"file:///tmp/x", "/tmp/x", ""},
		{"file:/tmp/x", "/tmp/x", ""},
		{"file://localhost/tmp/x", "/tmp/x", ""},
		{"FILE:///tmp/x/", "/tmp/x", ""},
		{"file:///tmp/my%20dir", "/tmp/my dir", ""},
		{"./pipesql-checkpoints", "pipesql-checkpoints", ""},
		{"file:rel/x", "rel/x", ""},
		{"", "", ""},
		{"file://namenode/tmp/x", "", "names the host 'namenode'"},
		{"hdfs://namenode:8020/ck", "", "the hdfs file system is not supported"},
		{"s3://bucket/ck", "", "the s3 file system is not supported"},
		{"file://", "", "has no path"},
	} {
		got, err := LocalDir(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("LocalDir(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("LocalDir(%q) = %q, %v, want an error containing %q", tt.in, got, err, tt.err)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"kafka", "kafka", 0},
		{"kafak", "kafka", 1}, // adjacent swap counts once
		{"scan.topic-partition-discover.interval", "scan.topic-partition-discovery.interval", 1},
		{"", "abc", 3},
		{"COUNT", "count", 0},
		{"kitten", "sitting", 3},
		{"bootstrap.servers", "bootstrap.server", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got := Closest("kafak", []string{"upsert-kafka", "kafka", "print"}, 2); got != "kafka" {
		t.Errorf("Closest(kafak) = %q", got)
	}
	if got := Closest("zzzzz", []string{"kafka", "print"}, 2); got != "" {
		t.Errorf("Closest(zzzzz) = %q, want none", got)
	}
	if got := Closest("ab", []string{"ac", "aa"}, 1); got != "aa" {
		t.Errorf("Closest ties = %q, want the alphabetically first", got)
	}
}
