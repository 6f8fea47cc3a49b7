package planner

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/parser"
)

const ttlDDL = `CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount INT) WITH ('connector' = 'datagen');
CREATE TABLE customers (id BIGINT, name STRING) WITH ('connector' = 'datagen');
CREATE TABLE shipments (order_id BIGINT) WITH ('connector' = 'datagen');`

// findJoins returns the regular joins of a plan, top first.
func findJoins(n Node) []*Join {
	var out []*Join
	if j, ok := n.(*Join); ok {
		out = append(out, j)
	}
	for _, c := range n.Children() {
		out = append(out, findJoins(c)...)
	}
	return out
}

// TestStateTTLHint: the hint's keys (aliases or table names, any case) give each side
// of its SELECT's joins their retention; a subquery's joins take their own SELECT's hint.
func TestStateTTLHint(t *testing.T) {
	s := mustSession(t, ttlDDL)
	for _, c := range []struct {
		sql  string
		want [][2]time.Duration // per join, top first
	}{
		{`SELECT /*+ STATE_TTL('o' = '1d', 'c' = '12h') */ o.id, c.name FROM orders o JOIN customers c ON o.customer_id = c.id`,
			[][2]time.Duration{{24 * time.Hour, 12 * time.Hour}}},
		{`SELECT /*+ STATE_TTL('CUSTOMERS' = '30 min') */ o.id FROM orders o LEFT JOIN customers ON o.customer_id = customers.id`,
			[][2]time.Duration{{0, 30 * time.Minute}}},
		{`SELECT /*+ STATE_TTL('x' = '2h') */ x.id FROM (SELECT /*+ STATE_TTL('s' = '1h') */ o.id FROM orders o JOIN shipments s ON o.id = s.order_id) x JOIN customers c ON x.id = c.id`,
			[][2]time.Duration{{2 * time.Hour, 0}, {0, time.Hour}}},
		{`SELECT o.id FROM orders o JOIN customers c ON o.customer_id = c.id`, [][2]time.Duration{{0, 0}}},
	} {
		p := mustPlan(t, s, c.sql)
		joins := findJoins(p.Pipelines[0].Root)
		if len(joins) != len(c.want) {
			t.Fatalf("%s: %d joins, want %d", c.sql, len(joins), len(c.want))
		}
		for i, j := range joins {
			if got := [2]time.Duration{j.LeftTTL, j.RightTTL}; got != c.want[i] {
				t.Errorf("%s: join %d has TTLs %v, want %v", c.sql, i, got, c.want[i])
			}
		}
	}
}

// TestStateTTLHintErrors: a key naming no join input, a bad duration, a key twice and
// the hint where no join is are errors at the key (or the hint's first key).
func TestStateTTLHintErrors(t *testing.T) {
	s := mustSession(t, ttlDDL)
	for _, c := range []struct{ sql, at, msg string }{
		{`SELECT /*+ STATE_TTL('o' = '1d', 'z' = '1h') */ o.id FROM orders o JOIN customers c ON o.customer_id = c.id`, "1:34", "STATE_TTL 'z': not an input"},
		{`SELECT /*+ STATE_TTL('o' = 'soon') */ o.id FROM orders o JOIN customers c ON o.customer_id = c.id`, "1:22", "not a positive duration"},
		{`SELECT /*+ STATE_TTL('o' = '1d', 'O' = '2d') */ o.id FROM orders o JOIN customers c ON o.customer_id = c.id`, "1:34", "twice"},
		{`SELECT /*+ STATE_TTL('orders' = '1d') */ customer_id, COUNT(*) FROM orders GROUP BY customer_id`, "1:22", "regular joins"},
	} {
		stmt, err := parser.ParseStatement("query.sql", c.sql)
		if err == nil {
			_, err = s.Plan(stmt)
		}
		var pe *parser.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: want a positioned error, got %v", c.sql, err)
		}
		if got := fmt.Sprintf("%d:%d", pe.Pos.Line, pe.Pos.Col); got != c.at || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v at %s, want %q at %s", c.sql, err, got, c.msg, c.at)
		}
	}
}
