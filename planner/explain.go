package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/pipesql/pipesql/types"
)

// Explain returns the plan of every pipeline of p as a tree, the way EXPLAIN prints it:
//
//	== Physical Plan ==
//	Sink(table=[dau_sink], connector=[print], columns=[day, app, dau])
//	+- Calc(select=[DATE_FORMAT(window_start, 'yyyy-MM-dd') AS day, app, dau])
//	   +- WindowAggregate(...)
//
// Pipelines of a statement set follow each other, separated by a blank line.
func Explain(p *Program) string {
	var b strings.Builder
	b.WriteString("== Physical Plan ==\n")
	for i, pl := range p.Pipelines {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeTree(&b, pl.Root, "", "")
	}
	return b.String()
}

func writeTree(b *strings.Builder, n Node, first, rest string) {
	b.WriteString(first)
	b.WriteString(n.Explain())
	b.WriteByte('\n')
	kids := n.Children()
	for i, c := range kids {
		if i == len(kids)-1 {
			writeTree(b, c, rest+"+- ", rest+"   ")
		} else {
			writeTree(b, c, rest+":- ", rest+":  ")
		}
	}
}

// ExplainExpr formats a bound expression as EXPLAIN shows it: columns by name, SQL
// operators infix, intervals and literals as SQL.
func ExplainExpr(e Expr) string {
	return formatExpr(e, func(c *ColumnRef) string { return c.Name })
}

func formatExpr(e Expr, col func(*ColumnRef) string) string {
	f := func(x Expr) string { return formatExpr(x, col) }
	switch x := e.(type) {
	case nil:
		return ""
	case *ColumnRef:
		return col(x)
	case *Literal:
		return formatLiteral(x)
	case *Call:
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = f(a)
		}
		if s, ok := formatNested(x, args); ok {
			return s
		}
		switch {
		case len(args) == 2 && isInfix(x.Func):
			return "(" + args[0] + " " + x.Func + " " + args[1] + ")"
		case len(args) == 3 && (x.Func == "LIKE" || x.Func == "NOT LIKE" || x.Func == "SIMILAR TO" || x.Func == "NOT SIMILAR TO"):
			return "(" + args[0] + " " + x.Func + " " + args[1] + " ESCAPE " + args[2] + ")"
		case len(args) == 3 && (x.Func == "BETWEEN" || x.Func == "NOT BETWEEN"):
			return "(" + args[0] + " " + x.Func + " " + args[1] + " AND " + args[2] + ")"
		case len(args) == 1 && strings.HasPrefix(x.Func, "IS "):
			return "(" + args[0] + " " + x.Func + ")"
		case x.Func == "NOT" && len(args) == 1:
			return "NOT " + args[0]
		case x.Func == "NEG" && len(args) == 1:
			return "-" + args[0]
		case (x.Func == "FLOOR" || x.Func == "CEIL") && len(args) == 2 && isUnitLiteral(x.Args[1]):
			return x.Func + "(" + args[0] + " TO " + x.Args[1].(*Literal).Value.Str() + ")"
		case x.Func == "EXTRACT" && len(args) == 2 && isUnitLiteral(x.Args[0]):
			return "EXTRACT(" + x.Args[0].(*Literal).Value.Str() + " FROM " + args[1] + ")"
		}
		return x.Func + "(" + strings.Join(args, ", ") + ")"
	case *Cast:
		name := "CAST"
		if x.Try {
			name = "TRY_CAST"
		}
		return fmt.Sprintf("%s(%s AS %s)", name, f(x.X), x.T.Nullable().WithoutTimeAttr())
	case *Case:
		var b strings.Builder
		b.WriteString("CASE")
		for _, w := range x.Whens {
			fmt.Fprintf(&b, " WHEN %s THEN %s", f(w.Cond), f(w.Result))
		}
		if x.Else != nil {
			if l, ok := x.Else.(*Literal); !ok || !l.Value.IsNull() {
				fmt.Fprintf(&b, " ELSE %s", f(x.Else))
			}
		}
		b.WriteString(" END")
		return b.String()
	case *In:
		items := make([]string, len(x.List))
		for i, a := range x.List {
			items[i] = f(a)
		}
		op := "IN"
		if x.Not {
			op = "NOT IN"
		}
		return fmt.Sprintf("(%s %s (%s))", f(x.X), op, strings.Join(items, ", "))
	}
	return e.String()
}

func isUnitLiteral(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && l.T.IsString() && !l.Value.IsNull() && l.Value.Str() == strings.ToUpper(l.Value.Str()) && l.Value.Str() != ""
}

func formatLiteral(l *Literal) string {
	v := l.Value
	if v.IsNull() {
		return "NULL"
	}
	switch l.T.Kind {
	case types.Char, types.Varchar:
		return "'" + strings.ReplaceAll(v.Str(), "'", "''") + "'"
	case types.IntervalDayTime:
		return formatInterval(v.Int())
	case types.IntervalYearMonth:
		return fmt.Sprintf("INTERVAL '%s' YEAR TO MONTH", v.String())
	case types.Date:
		return "DATE '" + v.String() + "'"
	case types.Time:
		return "TIME '" + v.String() + "'"
	case types.Timestamp:
		return "TIMESTAMP '" + types.FormatTimestamp(v.Int(), l.T.Prec) + "'"
	case types.Decimal:
		// As written: 2.50 keeps its scale.
		return v.Rat().FloatString(l.T.Scale)
	}
	return v.String()
}

// projection formats one output column: "expr AS name", or just the name when the
// column is passed through under its own name.
func projection(e Expr, name string) string {
	if c, ok := e.(*ColumnRef); ok && c.Name == name {
		return name
	}
	return ExplainExpr(e) + " AS " + name
}

func names(s types.Schema) string { return strings.Join(s.Names(), ", ") }

func (n *TableSourceScan) Explain() string {
	var phys, meta []string
	for _, c := range n.Produce {
		switch {
		case c.MetadataKey == "":
			phys = append(phys, c.Name)
		case c.MetadataKey == c.Name:
			meta = append(meta, c.Name)
		default:
			meta = append(meta, c.MetadataKey+" AS "+c.Name)
		}
	}
	connector := ""
	if n.Connector != nil {
		connector = n.Connector.Name
	}
	s := fmt.Sprintf("TableSourceScan(table=[%s], connector=[%s], decode=[%s]", n.Table, connector, strings.Join(phys, ", "))
	if len(meta) > 0 {
		s += ", metadata=[" + strings.Join(meta, ", ") + "]"
	}
	if f := n.Info.Options["format"]; f != "" {
		s += ", format=[" + f + "]"
	} else if f := n.Info.Options["value.format"]; f != "" {
		s += ", format=[" + f + "]"
	}
	if n.Hint != "" {
		s += ", hints=[" + n.Hint + "]"
	}
	return s + scanChangelogSuffix(n.Changelog) + ")"
}

func (n *WatermarkAssigner) Explain() string {
	in := n.Input.Schema()
	s := fmt.Sprintf("WatermarkAssigner(rowtime=[%s], watermark=[%s]", in[n.RowtimeCol].Name, ExplainExpr(n.Expr))
	if n.IdleTimeout > 0 {
		s += ", idleTimeout=[" + formatDuration(n.IdleTimeout) + "]"
	}
	return s + ")"
}

func (n *Calc) Explain() string {
	items := make([]string, len(n.Projections))
	for i, p := range n.Projections {
		items[i] = projection(p, n.Out[i].Name)
	}
	s := "Calc(select=[" + strings.Join(items, ", ") + "]"
	if n.Filter != nil {
		s += ", where=[" + ExplainExpr(n.Filter) + "]"
	}
	return s + ")"
}

// explainWindow formats a window over the columns of in.
func explainWindow(w Window, in types.Schema) string {
	attr := "rowtime"
	if w.ProcTime {
		attr = "proctime"
	}
	parts := []string{fmt.Sprintf("%s=[%s]", attr, in[w.TimeCol].Name)}
	switch w.Kind {
	case Hop:
		parts = append(parts, "slide=["+formatDuration(w.Slide)+"]")
	case Cumulate:
		parts = append(parts, "step=["+formatDuration(w.Slide)+"]")
	}
	if w.Kind == SessionWindow {
		parts = append(parts, "gap=["+formatDuration(w.Size)+"]")
	} else {
		parts = append(parts, "size=["+formatDuration(w.Size)+"]")
	}
	if w.Offset != 0 {
		parts = append(parts, "offset=["+formatDuration(w.Offset)+"]")
	}
	// The zone matters only where windows align to an instant's local time; UTC, the
	// default, goes unsaid.
	if in[w.TimeCol].Type.Kind == types.TimestampLTZ && w.Location != nil && w.Location != time.UTC {
		parts = append(parts, "timeZone=["+w.Location.String()+"]")
	}
	return fmt.Sprintf("%s(%s)", w.Kind, strings.Join(parts, ", "))
}

// explainAggs formats groupBy, select and state of an aggregation over in.
func explainAggs(in types.Schema, keys []int, aggs []AggCall) string {
	var parts []string
	var sel, state []string
	if len(keys) > 0 {
		ks := make([]string, len(keys))
		for i, k := range keys {
			ks[i] = in[k].Name
		}
		parts = append(parts, "groupBy=["+strings.Join(ks, ", ")+"]")
		sel = append(sel, ks...)
	}
	for _, a := range aggs {
		arg := "*"
		if a.Arg >= 0 {
			arg = in[a.Arg].Name
			if a.Distinct {
				arg = "DISTINCT " + arg
			}
		}
		filter := ""
		if a.Filter >= 0 {
			filter = " FILTER " + in[a.Filter].Name
		}
		if a.Func == AggListAgg || a.Func == AggListAgg+"_RETRACT" {
			arg += ", " + quoteString(a.Separator)
		}
		sel = append(sel, fmt.Sprintf("%s(%s)%s AS %s", a.Func, arg, filter, a.Name))
		state = append(state, fmt.Sprintf("%s: %s", a.Name, a.State))
	}
	parts = append(parts, "select=["+strings.Join(sel, ", ")+"]")
	if len(state) > 0 {
		parts = append(parts, "state=["+strings.Join(state, ", ")+"]")
	}
	return strings.Join(parts, ", ")
}

func (n *WindowAggregate) Explain() string {
	in := n.Input.Schema()
	return fmt.Sprintf("WindowAggregate(window=[%s], %s)", explainWindow(n.Window, in), explainAggs(in, n.Keys, n.Aggs))
}

func (n *GroupAggregate) Explain() string {
	if n.Retract {
		return fmt.Sprintf("GroupAggregate(%s)", explainAggs(n.Input.Schema(), n.Keys, retractNames(n.Aggs)))
	}
	return fmt.Sprintf("GroupAggregate(%s)", explainAggs(n.Input.Schema(), n.Keys, n.Aggs))
}

func (n *WindowTableFunction) Explain() string {
	return fmt.Sprintf("WindowTableFunction(window=[%s])", explainWindow(n.Window, n.Input.Schema()))
}

func (n *Values) Explain() string {
	rows := make([]string, len(n.Rows))
	for i, r := range n.Rows {
		vals := make([]string, len(r))
		for j, e := range r {
			vals[j] = ExplainExpr(e)
		}
		rows[i] = "[" + strings.Join(vals, ", ") + "]"
	}
	return fmt.Sprintf("Values(tuples=[%s], columns=[%s])", strings.Join(rows, ", "), names(n.Out))
}

func changelogSuffix(c Changelog) string {
	if c == Updating {
		return ", changelog=[updating]"
	}
	return ""
}

func (n *Sink) Explain() string {
	connector := ""
	if n.Connector != nil {
		connector = n.Connector.Name
	}
	hint := ""
	if n.Hint != "" {
		hint = ", hints=[" + n.Hint + "]"
	}
	return fmt.Sprintf("Sink(table=[%s], connector=[%s], columns=[%s]%s%s)", n.Table, connector, names(n.Out), hint, changelogSuffix(n.Changelog))
}

func (n *Collect) Explain() string {
	return fmt.Sprintf("Collect(columns=[%s]%s)", names(n.Schema()), changelogSuffix(n.Changelog))
}

func (n *Limit) Explain() string { return fmt.Sprintf("Limit(fetch=[%d])", n.N) }

func (n *Union) Explain() string {
	return fmt.Sprintf("Union(all=[true], union=[%s])", names(n.Out))
}

func (n *Join) Explain() string {
	return fmt.Sprintf("Join(joinType=[%s], where=[%s], select=[%s], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])",
		n.Type, ExplainExpr(n.Condition), names(n.Out))
}

func (n *Exchange) Explain() string {
	in := n.Input.Schema()
	ks := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		ks[i] = in[k].Name
	}
	return fmt.Sprintf("Exchange(distribution=[hash[%s]])", strings.Join(ks, ", "))
}

// fingerprint hashes what shapes a plan's state: per pipeline, each source table and
// connector, and each stateful operator with its window, its keys and aggregates traced
// back to source columns (so a rename in a Calc leaves it alone, grouping by another
// column does not), and the state kind of each aggregate. Filters and projections above
// the aggregates do not shape state and are left out.
func fingerprint(pipes []*Pipeline) string {
	var b strings.Builder
	for i, pl := range pipes {
		fmt.Fprintf(&b, "pipeline %d\n", i)
		describeState(&b, pl.Root)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

func describeState(b *strings.Builder, n Node) {
	switch x := n.(type) {
	case *TableSourceScan:
		conn := ""
		if x.Connector != nil {
			conn = x.Connector.Name
		}
		fmt.Fprintf(b, "source %s connector=%s\n", x.Table, conn)
	case *WindowAggregate:
		w := x.Window
		fmt.Fprintf(b, "window-aggregate %s size=%d slide=%d offset=%d proctime=%v time=%s",
			w.Kind, w.Size, w.Slide, w.Offset, w.ProcTime, lineage(x.Input, w.TimeCol))
		if w.Location != nil && x.Input.Schema()[w.TimeCol].Type.Kind == types.TimestampLTZ {
			fmt.Fprintf(b, " zone=%s", w.Location)
		}
		describeAggs(b, x.Input, x.Keys, x.Aggs)
	case *GroupAggregate:
		b.WriteString("group-aggregate")
		describeAggs(b, x.Input, x.Keys, x.Aggs)
	case *Limit:
		fmt.Fprintf(b, "limit %d\n", x.N)
	case *TemporalSort:
		b.WriteString(x.describeState() + "\n") // sort.go
	case *OverAggregate:
		describeOver(b, x) // over.go
	case *Expand:
		fmt.Fprintf(b, "expand keys=%d sets=%v\n", len(x.Keys), x.Sets)
	case *WindowRank:
		fmt.Fprintf(b, "window-rank %s %d..%d rankNumber=%v", x.Type, x.Start, x.End, x.RankNumber)
		describeRankKeys(b, x.Input, x.PartitionBy, x.OrderBy)
	case *Rank:
		fmt.Fprintf(b, "rank %s %d..%d strategy=%s rankNumber=%v", x.Type, x.Start, x.End, x.Strategy, x.RankNumber)
		describeRankKeys(b, x.Input, x.PartitionBy, x.OrderBy)
	case *Deduplicate:
		fmt.Fprintf(b, "deduplicate keepLast=%v rowtime=%v time=%s", x.KeepLast, x.RowTime, lineage(x.Input, x.TimeCol))
		describeRankKeys(b, x.Input, x.Keys, nil)
	case *Join:
		fmt.Fprintf(b, "join %s", x.Type)
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
	case *IntervalJoin:
		describeIntervalJoin(b, x) // interval_join.go
	case *TemporalJoin:
		describeTemporalJoin(b, x) // temporal_join.go
	case *SemiJoin:
		describeSemiJoin(b, x) // semi_join.go
	case *WindowJoin:
		describeWindowJoin(b, x) // window_join.go
	case *Union:
		fmt.Fprintf(b, "union %d\n", len(x.Inputs))
	case *ChangelogNormalize:
		b.WriteString("changelog-normalize")
		describeRankKeys(b, x.Input, x.Keys, nil)
	}
	for _, c := range n.Children() {
		describeState(b, c)
	}
}

func describeAggs(b *strings.Builder, in Node, keys []int, aggs []AggCall) {
	s := in.Schema()
	for _, k := range keys {
		fmt.Fprintf(b, " key=%s:%s", lineage(in, k), s[k].Type.WithoutTimeAttr())
	}
	for _, a := range aggs {
		arg := "*"
		if a.Arg >= 0 {
			arg = lineage(in, a.Arg) + ":" + s[a.Arg].Type.WithoutTimeAttr().String()
		}
		fmt.Fprintf(b, " agg=%s(distinct=%v,%s)->%s[%s]", a.Func, a.Distinct, arg, a.T, a.State)
		if a.Filter >= 0 {
			fmt.Fprintf(b, " filter=%s", lineage(in, a.Filter))
		}
	}
	b.WriteByte('\n')
}

// lineage is column col of n as an expression over source columns (table.column).
func lineage(n Node, col int) string {
	switch x := n.(type) {
	case *TableSourceScan:
		c := x.Produce[col]
		if c.MetadataKey != "" {
			return x.Table + ".#" + c.MetadataKey
		}
		return x.Table + "." + c.Name
	case *Calc:
		return formatExpr(x.Projections[col], func(c *ColumnRef) string { return lineage(x.Input, c.Index) })
	case *WatermarkAssigner:
		return lineage(x.Input, col)
	case *Limit, *TemporalSort:
		return lineage(x.Children()[0], col)
	case *Deduplicate:
		return lineage(x.Input, col)
	case *OverAggregate:
		if w := len(x.Input.Schema()); col >= w {
			return "over-" + x.Calls[col-w].Name
		}
		return lineage(x.Input, col)
	case *WindowRank:
		if col >= len(x.Input.Schema()) {
			return "rank-number"
		}
		return lineage(x.Input, col)
	case *Expand:
		if col >= len(x.Input.Schema()) {
			return "grouping-id"
		}
		return lineage(x.Input, col)
	case *Rank:
		if col >= len(x.Input.Schema()) {
			return "rank-number"
		}
		return lineage(x.Input, col)
	case *Exchange, *ChangelogNormalize:
		return lineage(x.Children()[0], col)
	case *Correlate:
		if w := len(x.Input.Schema()); col >= w {
			arg := formatExpr(x.Arg, func(c *ColumnRef) string { return lineage(x.Input, c.Index) })
			return fmt.Sprintf("unnest(%s,ordinality=%v,left=%v)[%d]", arg, x.Ordinality, x.Left, col-w)
		}
		return lineage(x.Input, col)
	case *Join:
		if w := len(x.Left.Schema()); col >= w {
			return lineage(x.Right, col-w)
		}
		return lineage(x.Left, col)
	case *IntervalJoin:
		if w := len(x.Left.Schema()); col >= w {
			return lineage(x.Right, col-w)
		}
		return lineage(x.Left, col)
	case *TemporalJoin:
		if w := len(x.Left.Schema()); col >= w {
			return lineage(x.Right, col-w)
		}
		return lineage(x.Left, col)
	case *SemiJoin:
		return lineage(x.Left, col)
	case *WindowJoin:
		if w := len(x.Left.Schema()); col >= w {
			return lineage(x.Right, col-w)
		}
		return lineage(x.Left, col)
	case *Union:
		parts := make([]string, len(x.Inputs))
		for i, in := range x.Inputs {
			parts[i] = lineage(in, col)
		}
		return "union(" + strings.Join(parts, ",") + ")"
	case *WindowTableFunction:
		if w := len(x.Input.Schema()); col >= w {
			return fmt.Sprintf("%s(%s)", x.Out[col].Name, lineage(x.Input, x.Window.TimeCol))
		}
		return lineage(x.Input, col)
	case *Values:
		vals := make([]string, len(x.Rows))
		for i, r := range x.Rows {
			vals[i] = ExplainExpr(r[col])
		}
		return "values(" + strings.Join(vals, ",") + ")"
	}
	return fmt.Sprintf("%T[%d]", n, col)
}
