package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestFilesystemLookupJoin enriches orders read from files with a customers table of
// json files through a LEFT lookup join, printing the joined rows; EXPLAIN shows the
// LookupJoin as Flink's plan does.
func TestFilesystemLookupJoin(t *testing.T) {
	dir := t.TempDir()
	orders, customers := filepath.Join(dir, "orders"), filepath.Join(dir, "customers")
	os.MkdirAll(orders, 0o755)
	os.MkdirAll(customers, 0o755)
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf(`{"order_id": %d, "customer_id": %d, "amount": %d}`, i, i%7, i*10))
	}
	os.WriteFile(filepath.Join(orders, "o.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(customers, "c.json"), []byte(`{"id": 1, "name": "ann"}
{"id": 2, "name": "bob"}
{"id": 3, "name": "cy"}
{"id": 5, "name": "eve"}
`), 0o644)
	job := writeJob(t, fmt.Sprintf(`
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount BIGINT, proc_time AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE customers (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE sink (order_id BIGINT, name STRING, amount BIGINT) WITH ('connector' = 'print');
INSERT INTO sink
SELECT o.order_id, c.name, o.amount
FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
  ON c.id = o.customer_id AND o.amount > 100;
`, orders, customers))
	r := pipesql(t, "explain", job)
	if want := "LookupJoin(table=[customers], joinType=[LeftOuterJoin], lookup=[id=customer_id], where=[(amount > 100)], select=[order_id, customer_id, amount, id, name])"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("explain (exit %d), want %s:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	names := map[int]string{1: "ann", 2: "bob", 3: "cy", 5: "eve"}
	var want []string
	for i := 1; i <= 50; i++ {
		name, ok := names[i%7]
		if !ok || i*10 <= 100 {
			name = "null"
		}
		want = append(want, fmt.Sprintf("+I[%d, %s, %d]", i, name, i*10))
	}
	sort.Strings(want)
	r = pipesql(t, "run", job)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if strings.HasPrefix(line, "+I[") {
			got = append(got, line)
		}
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s\nstderr %s", strings.Join(got, "\n"), strings.Join(want, "\n"), r.stderr)
	}
}
