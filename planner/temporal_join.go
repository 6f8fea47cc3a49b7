package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Temporal joins
//
// FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k joins each row of o with the
// version of r valid at o.ts. Against a table whose connector can look rows up, AS OF a
// processing-time attribute, it is a lookup join (lookup.go). Against a versioned table
// (a PRIMARY KEY and a WATERMARK: upsert-kafka, a CDC format), AS OF an event-time
// attribute of o, it is Flink's event-time TemporalJoin: the right side's rows are kept
// as versions per key by their rowtime (a -U/-D ends one), o's rows wait until the
// watermark (the minimum of both inputs') passes their time and are then joined with the
// version valid at that time. INNER or LEFT; the ON condition must equate the versioned
// table's whole primary key with the left side. A view (or WITH query) is versioned when
// it keeps the last row per key by a rowtime (versionedQuery): its keys are the primary
// key, as Flink infers them. Each output row has the kind of its left row, so the output
// is insert-only when o is; o's time attributes stay time attributes, r's do not.

// TemporalJoin is an event-time temporal join of Left with the versions of Right.
type TemporalJoin struct {
	Left, Right Node
	Type        JoinType // InnerJoin or LeftOuterJoin
	// LeftKeys[i] = RightKeys[i] are the equalities (the right keys include the
	// primary key); KeyTypes[i] is the type both are compared in.
	LeftKeys, RightKeys []int
	KeyTypes            []types.Type
	// LeftTime is the AS OF column of Left, RightTime the rowtime column of Right.
	LeftTime, RightTime int
	// PrimaryKey are Right's primary key columns.
	PrimaryKey []int
	// Where is the rest of the ON condition over the joined row, nil when none.
	Where Expr
	// Condition is the whole ON condition, as EXPLAIN shows it.
	Condition Expr
	Out       types.Schema
}

var _ Node = (*TemporalJoin)(nil)

func (n *TemporalJoin) Children() []Node     { return []Node{n.Left, n.Right} }
func (n *TemporalJoin) Schema() types.Schema { return n.Out }

// Changelog says what a temporal join emits: each left row is joined once, when the
// watermark passes it, and keeps its kind (Flink's TemporalRowTimeJoinOperator), so the
// join is insert-only over an insert-only left input and updating over an updating one.
func (n *TemporalJoin) Changelog() Changelog {
	if ChangelogOf(n.Left) != InsertOnly {
		return Updating
	}
	return InsertOnly
}

// Explain prints the join as Flink does, the temporal condition spelled out.
func (n *TemporalJoin) Explain() string {
	lw := len(n.Left.Schema())
	col := func(i int) string { return n.Out[i].Name }
	list := func(f string, cols []int, off int) string {
		s := make([]string, len(cols))
		for i, c := range cols {
			s[i] = col(off + c)
		}
		return f + "(" + strings.Join(s, ", ") + ")"
	}
	cond := fmt.Sprintf("__TEMPORAL_JOIN_CONDITION(%s, %s, %s, %s, %s)", col(n.LeftTime), col(lw+n.RightTime),
		list("__TEMPORAL_JOIN_CONDITION_PRIMARY_KEY", n.PrimaryKey, lw),
		list("__TEMPORAL_JOIN_LEFT_KEY", n.LeftKeys, 0), list("__TEMPORAL_JOIN_RIGHT_KEY", n.RightKeys, lw))
	return fmt.Sprintf("TemporalJoin(joinType=[%s], where=[(%s AND %s)], select=[%s])", n.Type, ExplainExpr(n.Condition), cond, names(n.Out))
}

func lookupable(t *Table) bool {
	_, can := connectors.LookupOf(t.Connector.Name)
	return can
}

// versioned reports whether t can be read as a versioned table: a primary key and a
// watermark.
func versioned(t *Table) bool { return len(t.PrimaryKey) > 0 && t.Watermark != nil }

// planSystemTimeJoin plans left JOIN dim FOR SYSTEM_TIME AS OF left.attr ON ...: an
// event-time temporal join when dim is versioned and attr is event time, else a lookup
// join when dim's connector can look rows up.
func (p *planner) planSystemTimeJoin(x *parser.Join, typ JoinType, dim *parser.TableName, env *cteEnv) (*relation, error) {
	var t *Table
	if name, err := objectName(dim.At, dim.Name); err == nil {
		t, _ = p.cat.Table(name)
	}
	if t != nil && versioned(t) || t == nil && p.namesQuery(dim, env) {
		if rel, ok, err := p.planTemporalJoin(x, typ, dim, t, env); ok {
			return rel, err
		}
	}
	if rel, ok, err := p.planLookupJoin(x, typ, dim, env); ok { // lookup.go
		return rel, err
	}
	if t != nil && t.Watermark != nil {
		return nil, errAt(dim.At, ErrUnsupported, "unsupported: an event-time temporal join against '%s', which has no PRIMARY KEY: a versioned table needs one (Flink: Temporal Table Join requires primary key in versioned table)", t.Name)
	}
	return nil, errAt(dim.AsOf.At, ErrUnsupported, "unsupported: FOR SYSTEM_TIME AS OF a table that can neither be looked up nor read as a versioned table (a PRIMARY KEY and a WATERMARK)")
}

// namesQuery reports whether dim names a view or a WITH query rather than a table.
func (p *planner) namesQuery(dim *parser.TableName, env *cteEnv) bool {
	name, err := objectName(dim.At, dim.Name)
	if err != nil {
		return false
	}
	if _, ok := env.lookup(name); ok && len(dim.Name) == 1 {
		return true
	}
	_, ok := p.cat.View(name)
	return ok
}

// planTemporalJoin plans x against the versioned table t, or, t nil, against the view
// or WITH query dim names, which must be a versioned view (versionedQuery); ok is false
// when AS OF is a processing-time attribute and t's connector can look rows up (a
// lookup join).
func (p *planner) planTemporalJoin(x *parser.Join, typ JoinType, dim *parser.TableName, t *Table, env *cteEnv) (rel *relation, ok bool, err error) {
	dimName := strings.Join(dim.Name, ".")
	if t != nil {
		dimName = t.Name
	}
	left, err := p.planFrom(x.Left, env)
	if err != nil {
		return nil, true, err
	}
	asOf, err := (&binder{scope: left.scope, clause: "FOR SYSTEM_TIME AS OF"}).bind(dim.AsOf)
	if err != nil {
		return nil, true, err
	}
	ref, isRef := asOf.(*ColumnRef)
	if isRef && ref.T.TimeAttr == types.ProcTime {
		if t == nil {
			return nil, true, errAt(dim.AsOf.At, ErrUnsupported, "unsupported: a processing-time temporal join against the view '%s': only a table's connector can look rows up (Flink: Processing-time temporal join is not supported yet); join AS OF an event-time attribute for an event-time temporal join", dimName)
		}
		if t.Connector != nil && lookupable(t) {
			return nil, false, nil
		}
		return nil, true, errAt(dim.AsOf.At, ErrUnsupported, "unsupported: a processing-time temporal join against '%s': its connector cannot look rows up (Flink: Processing-time temporal join is not supported yet); join AS OF an event-time attribute for an event-time temporal join", t.Name)
	}
	if !isRef || ref.T.TimeAttr != types.RowTime {
		return nil, true, errAt(dim.AsOf.At, ErrUnsupported, "unsupported: FOR SYSTEM_TIME AS OF %s: a temporal join is AS OF a time attribute of the left table", ExplainExpr(asOf))
	}
	if typ != InnerJoin && typ != LeftOuterJoin {
		return nil, true, errAt(x.At, ErrUnsupported, "unsupported: %s JOIN ... FOR SYSTEM_TIME AS OF (a temporal join is INNER or LEFT)", strings.ToUpper(x.Kind))
	}
	if left.tvf != nil {
		return nil, true, errAt(x.Left.Pos(), ErrUnsupported, "unsupported: a temporal join of a window table function")
	}
	plain := *dim
	plain.AsOf = nil
	right, err := p.planFrom(&plain, env)
	if err != nil {
		return nil, true, err
	}
	if x.On == nil {
		return nil, true, errAt(x.At, ErrUnsupported, "unsupported: a temporal join without ON (write ON o.k = r.k)")
	}
	lw := len(left.scope.cols)
	in := &scope{cols: append(append([]scopeCol(nil), left.scope.cols...), right.scope.cols...)}
	cond, err := (&binder{scope: in, clause: "ON"}).bind(x.On)
	if err != nil {
		return nil, true, err
	}
	if err := checkBoolean(x.On.Pos(), cond, "the JOIN condition"); err != nil {
		return nil, true, err
	}
	j := &TemporalJoin{Type: typ, Condition: cond, LeftTime: ref.Index, RightTime: -1}
	var primaryKey []int
	if t == nil {
		key, rowtime, why := versionedQuery(right.node)
		if why != "" {
			return nil, true, errAt(dim.At, ErrUnsupported, "unsupported: an event-time temporal join against the view '%s', which is not a versioned view: %s (Flink: a versioned view keeps the last row per key by a rowtime, SELECT ... FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY key ORDER BY rowtime DESC) AS rownum FROM t) WHERE rownum = 1)", dimName, why)
		}
		primaryKey, j.RightTime = key, rowtime
	} else {
		for i, c := range right.scope.cols {
			if c.t.TimeAttr == types.RowTime {
				j.RightTime = i
				break
			}
		}
		if j.RightTime < 0 {
			return nil, true, errAt(dim.At, ErrUnsupported, "unsupported: an event-time temporal join against '%s', whose rowtime column is not read", t.Name)
		}
		for _, pk := range t.PrimaryKey {
			at := -1
			for i, c := range right.scope.cols {
				if strings.EqualFold(c.name, pk) {
					at = i
				}
			}
			primaryKey = append(primaryKey, at)
		}
	}
	for _, c := range splitAnd(cond) {
		if l, r, kt, ok := equiKey(c, lw); ok {
			j.LeftKeys = append(j.LeftKeys, l)
			j.RightKeys = append(j.RightKeys, r)
			j.KeyTypes = append(j.KeyTypes, kt)
			continue
		}
		j.Where = and(j.Where, c)
	}
	pkNames := make([]string, len(primaryKey))
	for i, at := range primaryKey {
		pkNames[i] = right.scope.cols[at].name
	}
	for i, at := range primaryKey {
		keyed := false
		for _, r := range j.RightKeys {
			keyed = keyed || r == at
		}
		if !keyed {
			return nil, true, errAt(x.On.Pos(), ErrUnsupported, "unsupported: an event-time temporal join must equate the primary key of '%s' (%s) with the left table; %s is missing", dimName, strings.Join(pkNames, ", "), pkNames[i])
		}
		j.PrimaryKey = append(j.PrimaryKey, at)
	}
	j.Left = &Exchange{Input: left.node, Keys: j.LeftKeys}
	j.Right = &Exchange{Input: right.node, Keys: j.RightKeys}
	j.Out = temporalJoinSchema(left.node.Schema(), right.node.Schema(), typ)
	out := &scope{}
	for i, c := range in.cols {
		j.Out[i].Name = c.name
		out.cols = append(out.cols, scopeCol{name: c.name, quals: c.quals, t: j.Out[i].Type})
	}
	changelog := InsertOnly
	if left.changelog != InsertOnly {
		changelog = Updating
	}
	return &relation{node: j, scope: out, changelog: changelog}, true, nil
}

// versionedQuery finds the versioned table a view's plan n is: a Deduplicate keeping the
// last row per key by a rowtime attribute, or a versioned table (a PRIMARY KEY and a
// WATERMARK), under projections that keep its key and its time. The deduplication's
// keys are the primary key and its time the rowtime, as Flink infers them; why says what
// is missing when n is not one. A filter is refused: the join reads only each key's
// latest row (+I/+U, Flink's ONLY_UPDATE_AFTER), so a filtered-out update would leave
// the version before it valid.
func versionedQuery(n Node) (key []int, rowtime int, why string) {
	switch x := n.(type) {
	case *Deduplicate:
		switch {
		case !x.RowTime:
			return nil, -1, "it deduplicates on processing time, so it has no rowtime"
		case !x.KeepLast:
			return nil, -1, "it keeps the first row per key (ORDER BY ... ASC), not the last"
		}
		return x.Keys, x.TimeCol, ""
	case *Exchange:
		return versionedQuery(x.Input)
	case *tableRef:
		// A projection of a versioned table is one: its primary key and rowtime.
		if !versioned(x.table) {
			return nil, -1, fmt.Sprintf("it reads '%s', which is not versioned (a PRIMARY KEY and a WATERMARK) and does not deduplicate with ROW_NUMBER() ... = 1", x.table.Name)
		}
		rowtime = slices.IndexFunc(x.out, func(c types.Column) bool { return c.Type.TimeAttr == types.RowTime })
		for _, k := range x.table.PrimaryKey {
			at := slices.IndexFunc(x.out, func(c types.Column) bool { return strings.EqualFold(c.Name, k) })
			if at < 0 || rowtime < 0 {
				return nil, -1, fmt.Sprintf("it reads '%s' without its primary key and rowtime", x.table.Name)
			}
			key = append(key, at)
		}
		return key, rowtime, ""
	case *Calc:
		if x.Filter != nil {
			return nil, -1, "it filters the rows of its versioned table"
		}
		key, rowtime, why := versionedQuery(x.Input)
		if why != "" {
			return nil, -1, why
		}
		out := func(in int) int {
			for i, p := range x.Projections {
				if c, ok := p.(*ColumnRef); ok && c.Index == in {
					return i
				}
			}
			return -1
		}
		mapped := make([]int, len(key))
		for i, k := range key {
			if mapped[i] = out(k); mapped[i] < 0 {
				return nil, -1, fmt.Sprintf("it does not select its key %s", x.Input.Schema()[k].Name)
			}
		}
		at := out(rowtime)
		if at < 0 {
			return nil, -1, fmt.Sprintf("it does not select its rowtime %s", x.Input.Schema()[rowtime].Name)
		}
		return mapped, at, ""
	}
	return nil, -1, "it does not deduplicate with ROW_NUMBER() ... = 1"
}

// temporalJoinSchema is the output of a temporal join: the left columns as they are
// (time attributes kept), the right ones without time attributes, nullable for LEFT.
func temporalJoinSchema(left, right types.Schema, typ JoinType) types.Schema {
	out := append(types.Schema(nil), left...)
	for _, c := range right {
		t := c.Type.WithoutTimeAttr()
		if typ.LeftOuter() {
			t = t.Nullable()
		}
		out = append(out, types.Column{Name: c.Name, Type: t})
	}
	return out
}

// pruneTemporalJoin prunes both inputs to the columns the parent uses, the keys, the
// times and the condition read.
func (o *optimizer) pruneTemporalJoin(x *TemporalJoin, used []bool) (Node, []int, error) {
	lw := len(x.Left.Schema())
	width := lw + len(x.Right.Schema())
	all := append([]bool(nil), used...)
	markUsed(x.Condition, all)
	for i := range x.LeftKeys {
		all[x.LeftKeys[i]] = true
		all[lw+x.RightKeys[i]] = true
	}
	all[x.LeftTime] = true
	all[lw+x.RightTime] = true
	left, ml, err := o.prune(x.Left, all[:lw])
	if err != nil {
		return nil, nil, err
	}
	right, mr, err := o.prune(x.Right, all[lw:width])
	if err != nil {
		return nil, nil, err
	}
	nl := len(left.Schema())
	m := make([]int, width)
	for i := range m {
		switch {
		case i < lw:
			m[i] = ml[i]
		case mr[i-lw] >= 0:
			m[i] = nl + mr[i-lw]
		default:
			m[i] = -1
		}
	}
	j := *x
	j.Left, j.Right = left, right
	j.LeftKeys, j.RightKeys = remapInts(x.LeftKeys, ml), remapInts(x.RightKeys, mr)
	j.PrimaryKey = remapInts(x.PrimaryKey, mr)
	j.LeftTime, j.RightTime = ml[x.LeftTime], mr[x.RightTime]
	j.Condition = remap(x.Condition, m)
	if x.Where != nil {
		j.Where = remap(x.Where, m)
	}
	j.Out = temporalJoinSchema(left.Schema(), right.Schema(), x.Type)
	for i, to := range m {
		if to >= 0 {
			j.Out[to].Name = x.Out[i].Name
		}
	}
	return &j, m, nil
}

// describeTemporalJoin writes what shapes a temporal join's state, for the fingerprint.
func describeTemporalJoin(b *strings.Builder, x *TemporalJoin) {
	fmt.Fprintf(b, "temporal-join %s time=%s,%s", x.Type, lineage(x.Left, x.LeftTime), lineage(x.Right, x.RightTime))
	for i := range x.LeftKeys {
		fmt.Fprintf(b, " key=%s=%s:%s", lineage(x.Left, x.LeftKeys[i]), lineage(x.Right, x.RightKeys[i]), x.KeyTypes[i])
	}
	for _, side := range []Node{x.Left, x.Right} {
		b.WriteString(" side=[")
		for i, c := range side.Schema() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Type.WithoutTimeAttr().String())
		}
		b.WriteString("]")
	}
	b.WriteByte('\n')
}
