package jdbc

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/pgtest"
	"github.com/pipesql/pipesql/types"
)

func sourceConfig(pg *pgtest.Server, table string, schema types.Schema, extra map[string]string) connectors.SourceConfig {
	opts := map[string]string{"connector": "jdbc", "url": pg.JDBCURL("postgres"), "table-name": table, "username": "postgres"}
	for k, v := range extra {
		opts[k] = v
	}
	var produce []connectors.ProducedColumn
	for _, c := range schema {
		produce = append(produce, connectors.ProducedColumn{Name: c.Name, Type: c.Type})
	}
	return connectors.SourceConfig{TableInfo: connectors.TableInfo{Name: "t_" + table, Options: opts, Schema: schema},
		Produce: produce, Log: &testLog{}}
}

// drain polls src until io.EOF, or until stopAfter rows when stopAfter > 0; it returns
// the rows as text.
func drain(t *testing.T, src connectors.Source, stopAfter int) []string {
	t.Helper()
	ctx := ctxT(t)
	var out []string
	for {
		bs, err := src.Poll(ctx, 100*time.Millisecond)
		for _, b := range bs {
			for _, r := range b.Rows {
				out = append(out, fmt.Sprint(r))
			}
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if stopAfter > 0 && len(out) >= stopAfter {
			return out
		}
	}
}

// TestScanPartitioned reads a table of 10,000 rows (with duplicate rows and NULLs) in
// 7 partitions of a few fetches each, stops after about half, restores from the
// snapshot, reads the rest, and compares everything with the table.
func TestScanPartitioned(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE items (id int, name text, price numeric(8,2), at timestamp);
		INSERT INTO items SELECT i % 5000, CASE WHEN i % 7 = 0 THEN NULL ELSE 'n' || (i % 13) END, (i % 100) / 4.0,
			timestamp '2026-12-01 00:00:00' + i * interval '1 second' * (i % 3) FROM generate_series(0, 9999) i`)
	schema := types.Schema{col("id", types.TypeInt), col("name", types.TypeString),
		col("price", types.Type{Kind: types.Decimal, Prec: 8, Scale: 2}), col("at", types.TimestampType(6))}
	extra := map[string]string{"scan.partition.column": "id", "scan.partition.num": "7",
		"scan.partition.lower-bound": "0", "scan.partition.upper-bound": "4999", "scan.fetch-size": "300"}
	cfg := sourceConfig(pg, "items", schema, extra)
	ctx := ctxT(t)
	src, err := NewSource(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Splits(); !slices.Equal(got, []string{"items[0..714]"}) {
		t.Fatalf("first split %v", got)
	}
	first := drain(t, src, 5000)
	snap, _ := src.Snapshot()
	src.Close()
	cfg.Restored = snap
	src, err = NewSource(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := append(first, drain(t, src, 0)...)
	sort.Strings(got)
	var want []string
	for _, line := range pg.Query(t, `SELECT id, coalesce(name, 'NULL'), price::text, to_char(at, 'YYYY-MM-DD HH24:MI:SS.MS') FROM items`) {
		f := strings.Split(line, "|")
		want = append(want, fmt.Sprintf("[%s %s %s %s]", f[0], f[1], strings.TrimRight(strings.TrimRight(f[2], "0"), "."), f[3]))
	}
	sort.Strings(want)
	if len(got) != len(want) || !slices.Equal(got, want) {
		t.Fatalf("read %d rows, the table has %d; first differences: %v", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " vs " + b[i]
		}
	}
	return "lengths"
}

func TestBetweenRanges(t *testing.T) {
	got := fmt.Sprint(betweenRanges(0, 9, 3)) + fmt.Sprint(betweenRanges(5, 6, 4)) + fmt.Sprint(betweenRanges(-3, 3, 1))
	if want := "[[0 3] [4 6] [7 9]][[5 5] [6 6]][[-3 3]]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestScanOptionErrors(t *testing.T) {
	schema := types.Schema{col("id", types.TypeInt), col("name", types.TypeString)}
	for _, c := range []struct {
		extra map[string]string
		want  string
	}{
		{map[string]string{"scan.partition.column": "id"}, "a partitioned scan needs all of"},
		{map[string]string{"scan.partition.column": "name", "scan.partition.num": "2", "scan.partition.lower-bound": "0", "scan.partition.upper-bound": "9"}, "partitions by an integer column"},
		{map[string]string{"scan.partition.column": "id", "scan.partition.num": "2", "scan.partition.lower-bound": "9", "scan.partition.upper-bound": "0"}, "is above"},
	} {
		info := connectors.TableInfo{Name: "t", Options: c.extra, Schema: schema}
		if _, err := parseScan(info); !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.extra, err, c.want)
		}
	}
}
