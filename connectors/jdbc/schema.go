package jdbc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pipesql/pipesql/types"
)

// dbColumn is one column of the database table.
type dbColumn struct {
	name    string // as stored in the catalog
	typname string // pg_type.typname: int4, varchar, timestamptz ...
	display string // format_type: integer, character varying(20) ...
}

// dbTable is the database table a jdbc table reads or writes.
type dbTable struct {
	schema, name string
	columns      []dbColumn
	// uniques holds the column sets of its primary key and unique indexes, for
	// ON CONFLICT.
	uniques [][]string
}

// ident is the table's quoted, schema-qualified name for SQL.
func (t *dbTable) ident() string { return pgx.Identifier{t.schema, t.name}.Sanitize() }

func (t *dbTable) String() string { return t.schema + "." + t.name }

// column finds the database column a declared column maps to: the same name, else the
// name folded to lower case (an unquoted name in PostgreSQL's DDL, as Flink's
// PostgreSQL dialect writes it unquoted).
func (t *dbTable) column(name string) (dbColumn, bool) {
	for _, c := range t.columns {
		if c.name == name {
			return c, true
		}
	}
	lower := strings.ToLower(name)
	for _, c := range t.columns {
		if c.name == lower {
			return c, true
		}
	}
	return dbColumn{}, false
}

// describeTable looks up table-name in the database: its columns and unique keys.
func describeTable(ctx context.Context, conn *pgx.Conn, o *tableOptions) (*dbTable, error) {
	t := &dbTable{}
	err := conn.QueryRow(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, o.dbTable).Scan(&t.schema, &t.name)
	if err == pgx.ErrNoRows {
		return nil, fmt.Errorf("table %s: %w: 'table-name' = '%s' is not a table in %s", o.table, ErrNoTable, o.dbTable, o.where)
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: look up '%s' in %s: %w", o.table, o.dbTable, o.where, err)
	}
	rows, err := conn.Query(ctx, `SELECT a.attname, t.typname, format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, o.dbTable)
	if err != nil {
		return nil, fmt.Errorf("table %s: columns of %s: %w", o.table, t, err)
	}
	for rows.Next() {
		var c dbColumn
		if err := rows.Scan(&c.name, &c.typname, &c.display); err != nil {
			return nil, fmt.Errorf("table %s: columns of %s: %w", o.table, t, err)
		}
		t.columns = append(t.columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table %s: columns of %s: %w", o.table, t, err)
	}
	rows, err = conn.Query(ctx, `SELECT array_agg(a.attname::text ORDER BY k.ord)
		FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		GROUP BY i.indexrelid`, o.dbTable)
	if err != nil {
		return nil, fmt.Errorf("table %s: unique keys of %s: %w", o.table, t, err)
	}
	for rows.Next() {
		var cols []string
		if err := rows.Scan(&cols); err != nil {
			return nil, fmt.Errorf("table %s: unique keys of %s: %w", o.table, t, err)
		}
		t.uniques = append(t.uniques, cols)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table %s: unique keys of %s: %w", o.table, t, err)
	}
	return t, nil
}

// hasUnique reports whether the database table has a primary key or unique index on
// exactly the columns cols (in any order), which INSERT ... ON CONFLICT needs.
func (t *dbTable) hasUnique(cols []string) bool {
	for _, u := range t.uniques {
		if len(u) != len(cols) {
			continue
		}
		all := true
		for _, c := range cols {
			found := false
			for _, x := range u {
				found = found || x == c
			}
			all = all && found
		}
		if all {
			return true
		}
	}
	return false
}

// direction says whether a column is written (the database column must hold every
// value of the declared type) or read (the declared type must hold every value of the
// database column).
type direction bool

const (
	writing direction = true
	reading direction = false
)

// dbTypes are the PostgreSQL types each Flink type maps onto, after Flink's JDBC type
// mapping table for PostgreSQL; the first is the one the type maps to exactly. Writing,
// a value also goes into a wider column (an INT into a bigint or a numeric); reading,
// a narrower column also fits (an int2 into an INT).
var dbTypes = map[types.Kind][]string{
	types.Boolean:      {"bool"},
	types.TinyInt:      {"int2"},
	types.SmallInt:     {"int2"},
	types.Int:          {"int4"},
	types.BigInt:       {"int8"},
	types.Float:        {"float4"},
	types.Double:       {"float8"},
	types.Decimal:      {"numeric"},
	types.Char:         {"bpchar", "varchar", "text"},
	types.Varchar:      {"varchar", "text", "bpchar"},
	types.Bytes:        {"bytea"},
	types.Date:         {"date"},
	types.Time:         {"time"},
	types.Timestamp:    {"timestamp"},
	types.TimestampLTZ: {"timestamptz"},
}

// intRank orders the integer types by width.
var intRank = map[string]int{"int2": 1, "int4": 2, "int8": 3, "numeric": 4}

var flinkIntRank = map[types.Kind]int{types.TinyInt: 1, types.SmallInt: 1, types.Int: 2, types.BigInt: 3, types.Decimal: 4}

// fits reports whether the declared type t and the database type typname map onto
// each other in direction d.
func fits(t types.Type, typname string, d direction) bool {
	for _, n := range dbTypes[t.Kind] {
		if n == typname {
			return true
		}
	}
	fr, ok1 := flinkIntRank[t.Kind]
	dr, ok2 := intRank[typname]
	if ok1 && ok2 && t.Kind != types.Decimal {
		if d == writing {
			return dr >= fr
		}
		return fr >= dr && typname != "numeric"
	}
	if d == writing && t.Kind == types.Float && typname == "float8" {
		return true
	}
	if d == reading && t.Kind == types.Double && typname == "float4" {
		return true
	}
	if d == reading && t.Kind == types.Decimal && (typname == "int2" || typname == "int4" || typname == "int8") {
		return true
	}
	return false
}

// match maps each declared column onto its database column, checking the types; it
// returns the database columns in the order of cols.
func (t *dbTable) match(table string, cols types.Schema, d direction) ([]dbColumn, error) {
	out := make([]dbColumn, len(cols))
	for i, c := range cols {
		if _, ok := dbTypes[c.Type.Kind]; !ok {
			return nil, fmt.Errorf("table %s: column %s: %w: %s (pipesql's jdbc connector maps %s)",
				table, c.Name, ErrUnsupportedType, c.Type, mappedKinds())
		}
		dc, ok := t.column(c.Name)
		if !ok {
			names := make([]string, len(t.columns))
			for j, x := range t.columns {
				names[j] = x.name
			}
			return nil, fmt.Errorf("table %s: column %s: %w: %s has no column %s (its columns: %s)",
				table, c.Name, ErrSchemaMismatch, t, c.Name, strings.Join(names, ", "))
		}
		if !fits(c.Type, dc.typname, d) {
			verb := "cannot be written to"
			if d == reading {
				verb = "cannot be read from"
			}
			return nil, fmt.Errorf("table %s: column %s: %w: %s %s %s.%s of type %s (%s maps onto %s)",
				table, c.Name, ErrSchemaMismatch, c.Type, verb, t, dc.name, dc.display, c.Type.Kind, strings.Join(dbTypes[c.Type.Kind], " or "))
		}
		out[i] = dc
	}
	return out, nil
}

func mappedKinds() string {
	return "BOOLEAN, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, CHAR, VARCHAR, BYTES, DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ"
}
