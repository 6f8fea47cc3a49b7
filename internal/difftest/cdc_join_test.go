package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Regular joins of updating inputs against DuckDB
//
// Two random debezium-json histories (inserts, updates of the join key and of the
// value, deletes), t and u, joined by pipesql, every kind of regular join, on the
// grouping key (many matches a key), on the id (one) and over aggregates of each; DuckDB
// joins the final tables. The join's final state needs each side's -U/-D to retract the
// joined rows it made and an outer side's row to get its null-padded row back when its
// last match goes; semi and anti joins (IN, EXISTS, NOT EXISTS) over the same histories.

// cdcJoinQueries use {t} and {u} for the two tables.
var cdcJoinQueries = []string{
	`SELECT t.id, t.v, u.id AS uid, u.v AS uv FROM {t} JOIN {u} ON t.g = u.g`,
	`SELECT t.id, t.g, u.id AS uid FROM {t} LEFT JOIN {u} ON t.g = u.g AND u.v > t.v`,
	`SELECT t.id, u.id AS uid, u.g FROM {t} RIGHT JOIN {u} ON t.g = u.g AND t.v < 10`,
	`SELECT t.id, t.g, u.id AS uid, u.g AS ug FROM {t} FULL JOIN {u} ON t.id = u.id AND t.g = u.g`,
	`SELECT t.g, COUNT(*) AS n, SUM(u.v) AS s FROM {t} LEFT JOIN {u} ON t.id = u.id GROUP BY t.g`,
	`SELECT a.g, a.n, b.s FROM (SELECT g, COUNT(*) AS n FROM {t} GROUP BY g) a FULL JOIN (SELECT g, SUM(v) AS s FROM {u} GROUP BY g) b ON a.g = b.g`,
	`SELECT t.id, b.n FROM {t} JOIN (SELECT v, COUNT(*) AS n FROM {u} GROUP BY v) b ON t.v = b.v`,
	// Semi and anti joins of updating inputs: a retracted left row leaves the result, a
	// right row's retraction that takes a left row's last match moves it out of (semi) or
	// into (anti) the result.
	`SELECT t.id, t.v FROM {t} WHERE t.g IN (SELECT u.g FROM {u} WHERE u.v > 5)`,
	`SELECT t.id FROM {t} WHERE EXISTS (SELECT 1 FROM {u} WHERE u.g = t.g AND u.v > t.v)`,
	`SELECT t.id, t.g FROM {t} WHERE NOT EXISTS (SELECT 1 FROM {u} WHERE u.id = t.id AND u.g = t.g)`,
	`SELECT t.id, t.v FROM {t} WHERE t.g IN (SELECT g FROM {u} GROUP BY g HAVING COUNT(*) > 3)`,
	`SELECT t.g, COUNT(*) AS n FROM {t} WHERE NOT EXISTS (SELECT 1 FROM {u} WHERE u.v = t.v) GROUP BY t.g`,
}

func TestCDCJoinsAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	s := seed(t, 11)
	for round := range 3 {
		rng := rand.New(rand.NewPCG(s, uint64(round)))
		dt := writeCDC(t, rng, 200+rng.IntN(200), "debezium-json", false)
		du := writeCDC(t, rng, 200+rng.IntN(200), "debezium-json", round == 2)
		ddl := strings.Replace(dt.ddl(), "CREATE TABLE t ", "CREATE TABLE t ", 1) +
			strings.Replace(du.ddl(), "CREATE TABLE t ", "CREATE TABLE u ", 1)
		batch := []int{1, 7, 0}[round]
		for i, q := range cdcJoinQueries {
			t.Run(fmt.Sprintf("r%d/q%d", round, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				read := func(d cdcData, name string) string {
					return fmt.Sprintf("read_json('%s', format = 'newline_delimited', columns = {id: 'BIGINT', g: 'VARCHAR', v: 'INTEGER'}) AS %s", d.final, name)
				}
				dq := strings.NewReplacer("{t}", read(dt, "t"), "{u}", read(du, "u")).Replace(q)
				want, err := runDuck(ctx, db, dq)
				if err != nil {
					t.Fatalf("DuckDB: %v\n%s", err, dq)
				}
				pq := strings.NewReplacer("{t}", "t", "{u}", "u").Replace(q)
				got, err := RunPipesql(ctx, ddl+pq+";\n", batch)
				if err != nil {
					t.Fatalf("pipesql: %v\n%s", err, pq)
				}
				if diff := Diff(got, want); diff != "" {
					t.Fatalf("%s\nresults differ (batch %d): %s", pq, batch, diff)
				}
				if len(want) == 0 {
					t.Fatalf("%s: an empty result proves little", pq)
				}
			})
		}
	}
}
