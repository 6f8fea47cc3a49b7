package funcs

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pipesql/pipesql/types"
)

// Caster converts one value; NULL stays NULL.
type Caster func(v types.Value) (types.Value, error)

// CastValue converts v from type from to type to with Flink's CAST semantics (the
// default, non-legacy behaviour): a value that cannot be converted is a *CastError
// (ErrCastFailed); TRY_CAST callers turn that into NULL. loc is table.local-time-zone,
// used between TIMESTAMP_LTZ and the wall-clock types and strings; nil means UTC.
func CastValue(v types.Value, from, to types.Type, loc *time.Location) (types.Value, error) {
	if v.IsNull() {
		return types.NullValue, nil
	}
	c, err := CastFunc(from, to, loc)
	if err != nil {
		return types.NullValue, err
	}
	return c(v)
}

// CastFunc returns the conversion from one type to another, resolved once so that a
// column cast does not re-decide per row. It fails with ErrUnsupportedCast when CanCast
// is false.
//
// Conversions worth knowing: strings are trimmed before parsing; a string to an integer
// may carry a fraction, which is dropped ('1.9' is 1); numeric narrowing wraps like Java
// (CAST(300 AS TINYINT) is 44) and FLOAT/DOUBLE to an integer truncates and saturates;
// DECIMAL rounds HALF_UP and a number that does not fit DECIMAL(p, s) is NULL, as in
// Flink; CHAR(n) pads and VARCHAR(n) truncates; TIMESTAMP to a shorter precision truncates;
// BOOLEAN prints TRUE/FALSE; DOUBLE prints as Java does (1.0E7).
func CastFunc(from, to types.Type, loc *time.Location) (Caster, error) {
	if !CanCast(from, to) {
		return nil, fmt.Errorf("%w from %s to %s", ErrUnsupportedCast, from.Nullable(), to.Nullable())
	}
	if loc == nil {
		loc = time.UTC
	}
	conv, err := castConv(from, to, loc)
	if err != nil {
		return nil, err
	}
	return func(v types.Value) (types.Value, error) {
		if v.IsNull() {
			return types.NullValue, nil
		}
		return conv(v)
	}, nil
}

func castConv(from, to types.Type, loc *time.Location) (Caster, error) {
	if from.Kind == types.Null {
		return func(types.Value) (types.Value, error) { return types.NullValue, nil }, nil
	}
	switch to.Kind {
	case types.Char, types.Varchar:
		str := toStringFunc(from, loc)
		fit := fitString(to)
		return func(v types.Value) (types.Value, error) { return types.StringValue(fit(str(v))), nil }, nil
	case types.Bytes:
		return func(v types.Value) (types.Value, error) {
			s := v.Str()
			if to.Length > 0 && to.Length < types.MaxLength && len(s) > to.Length {
				s = s[:to.Length]
			}
			return types.BytesValue([]byte(s)), nil
		}, nil
	case types.Boolean:
		return castToBool(from, to), nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return castToInt(from, to), nil
	case types.Float, types.Double:
		return castToFloat(from, to), nil
	case types.Decimal:
		return castToDecimal(from, to), nil
	case types.Date:
		return castToDate(from, to, loc), nil
	case types.Time:
		return castToTime(from, to, loc), nil
	case types.Timestamp, types.TimestampLTZ:
		return castToTimestamp(from, to, loc), nil
	case types.IntervalYearMonth:
		return func(v types.Value) (types.Value, error) { return types.IntervalMonthsValue(v.Int()), nil }, nil
	case types.IntervalDayTime:
		if from.Kind == types.BigInt {
			// Flink's interval of a BIGINT counts milliseconds.
			return func(v types.Value) (types.Value, error) { return types.IntervalValue(v.Int() * microsPerMilli), nil }, nil
		}
		return func(v types.Value) (types.Value, error) { return v, nil }, nil
	case types.Array:
		return castArray(from, to, loc)
	case types.Map:
		return castMap(from, to, loc)
	case types.Struct:
		return castRow(from, to, loc)
	}
	return nil, fmt.Errorf("%w from %s to %s", ErrUnsupportedCast, from.Nullable(), to.Nullable())
}

// fitString applies CHAR(n) padding and VARCHAR(n) truncation.
func fitString(to types.Type) func(string) string {
	n := to.Length
	if to.Kind == types.Char && n == 0 {
		n = 1
	}
	if n <= 0 || n >= types.MaxLength {
		return func(s string) string { return s }
	}
	return func(s string) string {
		count := utf8.RuneCountInString(s)
		if count > n {
			i, c := 0, 0
			for c < n {
				_, size := utf8.DecodeRuneInString(s[i:])
				i += size
				c++
			}
			return s[:i]
		}
		if to.Kind == types.Char && count < n {
			return s + strings.Repeat(" ", n-count)
		}
		return s
	}
}

// toStringFunc returns how values of type from print as strings.
func toStringFunc(from types.Type, loc *time.Location) func(types.Value) string {
	switch from.Kind {
	case types.Boolean:
		return func(v types.Value) string {
			if v.Bool() {
				return "TRUE"
			}
			return "FALSE"
		}
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return func(v types.Value) string { return strconv.FormatInt(v.Int(), 10) }
	case types.Float:
		return func(v types.Value) string { return javaDouble(v.Float(), 32) }
	case types.Double:
		return func(v types.Value) string { return javaDouble(v.Float(), 64) }
	case types.Decimal:
		scale := from.Scale
		if from.Prec == 0 {
			scale = -1
		}
		return func(v types.Value) string {
			if v.Kind() != types.Decimal {
				return v.String()
			}
			return formatDecimal(v.Rat(), scale)
		}
	case types.Char, types.Varchar:
		return func(v types.Value) string { return v.Str() }
	case types.Bytes:
		return func(v types.Value) string { return strings.ToValidUTF8(v.Str(), "\uFFFD") }
	case types.Date:
		return func(v types.Value) string { return string(types.AppendDate(make([]byte, 0, 10), v.Int())) }
	case types.Time:
		return func(v types.Value) string { return string(types.AppendTime(make([]byte, 0, 16), v.Int(), from.Prec)) }
	case types.Timestamp:
		return func(v types.Value) string {
			return string(types.AppendTimestamp(make([]byte, 0, 32), v.Int(), ' ', from.Prec))
		}
	case types.TimestampLTZ:
		return func(v types.Value) string {
			return string(types.AppendTimestamp(make([]byte, 0, 32), instantToWall(v.Int(), loc), ' ', from.Prec))
		}
	}
	return func(v types.Value) string { return v.String() }
}

func castToBool(from, to types.Type) Caster {
	if isStrKind(from.Kind) {
		return func(v types.Value) (types.Value, error) {
			switch strings.ToLower(strings.TrimSpace(v.Str())) {
			case "t", "true", "y", "yes", "1":
				return types.BoolValue(true), nil
			case "f", "false", "n", "no", "0":
				return types.BoolValue(false), nil
			}
			return types.NullValue, &CastError{Input: v.Str(), To: to}
		}
	}
	return func(v types.Value) (types.Value, error) { return types.BoolValue(v.Int() != 0), nil }
}

func castToInt(from, to types.Type) Caster {
	k := to.Kind
	switch {
	case isStrKind(from.Kind):
		bits := map[types.Kind]int{types.TinyInt: 8, types.SmallInt: 16, types.Int: 32, types.BigInt: 64}[k]
		return func(v types.Value) (types.Value, error) {
			n, problem := parseJavaInt(v.Str(), bits)
			if problem != "" {
				if problem != "overflow" {
					problem = ""
				}
				return types.NullValue, &CastError{Input: v.Str(), To: to, Reason: problem}
			}
			return types.IntValue(k, n), nil
		}
	case from.Kind == types.Float || from.Kind == types.Double:
		return func(v types.Value) (types.Value, error) { return types.IntValue(k, floatToInt(k, v.Float())), nil }
	case from.Kind == types.Decimal:
		return func(v types.Value) (types.Value, error) {
			return types.IntValue(k, wrapInt(k, ratToInt64(v.Rat()))), nil
		}
	case from.Kind == types.IntervalDayTime:
		return func(v types.Value) (types.Value, error) { return types.IntValue(k, v.Int()/microsPerMilli), nil }
	}
	return func(v types.Value) (types.Value, error) { return types.IntValue(k, wrapInt(k, v.Int())), nil }
}

func castToFloat(from, to types.Type) Caster {
	mk := types.DoubleValue
	if to.Kind == types.Float {
		mk = func(f float64) types.Value { return types.FloatValue(f32(f)) }
	}
	switch {
	case isStrKind(from.Kind):
		return func(v types.Value) (types.Value, error) {
			f, ok := parseJavaDouble(v.Str())
			if !ok {
				return types.NullValue, &CastError{Input: v.Str(), To: to}
			}
			return mk(f), nil
		}
	case from.Kind == types.Boolean:
		return func(v types.Value) (types.Value, error) { return mk(float64(v.Int())), nil }
	}
	return func(v types.Value) (types.Value, error) { return mk(v.Float()), nil }
}

func castToDecimal(from, to types.Type) Caster {
	prec, scale := to.Prec, to.Scale
	if prec == 0 {
		prec = 10 // DECIMAL without precision is DECIMAL(10, 0)
	}
	fit := func(r *big.Rat) types.Value {
		if r, ok := fitDecimal(r, prec, scale); ok {
			return ratDecimal(r, scale)
		}
		return types.NullValue // Flink: a number that does not fit the DECIMAL is NULL
	}
	switch {
	case isStrKind(from.Kind):
		return func(v types.Value) (types.Value, error) {
			r, ok := parseDecimalText(v.Str())
			if !ok {
				return types.NullValue, &CastError{Input: v.Str(), To: to}
			}
			d, ok := fitDecimal(r, prec, scale)
			if !ok {
				return types.NullValue, &CastError{Input: v.Str(), To: to, Reason: "overflow"}
			}
			return ratDecimal(d, scale), nil
		}
	case from.Kind == types.Float || from.Kind == types.Double:
		bits := 64
		if from.Kind == types.Float {
			bits = 32
		}
		return func(v types.Value) (types.Value, error) {
			r, ok := ratFromFloat(v.Float(), bits)
			if !ok {
				return types.NullValue, &CastError{Input: javaDouble(v.Float(), bits), To: to}
			}
			return fit(r), nil
		}
	}
	return func(v types.Value) (types.Value, error) {
		if d, fits, ok := fitScaled(v, prec, scale); ok {
			if !fits {
				return types.NullValue, nil
			}
			return d, nil
		}
		return fit(v.Rat()), nil
	}
}

func castToDate(from, to types.Type, loc *time.Location) Caster {
	switch from.Kind {
	case types.Char, types.Varchar:
		return func(v types.Value) (types.Value, error) {
			d, ok := parseDateText(v.Str())
			if !ok {
				return types.NullValue, &CastError{Input: v.Str(), To: to}
			}
			return types.DateValue(d), nil
		}
	case types.Timestamp:
		return func(v types.Value) (types.Value, error) { return types.DateValue(floorDiv(v.Int(), microsPerDay)), nil }
	case types.TimestampLTZ:
		return func(v types.Value) (types.Value, error) {
			return types.DateValue(floorDiv(instantToWall(v.Int(), loc), microsPerDay)), nil
		}
	}
	return func(v types.Value) (types.Value, error) { return types.DateValue(v.Int()), nil }
}

func castToTime(from, to types.Type, loc *time.Location) Caster {
	prec := to.Prec
	switch from.Kind {
	case types.Char, types.Varchar:
		return func(v types.Value) (types.Value, error) {
			t, ok := parseTimeText(v.Str())
			if !ok {
				return types.NullValue, &CastError{Input: v.Str(), To: to}
			}
			return types.TimeValue(truncMicros(t, prec)), nil
		}
	case types.Timestamp:
		return func(v types.Value) (types.Value, error) {
			return types.TimeValue(truncMicros(floorMod(v.Int(), microsPerDay), prec)), nil
		}
	case types.TimestampLTZ:
		return func(v types.Value) (types.Value, error) {
			return types.TimeValue(truncMicros(floorMod(instantToWall(v.Int(), loc), microsPerDay), prec)), nil
		}
	}
	return func(v types.Value) (types.Value, error) { return types.TimeValue(truncMicros(v.Int(), prec)), nil }
}

func castToTimestamp(from, to types.Type, loc *time.Location) Caster {
	prec := to.Prec
	ltz := to.Kind == types.TimestampLTZ
	out := func(wall int64) types.Value {
		if ltz {
			return types.TimestampLTZValue(truncMicros(wallToInstant(wall, loc), prec))
		}
		return types.TimestampValue(truncMicros(wall, prec))
	}
	switch from.Kind {
	case types.Char, types.Varchar:
		return func(v types.Value) (types.Value, error) {
			w, ok := parseTimestampText(v.Str())
			if !ok {
				return types.NullValue, &CastError{Input: v.Str(), To: to}
			}
			return out(w), nil
		}
	case types.Date:
		return func(v types.Value) (types.Value, error) { return out(v.Int() * microsPerDay), nil }
	case types.Time, types.Timestamp:
		return func(v types.Value) (types.Value, error) { return out(v.Int()), nil }
	case types.TimestampLTZ:
		if ltz {
			return func(v types.Value) (types.Value, error) {
				return types.TimestampLTZValue(truncMicros(v.Int(), prec)), nil
			}
		}
		return func(v types.Value) (types.Value, error) { return out(instantToWall(v.Int(), loc)), nil }
	}
	return func(v types.Value) (types.Value, error) { return out(v.Int()), nil }
}

func castArray(from, to types.Type, loc *time.Location) (Caster, error) {
	if from.Elem == nil || to.Elem == nil {
		return nil, fmt.Errorf("%w: ARRAY without an element type", ErrUnsupportedCast)
	}
	elem, err := CastFunc(*from.Elem, *to.Elem, loc)
	if err != nil {
		return nil, err
	}
	return func(v types.Value) (types.Value, error) {
		in := v.Elems()
		out := make([]types.Value, len(in))
		for i, e := range in {
			if out[i], err = elem(e); err != nil {
				return types.NullValue, err
			}
		}
		return types.ArrayValue(out), nil
	}, nil
}

func castMap(from, to types.Type, loc *time.Location) (Caster, error) {
	if from.Elem == nil || to.Elem == nil || from.Key == nil || to.Key == nil {
		return nil, fmt.Errorf("%w: MAP without key and value types", ErrUnsupportedCast)
	}
	if from.Multiset != to.Multiset {
		return nil, fmt.Errorf("%w from %s to %s", ErrUnsupportedCast, from.Nullable(), to.Nullable())
	}
	key, err := CastFunc(*from.Key, *to.Key, loc)
	if err != nil {
		return nil, err
	}
	val, err := CastFunc(*from.Elem, *to.Elem, loc)
	if err != nil {
		return nil, err
	}
	return func(v types.Value) (types.Value, error) {
		in := v.Entries()
		out := make([]types.MapEntry, len(in))
		for i, e := range in {
			if out[i].Key, err = key(e.Key); err != nil {
				return types.NullValue, err
			}
			if out[i].Value, err = val(e.Value); err != nil {
				return types.NullValue, err
			}
		}
		return types.MapValue(out), nil
	}, nil
}

func castRow(from, to types.Type, loc *time.Location) (Caster, error) {
	fields := make([]Caster, len(to.Fields))
	for i := range to.Fields {
		c, err := CastFunc(from.Fields[i].Type, to.Fields[i].Type, loc)
		if err != nil {
			return nil, err
		}
		fields[i] = c
	}
	return func(v types.Value) (types.Value, error) {
		in := v.Elems()
		out := make([]types.Value, len(fields))
		for i, c := range fields {
			if i >= len(in) {
				break
			}
			var err error
			if out[i], err = c(in[i]); err != nil {
				return types.NullValue, err
			}
		}
		return types.RowValue(out), nil
	}, nil
}

// Coerce converts v to type want when its kind differs, as an evaluator must when an
// expression's parts were typed apart (a CASE branch of INT in a DECIMAL CASE, an INT
// literal in a BIGINT context). Strings keep their kind; DECIMALs round HALF_UP to want's
// scale, NULL when they do not fit.
func Coerce(v types.Value, want types.Type, loc *time.Location) (types.Value, error) {
	if v.IsNull() || want.Kind == types.Null {
		return v, nil
	}
	if v.Kind() == want.Kind {
		if want.Kind == types.Decimal && want.Prec > 0 {
			if d, fits, ok := fitScaled(v, want.Prec, want.Scale); ok {
				if !fits {
					return types.NullValue, nil
				}
				return d, nil
			}
			if r, ok := fitDecimal(v.Rat(), want.Prec, want.Scale); ok {
				return ratDecimal(r, want.Scale), nil
			}
			return types.NullValue, nil
		}
		return v, nil
	}
	if isStrKind(v.Kind()) && isStrKind(want.Kind) {
		return v, nil
	}
	return CastValue(v, valueType(v), want, loc)
}

// NeedsCoerce reports whether a value produced as type have must go through Coerce to
// become a want.
func NeedsCoerce(have, want types.Type) bool {
	switch {
	case want.Kind == types.Null || have.Kind == types.Null:
		return false // a NULL is NULL in every type
	case have.Kind != want.Kind:
		return !(isStrKind(have.Kind) && isStrKind(want.Kind))
	case want.Kind == types.Decimal:
		return have.Prec != want.Prec || have.Scale != want.Scale
	}
	return false
}
