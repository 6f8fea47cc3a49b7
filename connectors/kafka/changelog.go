package kafka

import (
	"context"
	"fmt"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Changelogs from Kafka
//
// 'upsert-kafka' reads a topic as an upsert stream (connectors.UpsertMode), as Flink's
// does: a record's key is the row's PRIMARY KEY, a record with a value is the key's
// latest row (+I; the planner's ChangelogNormalize turns it into +I or -U/+U), and a
// tombstone (a NULL value) deletes the key (-D of a row holding only the key columns).
// It always reads from the earliest offset.
//
// 'kafka' with a CDC value format (debezium-json, canal-json, maxwell-json) reads the
// changelog the records describe (connectors.AllChangesMode): one record may give
// several rows, each with its kind; a tombstone is no change.

// cdcFormatNames are the changelog formats Kafka tables read (FormatFactory.Changelog);
// they cannot be written.
var cdcFormatNames = []string{"debezium-json", "canal-json", "maxwell-json"}

var _ = func() bool {
	formatNames = append(formatNames, cdcFormatNames...)
	return true
}()

// NewUpsertSource opens an upsert-kafka source; it is the factory's NewSource.
func NewUpsertSource(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
	return openKafkaSource(ctx, cfg, true, true)
}

// upsertChangelog is upsert-kafka's Factory.Changelog.
func upsertChangelog(connectors.TableInfo) connectors.ChangelogMode { return connectors.UpsertMode }

// keyDecoder decodes the key columns of a record into a produced row: upsert-kafka's
// tombstones carry nothing else.
type keyDecoder struct {
	dec     connectors.Decoder
	pos     []int // row position of each key column the plan wants
	scratch types.Row
	width   int
}

func newKeyDecoder(o *tableOptions, cfg connectors.SourceConfig) (*keyDecoder, error) {
	keyCols, keyIdx := o.keyColumns(cfg.Schema)
	d := &keyDecoder{width: len(cfg.Produce)}
	var produce []connectors.ProducedColumn
	for pos, p := range cfg.Produce {
		if p.MetadataKey != "" {
			continue
		}
		i := cfg.Schema.Index(p.Name)
		for k, j := range keyIdx {
			if j == i {
				produce = append(produce, connectors.ProducedColumn{Name: keyCols[k].Name, Type: p.Type})
				d.pos = append(d.pos, pos)
			}
		}
	}
	var err error
	if d.dec, err = connectors.NewProjectedDecoder(o.key.factory, keyCols, produce, o.key.options); err != nil {
		return nil, fmt.Errorf("kafka source %s: key format %s: %w", o.table, o.key.factory.Name, err)
	}
	d.scratch = make(types.Row, len(d.pos))
	return d, nil
}

// decode fills the key columns of row from key; the other columns are NULL.
func (d *keyDecoder) decode(key []byte, row types.Row) error {
	for i := range row {
		row[i] = types.NullValue
	}
	if key == nil {
		return fmt.Errorf("key: a tombstone without a key deletes nothing")
	}
	if err := d.dec.Decode(key, d.scratch); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	for i, pos := range d.pos {
		row[pos] = d.scratch[i]
	}
	return nil
}

// decodeChanges decodes a record whose value format is a changelog format: the rows of
// its value, each completed with the key columns and metadata as decode does.
func (d *rowDecoder) decodeChanges(m *ckafka.Message, topic string, newRow func() types.Row, rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	vals, kinds, err := d.changes.DecodeChanges(m.Value, d.changeScratch[:0], kinds)
	d.changeScratch = vals[:0]
	if err != nil {
		return rows, kinds, fmt.Errorf("value: %w", err)
	}
	for _, v := range vals {
		row := newRow()
		for i, pos := range d.valuePos {
			row[pos] = v[i]
		}
		if d.key != nil {
			if m.Key == nil {
				for _, pos := range d.keyPos {
					row[pos] = types.NullValue
				}
			} else {
				if err := d.key.Decode(m.Key, d.keyScratch); err != nil {
					return rows, kinds[:len(kinds)-len(vals)], fmt.Errorf("key: %w", err)
				}
				for i, pos := range d.keyPos {
					row[pos] = d.keyScratch[i]
				}
			}
		}
		for _, mc := range d.meta {
			row[mc.pos] = metaValue(mc, m, topic)
		}
		for i, pos := range d.fmtMetaPos {
			row[pos] = v[len(d.valuePos)+i]
		}
		rows = append(rows, row)
	}
	clear(vals)
	return rows, kinds, nil
}

// valueMetaPrefix is how a Kafka table names its value format's metadata keys.
const valueMetaPrefix = "value."

// setFormatMetadata tells the value decoder which of its format's metadata keys the
// plan reads (after the value's columns in each decoded row).
func (d *rowDecoder) setFormatMetadata(o *tableOptions, cols []connectors.ProducedColumn) error {
	if len(cols) == 0 {
		return nil
	}
	md, ok := d.value.(connectors.MetadataDecoder)
	if !ok || d.changes == nil {
		return fmt.Errorf("kafka source %s: %w: value format %s has no metadata", o.table, ErrBadOptions, o.value.factory.Name)
	}
	keys := make([]string, len(cols))
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		keys[i], ts[i] = c.MetadataKey, c.Type
	}
	if err := md.SetMetadata(keys, ts); err != nil {
		return fmt.Errorf("kafka source %s: value format %s: %w", o.table, o.value.factory.Name, err)
	}
	return nil
}
