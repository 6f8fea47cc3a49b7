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
//
// Over a window table function (planner.WindowRank.OverTVF) the rows arrive as they
// come: a watermark ranks the buffered rows whose window_time it has reached and keeps
// the others; a row whose window_time the watermark already passed is late, dropped and
// counted. A keep-last WindowDeduplicate keeps, of rows with the same time, the last.

type windowRankOp struct {
	nopOperator
	cfg  *rankConfig
	tvf  *windowRankTVF // nil over a window aggregate
	m    *opMetrics
	rows []types.Row // buffered, in arrival order
	wm   int64       // the last watermark (over a window table function)
}

// windowRankTVF is what a WindowRank over a window table function adds.
type windowRankTVF struct {
	timeCol  int  // window_time
	lastWins bool // keep-last deduplication: of equal times, the last row
}

func compileWindowRank(n *planner.WindowRank) (*rankConfig, *windowRankTVF, error) {
	cfg, err := compileRank(&n.Rank)
	if err != nil {
		return nil, nil, err
	}
	if !n.OverTVF {
		return cfg, nil, nil
	}
	in := n.Input.Schema()
	if n.TimeCol < 0 || n.TimeCol >= len(in) {
		return nil, nil, fmt.Errorf("%w: window rank time column %d of %d", ErrUnsupportedPlan, n.TimeCol, len(in))
	}
	if k := in[n.TimeCol].Type.Kind; k != types.Timestamp && k != types.TimestampLTZ {
		return nil, nil, fmt.Errorf("%w: window rank time column is %s", ErrUnsupportedPlan, in[n.TimeCol].Type)
	}
	return cfg, &windowRankTVF{timeCol: n.TimeCol, lastWins: n.Dedup && n.OrderBy[0].Desc}, nil
}

func (o *windowRankOp) processBatch(_ context.Context, b batch, _ *outbox) error {
	late := 0
	for i, row := range b.rows {
		if b.kind(i) != connectors.Insert {
			return fmt.Errorf("%w: window rank received %s", ErrRetraction, b.kind(i))
		}
		if o.tvf != nil && o.wm != NoWatermark && row[o.tvf.timeCol].Int() <= o.wm {
			late++
			continue
		}
		o.rows = append(o.rows, row)
	}
	if late > 0 && o.m != nil {
		o.m.late.add(late)
	}
	return nil
}

func (o *windowRankOp) processWatermark(ctx context.Context, wm int64, out *outbox) error {
	if o.tvf == nil {
		rows := o.rows
		o.rows = nil
		return o.flush(ctx, rows, out)
	}
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	var ready, keep []types.Row
	for _, r := range o.rows {
		if r[o.tvf.timeCol].Int() <= wm {
			ready = append(ready, r)
		} else {
			keep = append(keep, r)
		}
	}
	o.rows = keep
	return o.flush(ctx, ready, out)
}

func (o *windowRankOp) finish(ctx context.Context, endOfInput bool, out *outbox) error {
	if endOfInput {
		rows := o.rows
		o.rows = nil
		return o.flush(ctx, rows, out)
	}
	return nil
}

// flush ranks and emits rows taken from the buffer.
func (o *windowRankOp) flush(ctx context.Context, rows []types.Row, out *outbox) error {
	if len(rows) == 0 {
		return nil
	}
	cfg := o.cfg
	parts := map[string][]types.Row{}
	var keys []string
	var buf []byte
	for _, r := range rows {
		buf = appendRowKey(buf[:0], r, cfg.part)
		if _, ok := parts[string(buf)]; !ok {
			keys = append(keys, string(buf))
		}
		parts[string(buf)] = append(parts[string(buf)], r)
	}
	cmp := func(a, b types.Row) int { return planner.CompareRows(cfg.order, a, b) }
	for _, k := range keys {
		rows := parts[k]
		if o.tvf != nil && o.tvf.lastWins {
			slices.Reverse(rows) // ties by later arrival first
		}
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

// Checkpointed state: "b", the rows buffered (over a window aggregate, since the last
// watermark: a barrier between a window's rows and its watermark is possible only in
// principle, a window aggregate emits both in one step); over a window table function
// also "w", the last watermark, which tells late rows.
const (
	windowRankKey   = "b"
	windowRankWMKey = "w"
)

func (o *windowRankOp) snapshotState(_ context.Context, w stateWriter) error {
	dst := []byte{stateVersion}
	dst = binary.AppendUvarint(dst, uint64(len(o.rows)))
	for _, r := range o.rows {
		dst = appendStateRow(dst, r)
	}
	if err := w.Put(windowRankKey, dst); err != nil {
		return err
	}
	if o.tvf == nil {
		return nil
	}
	return w.Put(windowRankWMKey, binary.AppendVarint([]byte{stateVersion}, o.wm))
}

func (o *windowRankOp) restoreState(r stateReader) error {
	o.rows, o.wm = nil, NoWatermark
	return r.Scan(func(key string, value []byte) error {
		if key == windowRankWMKey && o.tvf != nil {
			d := &stateDecoder{data: value}
			d.version()
			o.wm = d.varint()
			return d.finish()
		}
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
