package planner

import (
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// convertType turns a type as written (VARCHAR(10), TIMESTAMP(3), ROW<a INT>) into a
// logical type, with Flink's defaults for omitted parameters.
func convertType(dt parser.DataType) (types.Type, error) {
	param := func(i, def int) int {
		if i < len(dt.Params) {
			return dt.Params[i]
		}
		return def
	}
	var t types.Type
	switch dt.Name {
	case "BOOLEAN", "BOOL":
		t = types.Type{Kind: types.Boolean}
	case "TINYINT":
		t = types.Type{Kind: types.TinyInt}
	case "SMALLINT":
		t = types.Type{Kind: types.SmallInt}
	case "INT", "INTEGER":
		t = types.Type{Kind: types.Int}
	case "BIGINT":
		t = types.Type{Kind: types.BigInt}
	case "FLOAT", "REAL":
		t = types.Type{Kind: types.Float}
	case "DOUBLE", "DOUBLE PRECISION":
		t = types.Type{Kind: types.Double}
	case "DECIMAL", "DEC", "NUMERIC":
		p, s := param(0, 10), param(1, 0)
		if p < 1 || p > 38 || s < 0 || s > p {
			return t, errAt(dt.At, ErrTypeMismatch, "invalid DECIMAL(%d, %d): precision must be 1 to 38 and scale 0 to precision", p, s)
		}
		t = types.Type{Kind: types.Decimal, Prec: p, Scale: s}
	case "STRING":
		t = types.TypeString
	case "VARCHAR", "CHARACTER VARYING":
		n := param(0, 1)
		if n < 1 {
			return t, errAt(dt.At, ErrTypeMismatch, "invalid VARCHAR(%d): length must be at least 1", n)
		}
		t = types.Type{Kind: types.Varchar, Length: n}
	case "CHAR", "CHARACTER":
		n := param(0, 1)
		if n < 1 {
			return t, errAt(dt.At, ErrTypeMismatch, "invalid CHAR(%d): length must be at least 1", n)
		}
		t = types.Type{Kind: types.Char, Length: n}
	case "BYTES":
		t = types.Type{Kind: types.Bytes, Length: types.MaxLength}
	case "VARBINARY", "BINARY":
		t = types.Type{Kind: types.Bytes, Length: param(0, 1)}
	case "DATE":
		t = types.TypeDate
	case "TIME":
		p := param(0, 0)
		if p < 0 || p > 9 {
			return t, errAt(dt.At, ErrTypeMismatch, "invalid TIME(%d): precision must be 0 to 9", p)
		}
		t = types.Type{Kind: types.Time, Prec: p}
	case "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP WITH LOCAL TIME ZONE":
		p := param(0, 6)
		if p < 0 || p > 9 {
			return t, errAt(dt.At, ErrTypeMismatch, "invalid %s(%d): precision must be 0 to 9", dt.Name, p)
		}
		if dt.Name == "TIMESTAMP" {
			t = types.TimestampType(p)
		} else {
			t = types.TimestampLTZType(p)
		}
	case "ARRAY":
		if len(dt.Elems) != 1 {
			return t, errAt(dt.At, ErrTypeMismatch, "ARRAY needs one element type")
		}
		e, err := convertType(dt.Elems[0])
		if err != nil {
			return t, err
		}
		t = types.Type{Kind: types.Array, Elem: &e}
	case "MAP":
		if len(dt.Elems) != 2 {
			return t, errAt(dt.At, ErrTypeMismatch, "MAP needs a key and a value type")
		}
		k, err := convertType(dt.Elems[0])
		if err != nil {
			return t, err
		}
		v, err := convertType(dt.Elems[1])
		if err != nil {
			return t, err
		}
		t = types.Type{Kind: types.Map, Key: &k, Elem: &v}
	case "MULTISET":
		if len(dt.Elems) != 1 {
			return t, errAt(dt.At, ErrTypeMismatch, "MULTISET needs one element type")
		}
		e, err := convertType(dt.Elems[0])
		if err != nil {
			return t, err
		}
		t = types.MultisetType(e)
	case "ROW":
		fields := make([]types.Field, len(dt.Fields))
		for i, f := range dt.Fields {
			ft, err := convertType(f.Type)
			if err != nil {
				return t, err
			}
			fields[i] = types.Field{Name: f.Name, Type: ft}
		}
		t = types.Type{Kind: types.Struct, Fields: fields}
	default:
		return t, errAt(dt.At, ErrUnsupported, "unsupported: data type %s", dt.Name)
	}
	return t.WithNotNull(dt.NotNull), nil
}

// typeString is a type as DESCRIBE shows it: time attributes are marked *ROWTIME* or
// *PROCTIME* as Flink marks them.
func typeString(t types.Type) string {
	s := t.String()
	switch t.TimeAttr {
	case types.RowTime:
		s += " *ROWTIME*"
	case types.ProcTime:
		s += " *PROCTIME*"
	}
	return s
}

// assignable reports whether a value of type from may be written where type to is
// declared without an explicit CAST: the implicit conversions Flink's INSERT allows
// (numeric widening, any number to any DECIMAL, any string to any string, timestamp
// precision changes, a TIMESTAMP to a DATE or TIME, NULL), element by element in
// ARRAY, MAP and ROW.
// NOT NULL is not checked here: Flink enforces it on each row, not in the plan.
func assignable(from, to types.Type) bool {
	if from.Kind == types.Null || from.SameKind(to) {
		return true
	}
	switch {
	case from.IsInteger() && to.IsInteger():
		return intRank(from.Kind) <= intRank(to.Kind)
	case from.IsNumeric() && to.Kind == types.Decimal:
		// Flink casts any number to any DECIMAL implicitly (LogicalTypeCasts: DECIMAL from the
		// NUMERIC family): the value is rounded half up to the scale, NULL if it overflows.
		return true
	case from.Kind == types.Timestamp && (to.Kind == types.Date || to.Kind == types.Time):
		return true // DATE and TIME take a TIMESTAMP's date or time of day implicitly, as in Flink
	case from.IsNumeric() && (to.Kind == types.Float || to.Kind == types.Double):
		return from.Kind != types.Double || to.Kind == types.Double
	case from.IsString() && to.IsString():
		return true
	case from.Kind == types.Bytes && to.Kind == types.Bytes:
		return true
	case from.IsTimestamp() && to.IsTimestamp():
		return true
	case from.Kind == types.Time && to.Kind == types.Time:
		return true
	case from.Kind == types.Array && to.Kind == types.Array:
		return assignable(*from.Elem, *to.Elem)
	case from.Kind == types.Map && to.Kind == types.Map:
		return from.Multiset == to.Multiset && assignable(*from.Key, *to.Key) && assignable(*from.Elem, *to.Elem)
	case from.Kind == types.Struct && to.Kind == types.Struct:
		if len(from.Fields) != len(to.Fields) {
			return false
		}
		for i := range from.Fields {
			if !assignable(from.Fields[i].Type, to.Fields[i].Type) {
				return false
			}
		}
		return true
	}
	return false
}

func intRank(k types.Kind) int {
	switch k {
	case types.TinyInt:
		return 1
	case types.SmallInt:
		return 2
	case types.Int:
		return 3
	}
	return 4
}
