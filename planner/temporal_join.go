package planner

import "github.com/pipesql/pipesql/parser"

// planSystemTimeJoin plans left JOIN dim FOR SYSTEM_TIME AS OF left.attr ON ...: a
// lookup join when dim's connector can look rows up (Flink's LookupJoin), else an
// event-time temporal join against a versioned table (TemporalJoin). Neither is built
// yet: the join is refused at the time attribute.
func (p *planner) planSystemTimeJoin(x *parser.Join, typ JoinType, dim *parser.TableName, env *cteEnv) (*relation, error) {
	if rel, ok, err := p.planLookupJoin(x, typ, dim, env); ok { // lookup.go
		return rel, err
	}
	return nil, errAt(dim.AsOf.At, ErrUnsupported, "unsupported: FOR SYSTEM_TIME AS OF (temporal and lookup joins) is not supported yet")
}
