package difftest

import (
	"context"
	"fmt"
	"sync"

	"github.com/pipesql/pipesql/connectors"
	_ "github.com/pipesql/pipesql/connectors/builtin" // the filesystem connector
	_ "github.com/pipesql/pipesql/connectors/formats" // json and csv
	_ "github.com/pipesql/pipesql/connectors/nexmark" // the nexmark source
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// RunPipesql plans the last statement of script (a query) after applying the others
// (CREATE TABLE, SET), runs it to the end of its bounded inputs with operators sending
// at most batch rows at a time (0: the default), and returns the final state of its
// changelog: +I and +U add a row, -U and -D remove one.
func RunPipesql(ctx context.Context, script string, batch int) ([]Row, error) {
	stmts, err := parser.ParseScript("difftest.sql", script)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("no statement")
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	var (
		mu  sync.Mutex
		log changelog
	)
	job, err := exec.NewJob(prog, exec.Options{BatchSize: batch, Collect: func(k connectors.RowKind, r types.Row) {
		mu.Lock()
		defer mu.Unlock()
		log.apply(k, normalizeRow(r))
	}})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := job.Run(ctx); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if log.err != nil {
		return nil, log.err
	}
	return log.rows(), nil
}

// changelog is a multiset of rows that a changelog is applied to.
type changelog struct {
	count map[string]int
	row   map[string]Row
	order []string
	err   error
	n     int
}

func (c *changelog) apply(k connectors.RowKind, r Row) {
	if c.count == nil {
		c.count, c.row = map[string]int{}, map[string]Row{}
	}
	c.n++
	key := r.String()
	switch k {
	case connectors.Insert, connectors.UpdateAfter:
		if _, ok := c.row[key]; !ok {
			c.order = append(c.order, key)
			c.row[key] = r
		}
		c.count[key]++
	default:
		if c.count[key] == 0 {
			if c.err == nil {
				c.err = fmt.Errorf("changelog: change %d is %s%s, a row not in the result", c.n, k, r)
			}
			return
		}
		c.count[key]--
	}
}

func (c *changelog) rows() []Row {
	var out []Row
	for _, key := range c.order {
		for range c.count[key] {
			out = append(out, c.row[key])
		}
	}
	return out
}

func normalizeRow(r types.Row) Row {
	out := make(Row, len(r))
	for i, v := range r {
		out[i] = normalize(v)
	}
	return out
}

func normalize(v types.Value) Val {
	if v.IsNull() {
		return Val{}
	}
	switch v.Kind() {
	case types.Boolean:
		if v.Bool() {
			return Val{C: Bool, I: 1}
		}
		return Val{C: Bool}
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return Val{C: Int, I: v.Int()}
	case types.Float, types.Double:
		return Val{C: Float, F: v.Float()}
	case types.Decimal:
		f, _ := v.Rat().Float64()
		return Val{C: Float, F: f}
	case types.Char, types.Varchar:
		return Val{C: Str, S: v.Str()}
	case types.Date:
		return Val{C: Date, I: v.Int()}
	case types.Timestamp, types.TimestampLTZ:
		return Val{C: Time, I: v.Time().UnixMicro()}
	}
	return Val{C: Str, S: "unsupported " + v.Kind().String() + ": " + v.String()}
}
