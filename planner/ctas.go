package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
)

// CREATE TABLE ... AS SELECT: the table takes the query's columns (names, types and
// nullability; time attributes become plain timestamps), with the options, primary key,
// watermark and partitioning written in the statement, and the query is then run as an
// INSERT INTO it (CTASInsert), as Flink does. Declaring columns as well (Flink 2's
// schema evolution of CTAS) is not supported yet.

// createTableAs validates CREATE TABLE ... AS SELECT and adds the table to the catalog.
func (s *Session) createTableAs(ct *parser.CreateTable) error {
	name, err := objectName(ct.At, ct.Name)
	if err != nil {
		return err
	}
	if s.cat.exists(name) {
		if ct.IfNotExists {
			return errAt(ct.At, ErrUnsupported, "unsupported: CREATE TABLE IF NOT EXISTS ... AS SELECT of an existing table '%s': write INSERT INTO %s", name, name)
		}
		return errAt(ct.At, ErrAlreadyExists, "table or view '%s' already exists", name)
	}
	if len(ct.Columns) > 0 {
		return errAt(ct.Columns[0].At, ErrUnsupported, "unsupported: columns declared in CREATE TABLE ... AS SELECT (the table takes the query's columns; the list may hold a PRIMARY KEY and a WATERMARK)")
	}
	p, err := s.planner()
	if err != nil {
		return err
	}
	rel, err := p.planQuery(ct.AsQuery, nil)
	if err != nil {
		return err
	}
	def := *ct
	def.AsQuery = nil
	for _, c := range rel.scope.cols {
		text := c.t.WithoutTimeAttr().String()
		dt, err := parser.ParseDataType("", text)
		if err != nil || strings.HasPrefix(text, "NULL") {
			return errAt(ct.AsAt, ErrTypeMismatch, "column '%s' of the query has type %s, which a table cannot have: CAST it", c.name, text)
		}
		dt.At = ct.AsAt
		def.Columns = append(def.Columns, parser.ColumnDef{At: ct.AsAt, Name: c.name, Kind: parser.PhysicalColumn, Type: &dt})
	}
	t, err := buildTable(&def, name)
	if err != nil {
		return err
	}
	s.cat.tables[name] = t
	return nil
}

// CTASInsert returns the INSERT that CREATE TABLE ... AS SELECT runs once the table exists.
func CTASInsert(ct *parser.CreateTable) *parser.Insert {
	return &parser.Insert{At: ct.AsAt, Table: ct.Name, Query: ct.AsQuery}
}
