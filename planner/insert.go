package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// updatingSinks are the connectors that accept an updating changelog (-U/+U/-D rows).
// connectors.Factory does not say this yet; until it does, the planner knows them by name
// and treats every other connector as append-only, which is the safe default: the job is
// refused at plan time instead of writing retractions a sink cannot represent.
var updatingSinks = map[string]bool{"print": true, "blackhole": true, "upsert-kafka": true, "jdbc": true}

// A table of another connector does when its format writes a changelog (kafka or
// filesystem in debezium-json, canal-json or maxwell-json), as in Flink.
func acceptsUpdates(t *Table) bool {
	return updatingSinks[t.Connector.Name] || t.Format != nil && t.Format.Changelog == connectors.AllChangesMode && t.Format.NewEncoder != nil
}

// planInsert plans INSERT INTO table [(cols)] query: a Sink over the query, with a Calc
// that puts the query's columns in the table's order and casts them where Flink casts
// implicitly.
func (p *planner) planInsert(ins *parser.Insert) (Node, error) {
	if ins.Overwrite {
		return nil, errAt(ins.At, ErrUnsupported, "unsupported: INSERT OVERWRITE (a streaming job appends; use INSERT INTO)")
	}
	name, err := objectName(ins.At, ins.Table)
	if err != nil {
		return nil, err
	}
	t, ok := p.cat.Table(name)
	if !ok {
		if _, isView := p.cat.View(name); isView {
			return nil, errAt(ins.At, ErrUnsupported, "cannot INSERT INTO view '%s'", name)
		}
		return nil, errAt(ins.At, ErrUnknownTable, "unknown table '%s'%s", name, didYouMean(name, p.cat.TableNames()))
	}
	if t, err = withHint(t, ins.Options); err != nil {
		return nil, err
	}
	if t.Connector.NewSink == nil {
		return nil, errAt(ins.At, ErrUnsupported, "table '%s' cannot be written: connector '%s' is a source only", t.Name, t.Connector.Name)
	}
	if err := checkRequired(ins.At, t, false); err != nil {
		return nil, err
	}
	if f := t.Format; f != nil && f.NewEncoder == nil && f.Bulk == nil {
		// debezium-avro-confluent and ogg-json are read only.
		return nil, errAt(ins.At, ErrUnsupported, "table '%s' cannot be written: format '%s' can only be read", t.Name, f.Name)
	}
	if f := t.Format; f != nil && f.Changelog == connectors.AllChangesMode && f.NewEncoder != nil {
		// A CDC format's options that only writing refuses (debezium-json.schema-include)
		// fail the INSERT, not the job.
		opts := connectors.FormatOptions(t.Options, "", f.Name)
		for k, v := range connectors.FormatOptions(t.Options, "value.", f.Name) {
			opts[k] = v
		}
		if _, err := f.NewEncoder(nil, opts); err != nil {
			return nil, wrapAt(ins.At, ErrUnsupported, err, "table '%s' cannot be written", t.Name)
		}
	}
	var persisted []int
	for i := range t.Columns {
		c := &t.Columns[i]
		if !c.Persisted() {
			continue
		}
		if c.Kind == parser.MetadataColumn && !metadataWritable(t.Connector, c.MetadataKey) {
			return nil, errAt(ins.At, ErrUnsupported, "table '%s' cannot be written: connector '%s' cannot write metadata '%s' of column '%s' (declare the column VIRTUAL)", t.Name, t.Connector.Name, c.MetadataKey, c.Name)
		}
		persisted = append(persisted, i)
	}

	// target[j] is the table column the query's column j goes to.
	target := persisted
	if ins.Columns != nil {
		target = nil
		seen := map[int]bool{}
		names := make([]string, len(persisted))
		for j, i := range persisted {
			names[j] = t.Columns[i].Name
		}
		for _, cn := range ins.Columns {
			i := t.Schema().Index(cn)
			switch {
			case i < 0:
				return nil, errAt(ins.At, ErrUnknownColumn, "unknown column '%s' in INSERT INTO %s%s", cn, t.Name, didYouMean(cn, names))
			case !t.Columns[i].Persisted():
				return nil, errAt(ins.At, ErrUnsupported, "column '%s' of table '%s' cannot be written: it is computed or VIRTUAL", t.Columns[i].Name, t.Name)
			case seen[i]:
				return nil, errAt(ins.At, ErrUnsupported, "column '%s' is listed twice in INSERT INTO %s", t.Columns[i].Name, t.Name)
			}
			seen[i] = true
			target = append(target, i)
		}
	}

	rel, err := p.planQuery(ins.Query, nil)
	if err != nil {
		return nil, err
	}
	if len(rel.scope.cols) != len(target) {
		cols := make([]string, len(target))
		for j, i := range target {
			cols[j] = t.Columns[i].Name
		}
		return nil, errAt(ins.Query.At, ErrTypeMismatch, "INSERT INTO %s: the query gives %s, the table takes %d (%s)", t.Name, plural(len(rel.scope.cols), "column"), len(target), strings.Join(cols, ", "))
	}
	src := make(map[int]int, len(target)) // table column -> query column
	for j, i := range target {
		from, to := rel.scope.cols[j].t, t.Columns[i].Type
		if !assignable(from, to) {
			return nil, errAt(itemPos(ins, j), ErrTypeMismatch, "type mismatch: column '%s' of table '%s' is %s, the query gives %s: Flink casts implicitly only to a wider type of the same kind (or any number to DECIMAL); write CAST(... AS %s)", t.Columns[i].Name, t.Name, to.WithoutTimeAttr(), from.WithoutTimeAttr(), to.WithoutTimeAttr().Nullable())
		}
		src[i] = j
	}

	in := rel.node.Schema()
	calc := &Calc{Input: rel.node}
	sink := &Sink{Table: t.Name, Connector: t.Connector, Info: t.Info(), Changelog: rel.changelog, Hint: hintText(t.Hint)}
	for _, i := range persisted {
		c := &t.Columns[i]
		want := c.Type.WithoutTimeAttr()
		var e Expr
		if j, ok := src[i]; ok {
			e = &ColumnRef{Index: j, Name: in[j].Name, T: in[j].Type}
			if !sameTypeIgnoringNull(in[j].Type, want) {
				e = &Cast{X: e, T: want.WithNotNull(in[j].Type.NotNull)}
			}
		} else {
			if want.NotNull {
				return nil, errAt(ins.At, ErrTypeMismatch, "column '%s' of table '%s' is NOT NULL, and the INSERT gives it no value", c.Name, t.Name)
			}
			e = &Literal{T: want}
		}
		calc.Projections = append(calc.Projections, e)
		calc.Out = append(calc.Out, types.Column{Name: c.Name, Type: e.Type().WithoutTimeAttr()})
		sink.Out = append(sink.Out, types.Column{Name: c.Name, Type: want})
		pc := connectors.ProducedColumn{Name: c.Name, Type: want}
		if c.Kind == parser.MetadataColumn {
			pc.MetadataKey = c.MetadataKey
		}
		sink.Written = append(sink.Written, pc)
	}
	if rel.changelog == Updating && !acceptsUpdates(t) {
		return nil, errAt(ins.At, ErrUpdatingInput, "table sink '%s' doesn't support consuming update changes which is produced by node %s", t.Name, updatingNode(rel.node))
	}
	if rel.changelog == Updating && t.Connector.Name == "jdbc" && len(t.PrimaryKey) == 0 {
		// Flink's JDBC sink upserts by the key: without one it can only append.
		return nil, errAt(ins.At, ErrUpdatingInput, "table sink '%s' (jdbc) consumes update changes (produced by node %s) only with a PRIMARY KEY (...) NOT ENFORCED to upsert by", t.Name, updatingNode(rel.node))
	}
	sink.Input = calc
	return sink, nil
}

func metadataWritable(f *connectors.Factory, key string) bool {
	for _, m := range f.Metadata {
		if m.Key == key {
			return m.Writable
		}
	}
	return false
}

func sameTypeIgnoringNull(a, b types.Type) bool {
	return a.Nullable().WithoutTimeAttr().Equal(b.Nullable().WithoutTimeAttr())
}

// itemPos is the position of the query's select item j, for errors about one column.
func itemPos(ins *parser.Insert, j int) parser.Pos {
	if sel, ok := ins.Query.Body.(*parser.Select); ok && len(sel.Items) > j {
		for _, it := range sel.Items {
			if _, star := it.Expr.(*parser.Star); star {
				return ins.Query.At
			}
		}
		return sel.Items[j].At
	}
	return ins.Query.At
}

// updatingNode names the node that makes a plan updating, as Flink's error does.
func updatingNode(n Node) string {
	if j, ok := n.(*Join); ok && j.Type != InnerJoin {
		return j.Explain()
	}
	switch x := n.(type) {
	case *tableRef:
		if c := readChangelog(x.table); c != InsertOnly {
			return fmt.Sprintf("TableSourceScan(table=[%s]%s)", x.table.Name, scanChangelogSuffix(scanChangelog(x.table.Changelog())))
		}
	case *GroupAggregate, *Rank:
		return x.Explain()
	case *Deduplicate:
		if x.Changelog() == Updating {
			return x.Explain()
		}
	}
	for _, c := range n.Children() {
		if s := updatingNode(c); s != "" {
			return s
		}
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
