package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/state"
)

// settingsJob is a short datagen job, preceded by the given SET statements.
func settingsJob(t *testing.T, sets ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "job.sql")
	text := strings.Join(sets, "\n") + `
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '100000', 'rows-per-second' = '100000');
CREATE TABLE dst (n INT) WITH ('connector' = 'blackhole');
INSERT INTO dst SELECT n FROM src;
`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// Keys a Flink job file sets that pipesql has no use for warn and the job runs; a
// misspelt key exits 2 naming the key meant; a file:/// checkpoint directory is the
// local directory, and the job's checkpoints are there.
func TestSettingsThroughTheBinary(t *testing.T) {
	t.Run("no-effect keys warn", func(t *testing.T) {
		r := pipesql(t, "run", settingsJob(t,
			"SET 'parallelism.default' = '4';",
			"SET 'table.optimizer.some-future-switch' = 'true';"))
		if r.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		for _, want := range []string{
			"setting 'parallelism.default' has no effect in pipesql: pipesql runs each job in one process",
			"setting 'table.optimizer.some-future-switch' is not known to pipesql and has no effect",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
	})
	t.Run("a misspelt key exits 2", func(t *testing.T) {
		r := pipesql(t, "run", settingsJob(t, "SET 'execution.checkpointing.intervall' = '1 s';"))
		if r.code != 2 || !strings.Contains(r.stderr, "unknown setting 'execution.checkpointing.intervall': did you mean 'execution.checkpointing.interval'?") {
			t.Errorf("exit %d, want 2 and the key meant; stderr:\n%s", r.code, r.stderr)
		}
		r = pipesql(t, "run", "--set", "pipline.name=x", settingsJob(t))
		if r.code != 2 || !strings.Contains(r.stderr, "did you mean 'pipeline.name'?") {
			t.Errorf("--set: exit %d, want 2 and the key meant; stderr:\n%s", r.code, r.stderr)
		}
	})
	t.Run("file URI checkpoint dir", func(t *testing.T) {
		ckpt := t.TempDir()
		r := pipesql(t, "run", settingsJob(t,
			"SET 'pipeline.name' = 'ck-uri';",
			"SET 'execution.checkpointing.interval' = '100 ms';",
			"SET 'state.checkpoints.dir' = 'file://"+ckpt+"';"))
		if r.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		store, err := state.OpenBadger(filepath.Join(ckpt, "ck-uri"), state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		if _, err := store.Latest("ck-uri"); err != nil {
			t.Errorf("no completed checkpoint in %s: %v", ckpt, err)
		}
		if _, err := os.Stat("../../file:"); err == nil {
			t.Errorf("a directory named file: was made: the URI was taken for a relative path")
		}
	})
}
