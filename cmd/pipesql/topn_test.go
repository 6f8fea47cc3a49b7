package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTopNThroughBinary runs a Top-2 per category (ties, a NULL order value) and a
// keep-last deduplication by event time from a JSON file into print sinks, with
// checkpoints on, and applies each changelog to its final state, worked out by hand.
func TestTopNThroughBinary(t *testing.T) {
	dir := t.TempDir()
	data := `{"category": "fruit", "product": "apple", "sales": 5, "ts": "2024-01-01 00:00:01"}
{"category": "fruit", "product": "pear", "sales": 9, "ts": "2024-01-01 00:00:02"}
{"category": "veg", "product": "leek", "sales": 3, "ts": "2024-01-01 00:00:03"}
{"category": "fruit", "product": "plum", "sales": 7, "ts": "2024-01-01 00:00:04"}
{"category": "veg", "product": "kale", "sales": null, "ts": "2024-01-01 00:00:05"}
{"category": "fruit", "product": "fig", "sales": 9, "ts": "2024-01-01 00:00:06"}
{"category": "veg", "product": "corn", "sales": 4, "ts": "2024-01-01 00:00:07"}
{"category": "veg", "product": "leek", "sales": 8, "ts": "2024-01-01 00:00:08"}
{"category": "fruit", "product": "apple", "sales": 1, "ts": "2024-01-01 00:00:00"}
`
	if err := os.WriteFile(filepath.Join(dir, "sales.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	job := `SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE sales (category STRING, product STRING, sales INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "sales.json") + `', 'format' = 'json');
CREATE TABLE top2 (category STRING, product STRING, sales INT, rn BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'top');
CREATE TABLE latest (product STRING, sales INT) WITH ('connector' = 'print', 'print-identifier' = 'last');
INSERT INTO top2
SELECT * FROM (
  SELECT category, product, sales, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rn
  FROM sales)
WHERE rn <= 2;
INSERT INTO latest
SELECT product, sales FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY ts DESC) AS rn FROM sales)
WHERE rn = 1;
`
	file := filepath.Join(dir, "topn.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "explain", file)
	if r.code != 0 || !strings.Contains(r.stdout, "Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[category], orderBy=[sales DESC]") ||
		!strings.Contains(r.stdout, "Deduplicate(keep=[LastRow], key=[product], order=[ROWTIME])") {
		t.Fatalf("explain: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = pipesql(t, "run", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// Ties keep arrival order (pear before fig); NULL sorts last descending; the second
	// leek row outranks the first.
	want := []string{"[fruit, fig, 9, 2]", "[fruit, pear, 9, 1]", "[veg, corn, 4, 2]", "[veg, leek, 8, 1]"}
	if got := finalState(t, r.stdout, "top"); !slices.Equal(got, want) {
		t.Errorf("top 2: final rows %q, want %q\nstdout:\n%s", got, want, r.stdout)
	}
	// The apple of 00:00:00 arrived last but is the earlier row: the one of 00:00:01 stays.
	want = []string{"[apple, 5]", "[corn, 4]", "[fig, 9]", "[kale, null]", "[leek, 8]", "[pear, 9]", "[plum, 7]"}
	if got := finalState(t, r.stdout, "last"); !slices.Equal(got, want) {
		t.Errorf("latest: final rows %q, want %q\nstdout:\n%s", got, want, r.stdout)
	}
	if !strings.Contains(r.stdout, "top> -U[fruit, apple, 5, 1]") {
		t.Errorf("the first fruit at rank 1 was never updated:\n%s", r.stdout)
	}
}
