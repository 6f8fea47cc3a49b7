package planner

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"

	sqlparser "github.com/pipesql/pipesql/parser"
)

// The grammar audit
//
// Every clause and option the parser accepts is either carried into the plan and applied,
// or refused with a positioned error saying it is not supported. Each case below is one
// construct. An applied construct must plan and show its effect: want is a piece of the
// EXPLAIN text (or of DESCRIBE / SHOW CREATE, for catalog statements) that exists only
// because the construct was applied. A refused one must fail at line:col with an error of
// kind ErrUnsupported (the parser's or the planner's), or of the kind given. Constructs
// that are not Flink SQL at all (MySQL syntax that sqlparser would take) need only fail
// at their position.
//
// TestGrammarAuditCoversAST walks parser/ast.go and fails when a field of the AST is
// named by no case (and handled by no one else, see handledOutsidePlanner): a new clause
// cannot be added to the parser without saying here what the planner does with it.

const auditDDL = `
CREATE TABLE clicks (
  app STRING,
  user_id STRING,
  n INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out_print (app STRING, n BIGINT) WITH ('connector' = 'print');
CREATE VIEW clicks_v AS SELECT app, n FROM clicks;
`

type auditCase struct {
	name   string
	fields []string // the AST fields (Type.Field) whose handling the case proves
	sql    string   // applied after auditDDL; the queries and INSERTs of it are planned together
	show   string   // "describe NAME", "show-create NAME" or "settings": check that instead of EXPLAIN
	want   string   // applied: a piece of the output that proves the effect
	err    string   // refused: "line:col" of the error
	kind   error    // refused: the error's kind; nil means ErrUnsupported
	any    bool     // refused: any positioned error will do (not Flink SQL)
}

var auditCases = []auditCase{
	// ---- Hints and comments ----
	{name: "OPTIONS hint on a scan", fields: []string{"TableName.Options"},
		sql:  `SELECT app FROM clicks /*+ OPTIONS('rows-per-second' = '5') */`,
		want: "TableSourceScan(table=[clicks], connector=[datagen], decode=[app, ts], hints=[OPTIONS('rows-per-second'='5')])"},
	{name: "OPTIONS hint on the table of a window TVF", fields: []string{"TableName.Options"},
		sql:  `SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks /*+ OPTIONS('number-of-rows'='3') */, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end`,
		want: "hints=[OPTIONS('number-of-rows'='3')]"},
	{name: "OPTIONS hint on a sink", fields: []string{"Insert.Options"},
		sql:  `INSERT INTO out_print /*+ OPTIONS('print-identifier' = 'dbg') */ SELECT app, n FROM clicks`,
		want: "Sink(table=[out_print], connector=[print], columns=[app, n], hints=[OPTIONS('print-identifier'='dbg')])"},
	{name: "OPTIONS hint: misspelt key", sql: `SELECT app FROM clicks /*+ OPTIONS('rows-per-secnd' = '5') */`,
		err: "1:36", kind: ErrUnknownOption},
	{name: "OPTIONS hint: bad value", sql: `SELECT app FROM clicks /*+ OPTIONS('rows-per-second' = 'many') */`,
		err: "1:36", kind: ErrInvalidOption},
	{name: "OPTIONS hint: misspelt sink key", sql: `INSERT INTO out_print /*+ OPTIONS('print-identifer' = 'x') */ SELECT app, n FROM clicks`,
		err: "1:35", kind: ErrUnknownOption},
	{name: "OPTIONS hint on a view", sql: `SELECT app FROM clicks_v /*+ OPTIONS('rows-per-second' = '5') */`, err: "1:38"},
	{name: "OPTIONS hint on a WITH query", sql: `WITH w AS (SELECT app FROM clicks) SELECT app FROM w /*+ OPTIONS('a' = '1') */`, err: "1:66"},
	{name: "join hint", sql: `SELECT /*+ BROADCAST(clicks) */ app FROM clicks`, err: "1:12"},
	{name: "join hint on a table", sql: `SELECT app FROM clicks /*+ SHUFFLE_HASH(clicks) */`, err: "1:28"},
	{name: "STATE_TTL hint on an aggregate", sql: "SELECT /*+ STATE_TTL('clicks' = '1d') */ app, COUNT(*)\nFROM clicks GROUP BY app", err: "1:22"},
	{name: "STATE_TTL hint on a join", fields: []string{"Select.StateTTL"}, sql: "SELECT /*+ STATE_TTL('a' = '1d') */ a.app FROM clicks a JOIN clicks b ON a.app = b.app", want: "Join(joinType=[InnerJoin]"},
	{name: "LOOKUP hint", sql: `SELECT /*+ LOOKUP('table' = 'clicks') */ app FROM clicks`, err: "1:12"},
	{name: "unknown hint", sql: `SELECT app FROM clicks /*+ OPTONS('a' = '1') */`, err: "1:28", kind: sqlparser.ErrSyntax},
	{name: "hint where none goes", sql: `SELECT app FROM clicks WHERE n /*+ OPTIONS('a' = '1') */ > 1`, err: "1:32", kind: sqlparser.ErrSyntax},
	{name: "hint after CREATE TABLE", sql: `CREATE TABLE h (a INT) WITH ('connector' = 'print') /*+ OPTIONS('a' = '1') */`, err: "1:53", kind: sqlparser.ErrSyntax},
	{name: "plain comments are ignored",
		sql:  "SELECT app /* a comment */ FROM clicks -- and /*+ OPTIONS('a' = '1') */ in a line comment\nWHERE n > 1 /* + spaced, so not a hint */",
		want: "Calc(select=[app], where=[(n > 1)])"},

	// ---- Queries ----
	{name: "select list, aliases", fields: []string{"SelectItem.Expr", "SelectItem.Alias", "Ident.Parts"},
		sql: `SELECT c.app AS a FROM clicks AS c`, want: "Calc(select=[app AS a])"},
	{name: "qualified star", fields: []string{"Star.Qualifier", "TableName.Alias", "TableName.Name"},
		sql: `SELECT c.* FROM clicks c`, want: "Collect(columns=[app, user_id, n, ts])"},
	{name: "WHERE", fields: []string{"Select.Where", "BinaryExpr.Op", "BinaryExpr.L", "BinaryExpr.R"},
		sql: `SELECT app FROM clicks WHERE n > 1 AND app <> 'x'`, want: "where=[((n > 1) AND (app <> 'x'))]"},
	{name: "GROUP BY, HAVING", fields: []string{"Select.GroupBy", "Select.Having", "Select.Items", "FuncCall.Name", "FuncCall.Args"},
		sql: `SELECT app, SUM(n) AS s FROM clicks GROUP BY app HAVING SUM(n) > 3`, want: "where=[(s > 3)]"},
	{name: "SELECT DISTINCT", fields: []string{"Select.Distinct"},
		sql: `SELECT DISTINCT app FROM clicks`, want: "GroupAggregate(groupBy=[app], select=[app])"},
	{name: "COUNT(*), COUNT(DISTINCT x)", fields: []string{"FuncCall.Star", "FuncCall.Distinct"},
		sql: `SELECT app, COUNT(*) AS c, COUNT(DISTINCT user_id) AS u FROM clicks GROUP BY app`, want: "select=[app, COUNT(*) AS c, COUNT(DISTINCT user_id) AS u]"},
	{name: "aggregate FILTER", fields: []string{"FuncCall.Filter"},
		sql: `SELECT app, COUNT(*) FILTER (WHERE n > 1) AS c FROM clicks GROUP BY app`, want: "FILTER"},
	{name: "SELECT without FROM", fields: []string{"Select.From"},
		sql: `SELECT 1 + 1 AS two`, want: "Values("},
	{name: "LIMIT", fields: []string{"Query.Limit"},
		sql: `SELECT app FROM clicks LIMIT 3`, want: "Limit(fetch=[3])"},
	{name: "ORDER BY", fields: []string{"Query.OrderBy", "OrderItem.Expr", "OrderItem.Desc"},
		sql: `SELECT app, ts, n FROM clicks ORDER BY ts, n DESC`, want: "TemporalSort(orderBy=[ts ASC, n DESC])"},
	{name: "ORDER BY a non-time attribute", sql: `SELECT app, n FROM clicks ORDER BY n DESC`, err: "1:36"},
	{name: "ORDER BY in a subquery", sql: `SELECT app FROM (SELECT app, n FROM clicks ORDER BY n)`, err: "1:53"},
	{name: "NULLS FIRST", fields: []string{"OrderItem.Nulls"},
		sql: `SELECT app, ts, n FROM clicks ORDER BY ts, n DESC NULLS FIRST`, want: "TemporalSort(orderBy=[ts ASC, n DESC])"},
	{name: "OFFSET", sql: `SELECT app FROM clicks LIMIT 3 OFFSET 1`, err: "1:32"},
	{name: "FETCH FIRST", sql: `SELECT app FROM clicks FETCH FIRST 3 ROWS ONLY`, err: "1:24"},
	{name: "LIMIT offset, count", sql: `SELECT app FROM clicks LIMIT 1, 3`, err: "1:33"},
	{name: "WITH", fields: []string{"Query.With", "NamedQuery.Name", "NamedQuery.Query", "Query.Body"},
		sql: `WITH big AS (SELECT app, n FROM clicks WHERE n > 5) SELECT app FROM big`, want: "where=[(n > 5)]"},
	{name: "subquery in FROM", fields: []string{"SubqueryTable.Query", "SubqueryTable.Alias"},
		sql: `SELECT s.m FROM (SELECT n * 2 AS m FROM clicks) AS s`, want: "Calc(select=[(n * 2) AS m])"},
	{name: "UNION ALL", fields: []string{"SetOp.Op", "SetOp.All", "SetOp.Left", "SetOp.Right"},
		sql: `SELECT app FROM clicks UNION ALL SELECT app FROM clicks`, want: "Union(all=[true], union=[app])"},
	{name: "UNION", sql: `SELECT app FROM clicks UNION SELECT app FROM clicks`, want: "GroupAggregate(groupBy=[app], select=[app])\n   +- Union(all=[true]"},
	{name: "INTERSECT", sql: `SELECT app FROM clicks INTERSECT SELECT app FROM clicks`, want: "where=[((vcol_left_cnt >= 1) AND (vcol_right_cnt >= 1))]"},
	{name: "INTERSECT ALL", sql: `SELECT app FROM clicks INTERSECT ALL SELECT app FROM clicks`, want: "Correlate(invocation=[$REPLICATE_ROWS$1("},
	{name: "EXCEPT", sql: `SELECT app FROM clicks EXCEPT SELECT app FROM clicks`, want: "where=[((vcol_left_cnt >= 1) AND (vcol_right_cnt = 0))]"},
	{name: "EXCEPT ALL", sql: `SELECT app FROM clicks EXCEPT ALL SELECT app FROM clicks`, want: "SUM(vcol_marker) AS sum_vcol_marker"},
	{name: "MINUS", sql: `SELECT app FROM clicks MINUS SELECT app FROM clicks`, err: "1:24"},
	{name: "JOIN", fields: []string{"Join.Kind", "Join.Left", "Join.Right", "Join.On"},
		sql: `SELECT a.app FROM clicks a LEFT JOIN clicks b ON a.app = b.app AND a.n > b.n`, want: "Join(joinType=[LeftOuterJoin], where=[((app = app) AND (n > n))]"},
	{name: "CROSS JOIN", sql: `SELECT a.app FROM clicks a CROSS JOIN clicks b`, err: "1:39"},
	{name: "FROM list", sql: `SELECT a.app FROM clicks a, clicks b WHERE a.app = b.app`, want: "Join(joinType=[InnerJoin], where=[(app = app)]"},
	{name: "FROM list without equality", sql: `SELECT a.app FROM clicks a, clicks b WHERE a.n < b.n`, err: "1:44"},
	{name: "JOIN without equality", sql: `SELECT a.app FROM clicks a JOIN clicks b ON a.n < b.n`, err: "1:45"},
	{name: "interval join", sql: `SELECT a.app FROM clicks a JOIN clicks b ON a.app = b.app AND a.ts BETWEEN b.ts - INTERVAL '1' MINUTE AND b.ts`, want: "IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=-60000, leftUpperBound=0"},
	{name: "interval join without an upper bound", sql: `SELECT a.app FROM clicks a JOIN clicks b ON a.app = b.app AND a.ts >= b.ts - INTERVAL '1' MINUTE`, err: "1:45"},
	{name: "window join", sql: `SELECT a.app FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) a JOIN clicks b ON a.app = b.app`, err: "1:19"},
	{name: "JOIN of an updating input", sql: `SELECT a.app FROM clicks a JOIN (SELECT app, COUNT(*) AS c FROM clicks GROUP BY app) b ON a.app = b.app`, want: "Join(joinType=[InnerJoin]"},
	{name: "lookup or lateral join", sql: `SELECT a.app FROM clicks a, LATERAL TABLE(f(a.app))`, err: "1:29", any: true},
	{name: "window TVF with offset and alias", fields: []string{"WindowTVF.Func", "WindowTVF.Input", "WindowTVF.TimeCol", "WindowTVF.Args", "WindowTVF.Alias"},
		sql:  `SELECT w.window_start, COUNT(*) FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE, INTERVAL '10' SECOND)) AS w GROUP BY w.window_start, w.window_end`,
		want: "HOP(rowtime=[ts], slide=[1 min], size=[5 min], offset=[10 s])"},
	{name: "SESSION window", fields: []string{"WindowTVF.PartitionBy"}, sql: `SELECT app, window_start, COUNT(*) FROM TABLE(SESSION(TABLE clicks PARTITION BY app, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY app, window_start, window_end`,
		want: "WindowAggregate(window=[SESSION(rowtime=[ts], gap=[1 min])], groupBy=[app]"},
	{name: "SESSION window grouped by other keys", sql: `SELECT n, window_start, COUNT(*) FROM TABLE(SESSION(TABLE clicks PARTITION BY app, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY n, window_start, window_end`, err: "1:1"},
	{name: "legacy group window", fields: []string{"IntervalLit.Value", "IntervalLit.Unit"},
		sql: `SELECT TUMBLE_START(ts, INTERVAL '1' HOUR), COUNT(*) FROM clicks GROUP BY TUMBLE(ts, INTERVAL '1' HOUR)`, want: "TUMBLE(rowtime=[ts], size=[1 h])"},
	{name: "interval range", fields: []string{"IntervalLit.ToUnit"},
		sql: `SELECT ts + INTERVAL '1:30' MINUTE TO SECOND AS t2 FROM clicks`, want: "90"},
	{name: "Top-N", fields: []string{"FuncCall.Over", "Over.PartitionBy", "Over.OrderBy"},
		sql:  `SELECT * FROM (SELECT app, n, ROW_NUMBER() OVER (PARTITION BY app ORDER BY n DESC) AS rn FROM clicks) WHERE rn <= 3`,
		want: "Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[app], orderBy=[n DESC]"},
	{name: "OVER window", sql: `SELECT app, ROW_NUMBER() OVER (PARTITION BY app ORDER BY ts) FROM clicks`, err: "1:26"},
	{name: "OVER aggregate", fields: []string{"Over.Frame"}, sql: `SELECT app, SUM(n) OVER (PARTITION BY app ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM clicks`,
		want: "window=[ROWS BETWEEN 2 PRECEDING AND CURRENT ROW]"},
	{name: "OVER frame to FOLLOWING", sql: `SELECT SUM(n) OVER (ORDER BY ts ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM clicks`, err: "1:62"},
	{name: "named window", fields: []string{"Over.Name", "Select.Windows"}, sql: `SELECT app, COUNT(*) OVER w FROM clicks WINDOW w AS (PARTITION BY app ORDER BY ts RANGE INTERVAL '1' MINUTE PRECEDING)`,
		want: "window=[RANGE BETWEEN 60000 PRECEDING AND CURRENT ROW]"},
	{name: "QUALIFY", fields: []string{"Select.Qualify"}, sql: `SELECT app, n FROM clicks QUALIFY ROW_NUMBER() OVER (PARTITION BY app ORDER BY n DESC) <= 3`,
		want: "rankRange=[rankStart=1, rankEnd=3]"},
	{name: "GROUPING SETS", sql: `SELECT app, COUNT(*) FROM clicks GROUP BY GROUPING SETS ((app), ())`, want: "Expand(projects=[{$g0, 0 AS $e}, {null AS $g0, 1 AS $e}])"},
	{name: "ROLLUP on a window aggregate", sql: `SELECT app, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, ROLLUP(app)`, want: "WindowAggregate(window=[TUMBLE(rowtime=[ts], size=[1 min])], groupBy=[$g0, $e]"},
	{name: "temporal join", fields: []string{"TableName.AsOf"}, sql: `SELECT a.app FROM clicks a JOIN clicks FOR SYSTEM_TIME AS OF a.ts AS b ON a.app = b.app`, err: "1:33"},
	{name: "FOR SYSTEM_TIME AS OF outside a join", sql: `SELECT app FROM clicks FOR SYSTEM_TIME AS OF ts`, err: "1:46"},

	// ---- Expressions ----
	{name: "literals", fields: []string{"Literal.Kind", "Literal.Text"},
		sql:  `SELECT 'x' AS s, 2.5 AS d, TRUE AS b, DATE '2024-01-02' AS dt, TIMESTAMP '2024-01-02 03:04:05' AS t, TIME '01:02:03' AS tm FROM clicks`,
		want: "DATE '2024-01-02' AS dt"},
	{name: "CAST, TRY_CAST", fields: []string{"Cast.X", "Cast.Type", "Cast.Try"},
		sql: `SELECT CAST(n AS BIGINT) AS a, TRY_CAST(app AS INT) AS b FROM clicks`, want: "TRY_CAST(app AS INT) AS b"},
	{name: "CASE", fields: []string{"Case.Operand", "Case.Whens", "Case.Else", "When.Cond", "When.Result"},
		sql: `SELECT CASE n WHEN 1 THEN 'one' ELSE 'many' END AS k FROM clicks`, want: "CASE WHEN (n = 1) THEN 'one' ELSE 'many' END"},
	{name: "unary operators", fields: []string{"UnaryExpr.Op", "UnaryExpr.X"},
		sql: `SELECT -n AS m FROM clicks WHERE NOT n > 1`, want: "NOT (n > 1)"},
	{name: "IN list", fields: []string{"InExpr.X", "InExpr.Not", "InExpr.List"},
		sql: `SELECT app FROM clicks WHERE n NOT IN (1, 2)`, want: "n NOT IN (1, 2)"},
	{name: "IN subquery", fields: []string{"InExpr.Subquery"},
		sql: `SELECT app FROM clicks WHERE n IN (SELECT n FROM clicks)`, want: "Join(joinType=[LeftSemiJoin], where=[(n = n)]"},
	{name: "NOT IN subquery", sql: `SELECT app FROM clicks WHERE n NOT IN (SELECT n FROM clicks)`, want: "Join(joinType=[LeftAntiJoin], where=[(((n = n) OR (n IS NULL)) OR (n IS NULL))]"},
	{name: "IN subquery under OR", sql: `SELECT app FROM clicks WHERE n = 1 OR n IN (SELECT n FROM clicks)`, want: "Join(joinType=[LeftOuterJoin], where=[(n = n)]"},
	{name: "NOT IN subquery under OR", sql: `SELECT app FROM clicks WHERE n = 1 OR n NOT IN (SELECT n FROM clicks)`, err: "1:39"},
	{name: "NOT EXISTS", sql: `SELECT app FROM clicks a WHERE NOT EXISTS (SELECT 1 FROM clicks b WHERE b.app = a.app)`, want: "Join(joinType=[LeftAntiJoin], where=[(app = app)]"},
	{name: "LIKE ESCAPE", fields: []string{"LikeExpr.X", "LikeExpr.Not", "LikeExpr.Pattern", "LikeExpr.Escape"},
		sql: `SELECT app FROM clicks WHERE app NOT LIKE 'a!%%' ESCAPE '!'`, want: "ESCAPE '!'"},
	{name: "SIMILAR TO", fields: []string{"LikeExpr.Similar"},
		sql:  `SELECT app FROM clicks WHERE app SIMILAR TO '(web|app)%' AND app NOT SIMILAR TO 'x#_%' ESCAPE '#'`,
		want: "where=[((app SIMILAR TO '(web|app)%') AND (app NOT SIMILAR TO 'x#_%' ESCAPE '#'))]"},
	{name: "IS [NOT] NULL / TRUE", fields: []string{"IsExpr.X", "IsExpr.Not", "IsExpr.What"},
		sql: `SELECT app FROM clicks WHERE app IS NOT NULL AND (n > 1) IS TRUE`, want: "IS NOT NULL"},
	{name: "BETWEEN", fields: []string{"BetweenExpr.X", "BetweenExpr.Not", "BetweenExpr.Lo", "BetweenExpr.Hi"},
		sql: `SELECT app FROM clicks WHERE n NOT BETWEEN 1 AND 3`, want: "NOT BETWEEN"},
	{name: "scalar subquery", fields: []string{"SubqueryExpr.Query", "SubqueryExpr.Exists"},
		sql: `SELECT app FROM clicks WHERE n > (SELECT 1 FROM clicks)`, err: "1:34"},
	{name: "uncorrelated EXISTS", sql: `SELECT app FROM clicks WHERE EXISTS (SELECT 1 FROM clicks)`, err: "1:30"},
	{name: "time units", fields: []string{"TimeUnit.Unit"},
		sql: `SELECT FLOOR(ts TO HOUR) AS h, EXTRACT(DAY FROM ts) AS d FROM clicks`, want: "FLOOR(ts TO HOUR) AS h, EXTRACT(DAY FROM ts) AS d"},
	{name: "CAST to NOT NULL", fields: []string{"DataType.NotNull"},
		sql: "CREATE VIEW nn AS SELECT CAST(n AS INT NOT NULL) AS m FROM clicks", show: "describe nn", want: "m | INT NOT NULL | FALSE"},

	// ---- CREATE TABLE ----
	{name: "CREATE TABLE columns, watermark, key, comments", fields: []string{
		"CreateTable.Name", "CreateTable.Columns", "CreateTable.Watermark", "CreateTable.PrimaryKey", "CreateTable.Comment", "CreateTable.Options",
		"ColumnDef.Name", "ColumnDef.Kind", "ColumnDef.Type", "ColumnDef.Expr", "ColumnDef.Comment",
		"WatermarkDef.Column", "WatermarkDef.Expr", "PrimaryKey.Name", "PrimaryKey.Columns", "PrimaryKey.NotEnforced",
		"Option.Key", "Option.Value", "DataType.Name", "DataType.Params"},
		sql: `CREATE TABLE k (
  id BIGINT COMMENT 'the key',
  v DECIMAL(10, 2),
  t TIMESTAMP(3),
  v2 AS v * 2,
  WATERMARK FOR t AS t,
  CONSTRAINT pk PRIMARY KEY (id) NOT ENFORCED
) COMMENT 'a table' WITH ('connector' = 'upsert-kafka', 'topic' = 'k', 'properties.bootstrap.servers' = 'b:9092', 'key.format' = 'json', 'value.format' = 'json')`,
		show: "show-create k", want: "CONSTRAINT `pk` PRIMARY KEY (`id`) NOT ENFORCED\n)\nCOMMENT 'a table' WITH ("},
	{name: "column comment", sql: `CREATE TABLE cc (a INT COMMENT 'the a') WITH ('connector' = 'print')`,
		show: "show-create cc", want: "COMMENT 'the a'"},
	{name: "metadata columns", fields: []string{"ColumnDef.Metadata", "ColumnDef.Virtual"},
		sql:  `CREATE TABLE m (a STRING, kt TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'b:9092', 'format' = 'json')`,
		show: "describe m", want: "METADATA FROM 'timestamp' VIRTUAL"},
	{name: "collection and row types", fields: []string{"DataType.Elems", "DataType.Fields", "RowField.Name", "RowField.Type"},
		sql:  `CREATE TABLE ty (a ARRAY<INT>, m MAP<STRING, BIGINT>, r ROW<x INT, y STRING>) WITH ('connector' = 'print')`,
		show: "describe ty", want: "r | ROW<`x` INT, `y` STRING>"},
	{name: "NOT NULL column", fields: []string{"DataType.NotNull"},
		sql: `CREATE TABLE nn2 (a INT NOT NULL) WITH ('connector' = 'print')`, show: "describe nn2", want: "a | INT NOT NULL | FALSE"},
	{name: "TEMPORARY, IF NOT EXISTS", fields: []string{"CreateTable.Temporary", "CreateTable.IfNotExists"},
		sql:  "CREATE TEMPORARY TABLE tt (a INT) WITH ('connector' = 'print');\nCREATE TABLE IF NOT EXISTS tt (b INT) WITH ('connector' = 'print')",
		show: "describe tt", want: "a | INT | TRUE"},
	{name: "PARTITIONED BY on a connector without partitions", fields: []string{"CreateTable.PartitionBy"},
		sql: `CREATE TABLE p (a INT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'print')`, err: "1:35"},
	{name: "ENFORCED primary key", sql: `CREATE TABLE e (a INT, PRIMARY KEY (a)) WITH ('connector' = 'print')`, err: "1:24"},
	{name: "DISTRIBUTED BY", sql: `CREATE TABLE d (a INT) DISTRIBUTED BY (a) WITH ('connector' = 'print')`, err: "1:24"},
	{name: "CREATE TABLE LIKE", fields: []string{"CreateTable.Like", "TableLike.Source", "TableLike.Options", "LikeOption.Mode", "LikeOption.Feature"},
		sql:  `CREATE TABLE l (extra INT) WITH ('connector' = 'print') LIKE clicks (EXCLUDING OPTIONS EXCLUDING WATERMARKS)`,
		show: "show-create l", want: "`ts` TIMESTAMP(3),\n  `extra` INT\n) WITH (\n  'connector' = 'print'\n)"},
	{name: "CREATE TABLE AS SELECT", fields: []string{"CreateTable.AsQuery"},
		sql: `CREATE TABLE c WITH ('connector' = 'print') AS SELECT app, n FROM clicks`, show: "show-create c", want: "`app` STRING,\n  `n` INT\n) WITH ("},
	{name: "CREATE TABLE (cols) AS SELECT", sql: `CREATE TABLE c (app STRING) WITH ('connector' = 'print') AS SELECT app FROM clicks`, err: "1:17"},
	{name: "UNIQUE constraint", sql: `CREATE TABLE u (a INT, UNIQUE (a)) WITH ('connector' = 'print')`, err: "1:24", any: true},
	{name: "PERIOD FOR", sql: `CREATE TABLE pf (a INT, PERIOD FOR SYSTEM_TIME) WITH ('connector' = 'print')`, err: "1:25"},

	// ---- Views, DROP, SET ----
	{name: "CREATE VIEW", fields: []string{"CreateView.Name", "CreateView.Columns", "CreateView.Comment", "CreateView.Query",
		"CreateView.Temporary", "CreateView.IfNotExists"},
		sql:  "CREATE TEMPORARY VIEW IF NOT EXISTS vv (x) COMMENT 'a view' AS SELECT app FROM clicks",
		show: "show-create vv", want: "CREATE VIEW `vv` (`x`) COMMENT 'a view' AS"},
	{name: "DROP", fields: []string{"DropTable.Name", "DropTable.Temporary", "DropTable.IfExists", "DropView.Name", "DropView.Temporary", "DropView.IfExists"},
		sql: "DROP TEMPORARY VIEW clicks_v;\nDROP VIEW IF EXISTS nope;\nDROP TABLE IF EXISTS nope;\nDROP TEMPORARY TABLE out_print;\nSELECT app FROM out_print", err: "5:17", kind: ErrUnknownTable},
	{name: "SET, RESET", fields: []string{"Set.Key", "Set.Value", "Reset.Key"},
		sql: "SET table.local-time-zone = Asia/Tokyo;\nSET 'pipeline.name' = 'x';\nRESET 'pipeline.name'", show: "settings", want: "table.local-time-zone=Asia/Tokyo"},

	// ---- INSERT, statement sets, EXPLAIN ----
	{name: "INSERT column list", fields: []string{"Insert.Table", "Insert.Columns", "Insert.Query"},
		sql: `INSERT INTO out_print (n) SELECT n FROM clicks`, want: "Calc(select=[NULL AS app, CAST(n AS BIGINT) AS n])"},
	{name: "INSERT OVERWRITE", fields: []string{"Insert.Overwrite"}, sql: `INSERT OVERWRITE out_print SELECT app, n FROM clicks`, err: "1:1"},
	{name: "INSERT PARTITION", sql: `INSERT INTO out_print PARTITION (app = 'x') SELECT app, n FROM clicks`, err: "1:23"},
	{name: "INSERT VALUES", sql: `INSERT INTO out_print VALUES ('a', 1)`, want: "Values(tuples=[[CAST('a' AS STRING), CAST(1 AS BIGINT)]], columns=[app, n])"},
	{name: "VALUES in FROM", sql: `SELECT t.k FROM (VALUES (1, 'a'), (2, 'b')) AS t (k, v)`, want: "Values(tuples=[[1], [2]], columns=[k])"},
	{name: "statement set", fields: []string{"StatementSet.Inserts", "QueryStatement.Query"},
		sql:  "EXECUTE STATEMENT SET BEGIN\nINSERT INTO out_print SELECT app, n FROM clicks;\nINSERT INTO out_print SELECT app, 1 FROM clicks;\nEND",
		want: "== Physical Plan ==\nSink(table=[out_print]"},
	{name: "EXPLAIN PLAN FOR", fields: []string{"Explain.Stmt"}, sql: `EXPLAIN PLAN FOR SELECT app FROM clicks`, want: "Calc(select=[app])"},
	{name: "EXPLAIN CHANGELOG_MODE", sql: `EXPLAIN CHANGELOG_MODE SELECT app FROM clicks`, err: "1:9"},
	{name: "EXPLAIN ESTIMATED_COST", sql: `EXPLAIN ESTIMATED_COST, JSON_EXECUTION_PLAN SELECT app FROM clicks`, err: "1:9"},
	{name: "EXPLAIN PLAN_ADVICE", sql: `EXPLAIN PLAN_ADVICE INSERT INTO out_print SELECT app, n FROM clicks`, err: "1:9"},

	// ---- Statements pipesql does not run ----
	{name: "VALUES", sql: `VALUES (1), (2)`, want: "Values(tuples=[[1], [2]], columns=[EXPR$0])"},
	{name: "ALTER TABLE", sql: `ALTER TABLE clicks RENAME TO c2`, err: "1:1"},
	{name: "USE CATALOG", sql: `USE CATALOG c`, err: "1:1"},
	{name: "ADD JAR", sql: `ADD JAR '/x.jar'`, err: "1:1"},
	{name: "CREATE FUNCTION", sql: `CREATE FUNCTION f AS 'com.example.F'`, err: "1:8"},
	{name: "CREATE CATALOG", sql: `CREATE CATALOG c WITH ('type' = 'hive')`, err: "1:8"},
	{name: "DROP FUNCTION", sql: `DROP FUNCTION f`, err: "1:6"},
	{name: "SHOW CATALOGS", sql: `SHOW CATALOGS`, err: "1:6"},
	{name: "SHOW CURRENT CATALOG", sql: `SHOW CURRENT CATALOG`, err: "1:6"},
	{name: "SHOW TABLES FROM another database", sql: `SHOW TABLES FROM db`, err: "1:18", any: true},
	{name: "DELETE", sql: `DELETE FROM clicks`, err: "1:1"},

	// ---- MySQL syntax sqlparser would take: never Flink SQL, never accepted ----
	{name: "SQL_CALC_FOUND_ROWS", sql: `SELECT SQL_CALC_FOUND_ROWS app FROM clicks`, err: "1:8", any: true},
	{name: "STRAIGHT_JOIN", sql: `SELECT app FROM clicks STRAIGHT_JOIN clicks c2`, err: "1:38", any: true},
	{name: "index hint", sql: `SELECT app FROM clicks USE INDEX (i)`, err: "1:24", any: true},
	{name: "FOR UPDATE", sql: `SELECT app FROM clicks FOR UPDATE`, err: "1:24", any: true},
	{name: "LOCK IN SHARE MODE", sql: `SELECT app FROM clicks LOCK IN SHARE MODE`, err: "1:29", any: true},
	{name: "INTO OUTFILE", sql: `SELECT app INTO OUTFILE '/tmp/x' FROM clicks`, err: "1:12", any: true},
	{name: "PARTITION (p)", sql: `SELECT app FROM clicks PARTITION (p0)`, err: "1:24", any: true},
	{name: "COLLATE", sql: `SELECT app COLLATE utf8mb4_bin FROM clicks`, err: "1:12", any: true},
	{name: "WITH ROLLUP", sql: `SELECT app, COUNT(*) FROM clicks GROUP BY app WITH ROLLUP`, err: "1:47", any: true},
	{name: "GROUP BY ... ASC", sql: `SELECT app, COUNT(*) FROM clicks GROUP BY app ASC`, err: "1:47", any: true},
	{name: "<=>", sql: `SELECT app FROM clicks WHERE n <=> 1`, err: "1:34", any: true},
	{name: "JOIN ... USING", sql: `SELECT app FROM clicks JOIN clicks_v USING (app)`, err: "1:38", any: true},
	{name: "double-quoted string", sql: `SELECT app FROM clicks WHERE app = "x"`, err: "1:36", any: true},
}

// handledOutsidePlanner are the AST fields the planner never sees, and who handles them.
var handledOutsidePlanner = map[string]string{
	"Show.What":             "cmd/pipesql (SHOW TABLES, VIEWS, FUNCTIONS, JOBS) and Session.ShowCreate",
	"Show.Name":             "Session.ShowCreate (SHOW CREATE TABLE/VIEW) and Session.Describe (SHOW COLUMNS)",
	"Show.Like":             "shell.Runner (SHOW TABLES/VIEWS/FUNCTIONS/COLUMNS [NOT] LIKE | ILIKE)",
	"ShowLike.Pattern":      "shell.Runner (showFilter)",
	"ShowLike.Not":          "shell.Runner (showFilter)",
	"ShowLike.IgnoreCase":   "shell.Runner (showFilter)",
	"Describe.Name":         "Session.Describe",
	"StopJob.ID":            "the shell's STOP JOB",
	"StopJob.WithSavepoint": "the shell's STOP JOB ... WITH SAVEPOINT",
	"StopJob.WithDrain":     "the shell refuses STOP JOB ... WITH DRAIN",
	"RowField.Comment":      "documentation only: kept by Format, not by SHOW CREATE TABLE (types carry no field comments)",
}

func TestGrammarAudit(t *testing.T) {
	for _, c := range auditCases {
		t.Run(c.name, func(t *testing.T) {
			s := mustSession(t, auditDDL)
			out, err := auditRun(s, c)
			if c.err == "" {
				if err != nil {
					t.Fatalf("%s\nmust plan, but: %v", c.sql, err)
				}
				if !strings.Contains(out, c.want) {
					t.Fatalf("%s\nplanned, but shows no %q:\n%s", c.sql, c.want, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s\nmust be refused at %s, but was accepted:\n%s", c.sql, c.err, out)
			}
			var pe *sqlparser.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s\nerror has no position: %v", c.sql, err)
			}
			if got := fmt.Sprintf("%d:%d", pe.Pos.Line, pe.Pos.Col); got != c.err {
				t.Errorf("%s\nerror at %s, want %s: %v", c.sql, got, c.err, err)
			}
			switch {
			case c.any:
			case c.kind != nil:
				if !errors.Is(err, c.kind) {
					t.Errorf("%s\nerror is not %v: %v", c.sql, c.kind, err)
				}
			default:
				if !errors.Is(err, ErrUnsupported) && !errors.Is(err, sqlparser.ErrUnsupported) {
					t.Errorf("%s\nerror is not ErrUnsupported: %v", c.sql, err)
				}
				if !strings.Contains(pe.Msg, "unsupported") && !strings.Contains(pe.Msg, "not supported") {
					t.Errorf("%s\nerror does not say it is not supported: %v", c.sql, err)
				}
			}
		})
	}
}

// auditRun applies the catalog statements of the case and plans the rest, as runScript
// does, but returns the error itself; with show set, it returns that output instead.
func auditRun(s *Session, c auditCase) (string, error) {
	stmts, err := sqlparser.ParseScript("audit.sql", c.sql)
	if err != nil {
		return "", err
	}
	var plan []sqlparser.Statement
	for _, st := range stmts {
		switch x := st.(type) {
		case *sqlparser.Insert, *sqlparser.StatementSet, *sqlparser.QueryStatement:
			plan = append(plan, st)
			continue
		case *sqlparser.Explain:
			plan = append(plan, x.Stmt)
			continue
		}
		if err := s.Apply(st); err != nil {
			return "", err
		}
	}
	if c.show != "" {
		return runGolden(nil, s, &goldenCase{cmd: strings.Fields(c.show)[0], args: strings.Fields(c.show)[1:]}), nil
	}
	if len(plan) == 0 {
		return "", fmt.Errorf("nothing to plan and nothing to show")
	}
	prog, err := s.Plan(plan...)
	if err != nil {
		return "", err
	}
	for _, pl := range prog.Pipelines {
		if err := checkPlan(pl.Root); err != nil {
			return "", fmt.Errorf("invalid plan: %w", err)
		}
	}
	return Explain(prog), nil
}

// TestGrammarAuditCoversAST fails when a field of an AST node is named neither by an
// audit case nor in handledOutsidePlanner.
func TestGrammarAuditCoversAST(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../parser/ast.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, c := range auditCases {
		for _, fl := range c.fields {
			covered[fl] = true
		}
	}
	for fl := range handledOutsidePlanner {
		covered[fl] = true
	}
	var missing []string
	known := map[string]bool{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok || ts.Name.Name == "Pos" {
				continue
			}
			for _, field := range st.Fields.List {
				if id, ok := field.Type.(*ast.Ident); ok && id.Name == "Pos" {
					continue // positions: where, not what
				}
				for _, n := range field.Names {
					key := ts.Name.Name + "." + n.Name
					known[key] = true
					if !covered[key] {
						missing = append(missing, key)
					}
				}
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("AST fields no audit case proves applied or refused (add a case to auditCases):\n  %s", strings.Join(missing, "\n  "))
	}
	var stale []string
	for fl := range covered {
		if !known[fl] {
			stale = append(stale, fl)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("audit cases name fields the AST does not have: %s", strings.Join(stale, ", "))
	}
}
