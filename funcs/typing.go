package funcs

import "github.com/pipesql/pipesql/types"

// maxDecimalPrecision is DECIMAL's largest precision in Flink.
const maxDecimalPrecision = 38

// intDigits is how many decimal digits an integer kind needs, the precision Flink gives
// it when it meets a DECIMAL: TINYINT is DECIMAL(3, 0), BIGINT DECIMAL(19, 0).
func intDigits(k types.Kind) int {
	switch k {
	case types.TinyInt:
		return 3
	case types.SmallInt:
		return 5
	case types.Int:
		return 10
	}
	return 19
}

// asDecimal is t seen as a DECIMAL: integers are DECIMAL(digits, 0).
func asDecimal(t types.Type) types.Type {
	if t.Kind == types.Decimal {
		return t
	}
	return types.Type{Kind: types.Decimal, Prec: intDigits(t.Kind)}
}

func decimalType(prec, scale int) types.Type {
	return types.Type{Kind: types.Decimal, Prec: prec, Scale: scale}
}

// adjustDecimal caps a derived DECIMAL at precision 38 the way Flink's
// LogicalTypeMerging does: integer digits win, keeping at least 6 fractional digits when
// the exact scale had that many.
func adjustDecimal(prec, scale int) types.Type {
	if prec <= maxDecimalPrecision {
		return decimalType(prec, scale)
	}
	intPart := prec - scale
	minScale := min(scale, 6)
	return decimalType(maxDecimalPrecision, max(maxDecimalPrecision-intPart, minScale))
}

func widerInt(a, b types.Kind) types.Kind {
	if a > b {
		return a
	}
	return b
}

func isNumKind(k types.Kind) bool { return k >= types.TinyInt && k <= types.Decimal }
func isIntKind(k types.Kind) bool { return k >= types.TinyInt && k <= types.BigInt }
func isStrKind(k types.Kind) bool { return k == types.Char || k == types.Varchar }

// CommonType returns the least restrictive type both a and b convert to without loss of
// meaning: what a comparison, CASE, COALESCE or IN list computes in. The result is
// nullable unless both are NOT NULL, and never a time attribute. ok is false when the two
// have nothing in common (INT and STRING, DATE and BOOLEAN).
func CommonType(a, b types.Type) (types.Type, bool) {
	notNull := a.NotNull && b.NotNull
	t, ok := commonType(a.Nullable().WithoutTimeAttr(), b.Nullable().WithoutTimeAttr())
	if !ok {
		return types.Type{}, false
	}
	return t.WithNotNull(notNull), true
}

func commonType(a, b types.Type) (types.Type, bool) {
	switch {
	case a.Kind == types.Null:
		return b, true
	case b.Kind == types.Null:
		return a, true
	case a.Kind == b.Kind:
		return mergeSameKind(a, b)
	case isNumKind(a.Kind) && isNumKind(b.Kind):
		return numericCommon(a, b), true
	case isStrKind(a.Kind) && isStrKind(b.Kind):
		return types.Type{Kind: types.Varchar, Length: max(strLen(a), strLen(b))}, true
	}
	// Temporal mixes: a DATE widens to a TIMESTAMP at midnight; a wall-clock TIMESTAMP meets
	// an instant as TIMESTAMP_LTZ, as in Flink.
	ta, tb := a, b
	if ta.Kind > tb.Kind {
		ta, tb = tb, ta
	}
	switch {
	case ta.Kind == types.Date && (tb.Kind == types.Timestamp || tb.Kind == types.TimestampLTZ):
		return tb, true
	case ta.Kind == types.Timestamp && tb.Kind == types.TimestampLTZ:
		return types.Type{Kind: types.TimestampLTZ, Prec: max(ta.Prec, tb.Prec)}, true
	}
	return types.Type{}, false
}

func strLen(t types.Type) int {
	if t.Length == 0 {
		if t.Kind == types.Char {
			return 1
		}
		return types.MaxLength
	}
	return t.Length
}

func mergeSameKind(a, b types.Type) (types.Type, bool) {
	switch a.Kind {
	case types.Char, types.Varchar:
		a.Length = max(strLen(a), strLen(b))
	case types.Decimal:
		scale := max(a.Scale, b.Scale)
		intPart := max(a.Prec-a.Scale, b.Prec-b.Scale)
		return decimalType(min(intPart+scale, maxDecimalPrecision), scale), true
	case types.Time, types.Timestamp, types.TimestampLTZ:
		a.Prec = max(a.Prec, b.Prec)
	case types.Array:
		if a.Elem == nil || b.Elem == nil {
			return types.Type{}, false
		}
		e, ok := CommonType(*a.Elem, *b.Elem)
		if !ok {
			return types.Type{}, false
		}
		a.Elem = &e
	case types.Map:
		if a.Elem == nil || b.Elem == nil || a.Key == nil || b.Key == nil {
			return types.Type{}, false
		}
		k, ok1 := CommonType(*a.Key, *b.Key)
		e, ok2 := CommonType(*a.Elem, *b.Elem)
		if !ok1 || !ok2 {
			return types.Type{}, false
		}
		a.Key, a.Elem = &k, &e
	case types.Struct:
		if len(a.Fields) != len(b.Fields) {
			return types.Type{}, false
		}
		fields := make([]types.Field, len(a.Fields))
		for i := range a.Fields {
			ft, ok := CommonType(a.Fields[i].Type, b.Fields[i].Type)
			if !ok {
				return types.Type{}, false
			}
			fields[i] = types.Field{Name: a.Fields[i].Name, Type: ft}
		}
		a.Fields = fields
	}
	return a, true
}

func numericCommon(a, b types.Type) types.Type {
	switch {
	case a.Kind == types.Double || b.Kind == types.Double:
		return types.TypeDouble
	case a.Kind == types.Float || b.Kind == types.Float:
		if a.Kind == types.Decimal || b.Kind == types.Decimal {
			return types.TypeDouble
		}
		return types.Type{Kind: types.Float}
	case a.Kind == types.Decimal || b.Kind == types.Decimal:
		da, db := asDecimal(a), asDecimal(b)
		return mustMerge(da, db)
	}
	return types.Type{Kind: widerInt(a.Kind, b.Kind)}
}

func mustMerge(a, b types.Type) types.Type {
	t, _ := mergeSameKind(a, b)
	return t
}

// ComparisonType is the type two operands of a comparison are compared in. It is
// CommonType, and besides lets a string meet a number, a boolean or a date/time, the
// string being converted as CAST would (ts > '2024-01-01 00:00:00', id = '42').
func ComparisonType(a, b types.Type) (types.Type, bool) {
	if t, ok := CommonType(a, b); ok {
		return t, true
	}
	notNull := a.NotNull && b.NotNull
	if isStrKind(b.Kind) {
		a, b = b, a
	}
	if isStrKind(a.Kind) {
		switch {
		case isNumKind(b.Kind), b.Kind == types.Boolean, b.Kind >= types.Date && b.Kind <= types.TimestampLTZ:
			return b.Nullable().WithoutTimeAttr().WithNotNull(notNull), true
		}
	}
	return types.Type{}, false
}

// CanCast reports whether CAST(x AS to) exists for x of type from, following Flink's cast
// table. It may still fail for a particular value (a STRING that is not a number).
func CanCast(from, to types.Type) bool {
	f, t := from.Kind, to.Kind
	switch {
	case f == types.Null:
		return true
	case isStrKind(t):
		return true // every type has a string form
	case f == t:
		switch f {
		case types.Array:
			return from.Elem != nil && to.Elem != nil && CanCast(*from.Elem, *to.Elem)
		case types.Map:
			return from.Elem != nil && to.Elem != nil && from.Key != nil && to.Key != nil &&
				CanCast(*from.Key, *to.Key) && CanCast(*from.Elem, *to.Elem)
		case types.Struct:
			if len(from.Fields) != len(to.Fields) {
				return false
			}
			for i := range from.Fields {
				if !CanCast(from.Fields[i].Type, to.Fields[i].Type) {
					return false
				}
			}
		}
		return true
	case isStrKind(f):
		switch t {
		case types.Bytes, types.Boolean, types.Date, types.Time, types.Timestamp, types.TimestampLTZ:
			return true
		}
		return isNumKind(t)
	case f == types.Bytes:
		return t == types.Bytes
	case f == types.Boolean:
		return isNumKind(t)
	case isNumKind(f):
		switch {
		case isNumKind(t):
			return true
		case t == types.Boolean:
			return isIntKind(f) // Flink has no FLOAT/DOUBLE/DECIMAL -> BOOLEAN
		case t == types.IntervalYearMonth:
			return f == types.Int
		case t == types.IntervalDayTime:
			return f == types.BigInt
		}
		return false
	case f == types.Date:
		return t == types.Timestamp || t == types.TimestampLTZ
	case f == types.Time:
		return t == types.Timestamp || t == types.TimestampLTZ
	case f == types.Timestamp || f == types.TimestampLTZ:
		return t == types.Date || t == types.Time || t == types.Timestamp || t == types.TimestampLTZ
	case f == types.IntervalYearMonth:
		return t == types.Int || t == types.IntervalYearMonth
	case f == types.IntervalDayTime:
		return t == types.BigInt
	}
	return false
}
