package planner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// lookup-test is a connector that declares lookups, as jdbc does.
func init() {
	connectors.Register(&connectors.Factory{
		Name:      "lookup-test",
		Options:   []connectors.OptionSpec{{Key: "lookup.cache", Type: connectors.StringOption, Source: true}},
		NewSource: planOnlySource,
	})
	connectors.Register(&connectors.Factory{Name: "jdbc", NewSink: planOnlySink,
		Options: []connectors.OptionSpec{{Key: "url", Type: connectors.StringOption, Sink: true}}})
	connectors.RegisterLookup("lookup-test", func(context.Context, connectors.LookupConfig) (connectors.LookupSource, error) {
		return nil, errPlanOnly
	})
}

const lookupDDL = `
CREATE TABLE orders (order_id BIGINT, customer_id INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'datagen');
CREATE TABLE customers (id BIGINT, name STRING, tier INT) WITH ('connector' = 'lookup-test');
CREATE TABLE sink (order_id BIGINT, name STRING) WITH ('connector' = 'blackhole');
`

func TestLookupJoinPlan(t *testing.T) {
	s := mustSession(t, lookupDDL)
	p := mustPlan(t, s, `INSERT INTO sink SELECT o.order_id, c.name FROM orders AS o
		JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c ON o.customer_id + 1 = c.id AND c.tier > 2`)
	got := Explain(p)
	want := "LookupJoin(table=[customers], joinType=[InnerJoin], lookup=[id=(customer_id + 1)], where=[(tier > 2)], select=[order_id, customer_id, ts, id, name, tier])"
	if !strings.Contains(got, want) {
		t.Fatalf("plan:\n%s\nwant a line\n%s", got, want)
	}
	var lj *LookupJoin
	for _, n := range chain(p.Pipelines[0].Root) {
		if x, ok := n.(*LookupJoin); ok {
			lj = x
		}
	}
	if lj == nil || len(lj.Keys) != 1 || lj.Keys[0] != 0 || lj.Out[len(lj.Out)-1].Type.Kind != types.Int {
		t.Fatalf("lookup join %+v", lj)
	}
	if ChangelogOf(lj) != InsertOnly {
		t.Fatalf("a lookup join is insert-only")
	}
}

func TestLookupJoinErrors(t *testing.T) {
	s := mustSession(t, lookupDDL)
	for _, c := range []struct{ sql, at, want string }{
		{`SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.ts AS c ON c.id = o.customer_id`, "1:64",
			"FOR SYSTEM_TIME AS OF a processing-time attribute"},
		{`SELECT * FROM orders AS o RIGHT JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c ON c.id = o.customer_id`, "1:",
			"RightOuterJoin lookup join"},
		{`SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc AS c ON c.tier > o.customer_id`, "1:",
			"needs an equality between a column of 'customers'"},
		{`SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.nope AS c ON c.id = o.customer_id`, "1:",
			"nope"},
	} {
		_, err := s.Plan(mustStatement(t, c.sql))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.at) {
			t.Errorf("%s:\n got %v\nwant %s at %s", c.sql, err, c.want, c.at)
		}
		if err != nil && c.want != "nope" && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", c.sql, err)
		}
	}
}

// A jdbc sink takes an updating query only with a primary key to upsert by.
func TestJDBCSinkUpdatingNeedsKey(t *testing.T) {
	s := mustSession(t, lookupDDL+`
CREATE TABLE counts (customer_id INT, n BIGINT) WITH ('connector' = 'jdbc', 'url' = 'u');
CREATE TABLE keyed (customer_id INT, n BIGINT, PRIMARY KEY (customer_id) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = 'u');`)
	_, err := s.Plan(mustStatement(t, "INSERT INTO counts SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id"))
	if !errors.Is(err, ErrUpdatingInput) || !strings.Contains(err.Error(), "only with a PRIMARY KEY") {
		t.Fatalf("got %v", err)
	}
	mustPlan(t, s, "INSERT INTO keyed SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id")
}
