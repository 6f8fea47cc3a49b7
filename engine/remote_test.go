package engine_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
)

// A metrics address other hosts reach needs AllowRemote, from New and from a job's
// metrics.address; loopback needs nothing.
func TestRemoteAddressNeedsAllowRemote(t *testing.T) {
	if _, err := engine.New(engine.Options{MetricsAddr: "0.0.0.0:0"}); !errors.Is(err, engine.ErrRemoteAddress) {
		t.Errorf("New on 0.0.0.0: %v, want ErrRemoteAddress", err)
	}
	e := newEngine(t)
	_, err := e.Submit(context.Background(), plan(t, unbounded+"SET 'metrics.address' = ':0';\nINSERT INTO sink SELECT a FROM gen;"))
	if !errors.Is(err, engine.ErrRemoteAddress) || !errors.Is(err, engine.ErrInvalidJob) {
		t.Errorf("metrics.address :0: %v, want ErrRemoteAddress and ErrInvalidJob", err)
	}
	remote, err := engine.New(engine.Options{MetricsAddr: "0.0.0.0:0", AllowRemote: true})
	if err != nil {
		t.Fatalf("New on 0.0.0.0 with AllowRemote: %v", err)
	}
	remote.Close()
	local, err := engine.New(engine.Options{MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	local.Close()
}

// Savepoint writes a savepoint of a running job and leaves it running.
func TestSavepointKeepsRunning(t *testing.T) {
	// The directories first: cleanups run last first, and the engine must close its
	// Badger store before its directory goes.
	ckpt, savepoints := t.TempDir(), t.TempDir()
	e := newEngine(t)
	ctx := context.Background()
	j, err := e.Submit(ctx, plan(t, unbounded+"SET 'execution.checkpointing.interval' = '1 h';\nSET 'state.checkpoints.dir' = '"+
		ckpt+"';\nINSERT INTO sink SELECT a FROM gen;"))
	if err != nil {
		t.Fatal(err)
	}
	// The coordinator exists once the job runs: wait for its first records.
	for deadline := time.Now().Add(30 * time.Second); j.Status().Records == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no records: %s", j.Status())
		}
	}
	path, err := e.Savepoint(ctx, j.ID(), savepoints)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("savepoint %s: %v", path, err)
	}
	if !j.Running() || j.Status().State == obs.Finished {
		t.Errorf("the job ended after a savepoint: %s", j.Status().State)
	}
	if _, err := e.Savepoint(ctx, j.ID(), ""); !errors.Is(err, engine.ErrNoSavepointDir) {
		t.Errorf("savepoint without a directory: %v, want ErrNoSavepointDir", err)
	}
	plain, err := e.Submit(ctx, plan(t, unbounded+"INSERT INTO sink SELECT a FROM gen;"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Savepoint(ctx, plain.ID(), savepoints); !errors.Is(err, exec.ErrCheckpointingDisabled) {
		t.Errorf("savepoint without checkpointing: %v, want ErrCheckpointingDisabled", err)
	}
}
