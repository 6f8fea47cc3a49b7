package shell

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestShowLike runs SHOW TABLES/VIEWS/FUNCTIONS/COLUMNS with [NOT] LIKE | ILIKE, as
// Flink's SQL client lists them.
func TestShowLike(t *testing.T) {
	var out bytes.Buffer
	r := NewRunner(RunnerOptions{Out: &out})
	script := `CREATE TABLE orders (order_id BIGINT, user_id STRING, amount DOUBLE) WITH ('connector' = 'datagen');
CREATE TABLE users (id BIGINT) WITH ('connector' = 'datagen');
CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 10;
`
	stmts, err := r.ParseText("show.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if err := r.Execute(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		sql        string
		want, not_ []string
	}{
		{"SHOW TABLES LIKE 'ord%'", []string{"orders"}, []string{"users"}},
		{"SHOW TABLES FROM default_database NOT LIKE 'ord%'", []string{"users"}, []string{"orders"}},
		{"SHOW TABLES IN default_catalog.default_database", []string{"orders", "users"}, nil},
		{"SHOW VIEWS LIKE 'big\\_%'", []string{"big_orders"}, nil},
		{"SHOW COLUMNS FROM orders LIKE '%_id'", []string{"order_id", "user_id"}, []string{"amount"}},
		{"SHOW COLUMNS IN orders NOT ILIKE '%ID'", []string{"amount"}, []string{"order_id", "user_id"}},
		{"SHOW FUNCTIONS ILIKE 'json_v%'", []string{"JSON_VALUE"}, []string{"JSON_QUERY", "UPPER"}},
	}
	for _, c := range cases {
		out.Reset()
		stmts, err := r.ParseText("q.sql", c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if err := r.Execute(context.Background(), stmts[0]); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.sql, w, out.String())
			}
		}
		for _, w := range c.not_ {
			if strings.Contains(out.String(), w) {
				t.Errorf("%s: output has %q:\n%s", c.sql, w, out.String())
			}
		}
	}
	for _, c := range []struct{ sql, want string }{
		{"SHOW TABLES IN mydb", "1:16: unknown database 'mydb'"},
		{"SHOW COLUMNS orders", "expected FROM or IN"},
		{"SHOW COLUMNS FROM nope", "unknown table 'nope'"},
	} {
		stmts, err := r.ParseText("e.sql", c.sql)
		if err == nil {
			err = r.Execute(context.Background(), stmts[0])
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.sql, err, c.want)
		}
	}
}
