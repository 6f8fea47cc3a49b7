package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// bidTable writes the Bid table of Flink's windowing documentation as JSON and returns
// the DDL of a table over it.
func bidTable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data := `{"bidtime": "2020-04-15 08:07:00", "price": 2, "item": "A"}
{"bidtime": "2020-04-15 08:11:00", "price": 3, "item": "B"}
{"bidtime": "2020-04-15 08:05:00", "price": 4, "item": "C"}
{"bidtime": "2020-04-15 08:09:00", "price": 5, "item": "D"}
{"bidtime": "2020-04-15 08:13:00", "price": 1, "item": "E"}
{"bidtime": "2020-04-15 08:17:00", "price": 6, "item": "F"}
`
	if err := os.WriteFile(filepath.Join(dir, "bid.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`CREATE TABLE Bid (
  bidtime TIMESTAMP(3),
  price BIGINT,
  item STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`, dir)
}

// runSelect plans and runs a query and returns its rows with their kinds.
func runSelect(t *testing.T, script string) []string {
	t.Helper()
	prog := planSQL(t, script)
	var mu sync.Mutex
	var got []string
	j, err := NewJob(prog, Options{Collect: func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, k.String()+rowString(r))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWindowQueriesFromSQL runs the window queries of Flink's documentation, in the
// table-function and the legacy group-window syntax, and compares with the results it prints.
func TestWindowQueriesFromSQL(t *testing.T) {
	tests := []struct {
		name, query string
		want        []string
	}{
		{
			name: "tumble",
			query: `SELECT window_start, window_end, SUM(price) AS total
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end`,
			want: []string{
				"+I(2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10)",
			},
		},
		{
			name: "legacy tumble",
			query: `SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE) AS ws, TUMBLE_END(bidtime, INTERVAL '10' MINUTE) AS we, SUM(price) AS total
FROM Bid GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE)`,
			want: []string{
				"+I(2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10)",
			},
		},
		{
			name: "hop",
			query: `SELECT window_start, window_end, SUM(price) AS total
FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end`,
			want: []string{
				"+I(2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11)",
				"+I(2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 15)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10)",
				"+I(2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000, 6)",
			},
		},
		{
			name: "cumulate",
			query: `SELECT window_start, window_end, SUM(price) AS total
FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end`,
			want: []string{
				"+I(2020-04-15 08:00:00.000, 2020-04-15 08:06:00.000, 4)",
				"+I(2020-04-15 08:00:00.000, 2020-04-15 08:08:00.000, 6)",
				"+I(2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:12:00.000, 3)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:14:00.000, 4)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:16:00.000, 4)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:18:00.000, 10)",
				"+I(2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10)",
			},
		},
		{
			name: "window table function",
			query: `SELECT item, window_start, window_end
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) WHERE price > 2`,
			want: []string{
				"+I(B, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000)",
				"+I(C, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000)",
				"+I(D, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000)",
				"+I(F, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000)",
			},
		},
		{
			name:  "group aggregate",
			query: `SELECT price > 3 AS big, COUNT(*) AS n FROM Bid GROUP BY price > 3`,
			want: []string{
				"+I(FALSE, 1)", "-U(FALSE, 1)", "+U(FALSE, 2)", "+I(TRUE, 1)", "-U(TRUE, 1)", "+U(TRUE, 2)",
				"-U(FALSE, 2)", "+U(FALSE, 3)", "-U(TRUE, 2)", "+U(TRUE, 3)",
			},
		},
		{
			name:  "values",
			query: `SELECT 1 + 1 AS two, UPPER('x') AS x`,
			want:  []string{"+I(2, X)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runSelect(t, bidTable(t)+tt.query+";")
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestInsertIntoFilesystem runs an INSERT with a Calc after the window aggregate into the
// real filesystem sink and reads back what it wrote.
func TestInsertIntoFilesystem(t *testing.T) {
	out := t.TempDir()
	prog := planSQL(t, bidTable(t)+fmt.Sprintf(`
CREATE TABLE totals (ws STRING, total BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO totals
SELECT DATE_FORMAT(window_start, 'HH:mm') AS ws, SUM(price) AS total
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;`, out))
	j, err := NewJob(prog, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(out, "part-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no part files in %s (%v)", out, err)
	}
	var got []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec struct {
				WS    string `json:"ws"`
				Total int64  `json:"total"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			got = append(got, fmt.Sprintf("%s=%d", rec.WS, rec.Total))
		}
	}
	slices.Sort(got)
	if want := []string{"08:00=11", "08:10=10"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	names := []string{}
	for _, m := range j.Metrics().Operators {
		names = append(names, m.Name)
	}
	if want := []string{"source Bid", "window aggregate", "calc", "sink totals"}; !slices.Equal(names, want) {
		t.Fatalf("operators %v, want %v", names, want)
	}
}
