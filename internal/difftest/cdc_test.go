package difftest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// CDC streams against DuckDB
//
// A random history of inserts, updates (of the grouping key and of the value) and
// deletes of rows of one table, written as debezium-json, canal-json or maxwell-json
// records, is read by pipesql; DuckDB reads the table's final state, written as plain
// JSON. An aggregate of the changelog must end as DuckDB's aggregate of the final table:
// that needs every -U/-D to be retracted from its group (MIN/MAX and COUNT(DISTINCT)
// included) and a group whose rows are all deleted to be deleted.

type cdcRow struct {
	ID int64   `json:"id"`
	G  *string `json:"g"`
	V  *int    `json:"v"`
}

func (r cdcRow) obj() map[string]any {
	return map[string]any{"id": r.ID, "g": r.G, "v": r.V}
}

type cdcData struct {
	dir, final string
	format     string
	options    string
}

func randomCDCRow(rng *rand.Rand, id int64) cdcRow {
	r := cdcRow{ID: id}
	if rng.IntN(10) > 0 {
		g := fmt.Sprintf("g%d", rng.IntN(6))
		r.G = &g
	}
	if rng.IntN(8) > 0 {
		v := rng.IntN(40) - 5
		r.V = &v
	}
	return r
}

// writeCDC writes n changes in format (a file or two) and the final table.
func writeCDC(t *testing.T, rng *rand.Rand, n int, format string, schemaInclude bool) cdcData {
	t.Helper()
	d := cdcData{dir: t.TempDir(), format: format}
	d.final = filepath.Join(t.TempDir(), "final.json")
	if schemaInclude {
		d.options = ", 'debezium-json.schema-include' = 'true'"
	}
	live := map[int64]cdcRow{}
	var ids []int64
	next := int64(1)
	var lines []string
	emit := func(m map[string]any) {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	ts := int64(1700000000000)
	for range n {
		ts += int64(rng.IntN(1000))
		op := rng.IntN(20)
		switch {
		case op < 8 || len(ids) == 0: // insert
			r := randomCDCRow(rng, next)
			next++
			live[r.ID] = r
			ids = append(ids, r.ID)
			switch format {
			case "debezium-json":
				emit(debezium(schemaInclude, "c", nil, r.obj(), ts))
			case "canal-json":
				emit(map[string]any{"data": []any{r.obj()}, "old": nil, "type": "INSERT", "database": "inv", "table": "t", "ts": ts, "es": ts - 5, "isDdl": false})
			default:
				emit(map[string]any{"database": "inv", "table": "t", "type": "insert", "ts": ts / 1000, "data": r.obj()})
			}
		case op < 16: // update
			id := ids[rng.IntN(len(ids))]
			before := live[id]
			after := before
			if rng.IntN(2) == 0 {
				after.G = randomCDCRow(rng, id).G
			} else {
				after.V = randomCDCRow(rng, id).V
			}
			live[id] = after
			switch format {
			case "debezium-json":
				emit(debezium(schemaInclude, "u", before.obj(), after.obj(), ts))
			default:
				old := map[string]any{}
				if !eqStr(before.G, after.G) {
					old["g"] = before.G
				}
				if !eqInt(before.V, after.V) {
					old["v"] = before.V
				}
				if format == "canal-json" {
					emit(map[string]any{"data": []any{after.obj()}, "old": []any{old}, "type": "UPDATE", "database": "inv", "table": "t", "ts": ts})
				} else {
					emit(map[string]any{"database": "inv", "table": "t", "type": "update", "ts": ts / 1000, "data": after.obj(), "old": old})
				}
			}
		default: // delete
			i := rng.IntN(len(ids))
			id := ids[i]
			ids = slices.Delete(ids, i, i+1)
			r := live[id]
			delete(live, id)
			switch format {
			case "debezium-json":
				emit(debezium(schemaInclude, "d", r.obj(), nil, ts))
				if rng.IntN(2) == 0 {
					lines = append(lines, "") // Kafka's tombstone after a delete: a blank line here
				}
			case "canal-json":
				emit(map[string]any{"data": []any{r.obj()}, "type": "DELETE", "database": "inv", "table": "t", "ts": ts})
			default:
				emit(map[string]any{"database": "inv", "table": "t", "type": "delete", "ts": ts / 1000, "data": r.obj()})
			}
		}
		if format == "canal-json" && rng.IntN(15) == 0 {
			emit(map[string]any{"data": nil, "type": "CREATE", "isDdl": true, "database": "inv", "table": "t", "sql": "CREATE TABLE t (...)"})
			emit(map[string]any{"data": []any{randomCDCRow(rng, 999999).obj()}, "type": "INSERT", "database": "other", "table": "t", "ts": ts})
		}
	}
	half := len(lines) / 2
	for i, part := range [][]string{lines[:half], lines[half:]} {
		if err := os.WriteFile(filepath.Join(d.dir, fmt.Sprintf("c%d.json", i)), []byte(strings.Join(part, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var final strings.Builder
	for _, id := range ids {
		b, _ := json.Marshal(live[id].obj())
		final.Write(b)
		final.WriteByte('\n')
	}
	if err := os.WriteFile(d.final, []byte(final.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func eqStr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
func eqInt(a, b *int) bool    { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func debezium(schemaInclude bool, op string, before, after map[string]any, ts int64) map[string]any {
	p := map[string]any{"before": before, "after": after, "op": op, "ts_ms": ts,
		"source": map[string]any{"db": "inv", "schema": "public", "table": "t", "ts_ms": ts - 7}}
	if schemaInclude {
		return map[string]any{"schema": map[string]any{"type": "struct", "optional": false}, "payload": p}
	}
	return p
}

func (d cdcData) ddl() string {
	extra := ""
	if d.format == "canal-json" {
		extra = ", 'canal-json.database.include' = 'inv'"
	}
	return fmt.Sprintf(`CREATE TABLE t (id BIGINT, g STRING, v INT)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = '%s'%s%s);
`, d.dir, d.format, d.options, extra)
}

func (d cdcData) duck(q string) string {
	return strings.ReplaceAll(q, "FROM t", fmt.Sprintf("FROM read_json('%s', format = 'newline_delimited', columns = {id: 'BIGINT', g: 'VARCHAR', v: 'INTEGER'})", d.final))
}

// cdcQueries are pairs: pipesql's query, DuckDB's (the same where both agree).
var cdcQueries = [][2]string{
	{`SELECT * FROM t`, ``},
	{`SELECT g, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx FROM t GROUP BY g`, ``},
	{`SELECT g, COUNT(v) AS n, AVG(v) AS a, COUNT(DISTINCT v) AS d FROM t GROUP BY g`,
		`SELECT g, COUNT(v) AS n, CAST(TRUNC(AVG(v)) AS INTEGER) AS a, COUNT(DISTINCT v) AS d FROM t GROUP BY g`},
	{`SELECT g, MAX(v) AS mx, SUM(DISTINCT v) AS sd FROM t WHERE v > 3 GROUP BY g HAVING COUNT(*) > 1`, ``},
	{`SELECT n, COUNT(*) AS n_groups FROM (SELECT g, COUNT(*) AS n FROM t GROUP BY g) GROUP BY n`, ``},
	{`SELECT COUNT(*) AS n, MIN(g) AS first_g FROM t`, ``},
	{`SELECT DISTINCT g FROM t`, ``},
	{`SELECT g, id, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC, id) AS rn FROM t WHERE v IS NOT NULL) WHERE rn <= 2`, ``},
	{`SELECT g, COUNT(*) AS n FROM (SELECT g FROM t UNION ALL SELECT g FROM t WHERE v > 10) GROUP BY g`, ``},
	{`SELECT g, v, r FROM (SELECT g, v, RANK() OVER (PARTITION BY g ORDER BY v) AS r FROM t WHERE v IS NOT NULL) WHERE r <= 3`, ``},
}

// TestCDCAgainstDuckDB aggregates random CDC histories in every CDC format.
func TestCDCAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 7)
	formats := []struct {
		name   string
		schema bool
		set    string // a setting the round runs with
	}{{"debezium-json", false, ""}, {"canal-json", false, "'table.exec.mini-batch.enabled' = 'true'"},
		{"maxwell-json", false, ""}, {"debezium-json", true, "'table.exec.mini-batch.enabled' = 'true'"}}
	for round, f := range formats {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		d := writeCDC(t, rng, 300+rng.IntN(300), f.name, f.schema)
		batch := []int{1, 5, 0, 3}[round]
		for i, q := range cdcQueries {
			t.Run(fmt.Sprintf("%s-%v/q%d", f.name, f.schema, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				dq := q[1]
				if dq == "" {
					dq = q[0]
				}
				want, err := runDuck(ctx, db, d.duck(dq))
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, d.duck(dq))
				}
				script := d.ddl() + q[0] + ";\n"
				if f.set != "" {
					script = "SET " + f.set + ";\n" + script
				}
				got, err := RunPipesql(ctx, script, batch)
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
