package exec

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec/eval"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// lookupJoinCfg is a compiled planner.LookupJoin.
type lookupJoinCfg struct {
	node     *planner.LookupJoin
	open     connectors.LookupFactory
	keys     []eval.Evaluator // over the input row: the key looked up
	keyNames []string
	where    func(types.Row) (bool, error) // nil: no condition beyond the keys
	inWidth  int
	dimWidth int
	left     bool
}

func compileLookupJoin(n *planner.LookupJoin, env eval.Env) (*lookupJoinCfg, error) {
	if n.Connector == nil {
		return nil, fmt.Errorf("%w: lookup join of %s without a connector", ErrUnsupportedPlan, n.Table)
	}
	open, ok := connectors.LookupOf(n.Connector.Name)
	if !ok {
		return nil, fmt.Errorf("%w: connector %s of table %s cannot look rows up", ErrUnsupportedPlan, n.Connector.Name, n.Table)
	}
	cfg := &lookupJoinCfg{node: n, open: open, inWidth: len(n.Input.Schema()), dimWidth: len(n.Info.Schema),
		left: n.Type == planner.LeftOuterJoin}
	for i, k := range n.LeftKeys {
		f, err := eval.Compile(k, env)
		if err != nil {
			return nil, fmt.Errorf("lookup key %s: %w", k, err)
		}
		cfg.keys = append(cfg.keys, f)
		cfg.keyNames = append(cfg.keyNames, n.Info.Schema[n.Keys[i]].Name)
	}
	if n.Where != nil {
		f, err := eval.CompilePredicate(n.Where, env)
		if err != nil {
			return nil, fmt.Errorf("lookup join condition %s: %w", n.Where, err)
		}
		cfg.where = f
	}
	return cfg, nil
}

// lookupJoinOp runs a lookup join: each row is joined with the rows the dimension's
// connectors.LookupSource returns for its key, or null-padded under LEFT JOIN when
// none match. It keeps the input's change kinds and holds no state of its own (the
// connector's cache is not part of a checkpoint: a restarted job looks keys up again).
type lookupJoinOp struct {
	nopOperator
	cfg      *lookupJoinCfg
	settings map[string]string
	log      *slog.Logger
	clock    connectors.Clock
	src      connectors.LookupSource
	key      types.Row
}

func (o *lookupJoinOp) open(ctx context.Context) error {
	n := o.cfg.node
	src, err := o.cfg.open(ctx, connectors.LookupConfig{TableInfo: n.Info, Keys: o.cfg.keyNames, Settings: o.settings,
		Log: connLogger{o.log.With("table", n.Table)}, Clock: o.clock})
	if err != nil {
		return err
	}
	o.src = src
	o.key = make(types.Row, len(o.cfg.keys))
	return nil
}

func (o *lookupJoinOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	c := o.cfg
	for i, row := range b.rows {
		if len(row) != c.inWidth {
			return fmt.Errorf("%w: lookup join input row of %d columns, want %d", ErrUnsupportedPlan, len(row), c.inWidth)
		}
		for k, f := range c.keys {
			v, err := f(row)
			if err != nil {
				return err
			}
			o.key[k] = v
		}
		dims, err := o.src.Lookup(ctx, o.key)
		if err != nil {
			return err
		}
		matched := false
		for _, d := range dims {
			j := make(types.Row, 0, c.inWidth+c.dimWidth)
			j = append(append(j, row...), d...)
			if c.where != nil {
				pass, err := c.where(j)
				if err != nil {
					return err
				}
				if !pass {
					continue
				}
			}
			matched = true
			if err := out.emit(ctx, b.kind(i), j); err != nil {
				return err
			}
		}
		if !matched && c.left {
			j := make(types.Row, c.inWidth+c.dimWidth)
			copy(j, row)
			if err := out.emit(ctx, b.kind(i), j); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *lookupJoinOp) close() error {
	if o.src == nil {
		return nil
	}
	return o.src.Close()
}
