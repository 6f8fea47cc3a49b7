package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/engine"
)

// TestMatchRecognizeCrashRecovery kills a MATCH_RECOGNIZE job (a low, a rise, a drop per
// key: PATTERN (A B+ C)) writing to the exactly-once filesystem sink with SIGKILL several
// times, soon after a checkpoint commit, with matches in progress, and restarts it from
// its checkpoints: each match is written once, exactly the matches a Go loop over the
// same rows finds. The fast set runs 1M rows with 100 ms checkpoints (the NFA matches 400k in well under a second); under -tags soak
// 8M rows (about 8 s of work on an idle machine), 300 ms checkpoints and at least 5 kills.
func TestMatchRecognizeCrashRecovery(t *testing.T) {
	n, interval, rounds, minKills := 1_000_000, "100 ms", 3, 2
	if soak {
		n, interval, rounds, minKills = 8_000_000, "300 ms", 8, 5
	}
	const keys = 40
	dir := t.TempDir()
	in, out, ckpt := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "ckpt")
	rng := rand.New(rand.NewPCG(18, 4))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(in, "part-0.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	type ev struct{ id, v int64 }
	bufs := make([][]ev, keys)
	truth := map[string]bool{}
	const layout = "2006-01-02 15:04:05.000"
	for i := range n {
		k, v := rng.IntN(keys), rng.Int64N(100)
		fmt.Fprintf(w, `{"k":%d,"v":%d,"id":%d,"ts":"%s"}`+"\n", k, v, i, base.Add(time.Duration(i)*10*time.Millisecond).Format(layout))
		// The pattern by hand: A (v < 20), then rows each above the one before (B+),
		// then one below the last (C); a start that fails moves on one row.
		buf := append(bufs[k], ev{int64(i), v})
		for len(buf) > 0 {
			if buf[0].v >= 20 || len(buf) >= 2 && buf[1].v <= buf[0].v {
				buf = buf[1:]
				continue
			}
			if len(buf) < 2 {
				break
			}
			j := 2
			for j < len(buf) && buf[j].v > buf[j-1].v {
				j++
			}
			if j == len(buf) {
				break
			}
			if buf[j].v < buf[j-1].v {
				truth[fmt.Sprintf("%d|%d|%d", k, buf[0].id, buf[j].id)] = true
				buf = buf[j+1:]
			} else {
				buf = buf[1:]
			}
		}
		bufs[k] = buf
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "match.sql")
	text := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '%s';
SET 'execution.checkpointing.dir' = '%s';
SET 'restart-strategy.type' = 'none';
CREATE TABLE e (k INT, v BIGINT, id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE found (k INT, s BIGINT, l BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO found
  SELECT k, s, l FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
    MEASURES FIRST(id) AS s, LAST(id) AS l
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A B+ C)
    DEFINE A AS v < 20, B AS B.v > PREV(B.v), C AS C.v < LAST(B.v)) AS m;
`, interval, ckpt, in, out)
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{engine.CommitDelayEnv + "=30ms"}
	killed, _ := crashRounds(t, env, job, rounds, func(int) killPlan {
		return killPlan{commits: 1, delay: time.Duration(rng.IntN(100)) * time.Millisecond}
	}, nil)
	r := startCrashRun(t, env, "run", job)
	r.wait(t, 5*time.Minute)
	if code := r.exitCode(); code != 0 {
		t.Fatalf("final run: exit %d\nstderr: %s", code, r.stderr.String())
	}
	t.Logf("%d kills, then a run to the end; %d rows, %d matches", killed, n, len(truth))
	if killed < minKills {
		t.Fatalf("only %d kills happened before the job finished: the input is too small to test recovery", killed)
	}
	got := map[string]bool{}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var row struct{ K, S, L int64 }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), line, err)
			}
			key := fmt.Sprintf("%d|%d|%d", row.K, row.S, row.L)
			if got[key] && bad < 10 {
				bad++
				t.Errorf("match %s written twice", key)
			}
			if !truth[key] && bad < 10 {
				bad++
				t.Errorf("match %s is not a match", key)
			}
			got[key] = true
		}
	}
	if len(got) != len(truth) {
		t.Errorf("%d matches written, want %d", len(got), len(truth))
	}
}
