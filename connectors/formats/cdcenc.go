package formats

import (
	"fmt"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Writing the CDC formats
//
// A changelog is written one record per row, as Flink's DebeziumJsonSerializationSchema,
// CanalJsonSerializationSchema and MaxwellJsonSerializationSchema write it: Flink cannot
// join an update's -U and +U into one record, so it writes an insert (+I) and a new row
// (+U) as a create and a retraction (-U) and a delete (-D) as a delete:
//
//	debezium-json  {"before":null,"after":{...},"op":"c"}    {"before":{...},"after":null,"op":"d"}
//	canal-json     {"data":[{...}],"type":"INSERT"}          {"data":[{...}],"type":"DELETE"}
//	maxwell-json   {"data":{...},"type":"insert"}            {"data":{...},"type":"delete"}
//
// The row image is written as the json format writes a row, with the format's
// timestamp-format.standard, map-null-key.* and encode.decimal-as-plain-number.

// cdcEncoder writes the records of one CDC format.
type cdcEncoder struct {
	kind cdcKind
	row  connectors.Encoder // the json encoder of a row image
}

var _ connectors.ChangeEncoder = (*cdcEncoder)(nil)

// cdcRowOptions are the options of a CDC format that its row images are written with.
var cdcRowOptions = []string{CDCTimestampStandard, JSONMapNullKeyMode, JSONMapNullKeyLiteral, JSONEncodeDecimalPlain}

func newCDCEncoder(kind cdcKind, schema types.Schema, opts map[string]string) (*cdcEncoder, error) {
	if kind == debezium {
		include, err := connectors.NewOptions("", opts, debeziumOptions).Bool(DebeziumSchemaInclude)
		if err != nil {
			return nil, err
		}
		if include {
			return nil, &connectors.OptionError{Key: "debezium-json." + DebeziumSchemaInclude, Value: "true",
				Err: fmt.Errorf("%w: debezium-json is written without its schema (Flink: Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true)", connectors.ErrInvalidOption)}
		}
	}
	jsonOpts := map[string]string{}
	for _, k := range cdcRowOptions {
		if v, ok := opts[k]; ok {
			jsonOpts[k] = v
		}
	}
	row, err := NewJSONEncoder(schema, jsonOpts)
	if err != nil {
		return nil, err
	}
	return &cdcEncoder{kind: kind, row: row}, nil
}

// Encode writes row as an insert.
func (e *cdcEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	return e.EncodeChange(dst, connectors.Insert, row)
}

// EncodeChange implements connectors.ChangeEncoder.
func (e *cdcEncoder) EncodeChange(dst []byte, kind connectors.RowKind, row types.Row) ([]byte, error) {
	add := kind == connectors.Insert || kind == connectors.UpdateAfter
	var err error
	switch e.kind {
	case debezium:
		if add {
			dst = append(dst, `{"before":null,"after":`...)
		} else {
			dst = append(dst, `{"before":`...)
		}
		if dst, err = e.row.Encode(dst, row); err != nil {
			return dst, err
		}
		if add {
			return append(dst, `,"op":"c"}`...), nil
		}
		return append(dst, `,"after":null,"op":"d"}`...), nil
	case canal:
		dst = append(dst, `{"data":[`...)
		if dst, err = e.row.Encode(dst, row); err != nil {
			return dst, err
		}
		if add {
			return append(dst, `],"type":"INSERT"}`...), nil
		}
		return append(dst, `],"type":"DELETE"}`...), nil
	default:
		dst = append(dst, `{"data":`...)
		if dst, err = e.row.Encode(dst, row); err != nil {
			return dst, err
		}
		if add {
			return append(dst, `,"type":"insert"}`...), nil
		}
		return append(dst, `,"type":"delete"}`...), nil
	}
}
