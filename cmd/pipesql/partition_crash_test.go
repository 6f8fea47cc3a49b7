package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/pipesql/pipesql/engine"
)

// TestPartitionedParquetCrashRecovery runs a checkpointed job that writes JSON events
// into a parquet table PARTITIONED BY (dt, hr) with the partition-time commit trigger
// (delay 1 h, success files), kills it with SIGKILL several times (half of them inside
// a checkpoint's commit) and restarts it from its checkpoints. After every kill, each partition that has its _SUCCESS file already
// holds all of its rows (the watermark passed it before it was committed); at the end
// every partition is committed and DuckDB, reading the parquet files, finds every event
// exactly once.
func TestPartitionedParquetCrashRecovery(t *testing.T) {
	n, rounds, minKills := 400_000, 4, 2
	if soak {
		n, rounds, minKills = 3_000_000, 12, 8
	}
	dir := t.TempDir()
	in, out, ckpt := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "ckpt")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	// events in time order over 48 hours, a little out of order within 2 s
	rng := rand.New(rand.NewPCG(3, 5))
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	perHour := map[string]int{}
	const files = 8
	for k := range files {
		f, err := os.Create(filepath.Join(in, fmt.Sprintf("e%d.json", k)))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i := k * n / files; i < (k+1)*n/files; i++ {
			ts := start.Add(time.Duration(int64(i)*int64(48*time.Hour/time.Millisecond)/int64(n)) * time.Millisecond).Add(-time.Duration(rng.IntN(2000)) * time.Millisecond)
			if ts.Before(start) {
				ts = start
			}
			perHour[ts.Format("dt=2006-01-02/hr=15")]++
			fmt.Fprintf(w, `{"id":%d,"ts":"%s"}`+"\n", i, ts.Format("2006-01-02 15:04:05.000"))
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	job := filepath.Join(dir, "job.sql")
	text := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.dir' = '%s';
SET 'restart-strategy.type' = 'none';
CREATE TABLE events (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE hourly (id BIGINT, ts TIMESTAMP(3), dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH (
  'connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 h',
  'sink.partition-commit.policy.kind' = 'success-file',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00');
INSERT INTO hourly SELECT id, ts, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH') FROM events;
`, ckpt, in, out)
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string) int {
		var c int
		if err := db.QueryRow(q).Scan(&c); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return c
	}
	// A committed partition is complete.
	checkCommitted := func() int {
		committed := 0
		for part, want := range perHour {
			if _, err := os.Stat(filepath.Join(out, part, "_SUCCESS")); err != nil {
				continue
			}
			committed++
			if got := count(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/part-*')`, filepath.Join(out, part))); got != want {
				t.Fatalf("partition %s has its _SUCCESS file with %d of its %d rows", part, got, want)
			}
		}
		return committed
	}
	env := []string{engine.CommitDelayEnv + "=30ms"}
	// odd rounds kill inside a checkpoint's commit (its state written, its completion
	// not), even ones at a random moment after one
	killed, inCommit := crashRounds(t, env, job, rounds, func(round int) killPlan {
		if round%2 == 1 {
			return killPlan{commits: 1 + rng.IntN(2), inCommit: true}
		}
		return killPlan{commits: 1 + rng.IntN(2), delay: time.Duration(rng.IntN(150)) * time.Millisecond}
	}, func(int) string { return fmt.Sprintf("%d partitions committed", checkCommitted()) })
	r := startCrashRun(t, env, "run", job)
	r.wait(t, 2*time.Minute)
	if code := r.exitCode(); code != 0 {
		t.Fatalf("final run: exit %d\nstderr: %s", code, r.stderr.String())
	}
	t.Logf("%d kills (%d inside a commit), then a run to the end", killed, inCommit)
	if killed < minKills || inCommit < minKills/2 {
		t.Fatalf("only %d kills happened before the job finished: the input is too small to test recovery", killed)
	}
	if c := checkCommitted(); c != len(perHour) {
		t.Fatalf("%d of %d partitions committed at the end", c, len(perHour))
	}
	all := fmt.Sprintf(`read_parquet('%s/*/*/part-*')`, out)
	if got, distinct := count("SELECT count(*) FROM "+all), count("SELECT count(DISTINCT id) FROM "+all); got != n || distinct != n {
		t.Fatalf("%d rows (%d distinct ids), want each of %d once", got, distinct, n)
	}
}
