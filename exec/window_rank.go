package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// Window Top-N
//
// windowRankOp runs a planner.WindowRank. Its input is a window aggregate, which emits
// every row of a window when the watermark passes the window's end and forwards that
// watermark after them: so when a watermark arrives, every row buffered since the last
// one belongs to a window that is complete. Then the rows are ranked per partition
// (which holds window_start and window_end) by ORDER BY, ties by arrival, and the rows
// ranked Start to End are emitted, insert-only, with the rank number when selected.

type windowRankOp struct {
	nopOperator
	cfg  *rankConfig
	rows []types.Row // buffered since the last watermark, in arrival order
}

func compileWindowRank(n *planner.WindowRank) (*rankConfig, error) {
	cfg, err := compileRank(&n.Rank)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func (o *windowRankOp) processBatch(_ context.Context, b batch, _ *outbox) error {
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: window rank received %s", ErrRetraction, b.kind(i))
		}
		o.rows = append(o.rows, row)
	}
	return nil
}

func (o *windowRankOp) processWatermark(ctx context.Context, _ int64, out *outbox) error {
	return o.flush(ctx, out)
}

func (o *windowRankOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput {
		return o.flush(ctx, out)
	}
	return nil
}

// flush ranks and emits the buffered rows.
func (o *windowRankOp) flush(ctx context.Context, out *outbox) error {
	if len(o.rows) == 0 {
		return nil
	}
	cfg := o.cfg
	parts := map[string][]types.Row{}
	var keys []string
	var buf []byte
	for _, r := range o.rows {
		buf = appendRowKey(buf[:0], r, cfg.part)
		if _, ok := parts[string(buf)]; !ok {
			keys = append(keys, string(buf))
		}
		parts[string(buf)] = append(parts[string(buf)], r)
	}
	o.rows = nil
	cmp := func(a, b types.Row) int {
		for _, k := range cfg.order {
			c := types.Compare(a[k.Col], b[k.Col])
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	for _, k := range keys {
		rows := parts[k]
		slices.SortStableFunc(rows, cmp)
		var rank, dense int64
		for i, r := range rows {
			switch {
			case cfg.typ == planner.RowNumber:
				rank = int64(i) + 1
			case i == 0 || cmp(rows[i-1], r) != 0:
				dense++
				rank = int64(i) + 1
				if cfg.typ == planner.DenseRank {
					rank = dense
				}
			}
			if rank > cfg.end {
				break
			}
			if rank < cfg.start {
				continue
			}
			row := r
			if cfg.rankNumber {
				row = make(types.Row, len(r)+1)
				copy(row, r)
				row[len(r)] = types.IntValue(types.BigInt, rank)
			}
			if err := out.emit(ctx, connectors.Insert, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// Checkpointed state: "b", the rows buffered since the last watermark (a barrier
// between a window's rows and its watermark is possible only in principle: a window
// aggregate emits both in one step).
const windowRankKey = "b"

func (o *windowRankOp) snapshotState(_ context.Context, w stateWriter) error {
	dst := []byte{stateVersion}
	dst = binary.AppendUvarint(dst, uint64(len(o.rows)))
	for _, r := range o.rows {
		dst = appendStateRow(dst, r)
	}
	return w.Put(windowRankKey, dst)
}

func (o *windowRankOp) restoreState(r stateReader) error {
	o.rows = nil
	return r.Scan(func(key string, value []byte) error {
		if key != windowRankKey {
			return fmt.Errorf("malformed window rank state key %q", key)
		}
		d := &stateDecoder{data: value}
		d.version()
		n := d.count(1)
		for range n {
			row := d.row()
			if d.err == nil && len(row) != o.cfg.width {
				d.fail("a row of %d columns, the plan's input has %d", len(row), o.cfg.width)
			}
			o.rows = append(o.rows, row)
		}
		return d.finish()
	})
}
