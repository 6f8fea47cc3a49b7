package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// finalState applies the changelog a print sink wrote (+I/-U/+U/-D lines, after an
// optional "identifier> ") and returns the rows left, sorted: the result a database would
// hold.
func finalState(t *testing.T, out, identifier string) []string {
	t.Helper()
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		if identifier != "" {
			var ok bool
			if line, ok = strings.CutPrefix(line, identifier+"> "); !ok {
				continue
			}
		}
		if len(line) < 3 || line[2] != '[' {
			continue
		}
		row := line[2:]
		switch line[:2] {
		case "+I", "+U":
			rows = append(rows, row)
		case "-U", "-D":
			i := slices.Index(rows, row)
			if i < 0 {
				t.Fatalf("retraction of a row never inserted: %s\n%s", line, out)
			}
			rows = slices.Delete(rows, i, i+1)
		default:
			continue
		}
	}
	slices.Sort(rows)
	return rows
}

// TestAggregateFilterThroughBinary is the four-row example of issue 20: COUNT(*), SUM and
// COUNT(DISTINCT) with FILTER (WHERE ...), next to the same calls without it, in a group
// and a window aggregate. Each filtered call must count only its rows.
func TestAggregateFilterThroughBinary(t *testing.T) {
	dir := t.TempDir()
	data := "a,PAID,1,10,2026-12-01 10:00:00\n" +
		"a,NEW,2,20,2026-12-01 11:00:00\n" +
		"a,PAID,1,30,2026-12-01 12:00:00\n" +
		"b,NEW,3,40,2026-12-01 13:00:00\n"
	if err := os.WriteFile(filepath.Join(dir, "orders.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	job := `CREATE TABLE s (k STRING, s STRING, uid INT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "orders.csv") + `', 'format' = 'csv');
CREATE TABLE g (k STRING, c BIGINT, f BIGINT, paid_sum INT, paid_users BIGINT, users BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'group');
CREATE TABLE w (ws TIMESTAMP(3), k STRING, c BIGINT, f BIGINT, paid_sum INT, paid_users BIGINT, users BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'window');
CREATE TABLE alone (f BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'alone');
BEGIN STATEMENT SET;
INSERT INTO g SELECT k, COUNT(*) AS c, COUNT(*) FILTER (WHERE s = 'PAID') AS f,
  SUM(amount) FILTER (WHERE s = 'PAID'), COUNT(DISTINCT uid) FILTER (WHERE s = 'PAID'), COUNT(DISTINCT uid)
FROM s GROUP BY k;
INSERT INTO w SELECT window_start, k, COUNT(*), COUNT(*) FILTER (WHERE s = 'PAID'),
  SUM(amount) FILTER (WHERE s = 'PAID'), COUNT(DISTINCT uid) FILTER (WHERE s = 'PAID'), COUNT(DISTINCT uid)
FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end, k;
INSERT INTO alone SELECT COUNT(*) FILTER (WHERE s = 'PAID') FROM s;
END;
`
	file := filepath.Join(dir, "filter.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "run", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	checks := []struct {
		identifier string
		want       []string
	}{
		{"group", []string{"[a, 3, 2, 40, 1, 2]", "[b, 1, 0, null, 0, 1]"}},
		{"window", []string{"[2026-12-01T00:00, a, 3, 2, 40, 1, 2]", "[2026-12-01T00:00, b, 1, 0, null, 0, 1]"}},
		{"alone", []string{"[2]"}},
	}
	for _, c := range checks {
		if got := finalState(t, r.stdout, c.identifier); !slices.Equal(got, c.want) {
			t.Errorf("%s: final rows %q, want %q\nstdout:\n%s", c.identifier, got, c.want, r.stdout)
		}
	}
}

// TestSelectDistinctThroughBinary: SELECT DISTINCT runs into a sink that takes updates, as
// Flink plans it, and an append-only sink refuses it with Flink's message.
func TestSelectDistinctThroughBinary(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte("a,1\nb,2\na,3\nb,4\nc,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ddl := `CREATE TABLE s (k STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "d.csv") + `', 'format' = 'csv');
CREATE TABLE p (k STRING) WITH ('connector' = 'print');
CREATE TABLE f (k STRING) WITH ('connector' = 'filesystem', 'path' = '` + filepath.Join(dir, "out") + `', 'format' = 'csv');
`
	file := filepath.Join(dir, "distinct.sql")
	if err := os.WriteFile(file, []byte(ddl+"INSERT INTO p SELECT DISTINCT k FROM s;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pipesql(t, "run", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got, want := finalState(t, r.stdout, ""), []string{"[a]", "[b]", "[c]"}; !slices.Equal(got, want) {
		t.Errorf("final rows %q, want %q", got, want)
	}
	if err := os.WriteFile(file, []byte(ddl+"INSERT INTO f SELECT DISTINCT k FROM s;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = pipesql(t, "run", "--set", "state.checkpoints.dir="+filepath.Join(dir, "ckpt"), file)
	if r.code != 2 || !strings.Contains(r.stderr, "doesn't support consuming update changes which is produced by node GroupAggregate(groupBy=[k], select=[k])") {
		t.Errorf("append-only sink: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
