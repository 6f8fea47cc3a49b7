package planner

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Changelogs through a plan
//
// Every node emits a changelog (ChangelogOf): a scan the one its table's connector or
// format declares (connectors.ChangelogMode), other nodes one computed from their inputs.
// An upsert scan (upsert-kafka: +I/+U of the latest row per key, a tombstone -D, no -U)
// is followed by a ChangelogNormalize keyed by the table's PRIMARY KEY, as in Flink,
// which keeps the last row per key and emits a retracting changelog (-U/+U with the old
// row, -D with the deleted row) that every operator above understands.

// ChangelogNormalize keeps the last row of each key of an upsert (or duplicated CDC)
// input and turns its changes into a retracting changelog: an upsert of a new key is +I,
// of a known key -U (the kept row) and +U, a delete -D of the kept row; a delete of an
// unknown key and an upsert equal to the kept row emit nothing.
type ChangelogNormalize struct {
	Input Node
	Keys  []int // input columns of the primary key
}

var _ Node = (*ChangelogNormalize)(nil)

func (n *ChangelogNormalize) Children() []Node     { return []Node{n.Input} }
func (n *ChangelogNormalize) Schema() types.Schema { return n.Input.Schema() }
func (n *ChangelogNormalize) Explain() string {
	in := n.Input.Schema()
	ks := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		ks[i] = in[k].Name
	}
	return fmt.Sprintf("ChangelogNormalize(key=[%s])", strings.Join(ks, ", "))
}

// changelogNode is implemented by nodes that say what they emit themselves (Deduplicate,
// and nodes added later); ChangelogOf asks them first.
type changelogNode interface {
	Changelog() Changelog
}

// ChangelogOf returns the changelog node n emits: InsertOnly, Upsert (an upsert scan,
// below its ChangelogNormalize) or Updating.
func ChangelogOf(n Node) Changelog {
	switch x := n.(type) {
	case changelogNode:
		return x.Changelog()
	case *TableSourceScan:
		return x.Changelog
	case *Values, *WindowAggregate:
		return InsertOnly
	case *ChangelogNormalize, *GroupAggregate, *Rank:
		return Updating
	case *Join:
		if x.Type != InnerJoin {
			return Updating
		}
	case *Calc, *WatermarkAssigner, *Exchange, *Limit:
		return ChangelogOf(x.Children()[0])
	}
	for _, c := range n.Children() {
		if ChangelogOf(c) != InsertOnly {
			return Updating
		}
	}
	return InsertOnly
}

// Changelog returns the changelog mode of reading the table.
func (t *Table) Changelog() connectors.ChangelogMode {
	return connectors.TableChangelog(t.Connector, t.Format, t.Info())
}

// scanChangelog is the planner's changelog of a scan of a table of mode m.
func scanChangelog(m connectors.ChangelogMode) Changelog {
	switch m {
	case connectors.UpsertMode:
		return Upsert
	case connectors.AllChangesMode:
		return Updating
	}
	return InsertOnly
}

// readChangelog is what a relation reading t emits: an upsert table is normalized into
// a retracting changelog (see expand).
func readChangelog(t *Table) Changelog {
	if scanChangelog(t.Changelog()) == InsertOnly {
		return InsertOnly
	}
	return Updating
}

// primaryKeyIndexes returns the Columns indexes of t's primary key.
func (t *Table) primaryKeyIndexes() []int {
	var out []int
	for _, name := range t.PrimaryKey {
		for i, c := range t.Columns {
			if strings.EqualFold(c.Name, name) {
				out = append(out, i)
			}
		}
	}
	return out
}

// scanChangelogSuffix is how EXPLAIN shows a scan's changelog, "" when insert-only.
func scanChangelogSuffix(c Changelog) string {
	switch c {
	case Upsert:
		return ", changelog=[upsert]"
	case Updating:
		return ", changelog=[updating]"
	}
	return ""
}

// normalize puts a ChangelogNormalize by keys over in, with the Exchange by the key below
// it that Flink's plan shows.
func normalize(in Node, keys []int) Node {
	return &ChangelogNormalize{Input: &Exchange{Input: in, Keys: keys}, Keys: keys}
}

// pruneNormalize prunes below a ChangelogNormalize, which needs its keys besides what its
// parent uses.
func (o *optimizer) pruneNormalize(x *ChangelogNormalize, used []bool) (Node, []int, error) {
	inUsed := append([]bool(nil), used...)
	for _, k := range x.Keys {
		inUsed[k] = true
	}
	in, m, err := o.prune(x.Input, inUsed)
	if err != nil {
		return nil, nil, err
	}
	return &ChangelogNormalize{Input: in, Keys: remapInts(x.Keys, m)}, m, nil
}

// retracting makes g an aggregate over an updating input: COUNT, SUM and AVG subtract,
// MIN, MAX and the DISTINCT aggregates keep each value with its count.
func retracting(g *GroupAggregate) {
	g.Retract = true
	for i := range g.Aggs {
		a := &g.Aggs[i]
		switch {
		case orderedAggs[a.Func]:
			a.State = StateValueList
		case a.Func == AggMin || a.Func == AggMax || a.Distinct || a.Func == AggApproxCountDi:
			a.State = StateRetractMultiset
		case a.Func == AggCount:
			a.State = StateCounter
		case a.Func == AggSum:
			a.State = StateSum
		default:
			a.State = StateAvg
		}
	}
}

// retractNames names the aggregates of a retracting GroupAggregate as Flink's EXPLAIN
// does (COUNT_RETRACT, MAX_RETRACT, ...).
func retractNames(aggs []AggCall) []AggCall {
	out := append([]AggCall(nil), aggs...)
	for i := range out {
		out[i].Func += "_RETRACT"
	}
	return out
}
