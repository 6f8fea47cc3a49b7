package builtin

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/conntest"
	"github.com/pipesql/pipesql/types"
)

var fsSchema = types.Schema{
	{Name: "user_id", Type: types.TypeString},
	{Name: "app", Type: types.TypeString},
	{Name: "n", Type: types.TypeInt},
	{Name: "ts", Type: types.TimestampType(3)},
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fsSourceConfig(dir, format string, extra map[string]string, produce []connectors.ProducedColumn, restored []byte) connectors.SourceConfig {
	opts := map[string]string{"connector": "filesystem", "path": dir, "format": format}
	for k, v := range extra {
		opts[k] = v
	}
	if produce == nil {
		produce = produceAll(fsSchema)
	}
	return connectors.SourceConfig{
		TableInfo: connectors.TableInfo{Name: "events", Options: opts, Schema: fsSchema},
		Produce:   produce,
		Restored:  restored,
		Log:       &conntest.Logger{},
	}
}

// jsonDir writes two JSON files, plus files a reader must skip, and returns the directory.
func jsonDir(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.json"),
		`{"user_id":"u3","app":"a1","n":3,"ts":"2024-01-01 00:00:03"}`+"\n"+
			`{"user_id":"u4","app":"a2","n":"4","ts":"2024-01-01 00:00:04"}`+"\n")
	writeFile(t, filepath.Join(dir, "a.json"),
		`{"user_id":"u1","app":"a1","n":1,"ts":"2024-01-01 00:00:01","extra":true}`+"\r\n"+
			"\n"+
			`{"user_id":"u2","n":2,"ts":"2024-01-01 00:00:02"}`) // no trailing newline
	writeFile(t, filepath.Join(dir, "sub", "c.json"), `{"user_id":"u5","app":"a3","n":5,"ts":"2024-01-01 00:00:05"}`+"\n")
	writeFile(t, filepath.Join(dir, ".part-x.inprogress"), "not json\n")
	writeFile(t, filepath.Join(dir, "_SUCCESS"), "")
	writeFile(t, filepath.Join(dir, "_tmp", "d.json"), "not json\n")
	return dir
}

func TestFilesystemReadJSONDir(t *testing.T) {
	dir := jsonDir(t)
	produce := []connectors.ProducedColumn{
		{Name: "n", Type: types.TypeInt},
		{Name: "user_id", Type: types.TypeString},
		{Name: "file", Type: types.TypeString, MetadataKey: "file.name"},
		{Name: "size", Type: types.TypeBigInt, MetadataKey: "file.size"},
	}
	src, err := newFileSource(fsSourceConfig(dir, "json", nil, produce, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	splits := map[string]bool{}
	for {
		batches, err := src.Poll(context.Background(), time.Second)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			splits[b.Split] = true
			for _, r := range b.Rows {
				got = append(got, conntest.RowKey(r))
			}
		}
	}
	size := func(name string) string {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return itoa(st.Size())
	}
	want := []string{
		"INT:1|VARCHAR:u1|VARCHAR:a.json|BIGINT:" + size("a.json"),
		"INT:2|VARCHAR:u2|VARCHAR:a.json|BIGINT:" + size("a.json"),
		"INT:3|VARCHAR:u3|VARCHAR:b.json|BIGINT:" + size("b.json"),
		"INT:4|VARCHAR:u4|VARCHAR:b.json|BIGINT:" + size("b.json"),
		"INT:5|VARCHAR:u5|VARCHAR:c.json|BIGINT:" + size("sub/c.json"),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantSplits := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "sub", "c.json")}
	var gotSplits []string
	for s := range splits {
		gotSplits = append(gotSplits, s)
	}
	sort.Strings(gotSplits)
	if strings.Join(gotSplits, ",") != strings.Join(wantSplits, ",") {
		t.Errorf("splits %v, want %v", gotSplits, wantSplits)
	}
}

func itoa(n int64) string { return conntest.RowKey(types.Row{types.BigIntValue(n)})[len("BIGINT:"):] }

func TestFilesystemReadCSVFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.csv")
	writeFile(t, path, "u1,a1,1,2024-01-01 00:00:01\n\"u,2\",a2,2,2024-01-01 00:00:02\n# comment\nu3,,3,2024-01-01 00:00:03\n")
	produce := []connectors.ProducedColumn{{Name: "ts", Type: types.TimestampType(3)}, {Name: "user_id", Type: types.TypeString},
		{Name: "path", Type: types.TypeString, MetadataKey: "file.path"}}
	src, err := newFileSource(fsSourceConfig(path, "csv", map[string]string{"csv.allow-comments": "true"}, produce, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	rows := drain(t, src)
	var got []string
	for _, r := range rows {
		got = append(got, r[0].String()+" "+r[1].Str()+" "+filepath.Base(r[2].Str()))
	}
	want := "2024-01-01 00:00:01.000 u1 events.csv;2024-01-01 00:00:02.000 u,2 events.csv;2024-01-01 00:00:03.000 u3 events.csv"
	if strings.Join(got, ";") != want {
		t.Errorf("got %s\nwant %s", strings.Join(got, ";"), want)
	}
	if src.Skipped() != 1 {
		t.Errorf("skipped %d records, want the 1 comment", src.Skipped())
	}
}

func TestFilesystemConformance(t *testing.T) {
	dir := t.TempDir()
	// enough lines that a file spans several polls, so restores land mid-file
	for f, n := range map[string]int{"1.json": 2500, "2.json": 3, "3.json": 1100} {
		var b strings.Builder
		for i := range n {
			b.WriteString(`{"user_id":"` + f + "-" + itoa(int64(i)) + `","app":"x","n":` + itoa(int64(i)) + `,"ts":"2024-01-01 00:00:00"}` + "\n")
		}
		writeFile(t, filepath.Join(dir, f), b.String())
	}
	conntest.TestBoundedSource(t, func(restored []byte) (connectors.Source, error) {
		return newFileSource(fsSourceConfig(dir, "json", nil, nil, restored), newFakeClock())
	})
}

func TestFilesystemBadRecords(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.json")
	line1 := `{"user_id":"u1","n":1,"ts":"2024-01-01 00:00:01"}` + "\n"
	line2 := `{"user_id":"u2","n":2,"ts":"2024-01-01 00:00:02"}` + "\r\n"
	writeFile(t, path, line1+line2+
		`{"user_id":"u3","n":3,"ts":"abc"}`+"\n"+
		`{"user_id":"u4",`+"\n"+
		`{"user_id":"u5","n":5,"ts":"2024-01-01 00:00:05"}`+"\n")
	src, err := newFileSource(fsSourceConfig(dir, "json", nil, nil, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Poll(context.Background(), time.Second)
	want := `filesystem source events: ` + path + `:3: field "ts": cannot parse "abc" as TIMESTAMP(3) (expected 'yyyy-MM-dd HH:mm:ss.SSS'); record: {"user_id":"u3","n":3,"ts":"abc"}`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
	var re *RecordError
	if !errors.As(err, &re) || re.Line != 3 || re.Offset != int64(len(line1)+len(line2)) {
		t.Errorf("RecordError %+v", re)
	}

	log := &conntest.Logger{}
	cfg := fsSourceConfig(dir, "json", map[string]string{"json.ignore-parse-errors": "true"}, nil, nil)
	cfg.Log = log
	src, err = newFileSource(cfg, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	rows := drain(t, src)
	if len(rows) != 3 || rows[2][0].Str() != "u5" || src.Skipped() != 2 {
		t.Errorf("with ignore-parse-errors: %d rows, %d skipped", len(rows), src.Skipped())
	}
	if w := log.Warnings(); len(w) != 1 || !strings.Contains(w[0], "bad.json:3:") {
		t.Errorf("warnings %v, want one naming the first bad line", w)
	}
}

func TestFilesystemMonitor(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "1.json"), `{"user_id":"u1","n":1}`+"\n")
	clk := newFakeClock()
	src, err := newFileSource(fsSourceConfig(dir, "json", map[string]string{"source.monitor-interval": "10 s"}, nil, nil), clk)
	if err != nil {
		t.Fatal(err)
	}
	poll := func() []types.Row {
		t.Helper()
		batches, err := src.Poll(context.Background(), time.Second)
		if err != nil {
			t.Fatalf("monitoring source: %v", err)
		}
		var rows []types.Row
		for _, b := range batches {
			rows = append(rows, b.Rows...)
		}
		return rows
	}
	if rows := poll(); len(rows) != 1 {
		t.Fatalf("first poll: %d rows", len(rows))
	}
	for range 30 { // 30 s of clock time: three scans find nothing, and no EOF
		if rows := poll(); len(rows) != 0 {
			t.Fatalf("rows without a new file: %v", rows)
		}
	}
	writeFile(t, filepath.Join(dir, "2.json"), `{"user_id":"u2","n":2}`+"\n")
	// appending to a file already read does not make it read again
	writeFile(t, filepath.Join(dir, "1.json"), `{"user_id":"u1","n":1}`+"\n"+`{"user_id":"again","n":9}`+"\n")
	var found []types.Row
	for range 11 {
		found = append(found, poll()...)
	}
	if len(found) != 1 || found[0][0].Str() != "u2" {
		t.Errorf("after a new file: %v", found)
	}
}

func TestFilesystemMissingPath(t *testing.T) {
	_, err := newFileSource(fsSourceConfig(filepath.Join(t.TempDir(), "nope"), "json", nil, nil, nil), newFakeClock())
	if !errors.Is(err, ErrNoFiles) || !strings.Contains(err.Error(), "filesystem source events:") {
		t.Errorf("missing path: %v", err)
	}
	_, err = newFileSource(fsSourceConfig(t.TempDir(), "avro", nil, nil, nil), newFakeClock())
	if !errors.Is(err, connectors.ErrInvalidOption) {
		t.Errorf("unknown format: %v", err)
	}
}

func fsSinkConfig(dir, format string, extra map[string]string) connectors.SinkConfig {
	opts := map[string]string{"connector": "filesystem", "path": dir, "format": format}
	for k, v := range extra {
		opts[k] = v
	}
	return connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "out", Options: opts, Schema: fsSchema},
		Input:     fsSchema,
		Log:       &conntest.Logger{},
	}
}

func sinkRows(from, to int) connectors.ChangeBatch {
	var b connectors.ChangeBatch
	for i := from; i < to; i++ {
		b.Kinds = append(b.Kinds, connectors.Insert)
		b.Rows = append(b.Rows, types.Row{types.StringValue("u" + itoa(int64(i))), types.StringValue("app, \"quoted\""),
			types.IntValue(types.Int, int64(i)), types.TimestampValue(int64(i) * 1_000_500)})
	}
	return b
}

func visible(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !isHidden(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestFilesystemSinkRoundTrip(t *testing.T) {
	for _, format := range []string{"json", "csv"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			clk := newFakeClock()
			sink, err := newFileSink(fsSinkConfig(dir, format, nil), clk)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := sink.Write(ctx, sinkRows(0, 3)); err != nil {
				t.Fatal(err)
			}
			if v := visible(t, dir); len(v) != 0 {
				t.Fatalf("files visible before a flush: %v", v)
			}
			if err := sink.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			v := visible(t, dir)
			if len(v) != 1 || !strings.HasPrefix(v[0], "part-") || !strings.HasSuffix(v[0], "-0-0") {
				t.Fatalf("after a flush: %v, want one part-<uuid>-0-0", v)
			}
			if err := sink.Write(ctx, sinkRows(3, 5)); err != nil {
				t.Fatal(err)
			}
			if err := sink.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			if v := visible(t, dir); len(v) != 2 {
				t.Fatalf("after two flushes: %v", v)
			}
			src, err := newFileSource(fsSourceConfig(dir, format, nil, nil, nil), clk)
			if err != nil {
				t.Fatal(err)
			}
			got := drain(t, src)
			want := sinkRows(0, 5).Rows
			if len(got) != len(want) {
				t.Fatalf("read back %d rows, want %d", len(got), len(want))
			}
			for i := range want {
				if conntest.RowKey(got[i]) != conntest.RowKey(want[i]) {
					t.Errorf("row %d: read back %s, wrote %s", i, conntest.RowKey(got[i]), conntest.RowKey(want[i]))
				}
			}
		})
	}
}

func TestFilesystemSinkRolling(t *testing.T) {
	dir := t.TempDir()
	clk := newFakeClock()
	sink, err := newFileSink(fsSinkConfig(dir, "json", map[string]string{"sink.rolling-policy.file-size": "10b"}), clk)
	if err != nil {
		t.Fatal(err)
	}
	conntest.TestSink(t, sink, []connectors.ChangeBatch{sinkRows(0, 4), sinkRows(4, 5), sinkRows(5, 6)})
	// each row is over 10 bytes, so every row after the first of a part rolls a new one
	if v := visible(t, dir); len(v) != 6 {
		t.Errorf("%d part files, want 6: %v", len(v), v)
	}

	dir = t.TempDir()
	sink, _ = newFileSink(fsSinkConfig(dir, "json", map[string]string{"sink.rolling-policy.rollover-interval": "1 min"}), clk)
	ctx := context.Background()
	sink.Write(ctx, sinkRows(0, 2))
	clk.Advance(2 * time.Minute)
	sink.Write(ctx, sinkRows(2, 3))
	sink.Flush(ctx)
	if v := visible(t, dir); len(v) != 2 {
		t.Errorf("rollover-interval: %v, want 2 part files", v)
	}
	sink.Close()
}

func TestFilesystemSinkRefusesUpdates(t *testing.T) {
	cfg := fsSinkConfig(t.TempDir(), "json", nil)
	cfg.Updating = true
	_, err := newFileSink(cfg, newFakeClock())
	if !errors.Is(err, ErrUpdatingInput) || err.Error() != "filesystem sink out: doesn't support consuming update and delete changes" {
		t.Errorf("updating input: %v", err)
	}
	sink, err := newFileSink(fsSinkConfig(t.TempDir(), "json", nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	b := sinkRows(0, 1)
	b.Kinds[0] = connectors.Delete
	if err := sink.Write(context.Background(), b); !errors.Is(err, ErrUpdatingInput) {
		t.Errorf("a -D row: %v", err)
	}
	sink.Close()
	file := filepath.Join(t.TempDir(), "file.json")
	writeFile(t, file, "")
	if _, err := newFileSink(fsSinkConfig(file, "json", nil), newFakeClock()); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("path is a file: %v", err)
	}
}

func TestFilesystemSinkCloseWithoutFlushPublishesNothing(t *testing.T) {
	dir := t.TempDir()
	sink, _ := newFileSink(fsSinkConfig(dir, "json", nil), newFakeClock())
	if err := sink.Write(context.Background(), sinkRows(0, 2)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if v := visible(t, dir); len(v) != 0 {
		t.Errorf("a failed job's rows became visible: %v", v)
	}
}
