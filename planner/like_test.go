package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/parser"
)

// likeBase is Flink's documented example: a Kafka table the LIKE tables derive from.
const likeBase = `CREATE TABLE orders (
  user_id BIGINT,
  product STRING,
  order_time TIMESTAMP(3),
  cost AS CAST(user_id AS DOUBLE) * 2,
  part INT METADATA FROM 'partition' VIRTUAL,
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);
`

func applyScript(t *testing.T, script string) (*Session, error) {
	t.Helper()
	stmts, err := parser.ParseScript("like.sql", script)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession()
	for _, st := range stmts {
		if err := s.Apply(st); err != nil {
			return s, err
		}
	}
	return s, nil
}

func TestCreateTableLike(t *testing.T) {
	cases := []struct {
		name, ddl string
		want      string // SHOW CREATE TABLE derived
	}{
		{"default: including all, overwriting options",
			`CREATE TABLE derived (WATERMARK FOR order_time AS order_time) WITH ('topic' = 'orders2') LIKE orders (OVERWRITING WATERMARKS)`,
			"CREATE TABLE `derived` (\n  `user_id` BIGINT NOT NULL,\n  `product` STRING,\n  `order_time` TIMESTAMP(3),\n  `cost` AS CAST(user_id AS DOUBLE) * 2,\n  `part` INT METADATA FROM 'partition' VIRTUAL,\n  WATERMARK FOR `order_time` AS order_time,\n  CONSTRAINT `PK_user_id` PRIMARY KEY (`user_id`) NOT ENFORCED\n) WITH (\n  'connector' = 'upsert-kafka',\n  'topic' = 'orders2',\n  'properties.bootstrap.servers' = 'localhost:9092',\n  'key.format' = 'json',\n  'value.format' = 'json'\n)"},
		{"excluding all but generated, a new connector",
			`CREATE TABLE derived (note STRING) WITH ('connector' = 'print') LIKE orders (EXCLUDING ALL INCLUDING GENERATED)`,
			"CREATE TABLE `derived` (\n  `user_id` BIGINT,\n  `product` STRING,\n  `order_time` TIMESTAMP(3),\n  `cost` AS CAST(user_id AS DOUBLE) * 2,\n  `note` STRING\n) WITH (\n  'connector' = 'print'\n)"},
		{"overwriting a computed column in place",
			`CREATE TABLE derived (cost AS 0) WITH ('connector' = 'blackhole') LIKE orders (EXCLUDING OPTIONS EXCLUDING CONSTRAINTS EXCLUDING METADATA OVERWRITING GENERATED)`,
			"CREATE TABLE `derived` (\n  `user_id` BIGINT,\n  `product` STRING,\n  `order_time` TIMESTAMP(3),\n  `cost` AS 0,\n  WATERMARK FOR `order_time` AS order_time - INTERVAL '1' SECOND\n) WITH (\n  'connector' = 'blackhole'\n)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := applyScript(t, likeBase+c.ddl+";\n")
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ShowCreate(parser.ObjectName{"derived"})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("SHOW CREATE TABLE derived:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestCreateTableLikeErrors(t *testing.T) {
	cases := []struct{ ddl, want string }{
		{`CREATE TABLE d (product STRING) LIKE orders`, "16:17: a column named 'product' already exists in the base table orders"},
		{`CREATE TABLE d (cost AS 1) LIKE orders`, "a column named 'cost' already exists in the base table orders (OVERWRITING GENERATED replaces it)"},
		{`CREATE TABLE d (WATERMARK FOR order_time AS order_time) LIKE orders`, "already has a watermark (for order_time): write OVERWRITING WATERMARKS or EXCLUDING WATERMARKS"},
		{`CREATE TABLE d (PRIMARY KEY (product) NOT ENFORCED) LIKE orders`, "already has a primary key: write EXCLUDING CONSTRAINTS"},
		{`CREATE TABLE d WITH ('topic' = 'x') LIKE orders (INCLUDING OPTIONS)`, "already has option 'topic' = 'orders': write OVERWRITING OPTIONS or EXCLUDING OPTIONS"},
		{`CREATE TABLE d LIKE orders (OVERWRITING ALL)`, "OVERWRITING ALL is not a LIKE option"},
		{`CREATE TABLE d LIKE orders (OVERWRITING CONSTRAINTS)`, "OVERWRITING CONSTRAINTS is not a LIKE option"},
		{`CREATE TABLE d LIKE orders (INCLUDING OPTIONS EXCLUDING OPTIONS)`, "OPTIONS is already given (INCLUDING OPTIONS at 16:29)"},
		{`CREATE TABLE d LIKE ordres`, "unknown table 'ordres' after LIKE: did you mean 'orders'?"},
		{`CREATE VIEW v AS SELECT * FROM orders; CREATE TABLE d LIKE v`, "the source of LIKE, 'v', is a view"},
		{`CREATE TABLE d LIKE orders (EXCLUDING OPTIONS)`, "no 'connector' option"},
	}
	for _, c := range cases {
		_, err := applyScript(t, likeBase+c.ddl+";\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n got %v\nwant an error containing %q", c.ddl, err, c.want)
		}
		var pe *parser.Error
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("%s: %v is not positioned", c.ddl, err)
		}
	}
}
