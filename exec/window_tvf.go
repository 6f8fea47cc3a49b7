package exec

import (
	"context"
	"fmt"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// windowTVFConfig is a compiled planner.WindowTableFunction.
type windowTVFConfig struct {
	win     *windowSpec
	timeCol int
	inWidth int
	cols    windowColumns
}

func compileWindowTVF(n *planner.WindowTableFunction) (*windowTVFConfig, error) {
	in := n.Input.Schema()
	if n.Window.TimeCol < 0 || n.Window.TimeCol >= len(in) {
		return nil, fmt.Errorf("%w: window time column %d of %d", ErrUnsupportedPlan, n.Window.TimeCol, len(in))
	}
	win, err := newWindowSpec(n.Window, in[n.Window.TimeCol].Type)
	if err != nil {
		return nil, err
	}
	if len(n.Out) != len(in)+3 {
		return nil, fmt.Errorf("%w: window table function has %d output columns, want the %d input columns and 3 window columns",
			ErrUnsupportedPlan, len(n.Out), len(in))
	}
	return &windowTVFConfig{win: win, timeCol: n.Window.TimeCol, inWidth: len(in), cols: newWindowColumns(n.Out, len(in), win.tick)}, nil
}

// windowTVFOp adds window_start, window_end and window_time to each row, once per window
// the row belongs to (TABLE(TUMBLE(...)) selected without aggregation). Rows with a NULL
// time are dropped and counted, as Flink's window table function does.
type windowTVFOp struct {
	nopOperator
	cfg   *windowTVFConfig
	m     *opMetrics
	clock connectors.Clock
	zone  *zone
}

func (o *windowTVFOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	w := o.cfg.win
	var procNow int64
	if w.procTime {
		procNow = o.zone.local(o.clock.Now().UnixMicro())
	}
	width := o.cfg.inWidth + 3
	bad := 0
	var err error
	for i, row := range b.rows {
		t := procNow
		if !w.procTime {
			ts := row[o.cfg.timeCol]
			if ts.IsNull() {
				bad++
				continue
			}
			t = o.zone.local(ts.Int())
		}
		kind := b.kind(i)
		w.windowsOf(t, func(start, end int64) {
			if err != nil {
				return
			}
			r := make(types.Row, width)
			copy(r, row)
			o.cfg.cols.fill(r[o.cfg.inWidth:], o.zone, start, end, o.zone.instant(end))
			err = out.emit(ctx, kind, r)
		})
		if err != nil {
			return err
		}
	}
	o.m.bad.add(bad)
	return nil
}
