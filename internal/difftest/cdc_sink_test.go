package difftest

import (
	"bufio"
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

	_ "github.com/pipesql/pipesql/connectors/kafka" // the kafka connector
	"github.com/pipesql/pipesql/connectors/kafka/kafkatest"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// Writing the CDC formats, read back two ways
//
// An updating query (a GROUP BY over JSON orders) is written by a filesystem sink in
// debezium-json, canal-json and maxwell-json. The files are read back by pipesql as a
// table of the same format, and decoded here with encoding/json (an insert adds its row,
// a delete removes it, as Flink writes an update: a delete and an insert); both must end
// as DuckDB's GROUP BY over the orders.

func TestCDCSinksRoundTrip(t *testing.T) {
	db := openDuck(t)
	rng := rand.New(rand.NewPCG(seed(t, 29), 7))
	dir := t.TempDir()
	var orders []string
	for i := range 3000 {
		cur := "null"
		if rng.IntN(20) > 0 {
			cur = fmt.Sprintf(`"c%d"`, rng.IntN(12))
		}
		orders = append(orders, fmt.Sprintf(`{"order_id":%d,"currency":%s,"amount":%d}`, i, cur, rng.IntN(1000)-100))
	}
	if err := os.MkdirAll(filepath.Join(dir, "orders"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "orders", "part.json"), []byte(strings.Join(orders, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := runDuck(context.Background(), db, fmt.Sprintf(`SELECT currency, SUM(amount) AS total, COUNT(*) AS n, MAX(amount) AS top
FROM read_json('%s', format = 'newline_delimited', columns = {order_id: 'BIGINT', currency: 'VARCHAR', amount: 'BIGINT'}) GROUP BY currency`,
		filepath.Join(dir, "orders", "part.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"debezium-json", "canal-json", "maxwell-json"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(dir, format)
			table := func(name string) string {
				return fmt.Sprintf("CREATE TABLE %s (currency STRING, total BIGINT, n BIGINT, top BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = '%s');\n", name, out, format)
			}
			ddl := fmt.Sprintf("CREATE TABLE orders (order_id BIGINT, currency STRING, amount BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", filepath.Join(dir, "orders"))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			runInsert(ctx, t, ddl+table("totals")+"INSERT INTO totals SELECT currency, SUM(amount), COUNT(*), MAX(amount) FROM orders GROUP BY currency;\n")

			got, err := RunPipesql(ctx, table("back")+"SELECT * FROM back;\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := Diff(got, want); diff != "" {
				t.Fatalf("read back by pipesql: %s", diff)
			}
			decoded, records := decodeCDCFiles(t, out, format)
			if records <= len(want) {
				t.Fatalf("%d records for %d groups: the changelog has no updates", records, len(want))
			}
			if diff := Diff(decoded, want); diff != "" {
				t.Fatalf("decoded with encoding/json: %s", diff)
			}
		})
	}
}

// TestCDCKafkaSinkRoundTrip writes an updating GROUP BY to Kafka (kfake, in process) in
// debezium-json, one record per change keyed by the group key; the topic is read back by
// pipesql as a debezium-json table and decoded here, both equal to DuckDB's GROUP BY.
func TestCDCKafkaSinkRoundTrip(t *testing.T) {
	db := openDuck(t)
	rng := rand.New(rand.NewPCG(seed(t, 37), 11))
	dir := t.TempDir()
	var orders []string
	for i := range 1000 {
		orders = append(orders, fmt.Sprintf(`{"order_id":%d,"currency":"c%d","amount":%d}`, i, rng.IntN(9), rng.IntN(1000)))
	}
	if err := os.MkdirAll(filepath.Join(dir, "orders"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "orders", "part.json"), []byte(strings.Join(orders, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := runDuck(context.Background(), db, fmt.Sprintf(`SELECT currency, SUM(amount) AS total, COUNT(*) AS n, MAX(amount) AS top
FROM read_json('%s', format = 'newline_delimited', columns = {order_id: 'BIGINT', currency: 'VARCHAR', amount: 'BIGINT'}) GROUP BY currency`,
		filepath.Join(dir, "orders", "part.json")))
	if err != nil {
		t.Fatal(err)
	}
	c := kafkatest.NewCluster(t, 1)
	c.CreateTopic(t, "totals", 3)
	table := func(name, extra string) string {
		return fmt.Sprintf(`CREATE TABLE %s (currency STRING, total BIGINT, n BIGINT, top BIGINT) WITH ('connector' = 'kafka', 'topic' = 'totals',
  'properties.bootstrap.servers' = '%s', 'key.format' = 'raw', 'key.fields' = 'currency', 'value.format' = 'debezium-json'%s);
`, name, c.Bootstrap(), extra)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ddl := fmt.Sprintf("CREATE TABLE orders (order_id BIGINT, currency STRING, amount BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", filepath.Join(dir, "orders"))
	runInsert(ctx, t, ddl+table("totals", "")+"INSERT INTO totals SELECT currency, SUM(amount), COUNT(*), MAX(amount) FROM orders GROUP BY currency;\n")

	got, err := RunPipesql(ctx, table("back", ", 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'")+"SELECT * FROM back;\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := Diff(got, want); diff != "" {
		t.Fatalf("read back by pipesql: %s", diff)
	}
	// Records of one key are in one partition, in order: decode each partition apart.
	byPart := map[int32][][]byte{}
	n := 0
	for _, r := range c.ReadAll(t, "totals") {
		if len(r.Value) == 0 {
			continue // a transaction marker
		}
		byPart[r.Partition] = append(byPart[r.Partition], r.Value)
		n++
	}
	if n <= len(want) {
		t.Fatalf("%d records for %d groups: the changelog has no updates", n, len(want))
	}
	var decoded []Row
	for _, records := range byPart {
		decoded = append(decoded, decodeCDC(t, records, "debezium-json")...)
	}
	if diff := Diff(decoded, want); diff != "" {
		t.Fatalf("decoded with encoding/json: %s", diff)
	}
}

// runInsert runs the INSERT that ends script to the end of its bounded inputs.
func runInsert(ctx context.Context, t *testing.T, script string) {
	t.Helper()
	stmts, err := parser.ParseScript("cdc.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	job, err := exec.NewJob(prog, exec.Options{BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// decodeCDCFiles applies the records of every visible file under dir, in the files'
// order (decodeCDC), and returns the rows that remain and how many records there were.
func decodeCDCFiles(t *testing.T, dir, format string) ([]Row, int) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files) // part files are numbered in the order they were written
	var records [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			records = append(records, []byte(sc.Text()))
		}
	}
	return decodeCDC(t, records, format), len(records)
}

// decodeCDC applies records of format in order and returns the rows that remain
// (currency, total, n, top). Each record must have exactly the fields Flink writes.
func decodeCDC(t *testing.T, records [][]byte, format string) []Row {
	t.Helper()
	type image struct {
		Currency *string `json:"currency"`
		Total    int64   `json:"total"`
		N        int64   `json:"n"`
		Top      int64   `json:"top"`
	}
	live := map[string]int{}
	rows := map[string]Row{}
	apply := func(img *image, add bool) {
		if img == nil {
			t.Fatal("a record without its row image")
		}
		r := Row{Val{C: Null}, Val{C: Int, I: img.Total}, Val{C: Int, I: img.N}, Val{C: Int, I: img.Top}}
		if img.Currency != nil {
			r[0] = Val{C: Str, S: *img.Currency}
		}
		k := r.String()
		if add {
			live[k]++
			rows[k] = r
			return
		}
		if live[k] == 0 {
			t.Fatalf("a delete of %s, which is not there", k)
		}
		live[k]--
	}
	for _, raw := range records {
		text := string(raw)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var keys []string
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		switch format {
		case "debezium-json":
			var rec struct {
				Before, After *image
				Op            string
			}
			if err := json.Unmarshal(raw, &rec); err != nil || !slices.Equal(keys, []string{"after", "before", "op"}) {
				t.Fatalf("not Flink's debezium-json: %s (%v)", text, err)
			}
			switch rec.Op {
			case "c":
				apply(rec.After, true)
			case "d":
				apply(rec.Before, false)
			default:
				t.Fatalf("op %q: %s", rec.Op, text)
			}
		case "canal-json":
			var rec struct {
				Data []*image
				Type string
			}
			if err := json.Unmarshal(raw, &rec); err != nil || !slices.Equal(keys, []string{"data", "type"}) || len(rec.Data) != 1 {
				t.Fatalf("not Flink's canal-json: %s (%v)", text, err)
			}
			if rec.Type != "INSERT" && rec.Type != "DELETE" {
				t.Fatalf("type %q: %s", rec.Type, text)
			}
			apply(rec.Data[0], rec.Type == "INSERT")
		default:
			var rec struct {
				Data *image
				Type string
			}
			if err := json.Unmarshal(raw, &rec); err != nil || !slices.Equal(keys, []string{"data", "type"}) {
				t.Fatalf("not Flink's maxwell-json: %s (%v)", text, err)
			}
			if rec.Type != "insert" && rec.Type != "delete" {
				t.Fatalf("type %q: %s", rec.Type, text)
			}
			apply(rec.Data, rec.Type == "insert")
		}
	}
	var out []Row
	for k, n := range live {
		for range n {
			out = append(out, rows[k])
		}
	}
	return out
}
