package formats

import (
	"encoding/json"
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/pipesql/pipesql/types"
)

// avroRecordName is the name Flink's AvroSchemaConverter gives the record of a table;
// a nested ROW is named after its parent and field ("..._address").
const avroRecordName = "org.apache.flink.avro.generated.record"

// avroSchemaJSON derives the Avro schema of rows of schema as Flink's
// AvroSchemaConverter.convertToSchema does: a record with a field per column, nullable
// types as a union with "null" first (and a null default for nullable fields), TINYINT,
// SMALLINT and INT as int, DECIMAL as bytes with the decimal logical type, DATE and
// TIME(<=3) as int date and time-millis, TIMESTAMP(p<=3) and TIMESTAMP(p<=6) as
// timestamp-millis and timestamp-micros (local-timestamp-* when legacy is false, which
// is Flink's avro.timestamp_mapping.legacy = false), TIMESTAMP_LTZ as timestamp-*,
// MAP as map (string keys only), ROW as record.
func avroSchemaJSON(schema types.Schema, legacyTimestamps bool) (string, error) {
	fields := make([]types.Field, len(schema))
	for i, c := range schema {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	s, err := avroRecord(fields, avroRecordName, legacyTimestamps)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// avroSchemaFor derives and parses the schema of rows of schema.
func avroSchemaFor(schema types.Schema, legacyTimestamps bool) (avro.Schema, string, error) {
	text, err := avroSchemaJSON(schema, legacyTimestamps)
	if err != nil {
		return nil, "", err
	}
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, "", fmt.Errorf("derived avro schema %s: %w", text, err)
	}
	return s, text, nil
}

// avroRecordJSON keeps Flink's order of a record's keys.
type avroRecordJSON struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Fields []avroFieldJSON `json:"fields"`
}

type avroFieldJSON struct {
	Name    string `json:"name"`
	Type    any    `json:"type"`
	Default any    `json:"default,omitempty"`
}

// avroNullDefault marshals as a JSON null, which omitempty would drop from a nil.
type avroNullDefault struct{}

func (avroNullDefault) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

func avroRecord(fields []types.Field, name string, legacy bool) (any, error) {
	out := make([]avroFieldJSON, len(fields))
	for i, f := range fields {
		t, err := avroType(f.Type, name+"_"+f.Name, legacy)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		out[i] = avroFieldJSON{Name: f.Name, Type: t}
		if !f.Type.NotNull {
			out[i].Default = avroNullDefault{}
		}
	}
	return avroRecordJSON{Type: "record", Name: name, Fields: out}, nil
}

func avroType(t types.Type, name string, legacy bool) (any, error) {
	s, err := avroNonNull(t, name, legacy)
	if err != nil {
		return nil, err
	}
	if t.NotNull {
		return s, nil
	}
	return []any{"null", s}, nil
}

func avroNonNull(t types.Type, name string, legacy bool) (any, error) {
	logical := func(base, lt string) any { return map[string]any{"type": base, "logicalType": lt} }
	switch t.Kind {
	case types.Boolean:
		return "boolean", nil
	case types.TinyInt, types.SmallInt, types.Int:
		return "int", nil
	case types.BigInt:
		return "long", nil
	case types.Float:
		return "float", nil
	case types.Double:
		return "double", nil
	case types.Char, types.Varchar:
		return "string", nil
	case types.Bytes:
		return "bytes", nil
	case types.Decimal:
		return map[string]any{"type": "bytes", "logicalType": "decimal", "precision": t.Prec, "scale": t.Scale}, nil
	case types.Date:
		return logical("int", "date"), nil
	case types.Time:
		if t.Prec > 3 {
			return nil, fmt.Errorf("%w: avro has no TIME(%d), only TIME with a precision up to 3 (time-millis)", ErrUnsupportedType, t.Prec)
		}
		return logical("int", "time-millis"), nil
	case types.Timestamp, types.TimestampLTZ:
		if t.Prec > 6 {
			return nil, fmt.Errorf("%w: avro has no %s(%d), only precisions up to 6 (timestamp-micros)", ErrUnsupportedType, t.Kind, t.Prec)
		}
		unit := "millis"
		if t.Prec > 3 {
			unit = "micros"
		}
		if t.Kind == types.Timestamp && !legacy {
			return logical("long", "local-timestamp-"+unit), nil
		}
		return logical("long", "timestamp-"+unit), nil
	case types.Array:
		items, err := avroType(*t.Elem, name, legacy)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case types.Map:
		if !t.Key.IsString() {
			return nil, fmt.Errorf("%w: avro maps have string keys, not %s", ErrUnsupportedType, *t.Key)
		}
		values, err := avroType(*t.Elem, name, legacy)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "map", "values": values}, nil
	case types.Struct:
		return avroRecord(t.Fields, name, legacy)
	}
	return nil, fmt.Errorf("%w: avro has no type for %s", ErrUnsupportedType, t)
}
