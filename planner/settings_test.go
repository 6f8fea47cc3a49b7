package planner

import (
	"errors"
	"strings"
	"testing"
)

func TestSessionSet(t *testing.T) {
	tests := []struct {
		key, value string
		err        error  // nil: accepted
		msg        string // part of the error message
	}{
		{"table.local-time-zone", "Asia/Shanghai", nil, ""},
		{"table.local-time-zone", "UTC", nil, ""},
		{"table.local-time-zone", "GMT+08:00", nil, ""},
		{"table.local-time-zone", "default", nil, ""},
		{"table.local-time-zone", "Asia/Shangai", ErrInvalidSetting, "unknown time zone 'Asia/Shangai'"},
		{"table.local-time-zone", "PST", ErrInvalidSetting, "unknown time zone 'PST'"},
		{"table.local-time-zone", "GMT+25:00", ErrInvalidSetting, "out of range"},
		{"table.exec.source.idle-timeout", "30 s", nil, ""},
		{"table.exec.source.idle-timeout", "30000", nil, ""},
		{"table.exec.source.idle-timeout", "2 days", nil, ""},
		{"table.exec.source.idle-timeout", "soon", ErrInvalidSetting, "expected a duration"},
		{"execution.checkpointing.mode", "exactly_once", nil, ""},
		{"execution.checkpointing.mode", "twice", ErrInvalidSetting, "expected one of EXACTLY_ONCE, AT_LEAST_ONCE"},
		{"parallelism.default", "two", ErrInvalidSetting, "expected an integer"},
		{"table.dml-sync", "yes", ErrInvalidSetting, "expected true or false"},
		{"table.local-timezone", "UTC", ErrUnknownSetting, "did you mean 'table.local-time-zone'?"},
		{"execution.checkpointing.intervall", "10 s", ErrUnknownSetting, "did you mean 'execution.checkpointing.interval'?"},
		{"pipeline.max-parallelism", "128", nil, ""},
		{"my.own.key", "anything", nil, ""},
	}
	for _, tt := range tests {
		s := NewSession()
		err := s.Set(tt.key, tt.value)
		switch {
		case tt.err == nil && err != nil:
			t.Errorf("Set(%q, %q) = %v, want nil", tt.key, tt.value, err)
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("Set(%q, %q) = %v, want %v", tt.key, tt.value, err, tt.err)
		case tt.err != nil && !strings.Contains(err.Error(), tt.msg):
			t.Errorf("Set(%q, %q) = %q, want it to contain %q", tt.key, tt.value, err, tt.msg)
		case tt.err == nil && s.Setting(tt.key) != tt.value:
			t.Errorf("after Set(%q, %q), Setting = %q", tt.key, tt.value, s.Setting(tt.key))
		}
	}
}

func TestSessionSettingsAndReset(t *testing.T) {
	s := NewSession()
	if got := s.Setting(SettingLocalTimeZone); got != "default" {
		t.Errorf("default %s = %q, want default", SettingLocalTimeZone, got)
	}
	for _, kv := range [][2]string{{"table.local-time-zone", "Europe/Berlin"}, {"execution.checkpointing.interval", "10 s"}, {"a.b", "c"}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Settings()
	want := [][2]string{{"a.b", "c"}, {"execution.checkpointing.interval", "10 s"}, {"table.local-time-zone", "Europe/Berlin"}}
	if len(got) != len(want) {
		t.Fatalf("Settings() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Settings()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	s.Reset("a.b")
	if len(s.Settings()) != 2 {
		t.Errorf("after Reset(a.b): %v", s.Settings())
	}
	s.Reset("")
	if len(s.Settings()) != 0 {
		t.Errorf("after Reset(): %v", s.Settings())
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"kafka", "kafka", 0},
		{"kafak", "kafka", 1}, // adjacent swap counts once
		{"scan.topic-partition-discover.interval", "scan.topic-partition-discovery.interval", 1},
		{"", "abc", 3},
		{"COUNT", "count", 0},
		{"datagen", "blackhole", 8},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got := closest("kafak", []string{"upsert-kafka", "kafka", "print"}, 2); got != "kafka" {
		t.Errorf("closest(kafak) = %q", got)
	}
	if got := closest("zzzzz", []string{"kafka", "print"}, 2); got != "" {
		t.Errorf("closest(zzzzz) = %q, want none", got)
	}
}
