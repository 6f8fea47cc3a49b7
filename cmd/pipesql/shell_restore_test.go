package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/shell"
)

// A job submitted from the shell is the job pipesql run starts: it checkpoints into
// state.checkpoints.dir, /status lists it with its lag, and after the shell is killed a
// new shell that submits the same statements resumes from the checkpoint. The sink is a
// filesystem table (exactly-once: staged files are published when a checkpoint
// completes), so the output must hold every id read from Kafka exactly once.
func TestShellJobResumesAfterKill(t *testing.T) {
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "ids", 2)
	produceIDs(t, c, "ids", 2, 0, 300)
	dir := t.TempDir()
	ckpt, out := filepath.Join(dir, "checkpoints"), filepath.Join(dir, "out")
	statements := []string{
		"SET 'pipeline.name' = 'shell-ids';",
		"SET 'execution.checkpointing.interval' = '100 ms';",
		"SET 'state.checkpoints.dir' = '" + ckpt + "';",
		"CREATE TABLE ids (id BIGINT, u STRING, n INT) WITH ('connector' = 'kafka', 'topic' = 'ids', " +
			"'properties.bootstrap.servers' = '" + c.Bootstrap() + "', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');",
		"CREATE TABLE `out` (id BIGINT, u STRING) WITH ('connector' = 'filesystem', 'path' = '" + out + "', 'format' = 'json');",
	}
	const insert = "INSERT INTO `out` SELECT id, u FROM ids;"
	env := []string{"PIPESQL_HISTORY=" + filepath.Join(dir, "history")}
	submit := func(tm *terminal) string {
		t.Helper()
		tm.expectText(shell.PrimaryPrompt)
		for _, s := range statements {
			tm.line(s)
			tm.expectText("[INFO] Execute statement succeeded.")
		}
		tm.line(insert)
		id := tm.expect(`Job ID: ([0-9a-f]{32})`)[1]
		tm.expectText(shell.PrimaryPrompt)
		return id
	}

	// The first shell: the job reads all 300 ids and checkpoints them.
	addr := fmt.Sprintf("127.0.0.1:%d", freePortRange(t, 1))
	tm := startShell(t, env, "--metrics-addr", addr)
	id := submit(tm)
	eventuallyTrue(t, "the job on /status, with its lag and a completed checkpoint", func() bool {
		s, ok := jobStatus(t, "http://"+addr+"/status", id)
		return ok && s.Name == "shell-ids" && s.State == "RUNNING" && s.Lag != nil && *s.Lag == 0 &&
			s.Checkpoints.LastID > 0 && len(readIDs(t, out)) == 300
	})
	// SHOW JOBS says the same: the shared status, the lag and the last checkpoint.
	tm.line("SHOW JOBS;")
	tm.expect(`\| ` + id + ` \| +shell-ids \| +RUNNING \| +\d+s \| +[\d,]+ \| +0 \| +- \| +#\d+, \d+s ago \| +0 \|`)
	if _, err := os.Stat(filepath.Join(ckpt, "shell-ids")); err != nil {
		t.Fatalf("the job's checkpoints are not in state.checkpoints.dir: %v", err)
	}

	// Kill the shell and its job with it; more ids arrive meanwhile.
	if err := tm.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	tm.wait()
	produceIDs(t, c, "ids", 2, 300, 500)

	// A new shell submits the same statements: the job resumes where its checkpoint
	// stands, reading only what came after it.
	tm = startShell(t, env)
	id = submit(tm)
	eventuallyTrue(t, "all 500 ids in the output", func() bool {
		return len(readIDs(t, out)) >= 500
	})
	tm.line("STOP JOB '" + id + "';")
	tm.expectText("[INFO] Job " + id + " stopped.")
	tm.line("QUIT;")
	if err := tm.wait(); err != nil {
		t.Fatalf("the shell exited with %v", err)
	}
	checkIDs(t, readIDs(t, out), idRange(0, 500))
}

// statusJob is the part of a job's /status the test reads.
type statusJob struct {
	ID, Name, State string
	Lag             *int64
	Checkpoints     struct {
		LastID uint64 `json:"last_id"`
	}
}

// jobStatus returns the job with id from a /status endpoint; false when the endpoint
// does not answer yet or lacks the job.
func jobStatus(t *testing.T, url, id string) (statusJob, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return statusJob{}, false
	}
	defer resp.Body.Close()
	var body struct{ Jobs []statusJob }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	for _, j := range body.Jobs {
		if j.ID == id {
			return j, true
		}
	}
	return statusJob{}, false
}

// readIDs counts each id in the published files of a filesystem sink (staged files
// start with a dot).
func readIDs(t *testing.T, dir string) map[int64]int {
	t.Helper()
	got := map[int64]int{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil || info.IsDir() || strings.HasPrefix(info.Name(), ".") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var row struct{ ID int64 }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				return fmt.Errorf("%s: %q: %v", path, line, err)
			}
			got[row.ID]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
