package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInsertImplicitCasts writes query columns into sink columns of other types where
// Flink casts implicitly: any number to any DECIMAL (rounded half up, NULL on overflow),
// integer widening, a TIMESTAMP into DATE and TIME columns, and element-wise in an ARRAY.
func TestInsertImplicitCasts(t *testing.T) {
	dir := t.TempDir()
	data := "123.45,7,2026-12-01 10:30:15.250\n-0.05,2147483647,2026-12-31 23:59:59.999\n12345678.99,-3,1999-01-01 00:00:00\n"
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	job := `CREATE TABLE s (d DECIMAL(10, 2), i INT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "in.csv") + `', 'format' = 'csv');
CREATE TABLE sink (d DECIMAL(5, 1), i BIGINT, id DECIMAL(12, 2), dt DATE, tod TIME, arr ARRAY<DECIMAL(4, 1)>)
  WITH ('connector' = 'print');
INSERT INTO sink SELECT d, i, i, ts, ts, ARRAY[i] FROM s;
`
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "run", "--progress", "off", file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	want := []string{
		"+I[-0.1, 2147483647, 2147483647.00, 2026-12-31, 23:59:59, [null]]",
		"+I[123.5, 7, 7.00, 2026-12-01, 10:30:15, [7.0]]",
		"+I[null, -3, -3.00, 1999-01-01, 00:00, [-3.0]]",
	}
	var got []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "+I[") {
			got = append(got, l)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	bad := strings.Replace(job, "i BIGINT", "i SMALLINT", 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	r = pipesql(t, "explain", file)
	if r.code != 2 || !strings.Contains(r.stderr, "job.sql:5:28: type mismatch: column 'i' of table 'sink' is SMALLINT, the query gives INT") ||
		!strings.Contains(r.stderr, "write CAST(... AS SMALLINT)") {
		t.Fatalf("a narrowing INSERT: exit %d\n%s", r.code, r.stderr)
	}
}
