package funcs

import "github.com/pipesql/pipesql/types"

// The conditional functions are NULL-aware. Their Impl evaluates eagerly; an evaluator
// that must not evaluate the branch not taken (IF(x <> 0, 1 / x, 0)) evaluates them
// itself, as exec/eval does.

func init() {
	def("IF", 3, 3, sig{params: []param{pBool, pAny}, ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		t, ok := CommonType(args[1], args[2])
		if !ok {
			return types.Type{}, mismatch("branches have no common type: %s", typeList(args[1:]))
		}
		return t, nil
	}}, "IF(condition, true_value, false_value)",
		"true_value if condition is TRUE, otherwise (FALSE or UNKNOWN) false_value",
		Func{nullSafe: true, Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			if !a[0].IsNull() && a[0].Bool() {
				return a[1], nil
			}
			return a[2], nil
		}})

	def("COALESCE", 1, -1, sig{ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		t, err := commonRet(args)
		return t.WithNotNull(anyNotNull(args)), err
	}}, "COALESCE(value1, value2, ...)", "the first argument that is not NULL",
		Func{nullSafe: true, Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			for _, v := range a {
				if !v.IsNull() {
					return v, nil
				}
			}
			return types.NullValue, nil
		}})

	def("IFNULL", 2, 2, sig{ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		t, err := commonRet(args)
		return t.WithNotNull(args[1].NotNull), err
	}}, "IFNULL(input, null_replacement)", "null_replacement if input is NULL, otherwise input",
		Func{nullSafe: true, Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			if a[0].IsNull() {
				return a[1], nil
			}
			return a[0], nil
		}})

	def("NULLIF", 2, 2, sig{ownNull: true, ret: func(args []types.Type) (types.Type, error) {
		if _, ok := ComparisonType(args[0], args[1]); !ok {
			return types.Type{}, mismatch("cannot compare %s", typeList(args))
		}
		return args[0].Nullable(), nil
	}}, "NULLIF(value1, value2)", "NULL if value1 equals value2, otherwise value1",
		Func{nullSafe: true, Impl: func(ctx *Context, a []types.Value) (types.Value, error) {
			if a[0].IsNull() || a[1].IsNull() {
				return a[0], nil
			}
			c, ordered, err := Compare(a[0], a[1], ctx.loc())
			if err != nil {
				return types.NullValue, err
			}
			if ordered && c == 0 {
				return types.NullValue, nil
			}
			return a[0], nil
		}})
}
