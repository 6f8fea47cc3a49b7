package formats

import (
	"strconv"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// AppendPrintRow appends a row as Flink's print connector shows it: the change kind and
// the fields, each as the toString of its Java external object, "+I[2024-01-01, app1, 42]".
// Flink converts the row to org.apache.flink.types.Row and prints Row.toString, so NULL
// is "null", a TIMESTAMP is a java.time.LocalDateTime ("2024-01-01T12:30", seconds
// only when not zero) and a TIMESTAMP_LTZ a java.time.Instant ("2024-01-01T12:30:00Z").
func AppendPrintRow(dst []byte, kind connectors.RowKind, row types.Row, schema types.Schema) []byte {
	dst = append(dst, kind.String()...)
	dst = append(dst, '[')
	for i, v := range row {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		var t types.Type
		if i < len(schema) {
			t = schema[i].Type
		}
		dst = AppendPrintValue(dst, v, t)
	}
	return append(dst, ']')
}

// AppendPrintValue appends one value as AppendPrintRow shows it; t supplies the
// DECIMAL scale and the field types of nested rows.
func AppendPrintValue(dst []byte, v types.Value, t types.Type) []byte {
	switch v.Kind() {
	case types.Null:
		return append(dst, "null"...)
	case types.Boolean:
		return strconv.AppendBool(dst, v.Bool())
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return strconv.AppendInt(dst, v.Int(), 10)
	case types.Float:
		return appendJavaFloat(dst, v.Float(), 32)
	case types.Double:
		return appendJavaFloat(dst, v.Float(), 64)
	case types.Decimal:
		scale := t.Scale
		if t.Kind != types.Decimal {
			scale = ratScale(v)
		}
		return appendJavaDecimal(dst, v.Rat(), scale, false)
	case types.Char, types.Varchar:
		return append(dst, v.Str()...)
	case types.Bytes:
		// byte[] prints as Arrays.toString: signed bytes
		dst = append(dst, '[')
		for i, c := range []byte(v.Str()) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = strconv.AppendInt(dst, int64(int8(c)), 10)
		}
		return append(dst, ']')
	case types.Date:
		return types.AppendDate(dst, v.Int())
	case types.Time:
		return appendJavaLocalTime(dst, v.Int())
	case types.Timestamp:
		days, tod := types.SplitMicros(v.Int())
		dst = types.AppendDate(dst, days)
		dst = append(dst, 'T')
		return appendJavaLocalTime(dst, tod)
	case types.TimestampLTZ:
		// Instant.toString always shows seconds and groups the fraction by three
		days, tod := types.SplitMicros(v.Int())
		dst = types.AppendDate(dst, days)
		dst = append(dst, 'T')
		sec := tod / microsPerSecond
		dst = appendPadded(dst, sec/3600, 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, sec/60%60, 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, sec%60, 2)
		dst = appendGroupedFraction(dst, tod%microsPerSecond)
		return append(dst, 'Z')
	case types.IntervalDayTime:
		return appendJavaDuration(dst, v.Int())
	case types.IntervalYearMonth:
		return appendJavaPeriod(dst, v.Int())
	case types.Array:
		var et types.Type
		if t.Elem != nil {
			et = *t.Elem
		}
		dst = append(dst, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendPrintValue(dst, e, et)
		}
		return append(dst, ']')
	case types.Map:
		var kt, vt types.Type
		if t.Key != nil {
			kt = *t.Key
		}
		if t.Elem != nil {
			vt = *t.Elem
		}
		dst = append(dst, '{')
		for i, e := range v.Entries() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendPrintValue(dst, e.Key, kt)
			dst = append(dst, '=')
			dst = AppendPrintValue(dst, e.Value, vt)
		}
		return append(dst, '}')
	case types.Struct:
		schema := make(types.Schema, len(t.Fields))
		for i, f := range t.Fields {
			schema[i] = types.Column{Name: f.Name, Type: f.Type}
		}
		return AppendPrintRow(dst, connectors.Insert, v.Elems(), schema)
	}
	return append(dst, v.String()...)
}

// ratScale is the number of decimal places of a decimal value that came without a
// type (at most 18, as types.Value.String shows them).
func ratScale(v types.Value) int {
	s := v.String()
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return len(s) - i - 1
		}
	}
	return 0
}

// appendJavaLocalTime appends java.time.LocalTime.toString: HH:mm, then :ss when the
// seconds or fraction are not zero, then the fraction in groups of three digits.
func appendJavaLocalTime(dst []byte, tod int64) []byte {
	sec := tod / microsPerSecond
	frac := tod % microsPerSecond
	dst = appendPadded(dst, sec/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, sec/60%60, 2)
	if sec%60 == 0 && frac == 0 {
		return dst
	}
	dst = append(dst, ':')
	dst = appendPadded(dst, sec%60, 2)
	return appendGroupedFraction(dst, frac)
}

// appendGroupedFraction appends a fraction of a second as java.time prints it: nothing
// when zero, else 3 or 6 digits (9 never occur: values are microseconds).
func appendGroupedFraction(dst []byte, micros int64) []byte {
	if micros == 0 {
		return dst
	}
	dst = append(dst, '.')
	if micros%1000 == 0 {
		return appendPadded(dst, micros/1000, 3)
	}
	return appendPadded(dst, micros, 6)
}

// appendJavaDuration appends java.time.Duration.toString (PT8H6M12.345S), the external
// object of INTERVAL DAY TO SECOND.
func appendJavaDuration(dst []byte, micros int64) []byte {
	if micros == 0 {
		return append(dst, "PT0S"...)
	}
	seconds := micros / microsPerSecond
	nanos := (micros % microsPerSecond) * 1000
	if nanos < 0 {
		seconds--
		nanos += 1_000_000_000
	}
	effective := seconds
	if seconds < 0 && nanos > 0 {
		effective++
	}
	hours := effective / 3600
	minutes := effective % 3600 / 60
	secs := effective % 60
	dst = append(dst, "PT"...)
	start := len(dst)
	if hours != 0 {
		dst = strconv.AppendInt(dst, hours, 10)
		dst = append(dst, 'H')
	}
	if minutes != 0 {
		dst = strconv.AppendInt(dst, minutes, 10)
		dst = append(dst, 'M')
	}
	if secs == 0 && nanos == 0 && len(dst) > start {
		return dst
	}
	if seconds < 0 && nanos > 0 {
		if secs == 0 {
			dst = append(dst, "-0"...)
		} else {
			dst = strconv.AppendInt(dst, secs, 10)
		}
	} else {
		dst = strconv.AppendInt(dst, secs, 10)
	}
	if nanos > 0 {
		n := nanos
		if seconds < 0 {
			n = 1_000_000_000 - nanos
		}
		frac := []byte(strconv.FormatInt(n+1_000_000_000, 10))[1:]
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		dst = append(dst, '.')
		dst = append(dst, frac...)
	}
	return append(dst, 'S')
}

// appendJavaPeriod appends java.time.Period.toString (P1Y2M, P0D), the external object
// of INTERVAL YEAR TO MONTH.
func appendJavaPeriod(dst []byte, months int64) []byte {
	if months == 0 {
		return append(dst, "P0D"...)
	}
	dst = append(dst, 'P')
	if y := months / 12; y != 0 {
		dst = strconv.AppendInt(dst, y, 10)
		dst = append(dst, 'Y')
	}
	if m := months % 12; m != 0 {
		dst = strconv.AppendInt(dst, m, 10)
		dst = append(dst, 'M')
	}
	return dst
}
