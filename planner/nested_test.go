package planner

import (
	"errors"
	"strings"
	"testing"
)

func init() {
	auditCases = append(auditCases,
		auditCase{name: "ARRAY and MAP constructors", fields: []string{"Constructor.Kind", "Constructor.Args"},
			sql: `SELECT ARRAY[n, 1] AS a, MAP[app, n] AS m FROM clicks`, want: "ARRAY[n, 1] AS a, MAP[app, n] AS m"},
		auditCase{name: "element access", fields: []string{"Subscript.X", "Subscript.Index"},
			sql: `SELECT ARRAY[n, 2][n] AS e, MAP[app, n]['x'] AS v FROM clicks`, want: "ARRAY[n, 2][n] AS e, MAP[app, n]['x'] AS v"},
		auditCase{name: "field access after an element", fields: []string{"FieldAccess.X", "FieldAccess.Field"},
			sql: "SELECT ARRAY[(n, app)][1].`EXPR$1` AS f FROM clicks", want: "ARRAY[ROW(n, app)][1].`EXPR$1` AS f"},
		auditCase{name: "ARRAY written as a call", sql: `SELECT ARRAY(1, 2) FROM clicks`, err: "1:8"},
		auditCase{name: "CROSS JOIN UNNEST WITH ORDINALITY", fields: []string{"Unnest.Args", "Unnest.Ordinality", "Unnest.Alias", "Unnest.Columns"},
			sql:  `SELECT app, u.x, u.i FROM clicks CROSS JOIN UNNEST(ARRAY[n, 2]) WITH ORDINALITY AS u(x, i)`,
			want: "Correlate(invocation=[UNNEST(ARRAY[n, 2]) WITH ORDINALITY], select=[app, n, ts, x, i], joinType=[INNER])"},
		auditCase{name: "UNNEST of two collections", sql: `SELECT app FROM clicks CROSS JOIN UNNEST(ARRAY[n], ARRAY[n]) AS u(a, b)`, err: "1:52"},
		auditCase{name: "UNNEST in the select list", sql: `SELECT UNNEST(ARRAY[n]) FROM clicks`, err: "1:8"},
	)
}

const nestedDDL = `
CREATE TABLE ev (
  id BIGINT,
  r ROW<a INT NOT NULL, b ROW<c STRING, d ARRAY<INT>>>,
  nn ROW<x INT NOT NULL> NOT NULL,
  tags ARRAY<STRING>,
  props MAP<STRING, BIGINT>
) WITH ('connector' = 'datagen');
CREATE TABLE p (p ROW<id INT, name STRING>, id BIGINT) WITH ('connector' = 'datagen');
`

// TestNestedTypes checks the types of field and element accesses and constructors, and
// how dotted names resolve.
func TestNestedTypes(t *testing.T) {
	s := mustSession(t, nestedDDL)
	cases := []struct{ sql, want string }{
		// A field of a nullable row is nullable, even when the field is NOT NULL.
		{"SELECT r.a FROM ev", "a INT"},
		{"SELECT nn.x FROM ev", "x INT NOT NULL"},
		{"SELECT ev.r.b.c FROM ev", "c STRING"},
		{"SELECT e.r.b.c, r.b.d FROM ev AS e", "c STRING, d ARRAY<INT>"},
		{"SELECT r.b.d[1], tags[id], props['k'] FROM ev", "EXPR$0 INT, EXPR$1 STRING, EXPR$2 BIGINT"},
		{"SELECT CARDINALITY(tags), ELEMENT(r.b.d) FROM ev", "EXPR$0 INT, EXPR$1 INT"},
		{"SELECT (CAST(r AS ROW<x INT, y ROW<z STRING, w ARRAY<INT>>>)).y.z AS z, ROW(id, 'a').`EXPR$1` AS e, (r).b.d[1] AS d FROM ev",
			"z STRING, e CHAR(1) NOT NULL, d INT"},
		{"SELECT ARRAY[id, 1], MAP['a', id], ROW(id, 'x'), (1, 2) FROM ev",
			"EXPR$0 ARRAY<BIGINT> NOT NULL, EXPR$1 MAP<CHAR(1) NOT NULL, BIGINT> NOT NULL, " +
				"EXPR$2 ROW<`EXPR$0` BIGINT, `EXPR$1` CHAR(1) NOT NULL> NOT NULL, EXPR$3 ROW<`EXPR$0` INT NOT NULL, `EXPR$1` INT NOT NULL> NOT NULL"},
		// The table name wins over a column of the same name, as in Calcite: p.id is the
		// table's column id, p.p.id the field of its ROW column p.
		{"SELECT p.id, p.p.id AS fid, p.name FROM p", "id BIGINT, fid INT, name STRING"},
	}
	for _, c := range cases {
		prog, err := s.Plan(mustStatement(t, c.sql))
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		var cols []string
		for _, col := range prog.Pipelines[0].Root.Schema() {
			cols = append(cols, col.Name+" "+col.Type.String())
		}
		if got := strings.Join(cols, ", "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
}

func TestNestedTypeErrors(t *testing.T) {
	s := mustSession(t, nestedDDL)
	cases := []struct {
		sql  string
		kind error
		col  int
		msg  string
	}{
		{"SELECT r.z FROM ev", ErrUnknownColumn, 8, "unknown field 'z' in 'r'"},
		{"SELECT r.b.cc FROM ev", ErrUnknownColumn, 8, "did you mean 'c'?"},
		{"SELECT r.a.x FROM ev", ErrTypeMismatch, 8, "cannot read field 'x' of 'r.a', which is INT, not a ROW"},
		{"SELECT q.r FROM ev", ErrUnknownTable, 8, "unknown table 'q' in column reference 'q.r'"},
		{"SELECT q.r.a FROM ev", ErrUnknownTable, 8, "unknown table or column 'q' in 'q.r.a'"},
		{"SELECT tags['x'] FROM ev", ErrTypeMismatch, 12, "integer index"},
		{"SELECT props[1] FROM ev", ErrTypeMismatch, 13, "key of type STRING"},
		{"SELECT id[1] FROM ev", ErrTypeMismatch, 10, "an ARRAY or a MAP"},
		{"SELECT ARRAY[1, 'a'] FROM ev", ErrTypeMismatch, 8, "no common type"},
		{"SELECT ARRAY(1, 2) FROM ev", ErrUnsupported, 8, "write ARRAY[...]"},
		{"SELECT ITEM(tags, 1) FROM ev", ErrUnknownFunction, 8, "unknown function"},
		{"SELECT CARDINALITY(id) FROM ev", ErrTypeMismatch, 20, "CARDINALITY expects an ARRAY, a MAP or a MULTISET"},
	}
	for _, c := range cases {
		_, err := s.Plan(mustStatement(t, c.sql))
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: error %v, want kind %v", c.sql, err, c.kind)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), ":1:"+itoa(c.col)+":") {
			t.Errorf("%s: error %q, want %q at column %d", c.sql, err, c.msg, c.col)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestFingerprintOfUnnestedKeys: an aggregate keyed by unnested elements must not resume
// from the state of one keyed by the elements of another collection.
func TestFingerprintOfUnnestedKeys(t *testing.T) {
	s := mustSession(t, nestedDDL)
	fp := func(q string) string { return mustPlan(t, s, q).Fingerprint }
	a := fp(`SELECT x, COUNT(*) FROM ev CROSS JOIN UNNEST(tags) AS u(x) GROUP BY x`)
	if b := fp(`SELECT y, COUNT(*) AS n FROM ev CROSS JOIN UNNEST(tags) AS u(y) GROUP BY y`); a != b {
		t.Error("renaming the unnested column changed the fingerprint")
	}
	for _, q := range []string{
		`SELECT x, COUNT(*) FROM ev CROSS JOIN UNNEST(ARRAY[r.b.c]) AS u(x) GROUP BY x`,
		`SELECT x, COUNT(*) FROM ev LEFT JOIN UNNEST(tags) AS u(x) ON TRUE GROUP BY x`,
		`SELECT k, COUNT(*) FROM ev CROSS JOIN UNNEST(props) AS m(k, v) GROUP BY k`,
	} {
		if fp(q) == a {
			t.Errorf("fingerprint unchanged for\n%s", q)
		}
	}
}
