package kafka

import (
	"fmt"
	"strings"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// metaKind is one of the metadata columns a Kafka record offers.
type metaKind uint8

const (
	metaTopic metaKind = iota
	metaPartition
	metaOffset
	metaTimestamp
	metaTimestampType
	metaHeaders
	metaLeaderEpoch
)

var metadataKeys = map[string]metaKind{
	"topic":          metaTopic,
	"partition":      metaPartition,
	"offset":         metaOffset,
	"timestamp":      metaTimestamp,
	"timestamp-type": metaTimestampType,
	"headers":        metaHeaders,
	"leader-epoch":   metaLeaderEpoch,
}

// metadataSpecs declares the metadata columns, with Flink's types. Writing them
// ('timestamp', 'headers') needs the sink to learn which input column carries which
// key, which connectors.SinkConfig does not say yet, so none is writable.
func metadataSpecs() []connectors.MetadataSpec {
	str := types.TypeString.WithNotNull(true)
	bytesT := types.Type{Kind: types.Bytes, Length: types.MaxLength}
	return []connectors.MetadataSpec{
		{Key: "topic", Type: str},
		{Key: "partition", Type: types.TypeInt.WithNotNull(true)},
		{Key: "headers", Type: types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &bytesT, NotNull: true}},
		{Key: "leader-epoch", Type: types.TypeInt},
		{Key: "offset", Type: types.TypeBigInt.WithNotNull(true)},
		{Key: "timestamp", Type: types.TimestampLTZType(3).WithNotNull(true)},
		{Key: "timestamp-type", Type: str},
	}
}

type metaColumn struct {
	pos  int
	kind metaKind
	typ  types.Type
}

// rowDecoder turns a Kafka record into a produced row: the value (and, with
// 'EXCEPT_KEY', the key) decoded by their formats into the physical columns the plan
// wants, then the metadata columns.
type rowDecoder struct {
	width int

	value        connectors.Decoder
	valueDirect  bool  // the value's columns are row[:len(valuePos)] in order
	valuePos     []int // row position of each column the value decoder fills
	valueScratch types.Row

	key        connectors.Decoder // nil when no produced column comes from the key
	keyPos     []int
	keyScratch types.Row

	meta []metaColumn

	// changes is the value decoder when the value format is a changelog format
	// (debezium-json ...): a record gives rows with kinds (changelog.go).
	changes       connectors.ChangeDecoder
	changeScratch []types.Row
	fmtMetaPos    []int // row position of each metadata column of the value format
}

func newRowDecoder(o *tableOptions, cfg connectors.SourceConfig) (*rowDecoder, error) {
	d := &rowDecoder{width: len(cfg.Produce)}
	schema := cfg.Schema
	keyCols, keyIdx := o.keyColumns(schema)
	valueCols, _ := o.valueColumns(schema)
	fromKey := map[int]int{} // schema index -> position in the key
	if o.exceptKey {
		for i, j := range keyIdx {
			fromKey[j] = i
		}
	}
	var valueProduce, keyProduce []connectors.ProducedColumn
	var fmtMeta []connectors.ProducedColumn
	for pos, p := range cfg.Produce {
		if k, isFormat := strings.CutPrefix(p.MetadataKey, valueMetaPrefix); isFormat {
			// The value format's metadata (changelog.go).
			fmtMeta = append(fmtMeta, connectors.ProducedColumn{Name: p.Name, Type: p.Type, MetadataKey: k})
			d.fmtMetaPos = append(d.fmtMetaPos, pos)
			continue
		}
		if p.MetadataKey != "" {
			kind, ok := metadataKeys[p.MetadataKey]
			if !ok {
				return nil, fmt.Errorf("kafka source %s: %w: unknown metadata key '%s'", o.table, ErrBadOptions, p.MetadataKey)
			}
			if err := checkMetaType(kind, p.Type); err != nil {
				return nil, fmt.Errorf("kafka source %s: metadata column %s: %w", o.table, p.Name, err)
			}
			d.meta = append(d.meta, metaColumn{pos: pos, kind: kind, typ: p.Type})
			continue
		}
		i := schema.Index(p.Name)
		if i < 0 {
			return nil, fmt.Errorf("kafka source %s: %w: %s is not a physical column", o.table, ErrBadOptions, p.Name)
		}
		if k, ok := fromKey[i]; ok {
			keyProduce = append(keyProduce, connectors.ProducedColumn{Name: keyCols[k].Name, Type: p.Type})
			d.keyPos = append(d.keyPos, pos)
		} else {
			valueProduce = append(valueProduce, connectors.ProducedColumn{Name: schema[i].Name, Type: p.Type})
			d.valuePos = append(d.valuePos, pos)
		}
	}
	var err error
	if d.value, err = connectors.NewProjectedDecoder(o.value.factory, valueCols, valueProduce, o.value.options); err != nil {
		return nil, fmt.Errorf("kafka source %s: value format %s: %w", o.table, o.value.factory.Name, err)
	}
	d.changes, _ = d.value.(connectors.ChangeDecoder)
	if err := d.setFormatMetadata(o, fmtMeta); err != nil {
		return nil, err
	}
	d.valueDirect = true
	for i, pos := range d.valuePos {
		d.valueDirect = d.valueDirect && pos == i
	}
	d.valueScratch = make(types.Row, len(d.valuePos))
	if len(keyProduce) > 0 {
		if d.key, err = connectors.NewProjectedDecoder(o.key.factory, keyCols, keyProduce, o.key.options); err != nil {
			return nil, fmt.Errorf("kafka source %s: key format %s: %w", o.table, o.key.factory.Name, err)
		}
		d.keyScratch = make(types.Row, len(d.keyPos))
	}
	return d, nil
}

func checkMetaType(kind metaKind, t types.Type) error {
	ok := false
	switch kind {
	case metaTopic, metaTimestampType:
		ok = t.IsString()
	case metaPartition, metaLeaderEpoch:
		ok = t.Kind == types.Int || t.Kind == types.BigInt
	case metaOffset:
		ok = t.Kind == types.BigInt
	case metaTimestamp:
		ok = t.IsTimestamp()
	case metaHeaders:
		ok = t.Kind == types.Map && t.Key != nil && t.Key.IsString() && t.Elem != nil &&
			(t.Elem.Kind == types.Bytes || t.Elem.IsString())
	}
	if !ok {
		return fmt.Errorf("%w: type %s cannot hold this metadata", ErrBadOptions, t)
	}
	return nil
}

// decode fills row from m. A bad key or value gives the format's error (wrapping
// connectors.ErrSkipped when the format ignores parse errors).
func (d *rowDecoder) decode(m *ckafka.Message, topic string, row types.Row) error {
	if d.valueDirect {
		if err := d.value.Decode(m.Value, row[:len(d.valuePos)]); err != nil {
			return fmt.Errorf("value: %w", err)
		}
	} else {
		if err := d.value.Decode(m.Value, d.valueScratch); err != nil {
			return fmt.Errorf("value: %w", err)
		}
		for i, pos := range d.valuePos {
			row[pos] = d.valueScratch[i]
		}
	}
	if d.key != nil {
		if m.Key == nil {
			for _, pos := range d.keyPos {
				row[pos] = types.NullValue
			}
		} else {
			if err := d.key.Decode(m.Key, d.keyScratch); err != nil {
				return fmt.Errorf("key: %w", err)
			}
			for i, pos := range d.keyPos {
				row[pos] = d.keyScratch[i]
			}
		}
	}
	for _, mc := range d.meta {
		row[mc.pos] = metaValue(mc, m, topic)
	}
	return nil
}

func metaValue(mc metaColumn, m *ckafka.Message, topic string) types.Value {
	switch mc.kind {
	case metaTopic:
		return types.StringValue(topic)
	case metaPartition:
		return types.IntValue(mc.typ.Kind, int64(m.TopicPartition.Partition))
	case metaOffset:
		return types.BigIntValue(int64(m.TopicPartition.Offset))
	case metaTimestamp:
		if m.TimestampType == ckafka.TimestampNotAvailable {
			return types.NullValue
		}
		micros := m.Timestamp.UnixMicro()
		if mc.typ.Kind == types.Timestamp {
			return types.TimestampValue(micros)
		}
		return types.TimestampLTZValue(micros)
	case metaTimestampType:
		switch m.TimestampType {
		case ckafka.TimestampCreateTime:
			return types.StringValue("CreateTime")
		case ckafka.TimestampLogAppendTime:
			return types.StringValue("LogAppendTime")
		}
		return types.StringValue("NoTimestampType")
	case metaHeaders:
		entries := make([]types.MapEntry, len(m.Headers))
		for i, h := range m.Headers {
			v := types.NullValue
			if h.Value != nil {
				if mc.typ.Elem.Kind == types.Bytes {
					v = types.BytesValue(h.Value)
				} else {
					v = types.StringValue(string(h.Value))
				}
			}
			entries[i] = types.MapEntry{Key: types.StringValue(h.Key), Value: v}
		}
		return types.MapValue(entries)
	case metaLeaderEpoch:
		if e := m.TopicPartition.LeaderEpoch; e != nil && *e >= 0 {
			return types.IntValue(mc.typ.Kind, int64(*e))
		}
		return types.NullValue
	}
	return types.NullValue
}
