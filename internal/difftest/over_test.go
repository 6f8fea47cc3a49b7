package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// OVER aggregates and QUALIFY against DuckDB
//
// Random events in event-time order (a little out of order, never beyond the watermark
// delay, so no row is late), with many rows at the same second: the edges of ROWS and
// RANGE frames (exactly n rows back, a row exactly one interval back, peers at the same
// time) come up in every partition. pipesql processes the rows of one time in arrival
// order, so DuckDB orders ROWS frames and LAG by (ts, id), id being the line number;
// RANGE frames order by ts alone, peers included, as in Flink.

type overData struct{ dir string }

func writeOverData(t *testing.T, rng *rand.Rand, n int) overData {
	t.Helper()
	d := overData{dir: t.TempDir()}
	var b strings.Builder
	base := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	sec := 0
	for i := range n {
		sec += rng.IntN(3) // often the same second
		ts := sec
		if sec > 2 && rng.IntN(6) == 0 {
			ts -= rng.IntN(3) // out of order within the watermark delay
		}
		k, v, x := "null", "null", "null"
		if rng.IntN(12) > 0 {
			k = fmt.Sprintf(`"k%d"`, rng.IntN(4))
		}
		if rng.IntN(7) > 0 {
			v = fmt.Sprint(rng.IntN(50) - 10)
		}
		if rng.IntN(9) > 0 {
			x = fmt.Sprintf("%.2f", rng.Float64()*100)
		}
		at := base.Add(time.Duration(ts) * time.Second).Format("2006-01-02 15:04:05.000")
		fmt.Fprintf(&b, `{"id":%d,"k":%s,"v":%s,"x":%s,"ts":"%s"}`+"\n", i, k, v, x, at)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "events.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d overData) ddl() string {
	return fmt.Sprintf(`CREATE TABLE events (id BIGINT, k STRING, v INT, x DOUBLE, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, d.dir)
}

func (d overData) duck(q string) string {
	return strings.ReplaceAll(q, "FROM events", fmt.Sprintf(
		"FROM read_json('%s/*.json', format = 'newline_delimited', columns = {id: 'BIGINT', k: 'VARCHAR', v: 'INTEGER', x: 'DOUBLE', ts: 'TIMESTAMP'})", d.dir))
}

// overQueries are pairs of the same query in Flink SQL and DuckDB's.
var overQueries = [][2]string{
	{`SELECT id, k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM events`,
		`SELECT id, k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM events`},
	{`SELECT id, COUNT(*) OVER (PARTITION BY k ORDER BY ts ROWS 1 PRECEDING), COUNT(v) OVER (PARTITION BY k ORDER BY ts ROWS 1 PRECEDING), MIN(x) OVER (PARTITION BY k ORDER BY ts ROWS 1 PRECEDING) FROM events`,
		`SELECT id, COUNT(*) OVER (PARTITION BY k ORDER BY ts, id ROWS 1 PRECEDING), COUNT(v) OVER (PARTITION BY k ORDER BY ts, id ROWS 1 PRECEDING), MIN(x) OVER (PARTITION BY k ORDER BY ts, id ROWS 1 PRECEDING) FROM events`},
	{`SELECT id, MAX(v) OVER w, AVG(x) OVER w, AVG(v) OVER w FROM events WINDOW w AS (ORDER BY ts ROWS BETWEEN 4 PRECEDING AND CURRENT ROW)`,
		`SELECT id, MAX(v) OVER w, AVG(x) OVER w, CAST(trunc(AVG(v) OVER w) AS INTEGER) FROM events WINDOW w AS (ORDER BY ts, id ROWS BETWEEN 4 PRECEDING AND CURRENT ROW)`},
	{`SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN CURRENT ROW AND CURRENT ROW) FROM events`,
		`SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY ts, id ROWS BETWEEN CURRENT ROW AND CURRENT ROW) FROM events`},
	{`SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) AS s, COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) AS c FROM events`,
		`SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL 3 SECOND PRECEDING AND CURRENT ROW) AS s, COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL 3 SECOND PRECEDING AND CURRENT ROW) AS c FROM events`},
	{`SELECT id, MIN(v) OVER w, MAX(x) OVER w, FIRST_VALUE(v) OVER w, LAST_VALUE(x) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts RANGE INTERVAL '1' MINUTE PRECEDING)`,
		`SELECT id, MIN(v) OVER w, MAX(x) OVER w, first_value(v IGNORE NULLS) OVER w, last_value(x IGNORE NULLS) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL 1 MINUTE PRECEDING AND CURRENT ROW)`},
	{`SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '0' SECOND PRECEDING AND CURRENT ROW) FROM events`,
		`SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN CURRENT ROW AND CURRENT ROW) FROM events`},
	{`SELECT id, k, SUM(v) OVER w, COUNT(x) OVER w, MAX(v) OVER w, FIRST_VALUE(x) OVER w, LAST_VALUE(v) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts)`,
		`SELECT id, k, SUM(v) OVER w, COUNT(x) OVER w, MAX(v) OVER w, first_value(x IGNORE NULLS) OVER w, last_value(v IGNORE NULLS) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`},
	{`SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), AVG(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM events`,
		`SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), AVG(x) OVER (PARTITION BY k ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM events`},
	{`SELECT id, LAG(v) OVER w, LAG(v, 3) OVER w, LAG(x, 2, -1.0) OVER w, LAG(v, 0) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts ROWS 1 PRECEDING)`,
		`SELECT id, LAG(v) OVER w, LAG(v, 3) OVER w, LAG(x, 2, -1.0) OVER w, LAG(v, 0) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY ts, id)`},
	{`SELECT id, v, v - LAG(v) OVER (PARTITION BY k ORDER BY ts) AS delta FROM events WHERE v IS NOT NULL`,
		`SELECT id, v, v - LAG(v) OVER (PARTITION BY k ORDER BY ts, id) AS delta FROM events WHERE v IS NOT NULL`},
	{`SELECT id, s FROM (SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS 3 PRECEDING) AS s FROM events) WHERE s > 20`,
		`SELECT id, s FROM (SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts, id ROWS 3 PRECEDING) AS s FROM events) WHERE s > 20`},
	{`SELECT id, k, SUM(v) OVER w AS s FROM events WINDOW w AS (PARTITION BY k ORDER BY ts ROWS 2 PRECEDING) QUALIFY s > 15`,
		`SELECT id, k, SUM(v) OVER w AS s FROM events WINDOW w AS (PARTITION BY k ORDER BY ts, id ROWS 2 PRECEDING) QUALIFY s > 15`},
	// Top-N over an updating input: UpdateFastStrategy (a COUNT ordered DESC) and
	// RetractStrategy (a SUM), ties sharing a RANK.
	{`SELECT k, m, n FROM (SELECT k, m, n, RANK() OVER (PARTITION BY k ORDER BY n DESC) AS r FROM (SELECT k, MOD(v, 4) AS m, COUNT(*) AS n FROM events GROUP BY k, MOD(v, 4))) WHERE r <= 2`,
		`SELECT k, m, n FROM (SELECT k, m, n, RANK() OVER (PARTITION BY k ORDER BY n DESC) AS r FROM (SELECT k, v % 4 AS m, COUNT(*) AS n FROM events GROUP BY k, v % 4)) WHERE r <= 2`},
	{`SELECT k, m, s, r FROM (SELECT k, m, s, RANK() OVER (PARTITION BY k ORDER BY s DESC) AS r FROM (SELECT k, MOD(v, 4) AS m, SUM(v) AS s FROM events GROUP BY k, MOD(v, 4))) WHERE r <= 2`,
		`SELECT k, m, s, r FROM (SELECT k, m, s, RANK() OVER (PARTITION BY k ORDER BY s DESC NULLS LAST) AS r FROM (SELECT k, v % 4 AS m, SUM(v) AS s FROM events GROUP BY k, v % 4)) WHERE r <= 2`},
	// Processing time: ROWS frames and LAG follow arrival order (one file, one reader).
	{`SELECT id, COUNT(v) OVER w, SUM(v) OVER w, LAG(id) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY pt ROWS 2 PRECEDING)`,
		`SELECT id, COUNT(v) OVER w, SUM(v) OVER w, LAG(id) OVER w FROM events WINDOW w AS (PARTITION BY k ORDER BY id ROWS 2 PRECEDING)`},
	// QUALIFY over the Top-N and deduplication planning.
	{`SELECT id, k, v FROM events QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) <= 2`,
		`SELECT id, k, v FROM events QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC NULLS LAST, id) <= 2`},
	{`SELECT id, k, v, RANK() OVER (PARTITION BY k ORDER BY v) AS r FROM events QUALIFY r <= 3`,
		`SELECT id, k, v, RANK() OVER (PARTITION BY k ORDER BY v NULLS FIRST) AS r FROM events QUALIFY r <= 3`},
	{`SELECT id, k, ts FROM events QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) = 1`,
		`SELECT id, k, ts FROM events QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts, id) = 1`},
}

// TestOverAgainstDuckDB runs every OVER query over a few random inputs and batch sizes.
func TestOverAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 13)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeOverData(t, rng, 200+rng.IntN(300))
		batch := []int{1, 7, 0}[round]
		for i, q := range overQueries {
			t.Run(fmt.Sprintf("round%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				want, err := runDuck(ctx, db, d.duck(q[1]))
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, d.duck(q[1]))
				}
				got, err := RunPipesql(ctx, d.ddl()+q[0]+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, q[0])
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", q[0], batch, diff)
				}
				if len(want) == 0 {
					t.Fatalf("%s: an empty result proves little", q[0])
				}
			})
		}
	}
}
