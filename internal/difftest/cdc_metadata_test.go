package difftest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The metadata of a CDC format on a filesystem table
//
// A debezium-json history of customers (creates, updates, deletes, each with its source
// block) is read by pipesql with debezium-json's metadata (source.timestamp,
// source.database, source.table) and the file's (file.name) as VIRTUAL columns. A
// delete's -D carries the delete record's metadata, not that of the row it removes (as in
// Flink), so the table is normalized by its key (table.exec.source.cdc-events-duplicate),
// which retracts the row it kept: the final rows, each with the metadata of the record
// that made it, equal DuckDB's reading of the same records (the last record per id,
// unless a delete).

func TestCDCFileMetadataAgainstDuckDB(t *testing.T) {
	db := openDuck(t)
	rng := rand.New(rand.NewPCG(seed(t, 41), 13))
	dir := t.TempDir()
	marshal := func(m any) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	live := map[int]string{}
	var records []string
	for i := range 500 {
		id := rng.IntN(60)
		name := fmt.Sprintf("n%d", rng.IntN(1000))
		source := map[string]any{"ts_ms": base + int64(i)*1500, "db": fmt.Sprintf("db%d", rng.IntN(3)), "table": "customers"}
		rec := map[string]any{"seq": i, "source": source, "ts_ms": base + int64(i)*1500 + 7}
		old, ok := live[id]
		switch {
		case !ok:
			rec["before"], rec["after"], rec["op"] = nil, map[string]any{"id": id, "name": name}, "c"
			live[id] = name
		case rng.IntN(3) > 0:
			rec["before"], rec["after"], rec["op"] = map[string]any{"id": id, "name": old}, map[string]any{"id": id, "name": name}, "u"
			live[id] = name
		default:
			rec["before"], rec["after"], rec["op"] = map[string]any{"id": id, "name": old}, nil, "d"
			delete(live, id)
		}
		records = append(records, marshal(rec))
	}
	if err := os.MkdirAll(filepath.Join(dir, "customers"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "customers", "part.json")
	if err := os.WriteFile(file, []byte(strings.Join(records, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`CREATE TABLE customers (
  id INT,
  file STRING METADATA FROM 'file.name' VIRTUAL,
  name STRING,
  changed TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL,
  origin_db STRING METADATA FROM 'source.database' VIRTUAL,
  origin_table STRING METADATA FROM 'source.table' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
`, filepath.Join(dir, "customers"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want, err := runDuck(ctx, db, fmt.Sprintf(`SELECT after.id, after.name, 'part.json', make_timestamp(source.ts_ms * 1000), source.db, source."table", make_timestamp(ts_ms * 1000)
FROM (SELECT *, row_number() OVER (PARTITION BY coalesce(after.id, before.id) ORDER BY seq DESC) AS rn
  FROM read_json('%s', format = 'newline_delimited', columns = {seq: 'INTEGER', before: 'STRUCT(id INTEGER, name VARCHAR)',
    after: 'STRUCT(id INTEGER, name VARCHAR)', op: 'VARCHAR', source: 'STRUCT(ts_ms BIGINT, db VARCHAR, "table" VARCHAR)', ts_ms: 'BIGINT'}))
WHERE rn = 1 AND op <> 'd'`, file))
	if err != nil {
		t.Fatal(err)
	}
	got, err := RunPipesql(ctx, ddl+"SET 'table.local-time-zone' = 'UTC';\nSET 'table.exec.source.cdc-events-duplicate' = 'true';\nSELECT id, name, file, CAST(changed AS TIMESTAMP(3)), origin_db, origin_table, CAST(ingested AS TIMESTAMP(3)) FROM customers;\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := Diff(got, want); diff != "" {
		t.Fatalf("results differ: %s", diff)
	}
	if len(want) < 20 {
		t.Fatalf("%d rows prove little", len(want))
	}
}
