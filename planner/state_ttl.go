package planner

import (
	"strings"
	"time"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/parser"
)

// The STATE_TTL hint
//
// SELECT /*+ STATE_TTL('o' = '1d', 'c' = '12h') */ ... FROM orders o JOIN customers c ON
// ... keeps the rows of each named input of a regular join that long (processing time,
// as table.exec.state.ttl does, which still applies to the sides the hint does not name).
// A key is a table name or alias of a join input of that SELECT's FROM, as in Flink; a
// key that names no such input, a duration that does not parse, or a key given twice is
// an error at the key. pipesql applies the hint to regular joins only: Flink's hint on a
// group aggregate is refused (its state is kept for ever).

// ttlHint is a parsed STATE_TTL hint and which of its keys a join used.
type ttlHint struct {
	opts []parser.Option
	ttl  []time.Duration
	used []bool
}

func newTTLHint(opts []parser.Option) (*ttlHint, error) {
	h := &ttlHint{opts: opts, used: make([]bool, len(opts))}
	for i, o := range opts {
		for _, prev := range opts[:i] {
			if strings.EqualFold(prev.Key, o.Key) {
				return nil, errAt(o.At, ErrInvalidOption, "STATE_TTL names '%s' twice", o.Key)
			}
		}
		d, err := config.ParseDuration(o.Value)
		if err != nil || d <= 0 {
			return nil, errAt(o.At, ErrInvalidOption, "STATE_TTL '%s' = '%s': not a positive duration (write e.g. '1d', '12h', '30 min')", o.Key, o.Value)
		}
		h.ttl = append(h.ttl, d)
	}
	return h, nil
}

// side returns the retention the hint gives the join input te, 0 when it names none.
func (h *ttlHint) side(te parser.TableExpr) time.Duration {
	if h == nil {
		return 0
	}
	var names []string
	switch x := te.(type) {
	case *parser.TableName:
		if x.Alias != "" {
			names = append(names, x.Alias)
		}
		if n := len(x.Name); n > 0 {
			names = append(names, x.Name[n-1])
		}
	case *parser.SubqueryTable:
		names = append(names, x.Alias)
	}
	for i, o := range h.opts {
		for _, n := range names {
			if n != "" && strings.EqualFold(n, o.Key) {
				h.used[i] = true
				return h.ttl[i]
			}
		}
	}
	return 0
}

// planFromHinted plans sel's FROM with its STATE_TTL hint in force, and refuses a key
// that no join of that FROM used.
func (p *planner) planFromHinted(sel *parser.Select, env *cteEnv) (*relation, error) {
	saved := p.ttlHint
	defer func() { p.ttlHint = saved }()
	p.ttlHint = nil
	if len(sel.StateTTL) > 0 {
		h, err := newTTLHint(sel.StateTTL)
		if err != nil {
			return nil, err
		}
		p.ttlHint = h
	}
	rel, err := p.planFrom(sel.From, env)
	if err != nil {
		return nil, err
	}
	if h := p.ttlHint; h != nil {
		for i, o := range h.opts {
			if !h.used[i] {
				return nil, errAt(o.At, ErrUnsupported, "unsupported: STATE_TTL '%s': not an input (table name or alias) of a regular join in this SELECT's FROM (pipesql applies the hint to regular joins)", o.Key)
			}
		}
	}
	return rel, nil
}
