package engine_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// plan plans the INSERT that ends script.
func plan(t *testing.T, script string) *planner.Program {
	t.Helper()
	stmts, err := parser.ParseScript("", script)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

func newEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

const unbounded = `
CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');
CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');
`

// A bounded job runs to its end, in the registry and in Jobs.
func TestSubmitRunsToTheEnd(t *testing.T) {
	e := newEngine(t)
	j, err := e.Submit(context.Background(), plan(t, `
CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT a FROM gen;`))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := j.Status(); s.State != obs.Finished || s.Records != 10 || s.ID != "1" || s.Name != "insert-into_sink" {
		t.Errorf("status %+v, want job 1 insert-into_sink FINISHED after 10 records", s)
	}
	if got := e.Registry().Statuses(); len(got) != 1 || got[0].ID != "1" {
		t.Errorf("registry holds %v, want job 1", got)
	}
	if jobs := e.Jobs(); len(jobs) != 1 || jobs[0] != j {
		t.Errorf("Jobs() = %v, want the job", jobs)
	}
}

// Stop cancels a job; a stop with a savepoint needs checkpointing and, with it, ends the
// job FINISHED with its savepoint; two running jobs never share a checkpoint key.
func TestStop(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	plain, err := e.Submit(ctx, plan(t, unbounded+"INSERT INTO sink SELECT a FROM gen;"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Stop(ctx, plain.ID(), engine.StopOptions{WithSavepoint: true, SavepointDir: t.TempDir()}); !errors.Is(err, exec.ErrCheckpointingDisabled) {
		t.Errorf("stop with a savepoint without checkpointing: %v, want ErrCheckpointingDisabled", err)
	}
	if _, err := e.Stop(ctx, plain.ID(), engine.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := plain.Wait(); err != nil || plain.Status().State != obs.Canceled {
		t.Errorf("stopped job: %v, %s; want CANCELED", err, plain.Status().State)
	}
	if _, err := e.Stop(ctx, plain.ID(), engine.StopOptions{}); !errors.Is(err, engine.ErrNotRunning) {
		t.Errorf("stopping an ended job: %v, want ErrNotRunning", err)
	}
	if _, err := e.Stop(ctx, "nope", engine.StopOptions{}); !errors.Is(err, engine.ErrNoSuchJob) {
		t.Errorf("stopping no job: %v, want ErrNoSuchJob", err)
	}

	ckpt := t.TempDir()
	checkpointed := unbounded + "SET 'execution.checkpointing.interval' = '50 ms';\nSET 'state.checkpoints.dir' = '" + ckpt +
		"';\nINSERT INTO sink SELECT a FROM gen;"
	a, err := e.Submit(ctx, plan(t, checkpointed))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Submit(ctx, plan(t, checkpointed))
	if err != nil {
		t.Fatal(err)
	}
	if a.Key() != "insert-into-sink" || b.Key() != "insert-into-sink-2" {
		t.Errorf("keys %q and %q, want insert-into-sink and insert-into-sink-2", a.Key(), b.Key())
	}
	if _, err := e.Stop(ctx, b.ID(), engine.StopOptions{WithSavepoint: true}); !errors.Is(err, engine.ErrNoSavepointDir) {
		t.Errorf("stop with a savepoint and no directory: %v, want ErrNoSavepointDir", err)
	}
	path, err := e.Stop(ctx, a.ID(), engine.StopOptions{WithSavepoint: true, SavepointDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := a.Status(); s.State != obs.Finished || s.Savepoint != path {
		t.Errorf("job stopped with a savepoint: %s, savepoint %q; want FINISHED and %q", s.State, s.Savepoint, path)
	}
	if _, err := os.Stat(filepath.Join(ckpt, "insert-into-sink")); err != nil {
		t.Errorf("checkpoints not under state.checkpoints.dir: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if b.Running() {
		t.Errorf("Close left a job running")
	}
	if _, err := e.Submit(ctx, plan(t, unbounded+"INSERT INTO sink SELECT a FROM gen;")); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
}

// Errors in what the user wrote match ErrInvalidJob: a metrics.address that cannot be
// served.
func TestInvalidJob(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	e := newEngine(t)
	_, err = e.Submit(context.Background(), plan(t, unbounded+
		"SET 'metrics.address' = '"+busy.Addr().String()+"';\nINSERT INTO sink SELECT a FROM gen;"))
	if !errors.Is(err, engine.ErrInvalidJob) || !errors.Is(err, obs.ErrListen) {
		t.Errorf("a busy metrics.address: %v, want ErrInvalidJob and obs.ErrListen", err)
	}
	if len(e.Jobs()) != 0 {
		t.Errorf("a job was started")
	}
}
