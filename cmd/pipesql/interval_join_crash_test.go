package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/engine"
)

// TestIntervalJoinCrashRecovery kills a two-input job — orders interval-joined with
// shipments (a shipment within a minute after its order), then counted and summed per
// 10-second window of the shipment time into the exactly-once filesystem sink — with
// SIGKILL several times, soon after a checkpoint commit, and restarts it from its
// checkpoints. Both sources' positions, the interval join's rows and the window
// aggregate's state come back from one aligned cut, so every window is written once,
// with exactly the pairs a Go loop over the same rows finds. The fast set runs a small
// input with 50 ms checkpoints; under -tags soak it is 1.5M orders, 300 ms checkpoints and
// at least 5 kills.
func TestIntervalJoinCrashRecovery(t *testing.T) {
	// The fast set's job runs for about half a second on an idle machine: checkpoints
	// every 50 ms and a kill at most 100 ms after a commit land inside it.
	nOrders, interval, maxDelay, rounds, minKills := 150_000, "50 ms", 100, 3, 1
	if soak {
		nOrders, interval, maxDelay, rounds, minKills = 1_500_000, "300 ms", 200, 8, 5
	}
	dir := t.TempDir()
	ordersDir, shipDir, out, ckpt := filepath.Join(dir, "orders"), filepath.Join(dir, "shipments"), filepath.Join(dir, "out"), filepath.Join(dir, "ckpt")
	rng := rand.New(rand.NewPCG(12, 3))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	type ship struct {
		order int
		at    time.Time
	}
	var ships []ship
	type win struct{ n, sum int64 }
	truth := map[int64]*win{} // window start (Unix seconds) -> pairs and their amounts
	amounts := make([]int, nOrders)
	for i := range nOrders {
		at := base.Add(time.Duration(i) * 10 * time.Millisecond)
		amounts[i] = rng.IntN(1000)
		for range rng.IntN(3) {
			d := time.Duration(rng.IntN(80_000)-10_000) * time.Millisecond // -10 s .. 70 s
			if rng.IntN(8) == 0 {
				d = []time.Duration{0, time.Minute, -time.Millisecond, time.Minute + time.Millisecond}[rng.IntN(4)]
			}
			s := ship{order: i, at: at.Add(d)}
			ships = append(ships, s)
			if d >= 0 && d <= time.Minute {
				w := s.at.Unix() / 10 * 10
				if truth[w] == nil {
					truth[w] = &win{}
				}
				truth[w].n++
				truth[w].sum += int64(amounts[i])
			}
		}
	}
	sort.SliceStable(ships, func(a, b int) bool { return ships[a].at.Before(ships[b].at) })
	write := func(dir string, n int, line func(w *bufio.Writer, i int)) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "part-0.json"))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i := range n {
			line(w, i)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	const layout = "2006-01-02 15:04:05.000"
	write(ordersDir, nOrders, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, `{"order_id":%d,"amount":%d,"order_time":"%s"}`+"\n", i, amounts[i], base.Add(time.Duration(i)*10*time.Millisecond).Format(layout))
	})
	write(shipDir, len(ships), func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, `{"order_id":%d,"ship_time":"%s"}`+"\n", ships[i].order, ships[i].at.Format(layout))
	})
	job := filepath.Join(dir, "interval.sql")
	text := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '%s';
SET 'execution.checkpointing.dir' = '%s';
SET 'restart-strategy.type' = 'none';
CREATE TABLE orders (order_id BIGINT, amount INT, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE shipments (order_id BIGINT, ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE per_window (window_start TIMESTAMP(3), n BIGINT, total BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE VIEW shipped AS
  SELECT o.order_id, o.amount, s.ship_time FROM orders o JOIN shipments s
  ON o.order_id = s.order_id AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '1' MINUTE;
INSERT INTO per_window
  SELECT window_start, COUNT(*), SUM(CAST(amount AS BIGINT))
  FROM TABLE(TUMBLE(TABLE shipped, DESCRIPTOR(ship_time), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;
`, interval, ckpt, ordersDir, shipDir, out)
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{engine.CommitDelayEnv + "=30ms"}
	killed, _ := crashRounds(t, env, job, rounds, func(int) killPlan {
		return killPlan{commits: 1, delay: time.Duration(rng.IntN(maxDelay)) * time.Millisecond}
	}, nil)
	r := startCrashRun(t, env, "run", job)
	r.wait(t, 5*time.Minute)
	if code := r.exitCode(); code != 0 {
		t.Fatalf("final run: exit %d\nstderr: %s", code, r.stderr.String())
	}
	t.Logf("%d kills, then a run to the end; %d orders, %d shipments, %d windows", killed, nOrders, len(ships), len(truth))
	if killed < minKills {
		t.Fatalf("only %d kills happened before the job finished: the input is too small to test recovery", killed)
	}

	got := map[int64]win{}
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
			var row struct {
				Start string `json:"window_start"`
				N     int64  `json:"n"`
				Total int64  `json:"total"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), line, err)
			}
			at, err := time.Parse("2006-01-02 15:04:05", row.Start)
			if err != nil {
				at, err = time.Parse(layout, row.Start)
			}
			if err != nil {
				t.Fatalf("%s: window_start %q: %v", e.Name(), row.Start, err)
			}
			w := at.Unix()
			if _, dup := got[w]; dup && bad < 10 {
				bad++
				t.Errorf("window %s written twice", row.Start)
			}
			got[w] = win{row.N, row.Total}
		}
	}
	for w, want := range truth {
		if g, ok := got[w]; (!ok || g != *want) && bad < 10 {
			bad++
			t.Errorf("window %s: got %+v (written: %v), want %+v", time.Unix(w, 0).UTC().Format(layout), g, ok, *want)
		}
	}
	if len(got) != len(truth) {
		t.Errorf("%d windows written, want %d", len(got), len(truth))
	}
}
