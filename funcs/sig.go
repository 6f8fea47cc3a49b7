package funcs

import (
	"fmt"
	"strings"

	"github.com/pipesql/pipesql/types"
)

// param is what one argument position accepts, with the words used to say so.
type param struct {
	want string // "a STRING", "a number"
	ok   func(t types.Type) bool
}

func kinds(want string, ks ...types.Kind) param {
	return param{want: want, ok: func(t types.Type) bool {
		if t.Kind == types.Null {
			return true
		}
		for _, k := range ks {
			if t.Kind == k {
				return true
			}
		}
		return false
	}}
}

var (
	pAny      = param{"any value", func(types.Type) bool { return true }}
	pString   = kinds("a STRING", types.Char, types.Varchar)
	pNumeric  = kinds("a number", types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Float, types.Double, types.Decimal)
	pInteger  = kinds("an integer", types.TinyInt, types.SmallInt, types.Int, types.BigInt)
	pBool     = kinds("a BOOLEAN", types.Boolean)
	pTimeAny  = kinds("a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ", types.Date, types.Time, types.Timestamp, types.TimestampLTZ)
	pDateTime = kinds("a DATE, TIMESTAMP or TIMESTAMP_LTZ", types.Date, types.Timestamp, types.TimestampLTZ)
	pClock    = kinds("a TIME, TIMESTAMP or TIMESTAMP_LTZ", types.Time, types.Timestamp, types.TimestampLTZ)
	pStrBytes = kinds("a STRING or BYTES", types.Char, types.Varchar, types.Bytes)
	// pUnit is a time unit; the parser passes FLOOR(ts TO DAY)'s DAY as a string literal.
	pUnit = kinds("a time unit", types.Char, types.Varchar)
)

// sig is a function signature: what each argument accepts and how the result type follows.
type sig struct {
	params []param // params[i] checks argument i; the last one repeats for further arguments
	// ret computes the result type once every argument passed its param. Its nullability
	// is replaced unless ownNull: NOT NULL when every argument is NOT NULL and !mayBeNull.
	ret func(args []types.Type) (types.Type, error)
	// retConst, when set, computes the result type instead of ret, also seeing the value
	// of each constant argument (nil where it varies per row): ROUND(d, 1)'s scale is 1.
	retConst  func(args []types.Type, consts []*types.Value) (types.Type, error)
	mayBeNull bool // the result can be NULL for non-NULL arguments (a parse that fails, no match)
	ownNull   bool // ret decides nullability itself (NULL-aware functions)
	keepAttr  bool // the result keeps the time attribute of what ret returns (PROCTIME())
}

func (s *sig) param(i int) param {
	if len(s.params) == 0 {
		return pAny
	}
	if i < len(s.params) {
		return s.params[i]
	}
	return s.params[len(s.params)-1]
}

func (s *sig) inferFor(f *Func) func(args []types.Type, consts []*types.Value) (types.Type, error) {
	return func(args []types.Type, consts []*types.Value) (types.Type, error) {
		if len(args) < f.MinArgs || (f.MaxArgs >= 0 && len(args) > f.MaxArgs) {
			return types.Type{}, countError(f, len(args))
		}
		for i, a := range args {
			if p := s.param(i); !p.ok(a) {
				return types.Type{}, argError(f.Name, i+1, p.want, a)
			}
		}
		var t types.Type
		var err error
		if s.retConst != nil {
			t, err = s.retConst(args, consts)
		} else {
			t, err = s.ret(args)
		}
		if err != nil {
			var se *SignatureError
			if asSignature(err, &se) && se.Func == "" {
				se.Func = f.Name
				se.Msg = f.Name + " " + strings.TrimSpace(se.Msg)
			}
			return types.Type{}, err
		}
		if !s.keepAttr {
			t = t.WithoutTimeAttr()
		}
		if !s.ownNull {
			t.NotNull = !s.mayBeNull && allNotNull(args)
		}
		return t, nil
	}
}

func asSignature(err error, target **SignatureError) bool {
	se, ok := err.(*SignatureError)
	if ok {
		*target = se
	}
	return ok
}

// mismatch is an error from a sig's ret about how arguments combine; inferFor prefixes
// the function name.
func mismatch(format string, args ...any) error {
	return &SignatureError{Err: ErrArgumentType, Msg: fmt.Sprintf(format, args...)}
}

func allNotNull(args []types.Type) bool {
	for _, a := range args {
		if !a.NotNull {
			return false
		}
	}
	return true
}

func anyNotNull(args []types.Type) bool {
	for _, a := range args {
		if a.NotNull {
			return true
		}
	}
	return false
}

func retType(t types.Type) func([]types.Type) (types.Type, error) {
	return func([]types.Type) (types.Type, error) { return t, nil }
}

func retArg(i int) func([]types.Type) (types.Type, error) {
	return func(args []types.Type) (types.Type, error) {
		t := args[i]
		if t.Kind == types.Null {
			return types.TypeString, nil
		}
		return t, nil
	}
}

// def builds and registers a function from its signature. min and max are argument
// counts (max -1 for variadic).
func def(name string, min, max int, s sig, syntax, doc string, f Func) *Func {
	f.Name, f.MinArgs, f.MaxArgs, f.Syntax, f.Doc = name, min, max, syntax, doc
	f.sig = &s
	f.Deterministic = !f.volatile
	if s.ret == nil {
		s.ret = retType(types.TypeString)
	}
	ff := &f
	ff.InferConst = s.inferFor(ff)
	ff.Infer = func(args []types.Type) (types.Type, error) { return ff.InferConst(args, nil) }
	return register(ff)
}

// typeList formats types for messages: "INT and STRING".
func typeList(ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Nullable().String()
	}
	if len(parts) <= 2 {
		return strings.Join(parts, " and ")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
