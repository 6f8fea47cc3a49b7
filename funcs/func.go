package funcs

import (
	"sort"
	"strings"
	"time"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/types"
)

// Func is one scalar function or operator.
type Func struct {
	// Name is the canonical upper-case name: operators by symbol or keyword as the planner
	// names them ("+", "=", "AND", "NOT", "NEG", "IS NULL", "LIKE", "BETWEEN", "||"),
	// functions by name.
	Name    string
	MinArgs int
	MaxArgs int // -1 for variadic
	// Infer returns the result type for the argument types, or a *SignatureError saying what
	// is wrong. It checks the argument count too.
	Infer func(args []types.Type) (types.Type, error)
	// InferConst is Infer that also sees the value of each constant argument (nil where
	// it varies per row), for the functions whose type depends on one, as Flink types
	// ROUND(DECIMAL(p, s), d). The planner and exec/eval call it with the call's literals.
	InferConst func(args []types.Type, consts []*types.Value) (types.Type, error)
	Syntax     string // e.g. "DATE_FORMAT(timestamp, format)"
	Doc        string // one line, for SHOW FUNCTIONS / HELP
	// Impl evaluates the function on already evaluated arguments. It is the generic, slow
	// path (the planner may use it to fold constants); exec/eval uses Bind.
	Impl func(ctx *Context, args []types.Value) (types.Value, error)
	// Deterministic is false for CURRENT_TIMESTAMP, PROCTIME, RAND...
	Deterministic bool

	operator bool // named by a symbol or keyword; not listed by Names
	nullSafe bool // sees NULL arguments; otherwise a NULL argument gives NULL
	prepare  func(ctx *Context, site Site) (Kernel, error)
	sig      *sig // the signature Infer checks, kept so that an alias can rebuild it
	volatile bool // set in definitions; def turns it into Deterministic = false
}

// Context is what an implementation may read besides its arguments.
type Context struct {
	// Location is table.local-time-zone; nil means UTC.
	Location *time.Location
	// Now is the clock of CURRENT_TIMESTAMP, PROCTIME and the like; nil makes them fail.
	Now func() time.Time
	// Watermark is the current watermark of the operator evaluating (CURRENT_WATERMARK):
	// microseconds in the rowtime's encoding, ok false before the first watermark; nil
	// where no operator knows one (CURRENT_WATERMARK is then NULL).
	Watermark func() (wm int64, ok bool)
}

func (c *Context) loc() *time.Location {
	if c == nil || c.Location == nil {
		return time.UTC
	}
	return c.Location
}

// Site is what is known about one call at compile time.
type Site struct {
	Args   []types.Type   // the argument types
	Consts []*types.Value // the value of each constant argument, nil where it varies per row
	Result types.Type     // the type the planner inferred for the call
}

func (s Site) constant(i int) (types.Value, bool) {
	if i < len(s.Consts) && s.Consts[i] != nil {
		return *s.Consts[i], true
	}
	return types.Value{}, false
}

func (s Site) arg(i int) types.Type {
	if i < len(s.Args) {
		return s.Args[i]
	}
	return types.Type{}
}

// Kernel is a function bound to one call site. Call is always set; Call1 and Call2 are
// set for functions commonly called with one or two arguments, so that the evaluator need
// not build an argument slice per row.
type Kernel struct {
	Call  func(args []types.Value) (types.Value, error)
	Call1 func(a types.Value) (types.Value, error)
	Call2 func(a, b types.Value) (types.Value, error)
}

// Bind returns f's implementation for one call site. Constant arguments are used up front:
// a constant LIKE or regex pattern or DATE_FORMAT layout is compiled here, once, and a
// bad one is reported here rather than per row. Kernels are safe for concurrent use.
func (f *Func) Bind(ctx *Context, site Site) (Kernel, error) {
	if !f.arity(len(site.Args)) {
		return Kernel{}, countError(f, len(site.Args))
	}
	var k Kernel
	if f.prepare != nil {
		var err error
		if k, err = f.prepare(ctx, site); err != nil {
			return Kernel{}, err
		}
	} else {
		// Impl already applies the NULL rule; applying it again below is harmless.
		impl := f.Impl
		k.Call = func(args []types.Value) (types.Value, error) { return impl(ctx, args) }
	}
	k = k.complete()
	if !f.nullSafe {
		for _, c := range site.Consts {
			if c != nil && c.IsNull() {
				null := func([]types.Value) (types.Value, error) { return types.NullValue, nil }
				return Kernel{Call: null}.complete(), nil
			}
		}
		k = k.strict()
	}
	return k, nil
}

func (k Kernel) complete() Kernel {
	if k.Call == nil {
		switch {
		case k.Call2 != nil:
			c2 := k.Call2
			k.Call = func(a []types.Value) (types.Value, error) { return c2(a[0], a[1]) }
		case k.Call1 != nil:
			c1 := k.Call1
			k.Call = func(a []types.Value) (types.Value, error) { return c1(a[0]) }
		}
	}
	return k
}

// strict makes every form of k return NULL when an argument is NULL.
func (k Kernel) strict() Kernel {
	call := k.Call
	k.Call = func(args []types.Value) (types.Value, error) {
		for _, a := range args {
			if a.IsNull() {
				return types.NullValue, nil
			}
		}
		return call(args)
	}
	if c1 := k.Call1; c1 != nil {
		k.Call1 = func(a types.Value) (types.Value, error) {
			if a.IsNull() {
				return types.NullValue, nil
			}
			return c1(a)
		}
	}
	if c2 := k.Call2; c2 != nil {
		k.Call2 = func(a, b types.Value) (types.Value, error) {
			if a.IsNull() || b.IsNull() {
				return types.NullValue, nil
			}
			return c2(a, b)
		}
	}
	return k
}

// siteOf describes a call whose every argument is known.
func siteOf(args []types.Value) Site {
	s := Site{Args: make([]types.Type, len(args)), Consts: make([]*types.Value, len(args))}
	for i := range args {
		s.Args[i] = valueType(args[i])
		s.Consts[i] = &args[i]
	}
	return s
}

// valueType is the type a value's kind implies, with the widest parameters.
func valueType(v types.Value) types.Type {
	switch k := v.Kind(); k {
	case types.Varchar:
		return types.TypeString
	case types.Decimal:
		return types.Type{Kind: k} // precision 0: unknown, formatted without padding
	case types.Timestamp, types.TimestampLTZ, types.Time:
		return types.Type{Kind: k, Prec: 6}
	default:
		return types.Type{Kind: k}
	}
}

var registry = map[string]*Func{}

func (f *Func) arity(n int) bool { return n >= f.MinArgs && (f.MaxArgs < 0 || n <= f.MaxArgs) }

// register adds f, filling in Impl from prepare and applying the NULL rule and the
// argument count check to Impl.
func register(f *Func) *Func {
	if f.Impl == nil && f.prepare != nil {
		prep := f.prepare
		f.Impl = func(ctx *Context, args []types.Value) (types.Value, error) {
			// The arguments are bound as varying: Impl behaves as the per-row path does
			// (a bad regex argument is NULL, not a bind error).
			site := siteOf(args)
			site.Consts = nil
			k, err := prep(ctx, site)
			if err != nil {
				return types.NullValue, err
			}
			return k.complete().Call(args)
		}
	}
	impl, strict := f.Impl, !f.nullSafe
	f.Impl = func(ctx *Context, args []types.Value) (types.Value, error) {
		if !f.arity(len(args)) {
			return types.NullValue, countError(f, len(args))
		}
		if strict {
			for _, a := range args {
				if a.IsNull() {
					return types.NullValue, nil
				}
			}
		}
		return impl(ctx, args)
	}
	if _, dup := registry[f.Name]; dup {
		panic("funcs: duplicate registration of " + f.Name)
	}
	registry[f.Name] = f
	return f
}

// alias registers the same function under another name, so that its errors and
// syntax name the alias the user wrote.
func alias(name string, of *Func) {
	g := *of
	g.Name = name
	g.Syntax = strings.Replace(of.Syntax, of.Name, name, 1)
	gg := &g
	if g.sig != nil {
		gg.InferConst = g.sig.inferFor(gg)
		gg.Infer = func(args []types.Type) (types.Type, error) { return gg.InferConst(args, nil) }
	}
	registry[name] = gg
}

// Lookup finds a scalar function or operator by name, case-insensitively.
func Lookup(name string) (*Func, bool) {
	f, ok := registry[strings.ToUpper(strings.TrimSpace(name))]
	return f, ok
}

// Names returns the scalar function names, sorted, without operators: what SHOW
// FUNCTIONS lists besides the aggregates and window functions (see AllNames).
func Names() []string {
	names := make([]string, 0, len(registry))
	for n, f := range registry {
		if !f.operator {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// AllNames returns the scalar, aggregate and window function names, sorted: the full
// list for SHOW FUNCTIONS.
func AllNames() []string {
	names := Names()
	for n := range aggregates {
		names = append(names, n)
	}
	for n := range windowFuncs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var aggregates = setOf("COUNT", "SUM", "SUM0", "MIN", "MAX", "AVG", "STDDEV", "STDDEV_POP",
	"STDDEV_SAMP", "VARIANCE", "VAR_POP", "VAR_SAMP", "COLLECT", "LISTAGG", "FIRST_VALUE",
	"LAST_VALUE", "APPROX_COUNT_DISTINCT", "ARRAY_AGG", "JSON_OBJECTAGG", "JSON_ARRAYAGG",
	"BIT_AND", "BIT_OR", "BIT_XOR", "BOOL_AND", "BOOL_OR",
	// OVER-window ranking and offset functions: also the planner's business.
	"ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE", "LEAD", "LAG")

var windowFuncs = setOf("TUMBLE", "HOP", "SESSION", "CUMULATE",
	"TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "TUMBLE_PROCTIME",
	"HOP_START", "HOP_END", "HOP_ROWTIME", "HOP_PROCTIME",
	"SESSION_START", "SESSION_END", "SESSION_ROWTIME", "SESSION_PROCTIME")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// IsAggregate reports whether name is an aggregate (or OVER-window ranking) function,
// which the planner handles rather than funcs.
func IsAggregate(name string) bool { return aggregates[strings.ToUpper(name)] }

// IsWindowFunc reports whether name is a group window function or window table function
// (TUMBLE, HOP, SESSION, CUMULATE) or one of their auxiliary functions (TUMBLE_START...).
func IsWindowFunc(name string) bool { return windowFuncs[strings.ToUpper(name)] }

// Closest returns the known function name nearest to name, for "unknown function FOO,
// did you mean FLOOR?", or "" when nothing is close enough to be a plausible typo.
func Closest(name string) string {
	name = strings.ToUpper(strings.TrimSpace(name))
	return config.Closest(name, AllNames(), config.SuggestionDistance(name))
}
