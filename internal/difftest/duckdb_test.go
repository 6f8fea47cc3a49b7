package difftest

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

var (
	seedFlag    = flag.Uint64("difftest.seed", 0, "seed of the differential test (default: PIPESQL_DIFFTEST_SEED, else fixed for the short run and random for the soak run)")
	queriesFlag = flag.Int("difftest.queries", 0, "queries to run (default: 300, or 3000 under the soak tag)")
	failFlag    = flag.Int("difftest.maxfail", 3, "stop after this many failing queries")
)

// seed returns the seed to run with: the flag, else PIPESQL_DIFFTEST_SEED, else def.
func seed(t *testing.T, def uint64) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("PIPESQL_DIFFTEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PIPESQL_DIFFTEST_SEED=%q: %v", s, err)
		}
		return v
	}
	return def
}

// openDuck opens an in-memory DuckDB.
func openDuck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	t.Cleanup(func() { db.Close() })
	return db
}

// runDuck runs a query and normalizes its rows as pipesql's are.
func runDuck(ctx context.Context, db *sql.DB, query string) ([]Row, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	colTypes, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	var out []Row
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make(Row, len(cols))
		for i, v := range vals {
			r[i], err = duckVal(v)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", cols[i], err)
			}
			if r[i].C == Time && colTypes[i].DatabaseTypeName() == "DATE" {
				r[i] = Val{C: Date, I: v.(time.Time).Unix() / 86400}
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func duckVal(v any) (Val, error) {
	switch v := v.(type) {
	case nil:
		return Val{}, nil
	case bool:
		if v {
			return Val{C: Bool, I: 1}, nil
		}
		return Val{C: Bool}, nil
	case int8:
		return Val{C: Int, I: int64(v)}, nil
	case int16:
		return Val{C: Int, I: int64(v)}, nil
	case int32:
		return Val{C: Int, I: int64(v)}, nil
	case int64:
		return Val{C: Int, I: v}, nil
	case uint8:
		return Val{C: Int, I: int64(v)}, nil
	case uint16:
		return Val{C: Int, I: int64(v)}, nil
	case uint32:
		return Val{C: Int, I: int64(v)}, nil
	case uint64:
		return Val{C: Int, I: int64(v)}, nil
	case *big.Int:
		if !v.IsInt64() {
			return Val{}, fmt.Errorf("integer %s out of BIGINT range", v)
		}
		return Val{C: Int, I: v.Int64()}, nil
	case float32:
		return Val{C: Float, F: float64(v)}, nil
	case float64:
		return Val{C: Float, F: v}, nil
	case duckdb.Decimal:
		return Val{C: Float, F: v.Float64()}, nil
	case string:
		return Val{C: Str, S: v}, nil
	case time.Time:
		return Val{C: Time, I: v.UnixMicro()}, nil
	}
	return Val{}, fmt.Errorf("unexpected DuckDB value %T %v", v, v)
}

// Stats counts what a run did.
type Stats struct {
	Tables, Queries, Failed int
	NonEmpty                int            // queries whose result has rows
	Rows                    int            // rows in all results
	Shapes                  map[string]int // queries by the first word of their shape
	NonEmptyShapes          map[string]int // of those, the ones with a non-empty result
}

// runDiff runs n random queries from seed over random tables and fails t on every
// difference (up to -difftest.maxfail).
func runDiff(t *testing.T, seed uint64, n int, feat Features) Stats {
	t.Logf("seed %d (rerun with PIPESQL_DIFFTEST_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	db := openDuck(t)
	ctx := context.Background()
	gen := NewGenerator(rng, feat)
	st := Stats{Shapes: map[string]int{}, NonEmptyShapes: map[string]int{}}
	dir := t.TempDir()
	for st.Queries < n {
		tab := GenTable(rng, "t", 150)
		if err := tab.Write(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, tab.DuckLoad()); err != nil {
			t.Fatalf("seed %d: loading %s into DuckDB: %v", seed, tab.Dir, err)
		}
		st.Tables++
		for range 10 {
			if st.Queries >= n {
				break
			}
			st.Queries++
			q := gen.Query(tab)
			shape := strings.Fields(q.Shape)[0]
			st.Shapes[shape]++
			// Small batches put batch boundaries everywhere (0 is the default), and
			// checkpoints every millisecond put barriers between them.
			run := pipesqlRun{batch: []int{0, 0, 1, 2, 3, 7}[rng.IntN(6)]}
			if rng.IntN(5) == 0 {
				run.settings = "SET 'execution.checkpointing.interval' = '1 ms';\n"
			}
			msg, rows := check(ctx, db, tab, q, run)
			if rows > 0 {
				st.NonEmpty++
				st.Rows += rows
				st.NonEmptyShapes[shape]++
			}
			if msg != "" {
				st.Failed++
				t.Errorf("seed %d, table %d, query %d (%s):\n%s\n%s", seed, st.Tables, st.Queries, q.Shape, msg, report(tab, q, run))
				if st.Failed >= *failFlag {
					t.Fatalf("stopping after %d failures (seed %d)", st.Failed, seed)
				}
			}
		}
	}
	t.Logf("%d queries over %d tables, %d failed, %d with a non-empty result (%d rows in all); shapes %v, non-empty %v",
		st.Queries, st.Tables, st.Failed, st.NonEmpty, st.Rows, st.Shapes, st.NonEmptyShapes)
	return st
}

// pipesqlRun is how pipesql runs a query: exec.Options.BatchSize and SET statements.
type pipesqlRun struct {
	batch    int
	settings string
}

// check runs q through both engines and returns what differs, or "", and the number of
// rows DuckDB returned.
func check(ctx context.Context, db *sql.DB, tab *Table, q Query, run pipesqlRun) (string, int) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	want, err := runDuck(ctx, db, q.Duck)
	if err != nil {
		return fmt.Sprintf("DuckDB failed (a generator bug): %v", err), 0
	}
	got, err := RunPipesql(ctx, run.settings+tab.Settings()+tab.DDL()+q.Flink+";\n", run.batch)
	if err != nil {
		return fmt.Sprintf("pipesql failed: %v\nDuckDB result:\n%s", err, FormatRows(want)), len(want)
	}
	if d := Diff(got, want); d != "" {
		return fmt.Sprintf("results differ: %s\npipesql result:\n%sDuckDB result:\n%s", d, FormatRows(got), FormatRows(want)), len(want)
	}
	return "", len(want)
}

// report shows what reproduces a failure: the table, its data and both queries.
func report(tab *Table, q Query, run pipesqlRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- table DDL (%d rows, pipesql batch size %d):\n%s%s", len(tab.Rows), run.batch, run.settings+tab.Settings(), tab.DDL())
	for _, p := range tab.Paths {
		data, _ := os.ReadFile(p)
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) > 200 {
			lines = append(lines[:200], fmt.Sprintf("... (%d more lines)\n", len(lines)-200))
		}
		fmt.Fprintf(&b, "-- %s:\n%s", p, strings.Join(lines, ""))
	}
	fmt.Fprintf(&b, "-- pipesql query:\n%s;\n-- DuckDB query:\n%s;\n", q.Flink, q.Duck)
	return b.String()
}
