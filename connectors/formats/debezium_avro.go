package formats

import (
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// DebeziumAvroConfluentFormat is Flink's 'debezium-avro-confluent': Debezium's change
// events as Debezium's AvroConverter writes them, Avro records in the Confluent wire
// format whose schema (an Envelope of before, after, source, op, ts_ms ...) is fetched
// from the registry by id. Its changes are debezium-json's: op c and r are +I of after,
// u is -U of before and +U of after, d is -D of before, and a tombstone (a record
// without a value) is no change. The row images are read as avro-confluent reads a
// record, resolved against the table by field name. It shares avro-confluent's
// options; it cannot be written yet (a sink needs the change kind of each row, which
// encoders do not see).
var DebeziumAvroConfluentFormat = &connectors.FormatFactory{
	Name:       "debezium-avro-confluent",
	Options:    avroConfluentOptions,
	NewDecoder: NewDebeziumAvroConfluentDecoder,
	Changelog:  connectors.AllChangesMode,
}

type debeziumAvroDecoder struct {
	inner *avroConfluentDecoder
	width int
	env   types.Row // before, after, op
}

// NewDebeziumAvroConfluentDecoder returns a decoder of Debezium envelopes into rows of
// cols (a connectors.ChangeDecoder).
func NewDebeziumAvroConfluentDecoder(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
	cfg, err := readRegistryConfig(opts, "debezium-avro-confluent")
	if err != nil {
		return nil, err
	}
	reader, _, _ := avroColumns(cols)
	image := types.Type{Kind: types.Struct, Fields: reader}
	envelope := []types.Field{{Name: "before", Type: image}, {Name: "after", Type: image}, {Name: "op", Type: types.TypeString}}
	inner, err := newAvroConfluentDecoder(cfg, envelope, func(w avro.Schema) (*avroRecordDec, error) {
		return compileAvroRecord(w, envelope)
	})
	if err != nil {
		return nil, err
	}
	return &debeziumAvroDecoder{inner: inner, width: len(cols), env: make(types.Row, 3)}, nil
}

// Decode implements connectors.Decoder for callers that want one row: it fails on a
// record that is not exactly one insert.
func (d *debeziumAvroDecoder) Decode(data []byte, dst types.Row) error {
	rows, kinds, err := d.DecodeChanges(data, nil, nil)
	if err != nil {
		return err
	}
	if len(rows) != 1 || kinds[0] != connectors.Insert {
		return &DecodeError{Err: fmt.Errorf("%w: a change record read as one row", connectors.ErrInvalidOption), Snippet: binarySnippet(data)}
	}
	copy(dst, rows[0])
	return nil
}

// DecodeChanges implements connectors.ChangeDecoder.
func (d *debeziumAvroDecoder) DecodeChanges(data []byte, rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	if len(data) == 0 {
		return rows, kinds, nil // a tombstone after a delete: no change
	}
	rec, err := d.inner.writer(data)
	if err != nil {
		return rows, kinds, err
	}
	if err := avroDecodeBody(rec, &d.inner.r, data[avroConfluentWireHeader:], data, d.env, false); err != nil {
		return rows, kinds, err
	}
	image := func(field string, v types.Value) (types.Row, error) {
		if v.IsNull() {
			return nil, &DecodeError{Field: field, Err: fmt.Errorf("is null in a change of op %q", d.env[2].Str()), Snippet: binarySnippet(data)}
		}
		row := make(types.Row, d.width)
		copy(row, v.Elems())
		return row, nil
	}
	op := d.env[2].Str()
	if op == "u" && d.env[0].IsNull() {
		return rows, kinds, &DecodeError{Field: "before", Err: ErrUpdateWithoutBefore, Snippet: binarySnippet(data)}
	}
	rows, kinds, known, err := appendDebeziumChange(rows, kinds, op, func(field string) (types.Row, error) {
		if field == "before" {
			return image(field, d.env[0])
		}
		return image(field, d.env[1])
	})
	if !known {
		if d.env[2].IsNull() {
			return rows, kinds, &DecodeError{Field: "op", Err: fmt.Errorf("missing: not a Debezium change event"), Snippet: binarySnippet(data)}
		}
		return rows, kinds, &DecodeError{Field: "op", Err: errUnknownDebeziumOp(op), Snippet: binarySnippet(data)}
	}
	return rows, kinds, err
}

func init() { connectors.RegisterFormat(DebeziumAvroConfluentFormat) }
