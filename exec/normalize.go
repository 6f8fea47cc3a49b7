package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// normalizeOp is a planner.ChangelogNormalize, as Flink's (a keep-last-row deduplication
// on a changelog): it keeps the last row of each key and turns an upsert stream into a
// retracting one. An insert or update of a new key is +I; of a known key -U of the kept
// row and +U of the new one, nothing when the new row equals the kept one; a delete (or
// a -U) of a known key is -D of the kept row, which is forgotten; of an unknown key
// nothing. Its state is the kept rows, checkpointed by key group.
type normalizeOp struct {
	nopOperator
	keys  []int
	width int

	// state: the kept rows by encoded key, and again by key group for checkpoints
	rows    map[string]types.Row
	byKG    [keyGroups]map[string]types.Row
	dirty   kgSet
	written map[uint16]uint64

	keyBuf []byte
}

func compileNormalize(n *planner.ChangelogNormalize) (*normalizeOp, error) {
	in := n.Input.Schema()
	for _, k := range n.Keys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("%w: normalize key column %d of %d", ErrUnsupportedPlan, k, len(in))
		}
	}
	if len(n.Keys) == 0 {
		return nil, fmt.Errorf("%w: ChangelogNormalize without a key", ErrUnsupportedPlan)
	}
	return &normalizeOp{keys: n.Keys, width: len(in)}, nil
}

// fresh returns an operator with the configuration of o and empty state.
func (o *normalizeOp) fresh() *normalizeOp {
	return &normalizeOp{keys: o.keys, width: o.width, rows: map[string]types.Row{}, written: map[uint16]uint64{}}
}

func describeNormalize(n *planner.ChangelogNormalize) string {
	in := n.Input.Schema()
	var b strings.Builder
	b.WriteString("changelog normalize keys=[")
	for i, k := range n.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d %s", k, in[k].Type.WithoutTimeAttr())
	}
	b.WriteString("] row=[")
	for i, c := range in {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Type.WithoutTimeAttr().String())
	}
	fmt.Fprintf(&b, "] state v%d", stateVersion)
	return b.String()
}

func (o *normalizeOp) processBatch(ctx context.Context, b batch, out *outbox) error {
	for i, row := range b.rows {
		o.keyBuf = appendRowKey(o.keyBuf[:0], row, o.keys)
		prev, known := o.rows[string(o.keyBuf)]
		switch b.kind(i) {
		case connectors.Insert, connectors.UpdateAfter:
			switch {
			case !known:
				if err := out.emit(ctx, connectors.Insert, row); err != nil {
					return err
				}
			case rowsEqual(prev, row):
				continue
			default:
				if err := out.emit(ctx, connectors.UpdateBefore, prev); err != nil {
					return err
				}
				if err := out.emit(ctx, connectors.UpdateAfter, row); err != nil {
					return err
				}
			}
			o.put(string(o.keyBuf), ownRow(row))
		default:
			if !known {
				continue // a delete of a key never seen (or already deleted): nothing to retract
			}
			if err := out.emit(ctx, connectors.Delete, prev); err != nil {
				return err
			}
			o.remove(string(o.keyBuf))
		}
	}
	return nil
}

// ownRow copies row's strings out of buffers a decoder may reuse: the row is kept.
func ownRow(r types.Row) types.Row {
	out := make(types.Row, len(r))
	for i, v := range r {
		switch v.Kind() {
		case types.Char, types.Varchar:
			out[i] = types.StringValue(strings.Clone(v.Str()))
		default:
			out[i] = v
		}
	}
	return out
}

func (o *normalizeOp) put(k string, row types.Row) {
	kg := keyGroupOf([]byte(k))
	if o.byKG[kg] == nil {
		o.byKG[kg] = map[string]types.Row{}
	}
	o.rows[k] = row
	o.byKG[kg][k] = row
	o.dirty.set(kg)
}

func (o *normalizeOp) remove(k string) {
	kg := keyGroupOf([]byte(k))
	delete(o.rows, k)
	delete(o.byKG[kg], k)
	o.dirty.set(kg)
}

// Checkpointed state, under the operator's state id: "n<kg>" for the kept rows of key
// group kg, each value: version | row count | rows (in key order).
const normalizePrefix = "n"

func (o *normalizeOp) snapshotState(_ context.Context, w stateWriter) error {
	base := w.Base()
	for kg := range uint16(keyGroups) {
		m := o.byKG[kg]
		if len(m) == 0 {
			continue // an empty key group is not written, which deletes it
		}
		key := kgKey(normalizePrefix, kg)
		if at := o.written[kg]; base != 0 && at != 0 && at <= base && !o.dirty.has(kg) {
			if err := w.Unchanged(key); err != nil {
				return err
			}
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst := []byte{stateVersion}
		dst = binary.AppendUvarint(dst, uint64(len(keys)))
		for _, k := range keys {
			dst = appendStateRow(dst, m[k])
		}
		if err := w.Put(key, dst); err != nil {
			return err
		}
		o.written[kg] = w.ID()
	}
	o.dirty.clear()
	return nil
}

func (o *normalizeOp) restoreState(r stateReader) error {
	o.rows = map[string]types.Row{}
	o.byKG = [keyGroups]map[string]types.Row{}
	o.written = map[uint16]uint64{}
	err := r.Scan(func(key string, value []byte) error {
		prefix, kg, err := parseKGKey(key)
		if err != nil {
			return err
		}
		if prefix != normalizePrefix {
			return fmt.Errorf("malformed changelog normalize state key %q", key)
		}
		d := &stateDecoder{data: value}
		d.version()
		n := d.count(1)
		for range n {
			row := d.row()
			if d.err != nil {
				break
			}
			if len(row) != o.width {
				d.fail("a row of %d columns, the plan's input has %d", len(row), o.width)
				break
			}
			k := string(appendRowKey(nil, row, o.keys))
			if keyGroupOf([]byte(k)) != kg {
				d.fail("a row of key group %d stored under %d", keyGroupOf([]byte(k)), kg)
				break
			}
			o.put(k, row)
		}
		if err := d.finish(); err != nil {
			return fmt.Errorf("state key %q: %w", key, err)
		}
		o.written[kg] = r.ID()
		return nil
	})
	o.dirty.clear()
	return err
}
