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
		{"table.optimizer.some-switch", "true", nil, ""},
		{"my.own.key", "anything", ErrUnknownSetting, "unknown setting 'my.own.key'"},
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
	for _, kv := range [][2]string{{"table.local-time-zone", "Europe/Berlin"}, {"execution.checkpointing.interval", "10 s"}, {"table.a.b", "c"}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Settings()
	want := [][2]string{{"execution.checkpointing.interval", "10 s"}, {"table.a.b", "c"}, {"table.local-time-zone", "Europe/Berlin"}}
	if len(got) != len(want) {
		t.Fatalf("Settings() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Settings()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	s.Reset("table.a.b")
	if len(s.Settings()) != 2 {
		t.Errorf("after Reset(table.a.b): %v", s.Settings())
	}
	s.Reset("")
	if len(s.Settings()) != 0 {
		t.Errorf("after Reset(): %v", s.Settings())
	}
}

// A key without effect is set with a warning saying so, which TakeWarnings hands over
// once; a key with an effect warns nothing.
func TestSessionSetWarnings(t *testing.T) {
	s := NewSession()
	for _, kv := range [][2]string{{"parallelism.default", "4"}, {"pipeline.name", "x"}, {"table.optimizer.some-switch", "on"}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	w := s.TakeWarnings()
	if len(w) != 2 || !strings.Contains(w[0], "'parallelism.default' has no effect in pipesql") ||
		!strings.Contains(w[1], "'table.optimizer.some-switch' is not known to pipesql") {
		t.Errorf("warnings = %q", w)
	}
	if w := s.TakeWarnings(); len(w) != 0 {
		t.Errorf("warnings again = %q, want none", w)
	}
	if got := s.Setting("parallelism.default"); got != "4" {
		t.Errorf("parallelism.default = %q, want it kept", got)
	}
}
