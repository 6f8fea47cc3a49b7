package planner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

const dauDDL = `
CREATE TABLE events (
  app STRING,
  user_id STRING,
  country STRING,
  event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  kts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = 'localhost:9092',
  'scan.watermark.idle-timeout' = '30 s',
  'format' = 'json'
);
CREATE TABLE dau_sink (` + "`day`" + ` STRING, app STRING, dau BIGINT) WITH ('connector' = 'print');
CREATE TABLE kafka_sink (
  app STRING,
  n BIGINT,
  kafka_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'kafka',
  'topic' = 'out',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);
`

const dauQuery = `INSERT INTO dau_sink
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd') AS ` + "`day`" + `, app, COUNT(DISTINCT user_id) AS dau
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app`

// mustSession returns a session with the statements of ddl applied.
func mustSession(t *testing.T, ddl string) *Session {
	t.Helper()
	s := NewSession()
	stmts, err := parser.ParseScript("ddl.sql", ddl)
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

func mustStatement(t *testing.T, sql string) parser.Statement {
	t.Helper()
	st, err := parser.ParseStatement("query.sql", sql)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustPlan(t *testing.T, s *Session, sql string) *Program {
	t.Helper()
	p, err := s.Plan(mustStatement(t, sql))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chain returns the nodes from root down the first children.
func chain(n Node) []Node {
	var out []Node
	for n != nil {
		out = append(out, n)
		kids := n.Children()
		if len(kids) == 0 {
			break
		}
		n = kids[0]
	}
	return out
}

func TestPlanDAU(t *testing.T) {
	s := mustSession(t, dauDDL)
	if err := s.Set("table.local-time-zone", "Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	prog := mustPlan(t, s, dauQuery)
	if len(prog.Pipelines) != 1 {
		t.Fatalf("%d pipelines", len(prog.Pipelines))
	}
	if prog.Settings["table.local-time-zone"] != "Asia/Shanghai" {
		t.Errorf("Settings = %v", prog.Settings)
	}
	if !strings.HasPrefix(prog.Pipelines[0].Statement, "INSERT INTO") {
		t.Errorf("Statement = %q", prog.Pipelines[0].Statement)
	}
	nodes := chain(prog.Pipelines[0].Root)
	if len(nodes) != 6 {
		t.Fatalf("plan:\n%s", Explain(prog))
	}
	sink, ok := nodes[0].(*Sink)
	if !ok || sink.Table != "dau_sink" || sink.Connector.Name != "print" || sink.Changelog != InsertOnly {
		t.Fatalf("root = %s", nodes[0].Explain())
	}
	if got := sink.Out.Names(); strings.Join(got, ",") != "day,app,dau" {
		t.Errorf("sink columns %v", got)
	}
	agg, ok := nodes[2].(*WindowAggregate)
	if !ok {
		t.Fatalf("nodes[2] = %s", nodes[2].Explain())
	}
	w := agg.Window
	if w.Kind != Tumble || w.Size != 24*time.Hour || w.Slide != 24*time.Hour || w.ProcTime || w.Location.String() != "Asia/Shanghai" {
		t.Errorf("window = %+v", w)
	}
	in := agg.Input.Schema()
	if in[w.TimeCol].Name != "ts" || in[w.TimeCol].Type.TimeAttr != types.RowTime {
		t.Errorf("time column %v", in[w.TimeCol])
	}
	if len(agg.Aggs) != 1 || agg.Aggs[0].Func != AggCount || !agg.Aggs[0].Distinct || agg.Aggs[0].State != StateRoaringDict {
		t.Errorf("aggs = %+v", agg.Aggs)
	}
	if got := agg.Out.Names(); strings.Join(got, ",") != "app,dau,window_start,window_end,window_time" {
		t.Errorf("aggregate output %v", got)
	}
	if wt := agg.Out[4].Type; wt.Kind != types.TimestampLTZ || wt.TimeAttr != types.RowTime {
		t.Errorf("window_time over a TIMESTAMP_LTZ rowtime is %s", typeString(wt))
	}
	if ws := agg.Out[2].Type; ws.Kind != types.Timestamp || ws.Prec != 3 {
		t.Errorf("window_start is %s", ws)
	}
	wm, ok := nodes[3].(*WatermarkAssigner)
	if !ok || wm.IdleTimeout != 30*time.Second {
		t.Fatalf("nodes[3] = %s", nodes[3].Explain())
	}
	scan, ok := nodes[5].(*TableSourceScan)
	if !ok {
		t.Fatalf("leaf = %s", nodes[5].Explain())
	}
	var produced []string
	for _, c := range scan.Produce {
		produced = append(produced, c.Name)
	}
	if strings.Join(produced, ",") != "app,user_id,event_time" {
		t.Errorf("the source decodes %v, want only what the query reads", produced)
	}
	if scan.Info.Name != "events" || len(scan.Info.Schema) != 4 || scan.Info.Options["topic"] != "events" {
		t.Errorf("table info = %+v", scan.Info)
	}
}

func TestPlanMetadataColumns(t *testing.T) {
	s := mustSession(t, dauDDL)
	prog := mustPlan(t, s, "INSERT INTO kafka_sink SELECT app, 1, kts FROM events")
	sink := prog.Pipelines[0].Root.(*Sink)
	if len(sink.Written) != 3 || sink.Written[2].MetadataKey != "timestamp" || sink.Written[0].MetadataKey != "" {
		t.Errorf("written = %+v", sink.Written)
	}
	nodes := chain(sink)
	scan := nodes[len(nodes)-1].(*TableSourceScan)
	last := scan.Produce[len(scan.Produce)-1]
	if last.Name != "kts" || last.MetadataKey != "timestamp" {
		t.Errorf("produce = %+v", scan.Produce)
	}
}

func TestFingerprint(t *testing.T) {
	s := mustSession(t, dauDDL)
	base := mustPlan(t, s, dauQuery).Fingerprint
	if len(base) != 32 {
		t.Fatalf("fingerprint %q", base)
	}
	same := []string{
		dauQuery,
		// Renaming the output and reformatting the day change nothing in state.
		`INSERT INTO dau_sink SELECT CAST(window_start AS STRING), app AS application, COUNT(DISTINCT user_id) AS users
		 FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '24' HOUR)) GROUP BY window_start, window_end, app`,
		// The legacy syntax keeps the same state.
		`INSERT INTO dau_sink SELECT DATE_FORMAT(TUMBLE_START(ts, INTERVAL '1' DAY), 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id)
		 FROM events GROUP BY TUMBLE(ts, INTERVAL '1' DAY), app`,
	}
	for _, q := range same {
		if got := mustPlan(t, s, q).Fingerprint; got != base {
			t.Errorf("fingerprint changed for\n%s", q)
		}
	}
	different := []string{
		// Another grouping key of the same type.
		`INSERT INTO dau_sink SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), country, COUNT(DISTINCT user_id)
		 FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end, country`,
		// Another window size.
		`INSERT INTO dau_sink SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id)
		 FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY window_start, window_end, app`,
		// Another aggregate.
		`INSERT INTO dau_sink SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(user_id)
		 FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end, app`,
		// Another window kind.
		`INSERT INTO dau_sink SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id)
		 FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '1' DAY)) GROUP BY window_start, window_end, app`,
		// A key computed differently.
		`INSERT INTO dau_sink SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), UPPER(app), COUNT(DISTINCT user_id)
		 FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end, UPPER(app)`,
	}
	for _, q := range different {
		if got := mustPlan(t, s, q).Fingerprint; got == base {
			t.Errorf("fingerprint unchanged for\n%s", q)
		}
	}
	// Days in another zone are other windows.
	if err := s.Set("table.local-time-zone", "Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	if got := mustPlan(t, s, dauQuery).Fingerprint; got == base {
		t.Error("fingerprint unchanged by table.local-time-zone")
	}
}

func TestErrorKinds(t *testing.T) {
	s := mustSession(t, dauDDL)
	tests := []struct {
		sql  string
		kind error
		line int
	}{
		{"SELECT nope FROM events", ErrUnknownColumn, 1},
		{"SELECT app FROM nope", ErrUnknownTable, 1},
		{"SELECT app,\n  user_id, COUNT(*) FROM events GROUP BY app", ErrNotGrouped, 2},
		{"SELECT app FROM events WHERE COUNT(*) > 0", ErrMisplacedAggregate, 1},
		{"SELECT app FROM events WHERE app + 1 > 0", ErrTypeMismatch, 1},
		{"SELECT NOPE(app) FROM events", ErrUnknownFunction, 1},
		{"SELECT a.app FROM events a JOIN events b ON a.user_id < b.user_id", ErrUnsupported, 1},
		{"INSERT INTO kafka_sink SELECT app, COUNT(*), CAST(NULL AS TIMESTAMP_LTZ(3)) FROM events GROUP BY app", ErrUpdatingInput, 1},
		{"CREATE TABLE x (a INT) WITH ('connector' = 'kafak')", ErrUnknownConnector, 1},
		{"CREATE TABLE x (a INT) WITH ('connector' = 'print', 'nope' = '1')", ErrUnknownOption, 1},
		{"CREATE TABLE x (a INT) WITH ('connector' = 'filesystem', 'format' = 'json')", ErrMissingOption, 1},
		{"CREATE TABLE x (a INT) WITH ('connector' = 'print',\n'standard-error' = 'maybe')", ErrInvalidOption, 2},
		{"CREATE TABLE x (a INT, WATERMARK FOR a AS a) WITH ('connector' = 'datagen')", ErrTimeAttribute, 1},
		{"CREATE TABLE events (a INT) WITH ('connector' = 'datagen')", ErrAlreadyExists, 1},
		{"SET 'table.local-time-zone' = 'Nowhere/Land'", ErrInvalidSetting, 1},
		{"SELECT app FROM events", nil, 0},
	}
	for _, tt := range tests {
		st := mustStatement(t, tt.sql)
		var err error
		switch st.(type) {
		case *parser.QueryStatement, *parser.Insert:
			_, err = s.Plan(st)
		default:
			err = s.Apply(st)
		}
		if tt.kind == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.sql, err)
			}
			continue
		}
		if !errors.Is(err, tt.kind) {
			t.Errorf("%s: error %v, want kind %v", tt.sql, err, tt.kind)
			continue
		}
		var pe *parser.Error
		if !errors.As(err, &pe) || pe.Pos.Line != tt.line || pe.Pos.File != "query.sql" {
			t.Errorf("%s: error %v is not a parser.Error at query.sql line %d", tt.sql, err, tt.line)
		}
	}
}

func TestCatalogStatements(t *testing.T) {
	s := mustSession(t, dauDDL+`
CREATE VIEW v AS SELECT app FROM events;
CREATE TEMPORARY VIEW IF NOT EXISTS v AS SELECT country FROM events;
CREATE TABLE IF NOT EXISTS events (x INT) WITH ('connector' = 'datagen');
`)
	if got := strings.Join(s.Tables(), ","); got != "dau_sink,events,kafka_sink" {
		t.Errorf("Tables() = %s", got)
	}
	if got := strings.Join(s.Views(), ","); got != "v" {
		t.Errorf("Views() = %s", got)
	}
	rows, err := s.Describe(parser.ObjectName{"default_catalog", "default_database", "v"})
	if err != nil || len(rows) != 1 || rows[0][0] != "app" {
		t.Errorf("Describe(v) = %v, %v", rows, err)
	}
	if _, err := s.Describe(parser.ObjectName{"evnts"}); !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "did you mean 'events'?") {
		t.Errorf("Describe(evnts) = %v", err)
	}
	if _, err := s.Describe(parser.ObjectName{"other_catalog", "default_database", "v"}); !errors.Is(err, ErrUnknownTable) {
		t.Errorf("Describe in another catalog = %v", err)
	}
	for _, tt := range []struct {
		sql  string
		kind error
	}{
		{"DROP TABLE v", ErrUnknownTable},
		{"DROP VIEW events", ErrUnknownTable},
		{"DROP TABLE nothing", ErrUnknownTable},
		{"DROP TABLE IF EXISTS nothing", nil},
		{"DROP VIEW v", nil},
		{"DROP TABLE dau_sink", nil},
		{"SELECT 1", ErrInvalidStatement},
	} {
		err := s.Apply(mustStatement(t, tt.sql))
		if (tt.kind == nil && err != nil) || (tt.kind != nil && !errors.Is(err, tt.kind)) {
			t.Errorf("%s: %v, want %v", tt.sql, err, tt.kind)
		}
	}
	if got := strings.Join(append(s.Tables(), s.Views()...), ","); got != "events,kafka_sink" {
		t.Errorf("after drops: %s", got)
	}
	// A view whose table was dropped fails where it is used, naming the table.
	s2 := mustSession(t, dauDDL+"CREATE VIEW apps AS SELECT app FROM events; DROP TABLE events;")
	if _, err := s2.Plan(mustStatement(t, "SELECT * FROM apps")); !errors.Is(err, ErrUnknownTable) {
		t.Errorf("view over a dropped table: %v", err)
	}
}

func TestPlanStatements(t *testing.T) {
	s := mustSession(t, dauDDL)
	q := mustStatement(t, "SELECT app FROM events")
	ins := mustStatement(t, "INSERT INTO dau_sink SELECT app, app, 1 FROM events")
	if _, err := s.Plan(q, ins); !errors.Is(err, ErrInvalidStatement) {
		t.Errorf("a query with an INSERT: %v", err)
	}
	if _, err := s.Plan(); !errors.Is(err, ErrInvalidStatement) {
		t.Errorf("nothing: %v", err)
	}
	prog, err := s.Plan(ins, ins)
	if err != nil || len(prog.Pipelines) != 2 {
		t.Fatalf("two INSERTs: %v", err)
	}
	collect, ok := mustPlan(t, s, "SELECT app, COUNT(*) AS n FROM events GROUP BY app").Pipelines[0].Root.(*Collect)
	if !ok || collect.Changelog != Updating || strings.Join(collect.Schema().Names(), ",") != "app,n" {
		t.Errorf("collect root %v", collect)
	}
	out, err := s.Explain(mustStatement(t, "EXPLAIN SELECT app FROM events"))
	if err != nil || !strings.HasPrefix(out, "== Physical Plan ==\nCollect(columns=[app])") {
		t.Errorf("Explain = %q, %v", out, err)
	}
}

func TestCheckPlanCatchesBadReferences(t *testing.T) {
	scan := &TableSourceScan{
		Table:   "t",
		Produce: []connectors.ProducedColumn{{Name: "a", Type: types.TypeInt}},
		Out:     types.Schema{{Name: "a", Type: types.TypeInt}},
	}
	calc := func(ref *ColumnRef) *Calc {
		return &Calc{Input: scan, Projections: []Expr{ref}, Out: types.Schema{{Name: "x", Type: ref.T}}}
	}
	if err := checkPlan(calc(&ColumnRef{Index: 0, Name: "a", T: types.TypeInt})); err != nil {
		t.Errorf("valid plan refused: %v", err)
	}
	for _, ref := range []*ColumnRef{
		{Index: 1, Name: "a", T: types.TypeInt},
		{Index: 0, Name: "b", T: types.TypeInt},
		{Index: 0, Name: "a", T: types.TypeString},
	} {
		if checkPlan(calc(ref)) == nil {
			t.Errorf("checkPlan accepted %+v", ref)
		}
	}
}
