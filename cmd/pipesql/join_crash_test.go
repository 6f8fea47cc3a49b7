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

// TestJoinCrashRecoveryExactlyOnce kills a two-input job (orders JOIN customers from two
// directories of JSON files into the exactly-once filesystem sink, checkpointing every
// 100 ms) with SIGKILL several times, each time soon after a checkpoint commit, and
// restarts it from its checkpoint directory: both sources' positions and the join's
// state come back from one aligned cut, so the output is exactly the join, every order
// with its customer once.
func TestJoinCrashRecoveryExactlyOnce(t *testing.T) {
	nOrders, nCustomers, minKills := 600_000, 60_000, 2
	if testing.Short() {
		nOrders, nCustomers, minKills = 200_000, 20_000, 1
	}
	dir := t.TempDir()
	orders, customers, out, ckpt := filepath.Join(dir, "orders"), filepath.Join(dir, "customers"), filepath.Join(dir, "out"), filepath.Join(dir, "ckpt")
	rng := rand.New(rand.NewPCG(7, 11))
	truth := map[int]int{} // order_id -> customer id, for the orders that have a customer
	write := func(dir, name string, lines func(w *bufio.Writer)) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		lines(w)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ids := rng.Perm(nCustomers)
	const files = 8
	for k := range files {
		write(customers, fmt.Sprintf("c%d.json", k), func(w *bufio.Writer) {
			for _, id := range ids[k*nCustomers/files : (k+1)*nCustomers/files] {
				fmt.Fprintf(w, `{"id":%d,"name":"c%d"}`+"\n", id, id)
			}
		})
		write(orders, fmt.Sprintf("o%d.json", k), func(w *bufio.Writer) {
			for i := k * nOrders / files; i < (k+1)*nOrders/files; i++ {
				c := rng.IntN(nCustomers + nCustomers/5) // a sixth match no customer
				if c < nCustomers {
					truth[i] = c
				}
				fmt.Fprintf(w, `{"order_id":%d,"customer_id":%d,"amount":%d}`+"\n", i, c, rng.IntN(1000))
			}
		})
	}
	job := filepath.Join(dir, "join.sql")
	text := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.dir' = '%s';
SET 'restart-strategy.type' = 'none';
CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, amount INT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE customers (id BIGINT, name STRING)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE joined (order_id BIGINT, name STRING, amount INT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO joined SELECT o.order_id, c.name, o.amount FROM orders o JOIN customers c ON o.customer_id = c.id;
`, ckpt, orders, customers, out)
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{engine.CommitDelayEnv + "=30ms"}
	killed, _ := crashRounds(t, env, job, 6, func(int) killPlan {
		return killPlan{commits: 1, delay: time.Duration(rng.IntN(150)) * time.Millisecond}
	}, nil)
	r := startCrashRun(t, env, "run", job)
	r.wait(t, 2*time.Minute)
	if code := r.exitCode(); code != 0 {
		t.Fatalf("final run: exit %d\nstderr: %s", code, r.stderr.String())
	}
	t.Logf("%d kills, then a run to the end", killed)
	if killed < minKills {
		t.Fatalf("only %d kills happened before the job finished: the input is too small to test recovery", killed)
	}

	got := map[int]string{}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		f, err := os.Open(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		in := bufio.NewScanner(f)
		for in.Scan() {
			var row struct {
				OrderID int    `json:"order_id"`
				Name    string `json:"name"`
			}
			if err := json.Unmarshal(in.Bytes(), &row); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), in.Text(), err)
			}
			if _, dup := got[row.OrderID]; dup && bad < 10 {
				bad++
				t.Errorf("order %d written twice", row.OrderID)
			}
			got[row.OrderID] = row.Name
		}
		f.Close()
	}
	for id, c := range truth {
		if got[id] != fmt.Sprintf("c%d", c) && bad < 10 {
			bad++
			t.Errorf("order %d: got customer %q, want c%d", id, got[id], c)
		}
	}
	if len(got) != len(truth) {
		t.Errorf("%d orders written, want %d", len(got), len(truth))
	}
}
