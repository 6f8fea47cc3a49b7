package planner

import (
	"strings"
	"testing"

	"github.com/pipesql/pipesql/parser"
)

func TestCreateTableAsSelect(t *testing.T) {
	src := `CREATE TABLE src (a INT, b STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');
`
	s, err := applyScript(t, src+`CREATE TABLE agg (PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'agg',
  'properties.bootstrap.servers' = 'b:9092', 'key.format' = 'json', 'value.format' = 'json')
AS SELECT a, COUNT(*) AS n, MAX(ts) AS last_ts, CAST(SUM(a) AS DECIMAL(10, 2)) AS total FROM src GROUP BY a;
`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ShowCreate(parser.ObjectName{"agg"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`a` INT NOT NULL,\n  `n` BIGINT NOT NULL,\n  `last_ts` TIMESTAMP(3),\n  `total` DECIMAL(10, 2),\n  CONSTRAINT `PK_a` PRIMARY KEY (`a`)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("SHOW CREATE TABLE agg:\n%s\nwant it to contain\n%s", got, want)
		}
	}
	stmts, _ := parser.ParseScript("ctas.sql", src+`CREATE TABLE copy WITH ('connector' = 'print') AS SELECT b, ts FROM src;`)
	s2 := NewSession()
	if err := s2.Apply(stmts[0]); err != nil {
		t.Fatal(err)
	}
	if err := s2.Apply(stmts[1]); err != nil {
		t.Fatal(err)
	}
	prog, err := s2.Plan(CTASInsert(stmts[1].(*parser.CreateTable)))
	if err != nil {
		t.Fatal(err)
	}
	if plan := Explain(prog); !strings.Contains(plan, "Sink(table=[copy], connector=[print], columns=[b, ts])") {
		t.Fatalf("the INSERT of CTAS:\n%s", plan)
	}

	for _, c := range []struct{ ddl, want string }{
		{`CREATE TABLE src WITH ('connector' = 'print') AS SELECT a FROM src`, "table or view 'src' already exists"},
		{`CREATE TABLE IF NOT EXISTS src WITH ('connector' = 'print') AS SELECT a FROM src`, "unsupported: CREATE TABLE IF NOT EXISTS ... AS SELECT of an existing table 'src'"},
		{`CREATE TABLE c (x INT) WITH ('connector' = 'print') AS SELECT a FROM src`, "2:17: unsupported: columns declared in CREATE TABLE ... AS SELECT"},
		{`CREATE TABLE c WITH ('connector' = 'print') AS SELECT NULL AS x FROM src`, "column 'x' of the query has type NULL"},
		{`CREATE TABLE c WITH ('connector' = 'print') AS SELECT nope FROM src`, "unknown column 'nope'"},
		{`CREATE TABLE c WITH ('conector' = 'print') AS SELECT a FROM src`, "has no 'connector' option"},
	} {
		if _, err := applyScript(t, src+c.ddl+";\n"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n got %v\nwant an error containing %q", c.ddl, err, c.want)
		}
	}
}
