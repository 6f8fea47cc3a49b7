package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestParquetPartitionsThroughBinary: one job writes CSV rows into a parquet table
// PARTITIONED BY (dt), a second reads it back, the partition column from the paths, and
// aggregates per partition.
func TestParquetPartitionsThroughBinary(t *testing.T) {
	dir := t.TempDir()
	data := "1,a,2024-05-01\n2,b,2024-05-01\n3,a,2024-05-02\n4,c,\n"
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pq")
	write := `CREATE TABLE src (id BIGINT, name STRING, dt STRING) WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "in.csv") + `', 'format' = 'csv');
CREATE TABLE pq (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '` + out + `', 'format' = 'parquet',
  'parquet.compression' = 'ZSTD', 'sink.partition-commit.policy.kind' = 'success-file');
INSERT INTO pq SELECT * FROM src;
`
	read := `CREATE TABLE pq (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '` + out + `', 'format' = 'parquet');
CREATE TABLE p (dt STRING, n BIGINT, ids BIGINT) WITH ('connector' = 'print');
INSERT INTO p SELECT dt, COUNT(*), SUM(id) FROM pq GROUP BY dt;
`
	for i, job := range []string{write, read} {
		file := filepath.Join(dir, "job.sql")
		if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
			t.Fatal(err)
		}
		r := pipesql(t, "run", "--fresh", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
		if r.code != 0 {
			t.Fatalf("job %d: exit %d\nstdout:\n%s\nstderr:\n%s", i, r.code, r.stdout, r.stderr)
		}
		if i == 1 {
			// the CSV's empty dt is read as NULL, written to the default partition and read back as NULL
			want := []string{"[2024-05-01, 2, 3]", "[2024-05-02, 1, 3]", "[null, 1, 4]"}
			if got := finalState(t, r.stdout, ""); !slices.Equal(got, want) {
				t.Fatalf("read back %q, want %q\nstdout:\n%s", got, want, r.stdout)
			}
		}
	}
	for _, p := range []string{"dt=2024-05-01", "dt=2024-05-02", "dt=__DEFAULT_PARTITION__"} {
		if _, err := os.Stat(filepath.Join(out, p, "_SUCCESS")); err != nil {
			t.Errorf("partition %s not committed: %v", p, err)
		}
	}
}
