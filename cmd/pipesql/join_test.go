package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLeftJoinThroughBinary runs orders LEFT JOIN customers from two files (JSON and
// CSV) into a print sink: each source in its own task, the join's changelog (a
// null-padded order retracted when its customer arrives) applied to the exact final
// state, with checkpoints on; a second run resumes the finished job and prints nothing.
func TestLeftJoinThroughBinary(t *testing.T) {
	dir := t.TempDir()
	orders := `{"order_id": 1, "customer_id": 10, "amount": 5.5}
{"order_id": 2, "customer_id": 20, "amount": 7}
{"order_id": 3, "customer_id": 10, "amount": 1}
{"order_id": 4, "customer_id": 30, "amount": 2}
{"order_id": 5, "customer_id": null, "amount": 3}
`
	customers := "10,ann,DE\n20,bob,FR\n20,bea,IT\n40,cid,ES\n"
	for name, data := range map[string]string{"orders.json": orders, "customers.csv": customers} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job := `SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "orders.json") + `', 'format' = 'json');
CREATE TABLE customers (id BIGINT, name STRING, country STRING)
  WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "customers.csv") + `', 'format' = 'csv');
CREATE TABLE enriched (order_id BIGINT, name STRING, country STRING, amount DOUBLE)
  WITH ('connector' = 'print', 'print-identifier' = 'j');
INSERT INTO enriched
SELECT o.order_id, c.name, c.country, o.amount
FROM orders o LEFT JOIN customers c ON o.customer_id = c.id;
`
	file := filepath.Join(dir, "join.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	ckpt := "state.checkpoints.dir=" + filepath.Join(dir, "ckpt")
	r := pipesql(t, "explain", file)
	if r.code != 0 || !strings.Contains(r.stdout, "Join(joinType=[LeftOuterJoin], where=[(customer_id = id)]") ||
		!strings.Contains(r.stdout, "Exchange(distribution=[hash[customer_id]])") {
		t.Fatalf("explain: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = pipesql(t, "run", "--set", ckpt, file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := []string{
		"[1, ann, DE, 5.5]", "[2, bea, IT, 7.0]", "[2, bob, FR, 7.0]", "[3, ann, DE, 1.0]",
		"[4, null, null, 2.0]", "[5, null, null, 3.0]",
	}
	if got := finalState(t, r.stdout, "j"); !slices.Equal(got, want) {
		t.Fatalf("final rows %q, want %q\nstdout:\n%s\nstderr:\n%s", got, want, r.stdout, r.stderr)
	}
	r = pipesql(t, "run", "--set", ckpt, file)
	if r.code != 0 || strings.Contains(r.stdout, "j> ") {
		t.Fatalf("second run: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
