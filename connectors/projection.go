package connectors

import (
	"fmt"

	"github.com/pipesql/pipesql/types"
)

// Decoders and the physical schema
//
// Some formats find a column by name (json), others by position (csv). A source knows
// only the columns the plan wants (SourceConfig.Produce), which is not enough for a
// positional format: the third CSV field is the table's third physical column whether
// or not the plan reads the first two. So formats follow one convention for the cols
// they are given:
//
//   - cols may be the table's physical columns in declaration order where the columns
//     the caller does not want have the NULL type (types.TypeNull). The decoder skips
//     those: it neither reads nor converts them, and leaves their dst slot NULL.
//   - Name-based formats also accept just the wanted columns, in any order.
//
// NewProjectedDecoder builds that first form for a source, so a source that uses it
// works with every format. A positional format given only the wanted columns would
// read the wrong fields, so sources must not call FormatFactory.NewDecoder with
// Produce directly unless they know the format matches by name.

// NewProjectedDecoder returns a decoder of format f that fills the physical columns of
// produce (those with MetadataKey ""), in produce's order: Decode's dst has one slot per
// physical produced column. physical is the table's physical schema (TableInfo.Schema).
func NewProjectedDecoder(f *FormatFactory, physical types.Schema, produce []ProducedColumn, opts map[string]string) (Decoder, error) {
	if f.NewDecoder == nil {
		return nil, fmt.Errorf("format %s cannot be read", f.Name)
	}
	cols := make([]ProducedColumn, len(physical))
	for i, c := range physical {
		cols[i] = ProducedColumn{Name: c.Name, Type: types.TypeNull, Declared: c.Type}
	}
	var pick []int
	for _, p := range produce {
		if p.MetadataKey != "" {
			continue
		}
		i := physical.Index(p.Name)
		if i < 0 {
			return nil, fmt.Errorf("column %s is not a physical column of the table", p.Name)
		}
		if cols[i].Type.Kind != types.Null {
			return nil, fmt.Errorf("column %s is produced twice", p.Name)
		}
		cols[i] = ProducedColumn{Name: physical[i].Name, Type: p.Type}
		pick = append(pick, i)
	}
	dec, err := f.NewDecoder(cols, opts)
	if err != nil {
		return nil, err
	}
	pd := projectedDecoder{dec: dec, pick: pick, scratch: make(types.Row, len(physical))}
	if cd, ok := dec.(ChangeDecoder); ok {
		return &projectedChangeDecoder{projectedDecoder: pd, changes: cd}, nil
	}
	return &pd, nil
}

// projectedDecoder decodes into a row of all physical columns and copies out the wanted ones.
type projectedDecoder struct {
	dec     Decoder
	pick    []int
	scratch types.Row
}

func (d *projectedDecoder) Decode(data []byte, dst types.Row) error {
	if len(dst) != len(d.pick) {
		return fmt.Errorf("decode into %d columns, want %d", len(dst), len(d.pick))
	}
	if err := d.dec.Decode(data, d.scratch); err != nil {
		return err
	}
	for i, j := range d.pick {
		dst[i] = d.scratch[j]
	}
	return nil
}

// projectedChangeDecoder is a projectedDecoder over a ChangeDecoder: it is one too, and
// a MetadataDecoder when the inner decoder is.
type projectedChangeDecoder struct {
	projectedDecoder
	changes ChangeDecoder
	nmeta   int
	rows    []types.Row
}

func (d *projectedChangeDecoder) DecodeChanges(data []byte, rows []types.Row, kinds []RowKind) ([]types.Row, []RowKind, error) {
	inner, kinds, err := d.changes.DecodeChanges(data, d.rows[:0], kinds)
	d.rows = inner[:0]
	if err != nil {
		return rows, kinds, err
	}
	for _, r := range inner {
		out := make(types.Row, len(d.pick)+d.nmeta)
		for i, j := range d.pick {
			out[i] = r[j]
		}
		copy(out[len(d.pick):], r[len(r)-d.nmeta:])
		rows = append(rows, out)
	}
	clear(inner)
	return rows, kinds, nil
}

func (d *projectedChangeDecoder) SetMetadata(keys []string, ts []types.Type) error {
	md, ok := d.dec.(MetadataDecoder)
	if !ok {
		return fmt.Errorf("%w: the format has no metadata", ErrInvalidOption)
	}
	if err := md.SetMetadata(keys, ts); err != nil {
		return err
	}
	d.nmeta = len(keys)
	return nil
}
