package funcs

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pipesql/pipesql/types"
)

// JSON_OBJECT and JSON_ARRAY build JSON text. Their first argument is the ON NULL
// behaviour, a constant 'NULL' (a NULL value is written as null) or 'ABSENT' (it is left
// out), optionally followed by ':' and one character per value, 'r' for a value that is
// itself JSON text made by JSON_OBJECT or JSON_ARRAY (inserted as it is, so that they
// nest) and '-' for the others (written as JSON values of their type): the planner
// adds those. Numbers are written as Java writes them, strings escaped as Jackson does,
// ROWs as objects of their fields, MAPs with STRING keys as objects, ARRAYs as arrays.

// JSONMode builds the first argument of JSON_OBJECT and JSON_ARRAY: onNull ('NULL' or
// 'ABSENT') and which values are raw JSON.
func JSONMode(onNull string, raw []bool) string {
	var b strings.Builder
	b.WriteString(onNull)
	b.WriteByte(':')
	for _, r := range raw {
		if r {
			b.WriteByte('r')
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ParseJSONMode splits a JSON_OBJECT or JSON_ARRAY mode argument; ok is false when it is
// not one.
func ParseJSONMode(mode string) (onNull string, raw []bool, ok bool) {
	onNull, flags, _ := strings.Cut(mode, ":")
	if onNull != "NULL" && onNull != "ABSENT" {
		return "", nil, false
	}
	for _, c := range flags {
		raw = append(raw, c == 'r')
	}
	return onNull, raw, true
}

// JSONEncodable reports whether JSON_OBJECT and JSON_ARRAY write values of type t as
// Flink does; the planner refuses the others (temporal types, BYTES, intervals), which
// the functions would write as strings.
func JSONEncodable(t types.Type) bool {
	switch t.Kind {
	case types.Null, types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.BigInt,
		types.Float, types.Double, types.Decimal, types.Char, types.Varchar:
		return true
	case types.Array:
		return JSONEncodable(*t.Elem)
	case types.Map:
		return t.Key.IsString() && JSONEncodable(*t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if !JSONEncodable(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

func jsonBuildRet(object bool) func([]types.Type) (types.Type, error) {
	return func(args []types.Type) (types.Type, error) {
		if len(args) == 0 || !args[0].IsString() {
			return types.Type{}, mismatch("needs its ON NULL behaviour first")
		}
		members := args[1:]
		if object && len(members)%2 != 0 {
			return types.Type{}, mismatch("needs key and value pairs")
		}
		for i, t := range members {
			if object && i%2 == 0 {
				if !t.IsString() {
					return types.Type{}, mismatch("keys must be STRINGs, got %s", t.Nullable())
				}
				continue
			}
		}
		return types.TypeString.WithNotNull(true), nil
	}
}

func init() {
	for _, name := range []string{"JSON_OBJECT", "JSON_ARRAY"} {
		object := name == "JSON_OBJECT"
		syntax, doc := "JSON_ARRAY([value, ...] [{NULL | ABSENT} ON NULL])", "a JSON array of the values (ABSENT ON NULL by default)"
		if object {
			syntax, doc = "JSON_OBJECT([[KEY] key VALUE value, ...] [{NULL | ABSENT} ON NULL])", "a JSON object of the keys and values (NULL ON NULL by default)"
		}
		def(name, 1, -1, sig{ownNull: true, ret: jsonBuildRet(object)}, syntax, doc,
			Func{nullSafe: true, prepare: func(_ *Context, site Site) (Kernel, error) {
				c, constMode := site.constant(0)
				var onNull string
				var raw []bool
				if constMode {
					var ok bool
					if onNull, raw, ok = ParseJSONMode(c.Str()); !ok {
						return Kernel{}, invalidArg("%s: bad ON NULL behaviour %q", name, c.Str())
					}
				}
				ts := site.Args
				return Kernel{Call: func(a []types.Value) (types.Value, error) {
					onNull, raw := onNull, raw
					if !constMode {
						var ok bool
						if onNull, raw, ok = ParseJSONMode(a[0].Str()); !ok {
							return types.NullValue, invalidArg("%s: bad ON NULL behaviour %q", name, a[0].Str())
						}
					}
					var b []byte
					open, close := byte('['), byte(']')
					if object {
						open, close = '{', '}'
					}
					b = append(b, open)
					n := 0
					step := 1
					if object {
						step = 2
					}
					for i := 1; i < len(a); i += step {
						v := a[i]
						if object {
							v = a[i+1]
						}
						vi := (i - 1) / step // which value
						if v.IsNull() && onNull == "ABSENT" {
							continue
						}
						if n > 0 {
							b = append(b, ',')
						}
						n++
						if object {
							if a[i].IsNull() {
								return types.NullValue, invalidArg("JSON_OBJECT: a key is NULL")
							}
							b = appendJSONString(b, a[i].Str())
							b = append(b, ':')
						}
						t := types.Type{}
						if j := i + step - 1; j < len(ts) {
							t = ts[j]
						}
						if vi < len(raw) && raw[vi] && !v.IsNull() {
							b = append(b, v.Str()...)
							continue
						}
						b = appendJSONValue(b, v, t)
					}
					b = append(b, close)
					return types.StringValue(string(b)), nil
				}}, nil
			}})
	}
}

// appendJSONValue writes v, of type t (the zero Type when unknown: then by its kind),
// as JSON.
func appendJSONValue(b []byte, v types.Value, t types.Type) []byte {
	switch v.Kind() {
	case types.Null:
		return append(b, "null"...)
	case types.Boolean:
		return strconv.AppendBool(b, v.Bool())
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case types.Float, types.Double:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return appendJSONString(b, javaDouble(f, 64))
		}
		bits := 64
		if v.Kind() == types.Float {
			bits = 32
		}
		return append(b, javaDouble(f, bits)...)
	case types.Decimal:
		return append(b, v.String()...)
	case types.Array:
		var et types.Type
		if t.Kind == types.Array && t.Elem != nil {
			et = *t.Elem
		}
		b = append(b, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, e, et)
		}
		return append(b, ']')
	case types.Map:
		var et types.Type
		if t.Kind == types.Map && t.Elem != nil {
			et = *t.Elem
		}
		b = append(b, '{')
		for i, e := range v.Entries() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e.Key.String())
			b = append(b, ':')
			b = appendJSONValue(b, e.Value, et)
		}
		return append(b, '}')
	case types.Struct:
		b = append(b, '{')
		for i, e := range v.Elems() {
			if i > 0 {
				b = append(b, ',')
			}
			name, ft := FieldName(i), types.Type{}
			if t.Kind == types.Struct && i < len(t.Fields) {
				name, ft = t.Fields[i].Name, t.Fields[i].Type
			}
			b = appendJSONString(b, name)
			b = append(b, ':')
			b = appendJSONValue(b, e, ft)
		}
		return append(b, '}')
	}
	return appendJSONString(b, v.String())
}

// appendJSONString writes s as a JSON string, escaping what Jackson escapes: quotes,
// backslashes and control characters (not HTML characters, not non-ASCII text).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(s[i:])
			b = append(b, s[i:i+n]...)
			i += n
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}
