package builtin

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/conntest"
	"github.com/pipesql/pipesql/types"
)

// DuckDB is the independent parquet implementation: it writes files pipesql reads and
// reads the files pipesql writes, each compared with what the other side holds.

func duck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// duckRows runs a query and prints each row's values with fmt, sorted.
func duckRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			if tm, ok := v.(time.Time); ok {
				v = tm.UTC().Format("2006-01-02 15:04:05.000000")
			}
			parts = append(parts, fmt.Sprint(v))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// pipesqlRows prints rows read by pipesql the way duckRows prints DuckDB's.
func pipesqlRows(rows []types.Row) []string {
	var out []string
	for _, r := range rows {
		var parts []string
		for _, v := range r {
			switch {
			case v.IsNull():
				parts = append(parts, "<nil>")
			case v.Kind() == types.Timestamp:
				parts = append(parts, v.Time().Format("2006-01-02 15:04:05.000000"))
			case v.Kind() == types.Decimal:
				parts = append(parts, v.Rat().FloatString(2))
			case v.Kind() == types.Double:
				parts = append(parts, fmt.Sprint(v.Float()))
			case v.Kind() == types.Boolean:
				parts = append(parts, fmt.Sprint(v.Bool()))
			default:
				parts = append(parts, v.String())
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	sort.Strings(out)
	return out
}

var pqSchema = types.Schema{
	{Name: "id", Type: types.TypeBigInt},
	{Name: "name", Type: types.TypeString},
	{Name: "amount", Type: types.Type{Kind: types.Decimal, Prec: 10, Scale: 2}},
	{Name: "day", Type: types.TypeDate},
	{Name: "ts", Type: types.TimestampType(6)},
	{Name: "ok", Type: types.TypeBoolean},
	{Name: "score", Type: types.TypeDouble},
	{Name: "dt", Type: types.TypeString},
}

func pqSourceConfig(dir string, schema types.Schema, keys []string, extra map[string]string) connectors.SourceConfig {
	opts := map[string]string{"connector": "filesystem", "path": dir, "format": "parquet"}
	for k, v := range extra {
		opts[k] = v
	}
	var produce []connectors.ProducedColumn
	for _, c := range schema {
		produce = append(produce, connectors.ProducedColumn{Name: c.Name, Type: c.Type})
	}
	return connectors.SourceConfig{
		TableInfo: connectors.TableInfo{Name: "pq", Options: opts, Schema: schema, PartitionKeys: keys},
		Produce:   produce, Log: &conntest.Logger{},
	}
}

// TestParquetReadsDuckDBFiles: DuckDB writes a hive-partitioned parquet table
// (dt=.../), pipesql reads it, partition column from the path, and both agree.
func TestParquetReadsDuckDBFiles(t *testing.T) {
	db := duck(t)
	dir := filepath.Join(t.TempDir(), "t")
	gen := `SELECT i::BIGINT AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'n' || i END AS name,
		(i * 1.25)::DECIMAL(10,2) AS amount, DATE '2024-05-01' + (i % 3)::INT AS day,
		TIMESTAMP '2024-05-01 10:00:00' + INTERVAL (i * 1500) MILLISECOND AS ts, i % 2 = 0 AS ok,
		i / 3.0 AS score, '2024-05-0' || (1 + i % 3) AS dt FROM range(2000) r(i)`
	if _, err := db.Exec(fmt.Sprintf(`COPY (%s) TO '%s' (FORMAT parquet, PARTITION_BY (dt))`, gen, dir)); err != nil {
		t.Fatal(err)
	}
	src, err := newFileSource(pqSourceConfig(dir, pqSchema, []string{"dt"}, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	got := pipesqlRows(drain(t, src))
	want := duckRows(t, db, "SELECT id, name, amount::VARCHAR, day::VARCHAR, ts, ok, score, dt FROM ("+gen+")")
	if !slices.Equal(got, want) {
		t.Fatalf("pipesql read %d rows, DuckDB has %d; first: %q vs %q", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
	// a projection in another order than the file's, with the partition key first and a
	// metadata column
	cfg := pqSourceConfig(dir, pqSchema, []string{"dt"}, nil)
	cfg.Produce = []connectors.ProducedColumn{{Name: "dt", Type: types.TypeString}, {Name: "score", Type: types.TypeDouble},
		{Name: "id", Type: types.TypeBigInt}, {Name: "file", Type: types.TypeString, MetadataKey: "file.name"}}
	src, err = newFileSource(cfg, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	var proj []types.Row
	for _, r := range drain(t, src) {
		if !strings.HasSuffix(r[3].Str(), ".parquet") {
			t.Fatalf("file.name %s", r[3])
		}
		proj = append(proj, r[:3])
	}
	if got, want := pipesqlRows(proj), duckRows(t, db, "SELECT dt, score, id FROM ("+gen+")"); !slices.Equal(got, want) {
		t.Fatalf("projection: %q vs %q", got[:min(3, len(got))], want[:min(3, len(want))])
	}
}

// TestParquetWrittenPartitionsReadByDuckDB: pipesql's partitioned parquet sink, in
// checkpoints, read back by DuckDB (hive partitioning) and by pipesql.
func TestParquetWrittenPartitionsReadByDuckDB(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	cfg := connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: pqSchema, PartitionKeys: []string{"dt"},
			Options: map[string]string{"connector": "filesystem", "path": dir, "format": "parquet", "parquet.utc-timezone": "true", "parquet.compression": "SNAPPY"}},
		Input: pqSchema, Log: &conntest.Logger{},
	}
	s, err := newFileSink(cfg, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	var all []types.Row
	for cp := uint64(1); cp <= 3; cp++ {
		var b connectors.ChangeBatch
		for i := 0; i < 700; i++ {
			n := int64(cp)*1000 + int64(i)
			row := types.Row{types.BigIntValue(n), types.StringValue(fmt.Sprintf("n%d", n)),
				types.DecimalValue(big.NewRat(n*5, 4)), types.DateValue(19800 + n%5),
				types.TimestampValue(1714557600_000000 + n*1_000_123), types.BoolValue(n%3 == 0), types.DoubleValue(float64(n) / 7),
				types.StringValue(fmt.Sprintf("2024-05-0%d", 1+n%3))}
			if i%50 == 0 {
				row[1] = types.Value{}
			}
			b.Rows = append(b.Rows, row)
			b.Kinds = append(b.Kinds, connectors.Insert)
		}
		all = append(all, b.Rows...)
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PrepareCommit(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckpointComplete(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	want := pipesqlRows(all)
	got := duckRows(t, duck(t), fmt.Sprintf(`SELECT id, name, amount::VARCHAR, day::VARCHAR, ts, ok, score, dt::VARCHAR FROM read_parquet('%s/*/part-*', hive_partitioning = true)`, dir))
	if !slices.Equal(got, want) {
		t.Fatalf("DuckDB read %d rows, pipesql wrote %d; first: %q vs %q", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
	src, err := newFileSource(pqSourceConfig(dir, pqSchema, []string{"dt"}, map[string]string{"parquet.utc-timezone": "true"}), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	if back := pipesqlRows(drain(t, src)); !slices.Equal(back, want) {
		t.Fatalf("pipesql read back %d rows, wrote %d", len(back), len(want))
	}
}

// TestPartitionCommitFollowsWatermark: with the partition-time trigger, an hourly
// partition gets its _SUCCESS file only at the completion of a checkpoint whose
// barrier saw a watermark past the partition's end (delay 1 h); a sink restored from a
// checkpoint commits what that checkpoint allows and leaves no duplicate rows.
func TestPartitionCommitFollowsWatermark(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "dt", Type: types.TypeString}, {Name: "hr", Type: types.TypeString}}
	open := func(restored []byte) *fileSink {
		cfg := connectors.SinkConfig{
			TableInfo: connectors.TableInfo{Name: "out", Schema: schema, PartitionKeys: []string{"dt", "hr"}, Options: map[string]string{
				"connector": "filesystem", "path": dir, "format": "parquet",
				"sink.partition-commit.trigger":                "partition-time",
				"sink.partition-commit.delay":                  "1 h",
				"sink.partition-commit.policy.kind":            "success-file",
				"partition.time-extractor.timestamp-pattern":   "$dt $hr:00:00",
				"partition.time-extractor.timestamp-formatter": "yyyy-MM-dd HH:mm:ss",
			}},
			Input: schema, Log: &conntest.Logger{}, Restored: restored,
		}
		s, err := newFileSink(cfg, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hour := func(h int) int64 { return time.Date(2024, 5, 1, h, 0, 0, 0, time.UTC).UnixMicro() }
	rows := func(from, to int, hr string) connectors.ChangeBatch {
		var b connectors.ChangeBatch
		for i := from; i < to; i++ {
			b.Rows = append(b.Rows, types.Row{types.BigIntValue(int64(i)), types.StringValue("2024-05-01"), types.StringValue(hr)})
			b.Kinds = append(b.Kinds, connectors.Insert)
		}
		return b
	}
	success := func(hr string) bool {
		_, err := os.Stat(filepath.Join(dir, "dt=2024-05-01", "hr="+hr, "_SUCCESS"))
		return err == nil
	}
	s := open(nil)
	s.Write(ctx, rows(0, 10, "10"))
	s.Watermark(ctx, hour(10)+30*60_000_000) // 10:30: hour 10 not done
	s.PrepareCommit(ctx, 1)
	s.CheckpointComplete(ctx, 1)
	if success("10") {
		t.Fatal("hour 10 committed at watermark 10:30")
	}
	s.Write(ctx, rows(10, 20, "11"))
	s.Watermark(ctx, hour(11)+1) // just past 11:00 = hour 10 + delay
	st2, _ := s.PrepareCommit(ctx, 2)
	s.Write(ctx, rows(20, 25, "11")) // after the barrier, before the completion
	s.Watermark(ctx, hour(13))
	if success("10") {
		t.Fatal("hour 10 committed before its checkpoint completed")
	}
	s.CheckpointComplete(ctx, 2)
	if !success("10") || success("11") {
		t.Fatalf("after checkpoint 2 (watermark 11:00): hour 10 committed %v (want true), hour 11 %v (want false)", success("10"), success("11"))
	}
	// the process dies here; restored from checkpoint 2, the rows after it are gone
	s.Close()
	r := open(st2)
	r.Write(ctx, rows(20, 25, "11"))
	r.Watermark(ctx, hour(12)+1)
	r.PrepareCommit(ctx, 3)
	r.CheckpointComplete(ctx, 3)
	r.Close()
	if !success("11") {
		t.Fatal("hour 11 not committed after the watermark passed 12:00")
	}
	db := duck(t)
	got := duckRows(t, db, fmt.Sprintf(`SELECT id, count(*) FROM read_parquet('%s/*/*/part-*') GROUP BY id HAVING count(*) > 1`, dir))
	if len(got) > 0 {
		t.Fatalf("duplicated rows: %v", got)
	}
	if n := duckRows(t, db, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/*/*/part-*')`, dir)); !slices.Equal(n, []string{"25"}) {
		t.Fatalf("rows: %v, want 25", n)
	}
}

// TestPartitionOptionsRefused: what pipesql cannot do is refused with the reason.
func TestPartitionOptionsRefused(t *testing.T) {
	for key, val := range map[string]string{
		"sink.partition-commit.policy.kind": "metastore,success-file",
		"partition.time-extractor.kind":     "custom",
		"auto-compaction":                   "true",
		"parquet.compression":               "LZO",
	} {
		opts := map[string]string{"connector": "filesystem", "path": t.TempDir(), "format": "parquet", key: val}
		err := filesystemFactory.Validate(connectors.TableInfo{Name: "t", Options: opts, Schema: pqSchema, PartitionKeys: []string{"dt"}})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s = %s: %v, want an error naming the option", key, val, err)
		}
	}
}

// TestParquetNestedAndTemporalTypes: ARRAY, MAP, ROW, TIME, TIMESTAMP_LTZ, TINYINT,
// BYTES and INT64 timestamps, written by DuckDB and read by pipesql, then written by
// pipesql and read by DuckDB.
func TestParquetNestedAndTemporalTypes(t *testing.T) {
	db := duck(t)
	dir := t.TempDir()
	gen := `SELECT i::BIGINT AS id, [i, i + 1, NULL]::INT[] AS arr, MAP {'a': i, 'b': NULL}::MAP(VARCHAR, BIGINT) AS m,
		{'x': i::INT, 'y': 'r' || i} AS r, TIME '10:00:00' + INTERVAL (i) SECOND AS tm,
		TIMESTAMPTZ '2024-05-01 10:00:00+00' + INTERVAL (i * 10) MILLISECOND AS ltz, (i % 100)::TINYINT AS tiny,
		('b' || i)::BLOB AS bin FROM range(300) r(i)`
	in := filepath.Join(dir, "in", "f.parquet")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if _, err := db.Exec(fmt.Sprintf(`SET TimeZone = 'UTC'; COPY (%s) TO '%s' (FORMAT parquet)`, gen, in)); err != nil {
		t.Fatal(err)
	}
	it, bigint, str := types.TypeInt, types.TypeBigInt, types.TypeString
	schema := types.Schema{
		{Name: "id", Type: types.TypeBigInt},
		{Name: "arr", Type: types.Type{Kind: types.Array, Elem: &it}},
		{Name: "m", Type: types.Type{Kind: types.Map, Key: &str, Elem: &bigint}},
		{Name: "r", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "x", Type: it}, {Name: "y", Type: str}}}},
		{Name: "tm", Type: types.Type{Kind: types.Time}},
		{Name: "ltz", Type: types.TimestampLTZType(3)},
		{Name: "tiny", Type: types.Type{Kind: types.TinyInt}},
		{Name: "bin", Type: types.Type{Kind: types.Bytes}},
	}
	src, err := newFileSource(pqSourceConfig(filepath.Dir(in), schema, nil, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	rows := drain(t, src)
	if len(rows) != 300 {
		t.Fatalf("read %d rows, want 300", len(rows))
	}
	r7 := rows[7]
	for i, want := range []string{"7", "[7, 8, NULL]", "{a=7, b=NULL}", "(7, r7)", "10:00:07", "2024-05-01 10:00:00.070", "7"} {
		if got := r7[i].String(); got != want {
			t.Errorf("row 7 column %s: %s, want %s", schema[i].Name, got, want)
		}
	}
	if r7[7].Str() != "b7" {
		t.Errorf("row 7 bin: %q", r7[7].Str())
	}

	// pipesql writes them back, INT64 timestamps in millis; DuckDB reads them
	out := filepath.Join(dir, "out")
	s, err := newFileSink(connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: schema, Options: map[string]string{"connector": "filesystem", "path": out, "format": "parquet",
			"parquet.write.int64.timestamp": "true", "parquet.timestamp.time.unit": "millis"}},
		Input: schema, Log: &conntest.Logger{},
	}, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	var b connectors.ChangeBatch
	b.Rows = rows
	b.Kinds = make([]connectors.RowKind, len(rows))
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	q := `SELECT id, arr::VARCHAR, m::VARCHAR, r::VARCHAR, tm::VARCHAR, epoch_ms(ltz), tiny, bin::VARCHAR FROM `
	want := duckRows(t, db, q+"("+gen+")")
	got := duckRows(t, db, q+fmt.Sprintf("read_parquet('%s/part-*')", out))
	if !slices.Equal(got, want) {
		t.Fatalf("DuckDB reads pipesql's file differently from its own: %q vs %q", got[:2], want[:2])
	}
}

// TestProcessTimeCommitAndInactivity: the process-time trigger commits a partition once
// the clock passes its creation plus the delay, at a checkpoint's completion; a part
// with no rows for inactivity-interval rolls at the next check-interval; without
// checkpoints, the final Flush commits every partition.
func TestProcessTimeCommitAndInactivity(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "dt", Type: types.TypeString}}
	clk := newFakeClock()
	s, err := newFileSink(connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: schema, PartitionKeys: []string{"dt"}, Options: map[string]string{
			"connector": "filesystem", "path": dir, "format": "json",
			"sink.partition-commit.delay":             "10 min",
			"sink.partition-commit.policy.kind":       "success-file",
			"sink.partition-commit.success-file.name": "_DONE",
			"sink.rolling-policy.inactivity-interval": "2 min",
			"sink.rolling-policy.check-interval":      "1 min",
		}},
		Input: schema, Log: &conntest.Logger{},
	}, clk)
	if err != nil {
		t.Fatal(err)
	}
	row := func(id int64, dt string) connectors.ChangeBatch {
		return connectors.ChangeBatch{Kinds: []connectors.RowKind{connectors.Insert}, Rows: []types.Row{{types.BigIntValue(id), types.StringValue(dt)}}}
	}
	done := func(dt string) bool {
		_, err := os.Stat(filepath.Join(dir, "dt="+dt, "_DONE"))
		return err == nil
	}
	parts := func(dt string) int {
		entries, _ := os.ReadDir(filepath.Join(dir, "dt="+dt))
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".part-") || strings.HasPrefix(e.Name(), "part-") {
				n++
			}
		}
		return n
	}
	s.Write(ctx, row(1, "a"))
	clk.Advance(3 * time.Minute)
	s.Write(ctx, row(2, "b")) // the check runs: part of a has been idle 3 min
	s.Write(ctx, row(3, "a")) // a new part for a
	if parts("a") != 2 {
		t.Fatalf("partition a has %d parts, want 2 (the idle one rolled)", parts("a"))
	}
	s.PrepareCommit(ctx, 1)
	s.CheckpointComplete(ctx, 1)
	if done("a") {
		t.Fatal("a committed 3 minutes after its creation with a 10 min delay")
	}
	clk.Advance(8 * time.Minute) // a: 11 min old; b: 8 min
	s.PrepareCommit(ctx, 2)
	s.CheckpointComplete(ctx, 2)
	if !done("a") || done("b") {
		t.Fatalf("after 11 min: a committed %v (want true), b %v (want false)", done("a"), done("b"))
	}
	s.Close()

	// without checkpoints, the end commits everything
	dir2 := filepath.Join(t.TempDir(), "out")
	s2, err := newFileSink(connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: schema, PartitionKeys: []string{"dt"}, Options: map[string]string{
			"connector": "filesystem", "path": dir2, "format": "csv", "sink.partition-commit.policy.kind": "success-file",
			"sink.partition-commit.trigger": "partition-time"}},
		Input: schema, Log: &conntest.Logger{},
	}, clk)
	if err != nil {
		t.Fatal(err)
	}
	s2.Write(ctx, row(1, "2024-05-01"))
	s2.Write(ctx, connectors.ChangeBatch{Kinds: []connectors.RowKind{connectors.Insert}, Rows: []types.Row{{types.BigIntValue(2), types.Value{}}}})
	s2.Watermark(ctx, 1<<63-1)
	if err := s2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	for _, p := range []string{"dt=2024-05-01", "dt=__DEFAULT_PARTITION__"} {
		if _, err := os.Stat(filepath.Join(dir2, p, "_SUCCESS")); err != nil {
			t.Errorf("%s not committed at the end: %v", p, err)
		}
		if _, err := os.Stat(filepath.Join(dir2, p)); err != nil {
			t.Errorf("partition %s missing: %v", p, err)
		}
	}
}

// TestParquetSourceConformance: restores land in the middle of parquet files (several
// row groups, several polls each) and of partitions, and resume exactly there.
func TestParquetSourceConformance(t *testing.T) {
	db := duck(t)
	dir := filepath.Join(t.TempDir(), "t")
	if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT i::BIGINT AS id, 'n' || i AS name, (i %% 3)::VARCHAR AS dt FROM range(9000) r(i))
		TO '%s' (FORMAT parquet, PARTITION_BY (dt), ROW_GROUP_SIZE 1000)`, dir)); err != nil {
		t.Fatal(err)
	}
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "name", Type: types.TypeString}, {Name: "dt", Type: types.TypeInt}}
	conntest.TestBoundedSource(t, func(restored []byte) (connectors.Source, error) {
		cfg := pqSourceConfig(dir, schema, []string{"dt"}, nil)
		cfg.Restored = restored
		return newFileSource(cfg, newFakeClock())
	})
}

// TestParquetRowGroups: parquet.block.size cuts row groups, which DuckDB counts.
func TestParquetRowGroups(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "s", Type: types.TypeString}}
	s, err := newFileSink(connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: schema, Options: map[string]string{"connector": "filesystem", "path": dir, "format": "parquet",
			"parquet.block.size": "65536", "parquet.enable.dictionary": "false"}},
		Input: schema, Log: &conntest.Logger{},
	}, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	var b connectors.ChangeBatch
	for i := range 50_000 {
		b.Rows = append(b.Rows, types.Row{types.BigIntValue(int64(i)), types.StringValue(fmt.Sprintf("value-%08d", i))})
		b.Kinds = append(b.Kinds, connectors.Insert)
	}
	s.Write(context.Background(), b)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := duck(t)
	groups := duckRows(t, db, fmt.Sprintf(`SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s/part-*')`, dir))
	rows := duckRows(t, db, fmt.Sprintf(`SELECT count(*), sum(id) FROM read_parquet('%s/part-*')`, dir))
	if len(groups) != 1 || groups[0] == "1" || !slices.Equal(rows, []string{"50000|1249975000"}) {
		t.Fatalf("row groups %v (want several), rows %v", groups, rows)
	}
}

// TestParquetRollsBySize: sink.rolling-policy.file-size closes parquet parts by their
// estimated size; every part is a complete file.
func TestParquetRollsBySize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	schema := types.Schema{{Name: "id", Type: types.TypeBigInt}, {Name: "s", Type: types.TypeString}}
	s, err := newFileSink(connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Schema: schema, Options: map[string]string{"connector": "filesystem", "path": dir, "format": "parquet",
			"sink.rolling-policy.file-size": "200kb"}},
		Input: schema, Log: &conntest.Logger{},
	}, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		var b connectors.ChangeBatch
		for j := range 1000 {
			n := int64(i*1000 + j)
			b.Rows = append(b.Rows, types.Row{types.BigIntValue(n), types.StringValue(fmt.Sprintf("value-%08d", n))})
			b.Kinds = append(b.Kinds, connectors.Insert)
		}
		if err := s.Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	parts := visible(t, dir)
	rows := duckRows(t, duck(t), fmt.Sprintf(`SELECT count(*), count(DISTINCT id) FROM read_parquet('%s/part-*')`, dir))
	if len(parts) < 3 || !slices.Equal(rows, []string{"40000|40000"}) {
		t.Fatalf("%d parts (want several), rows %v", len(parts), rows)
	}
}
