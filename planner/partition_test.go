package planner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/parser"
)

// TestPartitionedBy: PARTITIONED BY keys reach the connector; keys that are not physical
// columns, named twice or on a connector without partitions are refused at the clause.
func TestPartitionedBy(t *testing.T) {
	s := mustSession(t, `CREATE TABLE p (a INT, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '/tmp/p', 'format' = 'json')`)
	if got := s.cat.tables["p"].Info().PartitionKeys; !slices.Equal(got, []string{"dt", "hr"}) {
		t.Fatalf("partition keys %v", got)
	}
	for _, c := range []struct{ sql, want string }{
		{`CREATE TABLE q (a INT, dt STRING) PARTITIONED BY (dtt) WITH ('connector' = 'filesystem', 'path' = '/tmp/q', 'format' = 'json')`, "ddl.sql:1:35: partition key 'dtt' is not a physical column of table 'q': did you mean 'dt'?"},
		{`CREATE TABLE q (a INT, dt STRING) PARTITIONED BY (dt, dt) WITH ('connector' = 'filesystem', 'path' = '/tmp/q', 'format' = 'json')`, "named twice"},
		{`CREATE TABLE q (dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '/tmp/q', 'format' = 'json')`, "every physical column"},
		{`CREATE TABLE q (a INT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'print')`, "ddl.sql:1:35: unsupported: PARTITIONED BY: connector 'print' does not write or read partitions"},
	} {
		st, err := parser.ParseStatement("ddl.sql", c.sql)
		if err != nil {
			t.Fatal(err)
		}
		err = NewSession().Apply(st)
		var pe *parser.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.sql, err, c.want)
		}
	}
}

// TestOrcRefused: ORC is refused with the reason at the format option.
func TestOrcRefused(t *testing.T) {
	st, err := parser.ParseStatement("ddl.sql", `CREATE TABLE o (a INT) WITH ('connector' = 'filesystem', 'path' = '/tmp/o', 'format' = 'orc')`)
	if err != nil {
		t.Fatal(err)
	}
	err = NewSession().Apply(st)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "ddl.sql:1:77: unsupported: format 'orc': there is no well-kept Go library") {
		t.Errorf("orc: %v", err)
	}
}
