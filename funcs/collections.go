package funcs

import (
	"regexp"
	"strconv"

	"github.com/pipesql/pipesql/types"
)

// Collections: the value constructors ARRAY[...], MAP[...] and ROW(...), field access
// r.f, element access a[i] and m[k], CARDINALITY and ELEMENT, with Flink's semantics:
// arrays are indexed from 1, an index out of range or a missing key gives NULL, and
// anything read from a NULL collection or row is NULL.

// FieldName is the name the ROW constructor gives its i-th field, as Calcite names the
// fields of ROW(a, b): EXPR$0, EXPR$1, ...
func FieldName(i int) string { return "EXPR$" + strconv.Itoa(i) }

// FieldType returns the type of field i of the ROW type t as field access gives it:
// nullable when the row is.
func FieldType(t types.Type, i int) types.Type {
	f := t.Fields[i].Type
	if !t.NotNull {
		f = f.Nullable()
	}
	return f
}

var (
	pArray      = kinds("an ARRAY", types.Array)
	pCollection = kinds("an ARRAY or a MAP", types.Array, types.Map)
	pSized      = kinds("an ARRAY, a MAP or a MULTISET", types.Array, types.Map) // a MULTISET is a MAP of counts
	pRow        = kinds("a ROW", types.Struct)
)

func init() {
	def("ARRAY", 1, -1, sig{ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		e, err := commonRet(args)
		if err != nil {
			return types.Type{}, mismatch("elements have no common type: %s", typeList(args))
		}
		e.NotNull = allNotNull(args)
		return types.Type{Kind: types.Array, Elem: &e, NotNull: true}, nil
	}}, "ARRAY[value1, value2, ...]", "an array of the values, converted to their common type",
		Func{operator: true, nullSafe: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			var elem types.Type
			if site.Result.Kind == types.Array && site.Result.Elem != nil {
				elem = *site.Result.Elem
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				out := make([]types.Value, len(a))
				for i, v := range a {
					c, err := Coerce(v, elem, ctx.loc())
					if err != nil {
						return types.NullValue, err
					}
					out[i] = c
				}
				return types.ArrayValue(out), nil
			}}, nil
		}})

	def("MAP", 2, -1, sig{ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		if len(args)%2 != 0 {
			return types.Type{}, mismatch("needs key and value pairs, got %d arguments", len(args))
		}
		var keys, vals []types.Type
		for i := 0; i < len(args); i += 2 {
			keys, vals = append(keys, args[i]), append(vals, args[i+1])
		}
		k, err := commonRet(keys)
		if err != nil {
			return types.Type{}, mismatch("keys have no common type: %s", typeList(keys))
		}
		v, err := commonRet(vals)
		if err != nil {
			return types.Type{}, mismatch("values have no common type: %s", typeList(vals))
		}
		k.NotNull, v.NotNull = allNotNull(keys), allNotNull(vals)
		return types.Type{Kind: types.Map, Key: &k, Elem: &v, NotNull: true}, nil
	}}, "MAP[key1, value1, key2, value2, ...]", "a map of the key and value pairs; a repeated key keeps its last value",
		Func{operator: true, nullSafe: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			var kt, vt types.Type
			if r := site.Result; r.Kind == types.Map && r.Key != nil && r.Elem != nil {
				kt, vt = *r.Key, *r.Elem
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				if len(a)%2 != 0 {
					return types.NullValue, invalidArg("MAP needs key and value pairs, got %d arguments", len(a))
				}
				out := make([]types.MapEntry, 0, len(a)/2)
			pairs:
				for i := 0; i < len(a); i += 2 {
					k, err := Coerce(a[i], kt, ctx.loc())
					if err != nil {
						return types.NullValue, err
					}
					v, err := Coerce(a[i+1], vt, ctx.loc())
					if err != nil {
						return types.NullValue, err
					}
					for j := range out {
						if types.Equal(out[j].Key, k) {
							out[j].Value = v
							continue pairs
						}
					}
					out = append(out, types.MapEntry{Key: k, Value: v})
				}
				return types.MapValue(out), nil
			}}, nil
		}})

	def("ROW", 1, -1, sig{ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		fields := make([]types.Field, len(args))
		for i, a := range args {
			fields[i] = types.Field{Name: FieldName(i), Type: a.WithoutTimeAttr()}
		}
		return types.Type{Kind: types.Struct, Fields: fields, NotNull: true}, nil
	}}, "ROW(value1, value2, ...)", "a row of the values (also written (value1, value2, ...))",
		Func{nullSafe: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			var fields []types.Field
			if site.Result.Kind == types.Struct {
				fields = site.Result.Fields
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				out := make([]types.Value, len(a))
				for i, v := range a {
					if i < len(fields) {
						c, err := Coerce(v, fields[i].Type, ctx.loc())
						if err != nil {
							return types.NullValue, err
						}
						v = c
					}
					out[i] = v
				}
				return types.RowValue(out), nil
			}}, nil
		}})

	// "." is field access: the planner resolves the field name to its position, the
	// second argument, and types the call itself (the position says which field type).
	def(".", 2, 2, sig{params: []param{pRow, pInteger}, mayBeNull: true, ret: func(args []types.Type) (types.Type, error) {
		return types.Type{}, mismatch("needs the field's position as a constant, which the planner resolves")
	}}, "row.field", "the field of a row; NULL when the row is NULL",
		Func{operator: true, prepare: func(*Context, Site) (Kernel, error) {
			return Kernel{Call2: func(r, i types.Value) (types.Value, error) {
				fs, n := r.Elems(), i.Int()
				if n < 0 || n >= int64(len(fs)) {
					return types.NullValue, invalidArg("field %d of a row of %d fields", n, len(fs))
				}
				return fs[n], nil
			}}, nil
		}})

	def("ITEM", 2, 2, sig{params: []param{pCollection, pAny}, mayBeNull: true, ret: func(args []types.Type) (types.Type, error) {
		c, k := args[0], args[1]
		switch c.Kind {
		case types.Array:
			if k.Kind != types.Null && !k.IsInteger() {
				return types.Type{}, mismatch("of an ARRAY needs an integer index, got %s", k.Nullable())
			}
			return c.Elem.Nullable(), nil
		case types.Map:
			if _, ok := CommonType(*c.Key, k); !ok {
				return types.Type{}, mismatch("of %s needs a key of type %s, got %s", c.Nullable(), c.Key.Nullable(), k.Nullable())
			}
			return c.Elem.Nullable(), nil
		}
		return types.TypeNull, nil
	}}, "array[index] | map[key]", "the element at index (from 1) or the value of key; NULL when there is none",
		Func{operator: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			return Kernel{Call2: func(c, k types.Value) (types.Value, error) {
				switch c.Kind() {
				case types.Array:
					es, i := c.Elems(), k.Int()
					if i < 1 || i > int64(len(es)) {
						return types.NullValue, nil
					}
					return es[i-1], nil
				case types.Map:
					for _, e := range c.Entries() {
						if e.Key.IsNull() {
							continue
						}
						if n, ordered, err := Compare(e.Key, k, ctx.loc()); err == nil && ordered && n == 0 {
							return e.Value, nil
						}
					}
				}
				return types.NullValue, nil
			}}, nil
		}})

	def("CARDINALITY", 1, 1, sig{params: []param{pSized}, ret: retType(types.TypeInt)},
		"CARDINALITY(array | map | multiset)", "the number of elements of an array or a multiset (each as often as it is in it), or of entries of a map",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			multiset := site.Args[0].Multiset
			return Kernel{Call1: func(a types.Value) (types.Value, error) {
				switch {
				case a.Kind() == types.Map && multiset:
					n := int64(0)
					for _, e := range a.Entries() {
						n += e.Value.Int()
					}
					return types.IntValue(types.Int, n), nil
				case a.Kind() == types.Map:
					return types.IntValue(types.Int, int64(len(a.Entries()))), nil
				}
				return types.IntValue(types.Int, int64(len(a.Elems()))), nil
			}}, nil
		}})

	def("ELEMENT", 1, 1, sig{params: []param{pArray}, mayBeNull: true, ret: func(args []types.Type) (types.Type, error) {
		if args[0].Elem == nil {
			return types.TypeNull, nil
		}
		return args[0].Elem.Nullable(), nil
	}}, "ELEMENT(array)", "the only element of an array; NULL when it is empty, an error when it has more than one",
		Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			es := a[0].Elems()
			switch len(es) {
			case 0:
				return types.NullValue, nil
			case 1:
				return es[0], nil
			}
			return types.NullValue, invalidArg("ELEMENT of an array of %d elements: it must have at most one", len(es))
		}})

	stringMap := types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &types.TypeString}
	def("STR_TO_MAP", 1, 3, sig{params: []param{pString}, ret: retType(stringMap)},
		"STR_TO_MAP(text[, pairDelimiter, keyValueDelimiter])",
		"a MAP<STRING, STRING> of text split into pairs at pairDelimiter (','), each split into key and value at keyValueDelimiter ('='); both are regular expressions",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			pairs, kv := constRegex(","), constRegex("=")
			var err error
			if len(site.Args) > 1 {
				if pairs, err = regexArg(site, 1); err != nil {
					return Kernel{}, err
				}
			}
			if len(site.Args) > 2 {
				if kv, err = regexArg(site, 2); err != nil {
					return Kernel{}, err
				}
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				pairRe, ok1 := pairs(argOr(a, 1))
				kvRe, ok2 := kv(argOr(a, 2))
				if !ok1 || !ok2 {
					return types.NullValue, nil
				}
				var out []types.MapEntry
			pairs:
				for _, pair := range pairRe.Split(a[0].Str(), -1) {
					parts := kvRe.Split(pair, 2)
					k, v := str(parts[0]), types.NullValue
					if len(parts) == 2 {
						v = str(parts[1])
					}
					for i := range out {
						if out[i].Key.Str() == parts[0] {
							out[i].Value = v // a repeated key keeps its last value, as Java's HashMap.put
							continue pairs
						}
					}
					out = append(out, types.MapEntry{Key: k, Value: v})
				}
				return types.MapValue(out), nil
			}}, nil
		}})
}

// constRegex is a regexArg for a default pattern.
func constRegex(pattern string) func(types.Value) (*regexp.Regexp, bool) {
	re := regexp.MustCompile(pattern)
	return func(types.Value) (*regexp.Regexp, bool) { return re, true }
}

// argOr returns argument i, or NULL when the call has fewer.
func argOr(a []types.Value, i int) types.Value {
	if i < len(a) {
		return a[i]
	}
	return types.NullValue
}
