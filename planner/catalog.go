package planner

import (
	"sort"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// pipesql has one catalog and one database, named as Flink names its defaults, so that
// qualified names copied from Flink scripts resolve.
const (
	DefaultCatalog  = "default_catalog"
	DefaultDatabase = "default_database"
)

// Catalog holds the tables and views a session created. Tables and views share one
// namespace, as Flink's temporary objects do.
type Catalog struct {
	tables map[string]*Table
	views  map[string]*View
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{tables: map[string]*Table{}, views: map[string]*View{}}
}

// Table is a table declared by CREATE TABLE, validated and typed.
type Table struct {
	Name    string
	Columns []TableColumn // every column in declaration order
	// Watermark is the WATERMARK clause, nil when the table has none.
	Watermark  *Watermark
	PrimaryKey []string
	// PartitionKeys are the columns of PARTITIONED BY, as declared; nil when none.
	PartitionKeys []string
	// Options are the WITH options as written; Connector is the factory of 'connector'.
	Options   map[string]string
	Connector *connectors.Factory
	// Format is the value format ('format' or 'value.format'), nil when the connector has none.
	Format *connectors.FormatFactory
	// Def is the statement that created the table (SHOW CREATE TABLE prints it).
	Def *parser.CreateTable
	// Hint is the OPTIONS hint of one read or write, already applied to Options; nil
	// for a table of the catalog (see withHint).
	Hint []parser.Option
}

// TableColumn is one column of a table.
type TableColumn struct {
	Name string
	// Type is the column's type; a rowtime column carries types.RowTime, a PROCTIME()
	// column types.ProcTime.
	Type types.Type
	Kind parser.ColumnKind
	// Expr is a computed column's expression, bound over the table's columns
	// (ColumnRef.Index is an index into Table.Columns).
	Expr Expr
	// MetadataKey is a metadata column's key (the column name when FROM was omitted).
	MetadataKey string
	// MetadataType is the type the connector gives the metadata key; a column declared
	// with another type is cast from it.
	MetadataType types.Type
	Virtual      bool
	Def          *parser.ColumnDef
}

// Persisted reports whether a sink writes the column: physical columns and metadata
// columns that are not VIRTUAL.
func (c *TableColumn) Persisted() bool {
	return c.Kind == parser.PhysicalColumn || (c.Kind == parser.MetadataColumn && !c.Virtual)
}

// Watermark is WATERMARK FOR Column AS Expr.
type Watermark struct {
	Column int  // index in Table.Columns
	Expr   Expr // bound over Table.Columns
	Def    *parser.WatermarkDef
}

// Schema returns every column of the table, as SELECT * sees them.
func (t *Table) Schema() types.Schema {
	s := make(types.Schema, len(t.Columns))
	for i, c := range t.Columns {
		s[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	return s
}

// PhysicalSchema returns the physical columns in declaration order: what the format
// encodes and decodes.
func (t *Table) PhysicalSchema() types.Schema {
	var s types.Schema
	for _, c := range t.Columns {
		if c.Kind == parser.PhysicalColumn {
			s = append(s, types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()})
		}
	}
	return s
}

// Info returns what the connector is told about the table.
func (t *Table) Info() connectors.TableInfo {
	opts := make(map[string]string, len(t.Options))
	for k, v := range t.Options {
		opts[k] = v
	}
	return connectors.TableInfo{
		Name:          t.Name,
		Options:       opts,
		Schema:        t.PhysicalSchema(),
		PrimaryKey:    append([]string(nil), t.PrimaryKey...),
		PartitionKeys: append([]string(nil), t.PartitionKeys...),
	}
}

// View is a view declared by CREATE VIEW: a named query, planned again wherever it is used.
type View struct {
	Name    string
	Query   *parser.Query
	Columns []string // the view's column list, nil when not written
	Schema  types.Schema
	Def     *parser.CreateView
}

// Table returns the table named name.
func (c *Catalog) Table(name string) (*Table, bool) {
	if t, ok := c.tables[name]; ok {
		return t, true
	}
	for k, t := range c.tables {
		if strings.EqualFold(k, name) {
			return t, true
		}
	}
	return nil, false
}

// View returns the view named name.
func (c *Catalog) View(name string) (*View, bool) {
	if v, ok := c.views[name]; ok {
		return v, true
	}
	for k, v := range c.views {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// TableNames returns the names of the tables, sorted.
func (c *Catalog) TableNames() []string { return sortedKeys(c.tables) }

// ViewNames returns the names of the views, sorted.
func (c *Catalog) ViewNames() []string { return sortedKeys(c.views) }

func (c *Catalog) allNames() []string {
	return append(c.TableNames(), c.ViewNames()...)
}

func (c *Catalog) exists(name string) bool {
	_, t := c.Table(name)
	_, v := c.View(name)
	return t || v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// objectName resolves a possibly qualified name to the object name in pipesql's single
// database: default_catalog.default_database.t and default_database.t are t.
func objectName(pos parser.Pos, n parser.ObjectName) (string, error) {
	switch len(n) {
	case 1:
		return n[0], nil
	case 2:
		if n[0] != DefaultDatabase {
			return "", errAt(pos, ErrUnknownTable, "unknown database '%s': pipesql has one, %s", n[0], DefaultDatabase)
		}
		return n[1], nil
	case 3:
		if n[0] != DefaultCatalog {
			return "", errAt(pos, ErrUnknownTable, "unknown catalog '%s': pipesql has one, %s", n[0], DefaultCatalog)
		}
		if n[1] != DefaultDatabase {
			return "", errAt(pos, ErrUnknownTable, "unknown database '%s': pipesql has one, %s", n[1], DefaultDatabase)
		}
		return n[2], nil
	}
	return "", errAt(pos, ErrUnknownTable, "invalid object name '%s'", n)
}
