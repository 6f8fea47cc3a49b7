package planner

import (
	"errors"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// createTable validates CREATE TABLE and adds the table to the catalog.
func (s *Session) createTable(ct *parser.CreateTable) error {
	name, err := objectName(ct.At, ct.Name)
	if err != nil {
		return err
	}
	if s.cat.exists(name) {
		if ct.IfNotExists {
			return nil
		}
		return errAt(ct.At, ErrAlreadyExists, "table or view '%s' already exists", name)
	}
	if ct.Like != nil {
		if ct, err = s.likeDefinition(ct); err != nil {
			return err
		}
	}
	t, err := buildTable(ct, name)
	if err != nil {
		return err
	}
	s.cat.tables[name] = t
	return nil
}

// likeDefinition returns the definition of a CREATE TABLE ... LIKE: the base table's
// merged with ct's (see mergeLike).
func (s *Session) likeDefinition(ct *parser.CreateTable) (*parser.CreateTable, error) {
	l := ct.Like
	src, err := objectName(l.At, l.Source)
	if err != nil {
		return nil, err
	}
	base, ok := s.cat.Table(src)
	if !ok {
		if _, view := s.cat.View(src); view {
			return nil, errAt(l.At, ErrUnknownTable, "the source of LIKE, '%s', is a view: LIKE takes a table", src)
		}
		return nil, errAt(l.At, ErrUnknownTable, "unknown table '%s' after LIKE%s", src, didYouMean(src, s.cat.TableNames()))
	}
	return mergeLike(base, ct)
}

// buildTable types the columns of ct, validates its options against its connector and
// formats, and binds its metadata, computed columns, watermark and primary key.
func buildTable(ct *parser.CreateTable, name string) (*Table, error) {
	var err error
	t := &Table{Name: name, Def: ct}
	seen := map[string]bool{}
	for i := range ct.Columns {
		cd := &ct.Columns[i]
		if seen[strings.ToLower(cd.Name)] {
			return nil, errAt(cd.At, ErrAlreadyExists, "column '%s' is declared twice", cd.Name)
		}
		seen[strings.ToLower(cd.Name)] = true
		col := TableColumn{Name: cd.Name, Kind: cd.Kind, Virtual: cd.Virtual, Def: cd}
		if cd.Kind != parser.ComputedColumn {
			if cd.Type == nil {
				return nil, errAt(cd.At, ErrTypeMismatch, "column '%s' has no type", cd.Name)
			}
			if col.Type, err = convertType(*cd.Type); err != nil {
				return nil, err
			}
		}
		t.Columns = append(t.Columns, col)
	}
	physical := t.PhysicalSchema()
	vo, err := validateOptions(ct, name, physical)
	if err != nil {
		return nil, err
	}
	t.Options, t.Connector = vo.options, vo.connector
	for _, tf := range vo.formats {
		if tf.key == "format" || (tf.key == "value.format" && t.Format == nil) {
			t.Format = tf.factory
		}
	}
	if err := checkFormatTypes(ct, vo); err != nil {
		return nil, err
	}
	if err := checkFormatSchema(ct, name, vo, physical); err != nil {
		return nil, err
	}
	if err := t.bindMetadata(); err != nil {
		return nil, err
	}
	if err := t.bindComputed(); err != nil {
		return nil, err
	}
	if err := t.bindWatermark(ct.Watermark); err != nil {
		return nil, err
	}
	if err := t.bindPrimaryKey(ct.PrimaryKey); err != nil {
		return nil, err
	}
	if err := t.bindPartitionKeys(ct); err != nil {
		return nil, err
	}
	if f := t.Connector; f.Validate != nil {
		if err := f.Validate(t.Info()); err != nil {
			return nil, validateError(ct, name, err)
		}
	}
	return t, nil
}

// bindPartitionKeys checks PARTITIONED BY: the connector must write partitions (only
// filesystem does), and each key must be a physical column, named once.
func (t *Table) bindPartitionKeys(ct *parser.CreateTable) error {
	if ct.PartitionBy == nil {
		return nil
	}
	if !t.Connector.Partitioned {
		return errAt(ct.PartitionAt, ErrUnsupported, "unsupported: PARTITIONED BY: connector '%s' does not write or read partitions (filesystem does)", t.Connector.Name)
	}
	physical := t.PhysicalSchema()
	seen := map[string]bool{}
	for _, k := range ct.PartitionBy {
		i := physical.Index(k)
		if i < 0 {
			return errAt(ct.PartitionAt, ErrUnknownColumn, "partition key '%s' is not a physical column of table '%s'%s", k, t.Name, didYouMean(k, physical.Names()))
		}
		name := physical[i].Name
		if seen[strings.ToLower(name)] {
			return errAt(ct.PartitionAt, ErrAlreadyExists, "partition key '%s' is named twice", k)
		}
		seen[strings.ToLower(name)] = true
		t.PartitionKeys = append(t.PartitionKeys, name)
	}
	if len(t.PartitionKeys) == len(physical) {
		return errAt(ct.PartitionAt, ErrUnsupported, "unsupported: every physical column of table '%s' is a partition key, which leaves nothing to write into its files", t.Name)
	}
	return nil
}

// validateError positions an error from a connector's Validate: at the option it names,
// when it names one, else at the CREATE TABLE.
func validateError(ct *parser.CreateTable, name string, err error) error {
	var oe *connectors.OptionError
	if !errors.As(err, &oe) {
		return wrapAt(ct.At, ErrInvalidOption, err, "table '%s'", name)
	}
	pos := ct.At
	for _, o := range ct.Options {
		if o.Key == oe.Key {
			pos = o.At
		}
	}
	bare := &connectors.OptionError{Key: oe.Key, Value: oe.Value, Err: oe.Err}
	e := parser.Errorf(pos, "table '%s': %v", name, bare)
	e.Kind = errors.Join(ErrInvalidOption, err)
	return e
}

func (t *Table) bindMetadata() error {
	f := t.Connector
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Kind != parser.MetadataColumn {
			continue
		}
		key := c.Def.Metadata
		if key == "" {
			key = c.Name
		}
		var keys []string
		var spec *connectors.MetadataSpec
		for j := range f.Metadata {
			keys = append(keys, f.Metadata[j].Key)
			if f.Metadata[j].Key == key {
				spec = &f.Metadata[j]
			}
		}
		if p := f.FormatMetadataPrefix; f.FormatMetadata && t.Format != nil {
			for j := range t.Format.Metadata { // changelog.go
				m := &t.Format.Metadata[j]
				keys = append(keys, p+m.Key)
				if p+m.Key == key {
					spec = m
				}
			}
		}
		if spec == nil {
			if len(keys) == 0 {
				return errAt(c.Def.At, ErrUnknownColumn, "connector '%s' has no metadata (column '%s' reads '%s')", f.Name, c.Name, key)
			}
			msg := didYouMean(key, keys)
			if msg == "" {
				msg = " (keys: " + strings.Join(keys, ", ") + ")"
			}
			return errAt(c.Def.At, ErrUnknownColumn, "unknown metadata key '%s' for connector '%s'%s", key, f.Name, msg)
		}
		if !spec.Type.SameKind(c.Type) && !funcs.CanCast(spec.Type, c.Type) {
			return errAt(c.Def.At, ErrTypeMismatch, "type mismatch: metadata column '%s' is declared %s, but key '%s' gives %s", c.Name, c.Type, key, spec.Type)
		}
		c.MetadataKey, c.MetadataType = key, spec.Type
	}
	return nil
}

// bindComputed types the computed columns. They may read physical and metadata columns,
// not other computed columns (as in Flink).
func (t *Table) bindComputed() error {
	s := &scope{}
	var toTable []int
	for i, c := range t.Columns {
		if c.Kind != parser.ComputedColumn {
			s.cols = append(s.cols, scopeCol{name: c.Name, quals: []string{t.Name}, t: c.Type})
			toTable = append(toTable, i)
		}
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Kind != parser.ComputedColumn {
			continue
		}
		x, err := (&binder{scope: s, clause: "a computed column"}).bind(c.Def.Expr)
		if err != nil {
			if errors.Is(err, ErrUnknownColumn) {
				if other := t.computedRef(c.Def.Expr); other != "" {
					return errAt(c.Def.At, ErrUnsupported, "computed column '%s' cannot read computed column '%s'", c.Name, other)
				}
			}
			return err
		}
		c.Expr = remap(x, toTable)
		c.Type = x.Type()
	}
	return nil
}

// computedRef returns a computed column that e names, or "".
func (t *Table) computedRef(e parser.Expr) string {
	found := ""
	walkAST(e, func(x parser.Expr) bool {
		if id, ok := x.(*parser.Ident); ok {
			name := id.Parts[len(id.Parts)-1]
			for _, c := range t.Columns {
				if c.Kind == parser.ComputedColumn && strings.EqualFold(c.Name, name) {
					found = c.Name
				}
			}
		}
		return found == ""
	})
	return found
}

func (t *Table) bindWatermark(wd *parser.WatermarkDef) error {
	if wd == nil {
		return nil
	}
	s := &scope{}
	for _, c := range t.Columns {
		s.cols = append(s.cols, scopeCol{name: c.Name, quals: []string{t.Name}, t: c.Type})
	}
	idx, err := s.resolve(&parser.Ident{At: wd.At, Parts: []string{wd.Column}})
	if err != nil {
		return err
	}
	col := &t.Columns[idx]
	ct := col.Type
	if !ct.IsTimestamp() || ct.Prec > 3 {
		return errAt(wd.At, ErrTimeAttribute, "watermark on a non-time column: '%s' is %s, but a rowtime column must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3", col.Name, ct)
	}
	if ct.TimeAttr == types.ProcTime {
		return errAt(wd.At, ErrTimeAttribute, "watermark on a processing-time column: '%s' is PROCTIME()", col.Name)
	}
	x, err := (&binder{scope: s, clause: "a watermark"}).bind(wd.Expr)
	if err != nil {
		return err
	}
	if wt := x.Type(); wt.Kind != ct.Kind || wt.Prec > 3 {
		return errAt(wd.Expr.Pos(), ErrTypeMismatch, "type mismatch: the watermark of '%s' must be %s like the column, got %s", col.Name, ct.Kind, wt)
	}
	col.Type.TimeAttr = types.RowTime
	t.Watermark = &Watermark{Column: idx, Expr: x, Def: wd}
	return nil
}

func (t *Table) bindPrimaryKey(pk *parser.PrimaryKey) error {
	if pk == nil {
		return nil
	}
	if !pk.NotEnforced {
		return errAt(pk.At, ErrUnsupported, "unsupported: ENFORCED primary key: write PRIMARY KEY (...) NOT ENFORCED (pipesql, like Flink, does not own the data to enforce it)")
	}
	names := t.Schema().Names()
	for _, name := range pk.Columns {
		i := t.Schema().Index(name)
		if i < 0 {
			return errAt(pk.At, ErrUnknownColumn, "unknown column '%s' in PRIMARY KEY%s", name, didYouMean(name, names))
		}
		c := &t.Columns[i]
		if c.Kind != parser.PhysicalColumn {
			return errAt(pk.At, ErrUnsupported, "unsupported: primary key column '%s' is not a physical column", c.Name)
		}
		c.Type.NotNull = true
		t.PrimaryKey = append(t.PrimaryKey, c.Name)
	}
	return nil
}

// createView plans the view's query once, to check it and learn its columns.
func (s *Session) createView(cv *parser.CreateView) error {
	name, err := objectName(cv.At, cv.Name)
	if err != nil {
		return err
	}
	if s.cat.exists(name) {
		if cv.IfNotExists {
			return nil
		}
		return errAt(cv.At, ErrAlreadyExists, "table or view '%s' already exists", name)
	}
	p, err := s.planner()
	if err != nil {
		return err
	}
	p.views = []string{name}
	rel, err := p.planQuery(cv.Query, nil)
	if err != nil {
		return err
	}
	if cv.Columns != nil && len(cv.Columns) != len(rel.scope.cols) {
		return errAt(cv.At, ErrTypeMismatch, "view '%s' lists %d columns but its query gives %d", name, len(cv.Columns), len(rel.scope.cols))
	}
	v := &View{Name: name, Query: cv.Query, Columns: cv.Columns, Def: cv}
	for i, c := range rel.scope.cols {
		n := c.name
		if cv.Columns != nil {
			n = cv.Columns[i]
		}
		v.Schema = append(v.Schema, types.Column{Name: n, Type: c.t})
	}
	s.cat.views[name] = v
	return nil
}

func (s *Session) drop(pos parser.Pos, n parser.ObjectName, view, ifExists bool) error {
	name, err := objectName(pos, n)
	if err != nil {
		return err
	}
	t, isTable := s.cat.Table(name)
	v, isView := s.cat.View(name)
	switch {
	case view && isView:
		delete(s.cat.views, v.Name)
		return nil
	case !view && isTable:
		delete(s.cat.tables, t.Name)
		return nil
	case view && isTable:
		return errAt(pos, ErrUnknownTable, "'%s' is a table, not a view: use DROP TABLE", name)
	case !view && isView:
		return errAt(pos, ErrUnknownTable, "'%s' is a view, not a table: use DROP VIEW", name)
	case ifExists:
		return nil
	}
	what := "table"
	names := s.cat.TableNames()
	if view {
		what, names = "view", s.cat.ViewNames()
	}
	return errAt(pos, ErrUnknownTable, "unknown %s '%s'%s", what, name, didYouMean(name, names))
}
