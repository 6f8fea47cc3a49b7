package shell

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	_ "github.com/pipesql/pipesql/connectors/formats" // the connectors the tests' tables use, as the binary wires them
	_ "github.com/pipesql/pipesql/connectors/kafka"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

func TestHistoryLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SHOW TABLES;\n", "SHOW TABLES;"},
		{"SELECT a,\n       b\nFROM t;", "SELECT a, b FROM t;"},
		{"SELECT a -- the a\nFROM t;", "SELECT a /* the a */ FROM t;"},
		{"SELECT a -- ends */ here\nFROM t;", "SELECT a /* ends * / here */ FROM t;"},
		{"SELECT '--not a comment',\n  `x  -- y`\nFROM t;", "SELECT '--not a comment', `x  -- y` FROM t;"},
		{"SELECT 'it''s  two  spaces'\n;", "SELECT 'it''s  two  spaces' ;"},
		{"SELECT /* a\n  block */ 1;", "SELECT /* a   block */ 1;"},
		{"SELECT 'a\nb';", "SELECT 'a b';"},
		{"SELECT 1; -- trailing", "SELECT 1; /* trailing */"},
	} {
		got := HistoryLine(tc.in)
		if got != tc.want {
			t.Errorf("HistoryLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(got, "\r\n") {
			t.Errorf("HistoryLine(%q) = %q holds a line break", tc.in, got)
		}
	}
}

// A statement and its history line parse to the same statement (comments aside).
func TestHistoryLineMeansTheSame(t *testing.T) {
	src := "CREATE TABLE t ( -- the table\n  a INT, /* one\n two */ b STRING\n) WITH (\n  'connector' = 'datagen' -- gen\n);\n"
	want, err := parser.ParseScript("", src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parser.ParseScript("", HistoryLine(src))
	if err != nil {
		t.Fatalf("the history line does not parse: %v", err)
	}
	if parser.Format(got[0]) != parser.Format(want[0]) {
		t.Errorf("history line means\n%s\nnot\n%s", parser.Format(got[0]), parser.Format(want[0]))
	}
}

func TestScanSQLEnds(t *testing.T) {
	for _, tc := range []struct {
		src  string
		end  scanEnd
		open string
		last string
	}{
		{"SELECT a FROM t", endCode, "", "t"},
		{"SELECT 'ab", endString, "ab", "SELECT"},
		{"SELECT 'it''s", endString, "it's", "SELECT"},
		{"SELECT 'done' ", endCode, "", "done"},
		{"SELECT `col", endQuotedIdent, "col", "SELECT"},
		{"SELECT 1 -- note", endComment, "", "1"},
		{"SELECT 1 -- note\n, 2", endCode, "", "2"},
		{"SELECT /* open", endComment, "", "SELECT"},
	} {
		toks, end, open := scanSQL(tc.src)
		last := ""
		if len(toks) > 0 {
			last = toks[len(toks)-1].text
		}
		if end != tc.end || open != tc.open || last != tc.last {
			t.Errorf("scanSQL(%q) ends %d in %q after %q, want %d in %q after %q", tc.src, end, open, last, tc.end, tc.open, tc.last)
		}
	}
}

// testSession returns a session with the tables of the statements.
func testSession(t *testing.T, script string) *planner.Session {
	t.Helper()
	s := planner.NewSession()
	stmts, err := parser.ParseScript("", script)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestCompletion(t *testing.T) {
	s := testSession(t, `
CREATE TABLE clicks (app_id INT, user_num INT, user_agent STRING) WITH ('connector' = 'datagen');
CREATE TABLE apps (app_id INT, app_name STRING) WITH ('connector' = 'datagen');
CREATE VIEW click_view AS SELECT app_id FROM clicks;
`)
	pending := ""
	c := newCompleter(s.Catalog, func() string { return pending })
	for _, tc := range []struct {
		pending, before, after string
		word                   string
		want                   []string // all candidates, or (when it ends in "...") some
	}{
		{"", "SEL", "", "SEL", []string{"SELECT"}},
		{"", "sel", "", "sel", []string{"select"}},
		{"", "SELECT * FROM cl", "", "cl", []string{"click_view", "clicks"}},
		{"", "SELECT * FROM ", "", "", []string{"apps", "click_view", "clicks"}},
		{"", "SELECT user_", "FROM clicks", "user_", []string{"user_agent", "user_num"}},
		{"", "SELECT app_", "FROM apps", "app_", []string{"app_id", "app_name"}},
		{"SELECT c.app_id\n", "FROM clicks c WHERE c.us", "", "us", []string{"user_agent", "user_num"}},
		{"", "SELECT apps.app_n", "", "app_n", []string{"app_name"}},
		{"", "DESCRIBE cli", "", "cli", []string{"click_view", "clicks"}},
		{"", "SELECT DATE_F", "", "DATE_F", []string{"DATE_FORMAT"}},
		{"", "SELECT 'SEL", "", "SEL", nil},
		{"", "SELECT 1 -- SEL", "", "", nil},
		{"CREATE TABLE t (a INT, b STRING) WITH (\n", "  'conn", "", "conn", []string{"connector"}},
		{"CREATE TABLE t (a INT, b STRING) WITH (\n", "  'connector' = 'da", "", "da", []string{"datagen"}},
		{"CREATE TABLE t (a INT, b STRING) WITH ('connector' = 'datagen',\n", "'fields.a.", "", "fields.a.", []string{"fields.a.end", "fields.a.kind", "..."}},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.a.kind' = '", "", "", "", []string{"random", "sequence"}},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'kafka', 'format' = 'js", "", "", "js", []string{"json"}},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'kafka', 'format' = 'json', 'json.ign", "", "", "json.ign", []string{"json.ignore-parse-errors"}},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'kafka', 'prop", "", "", "prop", []string{"properties.", "properties.bootstrap.servers", "properties.group.id"}},
	} {
		pending = tc.pending
		word, cands, _ := c.complete(pending+tc.before, tc.after)
		some := len(tc.want) > 0 && tc.want[len(tc.want)-1] == "..."
		ok := word == tc.word
		if some {
			for _, w := range tc.want[:len(tc.want)-1] {
				ok = ok && containsString(cands, w)
			}
		} else {
			ok = ok && reflect.DeepEqual(cands, tc.want)
		}
		if !ok {
			t.Errorf("completing %q|%q: word %q, candidates %q; want %q, %q", tc.pending+tc.before, tc.after, word, cands, tc.word, tc.want)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Do gives readline what each candidate adds after the cursor; a sole candidate gets its
// closer (a space after a word, the rest of an option after a key).
func TestCompletionDo(t *testing.T) {
	s := testSession(t, "CREATE TABLE clicks (a INT) WITH ('connector' = 'datagen');")
	c := newCompleter(s.Catalog, func() string { return "" })
	for _, tc := range []struct {
		line     string
		pos      int
		want     []string
		replaced int
	}{
		{"SHOW TAB", 8, []string{"LE", "LES"}, 3},
		{"SHOW FUNC", 9, []string{"TIONS "}, 4},
		{"DESCRIBE cl;", 11, []string{"icks "}, 2},
		{"CREATE TABLE t (a INT) WITH ('conn", 34, []string{"ector' = '"}, 4},
	} {
		got, n := c.Do([]rune(tc.line), tc.pos)
		var gs []string
		for _, g := range got {
			gs = append(gs, string(g))
		}
		if !reflect.DeepEqual(gs, tc.want) || n != tc.replaced {
			t.Errorf("Do(%q, %d) = %q, %d; want %q, %d", tc.line, tc.pos, gs, n, tc.want, tc.replaced)
		}
	}
}

func row(vals ...any) types.Row {
	r := make(types.Row, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			r[i] = types.StringValue(x)
		case int:
			r[i] = types.BigIntValue(int64(x))
		case nil:
		}
	}
	return r
}

func TestMaterializedKeepsPlaces(t *testing.T) {
	m := newMaterialized(0)
	steps := []struct {
		kind connectors.RowKind
		row  types.Row
		want string
	}{
		{connectors.Insert, row("app-1", 1), "app-1 1|"},
		{connectors.Insert, row("app-2", 1), "app-1 1|app-2 1|"},
		{connectors.UpdateBefore, row("app-1", 1), "app-2 1|"},
		{connectors.UpdateAfter, row("app-1", 2), "app-1 2|app-2 1|"}, // back in its place
		{connectors.Insert, row("app-3", nil), "app-1 2|app-2 1|app-3 <NULL>|"},
		{connectors.Delete, row("app-2", 1), "app-1 2|app-3 <NULL>|"},
		{connectors.Delete, row("app-9", 1), "app-1 2|app-3 <NULL>|"},              // unknown: ignored
		{connectors.Delete, row("app-3", "<NULL>"), "app-1 2|app-3 <NULL>|"},       // a string is not NULL
		{connectors.UpdateAfter, row("app-4", 1), "app-1 2|app-3 <NULL>|app-4 1|"}, // no -U before: appended
		{connectors.Insert, row("app-1", 2), "app-1 2|app-3 <NULL>|app-4 1|app-1 2|"},
		{connectors.UpdateBefore, row("app-1", 2), "app-1 2|app-3 <NULL>|app-4 1|"}, // the latest copy goes
	}
	for i, st := range steps {
		m.apply(st.kind, st.row)
		if got := render(m, 100); got != st.want {
			t.Fatalf("step %d (%s %v): %q, want %q", i, st.kind, st.row, got, st.want)
		}
	}
}

func render(m *materialized, n int) string {
	rows, _ := m.visible(n)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, " ") + "|")
	}
	return b.String()
}

// Many updates leave many holes; compaction sweeps them without changing the table.
func TestMaterializedCompactsAndLimits(t *testing.T) {
	m := newMaterialized(0)
	count := map[int]int{}
	for app := range 3 {
		m.apply(connectors.Insert, row(fmt.Sprint("app-", app), 0))
	}
	for n := range 1000 {
		app := n % 3
		m.apply(connectors.UpdateBefore, row(fmt.Sprint("app-", app), count[app]))
		count[app]++
		m.apply(connectors.UpdateAfter, row(fmt.Sprint("app-", app), count[app]))
		if n%10 == 0 {
			render(m, 100) // a refresh between changes compacts
		}
	}
	want := fmt.Sprintf("app-0 %d|app-1 %d|app-2 %d|", count[0], count[1], count[2])
	if got := render(m, 100); got != want {
		t.Errorf("after 1000 updates: %q, want %q", got, want)
	}
	if m.holes > 64 {
		t.Errorf("%d holes left after refreshes", m.holes)
	}
	if got := render(m, 2); got != fmt.Sprintf("app-0 %d|app-1 %d|", count[0], count[1]) {
		t.Errorf("first 2 rows: %q", got)
	}

	limited := newMaterialized(2)
	for i := range 5 {
		limited.apply(connectors.Insert, row(fmt.Sprint("r", i)))
	}
	limited.apply(connectors.Delete, row("r0")) // long gone
	if got := render(limited, 10); got != "r3|r4|" {
		t.Errorf("limit 2: %q, want the latest two rows", got)
	}
}

// The table view draws a frame, then redraws it in place: up over the lines drawn.
func TestTableViewRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	schema := types.Schema{{Name: "app", Type: types.Type{Kind: types.Varchar}}, {Name: "dau", Type: types.Type{Kind: types.BigInt}}}
	v := newResultView(modeTable, schema, viewOptions{out: &out, size: func() (int, int) { return 60, 10 }, live: true, maxColWidth: 30})
	v.collect(connectors.Insert, row("app-1", 1))
	v.refresh("running")
	first := out.String()
	if strings.Contains(first, "\x1b[") && regexp.MustCompile(`\x1b\[\d+A`).MatchString(first) {
		t.Errorf("the first frame moves up: %q", first)
	}
	frameLines := strings.Count(first, "\n")
	out.Reset()
	v.collect(connectors.UpdateBefore, row("app-1", 1))
	v.collect(connectors.UpdateAfter, row("app-1", 2))
	for i := range 7 {
		v.collect(connectors.Insert, row(fmt.Sprint("app-x", i), 1))
	}
	v.finish(cancelled, "Query cancelled after 1.0s.")
	second := out.String()
	if !strings.HasPrefix(second, fmt.Sprintf("\x1b[%dA", frameLines)) {
		t.Errorf("the second frame does not start by moving up %d lines: %q", frameLines, second)
	}
	// 10 lines of terminal: 2 of the 8 rows fit, and the frame says so.
	for _, want := range []string{"|  app-1 |   2 |", "8 rows, 10 changes (6 not shown: the terminal is too small)", "Query cancelled after 1.0s."} {
		if !strings.Contains(second, want) {
			t.Errorf("frame lacks %q:\n%s", want, second)
		}
	}
	if n := strings.Count(second, "\n"); n > 9 {
		t.Errorf("frame of %d lines on a terminal of 10", n)
	}
}

// A value holding a line break must not break the frame: control characters show escaped.
func TestBoxLinesEscapeControlCharacters(t *testing.T) {
	lines := boxLines([]string{"s"}, [][]string{{"a\nb\tc"}}, 30)
	want := []string{"+---------+", "|       s |", "+---------+", "| a\\nb\\tc |", "+---------+"}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("boxLines = %q, want %q", lines, want)
	}
}

func TestChangelogViewShowsLatest(t *testing.T) {
	var out bytes.Buffer
	schema := types.Schema{{Name: "n", Type: types.Type{Kind: types.BigInt}}}
	v := newResultView(modeChangelog, schema, viewOptions{out: &out, size: func() (int, int) { return 60, 12 }, live: true, maxColWidth: 30})
	for i := range 10 {
		v.collect(connectors.Insert, row(i))
	}
	v.collect(connectors.Delete, row(3))
	v.finish(finished, "Query finished after 0.1s.")
	s := out.String()
	for _, want := range []string{"SQL Query Result (Changelog)", "| -D | 3 |", "| +I | 9 |", "11 changes, the latest 4 shown"} {
		if !strings.Contains(s, want) {
			t.Errorf("changelog view lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "| +I | 6 |") {
		t.Errorf("changelog view shows more than fits:\n%s", s)
	}
}

func TestTableauViewStatusLine(t *testing.T) {
	var out bytes.Buffer
	schema := types.Schema{{Name: "n", Type: types.Type{Kind: types.Int}}}
	v := newResultView(modeTableau, schema, viewOptions{out: &out, live: true})
	v.refresh("connecting to kafka at b:9092, discovering partitions of events (1.0s)")
	v.collect(connectors.Insert, types.Row{types.IntValue(types.Int, 7)})
	v.refresh("running") // rows came: no status any more
	v.finish(cancelled, "")
	want := "+----+-------------+\n| op |           n |\n+----+-------------+\n" +
		clearLine + spinner[1] + " connecting to kafka at b:9092, discovering partitions of events (1.0s)" + clearLine +
		"| +I |           7 |\n+----+-------------+\nQuery cancelled, received a total of 1 row\n"
	if out.String() != want {
		t.Errorf("tableau output\n%q\nwant\n%q", out.String(), want)
	}
}

func TestStartupPhase(t *testing.T) {
	s := testSession(t, `
CREATE TABLE events (a INT) WITH ('connector' = 'kafka', 'topic' = 'events',
  'properties.bootstrap.servers' = 'b1:9092', 'format' = 'json');
CREATE TABLE gen (a INT) WITH ('connector' = 'datagen');
CREATE TABLE out1 (a INT) WITH ('connector' = 'blackhole');
`)
	stmts, err := parser.ParseScript("", "EXECUTE STATEMENT SET BEGIN INSERT INTO out1 SELECT a FROM events; INSERT INTO out1 SELECT a FROM gen; END;")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := s.Plan(stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	st := newStartup(prog)
	metrics := func(kafkaRead, kafkaSplits, genRead int64, degraded string) exec.Metrics {
		m := exec.Metrics{Sources: []exec.SourceMetrics{
			{Pipeline: 0, Table: "events", RecordsRead: kafkaRead, Degraded: degraded},
			{Pipeline: 1, Table: "gen", RecordsRead: genRead},
		}}
		for i := range kafkaSplits {
			m.Sources[0].Splits = append(m.Sources[0].Splits, exec.SplitMetrics{Split: fmt.Sprint("events-", i)})
		}
		return m
	}
	for _, tc := range []struct {
		m       exec.Metrics
		text    string
		started bool
	}{
		{metrics(0, 0, 0, ""), "connecting to kafka at b1:9092, discovering partitions of events", false},
		{metrics(0, 0, 5, "no broker reachable (tried b1:9092)"), "connecting to kafka at b1:9092, discovering partitions of events (no broker reachable (tried b1:9092))", false},
		{metrics(0, 3, 0, ""), "starting the datagen source of gen", false},
		{metrics(0, 3, 10, ""), "reading 3 partitions of events, no records yet", true},
		{metrics(1200, 3, 10, ""), "running, 1,210 records read", true},
	} {
		text, started := st.phase(tc.m)
		if text != tc.text || started != tc.started {
			t.Errorf("phase: %q, %v; want %q, %v", text, started, tc.text, tc.started)
		}
	}

	// A job started from a savepoint says so until the runtime restored it.
	s.Set("execution.savepoint.path", "/sp/savepoint-1")
	prog, err = s.Plan(stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	st = newStartup(prog)
	if text, started := st.phase(metrics(0, 0, 0, "")); text != "restoring from savepoint /sp/savepoint-1" || started {
		t.Errorf("before the restore: %q, %v", text, started)
	}
	m := metrics(0, 0, 0, "")
	m.Checkpoints.RestoredFrom = "/sp/savepoint-1"
	if text, _ := st.phase(m); !strings.HasPrefix(text, "connecting to kafka") {
		t.Errorf("after the restore: %q", text)
	}
}

func TestGateHoldsBackgroundOutput(t *testing.T) {
	var out bytes.Buffer
	g := &gate{}
	w := g.writer(&out)
	fmt.Fprint(w, "a;")
	g.hold()
	fmt.Fprint(w, "b;")
	fmt.Fprint(w, "c;")
	if out.String() != "a;" {
		t.Fatalf("held output was written: %q", out.String())
	}
	g.release()
	if out.String() != "a;b;c;" {
		t.Fatalf("released output %q, want a;b;c;", out.String())
	}
	g.hold()
	big := strings.Repeat("x", maxHeld)
	fmt.Fprint(w, "d;")
	fmt.Fprint(w, big) // over the bound: dropped and counted
	g.release()
	if got := strings.TrimPrefix(out.String(), "a;b;c;"); got != fmt.Sprintf("d;[WARNING] %d bytes of background output were dropped while the statement ran\n", maxHeld) {
		t.Errorf("after overflow: %q", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if plural(1, "row") != "1 row" || plural(2000, "row") != "2,000 rows" {
		t.Errorf("plural: %q, %q", plural(1, "row"), plural(2000, "row"))
	}
}
