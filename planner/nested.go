package planner

import (
	"errors"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Nested types: ROW, ARRAY and MAP values in expressions.
//
// A dotted name is resolved as Calcite resolves it: t.c.f1.f2 is column c of table t and
// then fields f1, f2 when t qualifies a column c; otherwise c.f1.f2 is column c and its
// fields. A field is read by the "." call, whose second argument is the field's position;
// a[i] and m[k] are ITEM calls; ARRAY[...], MAP[...] and ROW(...) are calls of those
// names. EXPLAIN prints them as SQL: bid.price, a[1], ARRAY[1, 2].

// resolvePath finds the column a dotted name starts with and returns the field names
// that follow it.
func (s *scope) resolvePath(id *parser.Ident) (int, []string, error) {
	parts := id.Parts
	if len(parts) == 1 {
		i, err := s.resolve(id)
		return i, nil, err
	}
	qualified := false
	for _, c := range s.cols {
		if hasQual(c, parts[0]) {
			qualified = true
			break
		}
	}
	if qualified {
		i, err := s.resolve(&parser.Ident{At: id.At, Parts: parts[:2]})
		if err == nil || len(parts) == 2 && !errors.Is(err, ErrUnknownColumn) {
			return i, parts[2:], err
		}
		// t.x where t is a table without column x: t may also be a column (of a ROW type).
	}
	i, err := s.resolve(&parser.Ident{At: id.At, Parts: parts[:1]})
	switch {
	case err == nil:
		return i, parts[1:], nil
	case errors.Is(err, ErrAmbiguousColumn):
		return 0, nil, err
	case qualified || len(parts) == 2:
		i, err := s.resolve(&parser.Ident{At: id.At, Parts: parts[:2]})
		return i, nil, err
	}
	return 0, nil, errAt(id.At, ErrUnknownTable, "unknown table or column '%s' in '%s'%s", parts[0], strings.Join(parts, "."), didYouMean(parts[0], append(s.quals(), s.names()...)))
}

// bindFields reads the fields named by path out of x, whose text is what the query wrote.
func bindFields(pos parser.Pos, x Expr, written string, path []string) (Expr, error) {
	for _, name := range path {
		t := x.Type()
		if t.Kind != types.Struct {
			return nil, errAt(pos, ErrTypeMismatch, "type mismatch: cannot read field '%s' of '%s', which is %s, not a ROW", name, written, t.Nullable())
		}
		idx := fieldIndex(t, name)
		if idx < 0 {
			names := make([]string, len(t.Fields))
			for i, f := range t.Fields {
				names[i] = f.Name
			}
			return nil, errAt(pos, ErrUnknownColumn, "unknown field '%s' in '%s' of type %s%s", name, written, t.Nullable(), didYouMean(name, names))
		}
		x = fieldAccess(x, idx)
		written += "." + name
	}
	return x, nil
}

// fieldIndex finds a field by name, an exact match winning over a case-insensitive one.
func fieldIndex(t types.Type, name string) int {
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range t.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// fieldAccess reads field idx of the ROW x: NULL when x is NULL.
func fieldAccess(x Expr, idx int) Expr {
	pos := &Literal{Value: types.IntValue(types.Int, int64(idx)), T: types.TypeInt.WithNotNull(true)}
	return &Call{Func: ".", Args: []Expr{x, pos}, T: funcs.FieldType(x.Type(), idx)}
}

// bindNested binds the nested-type expressions of the AST.
func (b *binder) bindNested(e parser.Expr) (Expr, error) {
	switch x := e.(type) {
	case *parser.Constructor:
		args, err := b.bindAll(x.Args)
		if err != nil {
			return nil, err
		}
		return callOp(x.At, x.Kind, args...)
	case *parser.Subscript:
		args, err := b.bindAll([]parser.Expr{x.X, x.Index})
		if err != nil {
			return nil, err
		}
		if args[0].Type().Multiset {
			return nil, errAt(x.At, ErrTypeMismatch, "a MULTISET has no element access: %s is %s", parser.Format(x.X), args[0].Type())
		}
		return callOp(x.At, "ITEM", args...)
	case *parser.FieldAccess:
		v, err := b.bind(x.X)
		if err != nil {
			return nil, err
		}
		return bindFields(x.At, v, parser.Format(x.X), []string{x.Field})
	}
	return nil, errAt(e.Pos(), ErrUnsupported, "unsupported: expression %T", e)
}

// constructorCall refuses the names of the operators behind the bracket syntax when
// they are written as calls: ARRAY(1, 2) is not Flink SQL.
func constructorCall(c *parser.FuncCall) error {
	switch name := strings.ToUpper(c.Name); name {
	case "ARRAY", "MAP":
		return errAt(c.At, ErrUnsupported, "unsupported: %s(...): write %s[...]", name, name)
	case "ITEM", ".":
		return errAt(c.At, ErrUnknownFunction, "unknown function '%s'", name)
	}
	return nil
}

// formatNested prints the nested-type calls as SQL, or returns false for other calls.
func formatNested(c *Call, args []string) (string, bool) {
	switch {
	case c.Func == "." && len(args) == 2:
		if l, ok := c.Args[1].(*Literal); ok {
			t := c.Args[0].Type()
			if i := int(l.Value.Int()); t.Kind == types.Struct && i >= 0 && i < len(t.Fields) {
				return args[0] + "." + parser.QuoteIdent(t.Fields[i].Name), true
			}
		}
	case c.Func == "ITEM" && len(args) == 2:
		return args[0] + "[" + args[1] + "]", true
	case c.Func == "ARRAY" || c.Func == "MAP":
		return c.Func + "[" + strings.Join(args, ", ") + "]", true
	}
	return formatJSON(c, args)
}

// checkFormatTypes refuses, at the column's type, a physical column the table's format
// cannot read (csv has no MAP, nor arrays nested in arrays), so that CREATE TABLE fails
// rather than the job. Only a table's single 'format' is checked: with key.format and
// value.format a column may belong to the key alone.
func checkFormatTypes(ct *parser.CreateTable, vo *validatedOptions) error {
	for _, tf := range vo.formats {
		if tf.key != "format" || tf.factory.NewDecoder == nil {
			continue
		}
		opts := connectors.FormatOptions(vo.options, "", tf.factory.Name)
		for i := range ct.Columns {
			cd := &ct.Columns[i]
			if cd.Kind != parser.PhysicalColumn || cd.Type == nil {
				continue
			}
			t, err := convertType(*cd.Type)
			if err != nil || t.Kind != types.Array && t.Kind != types.Map && t.Kind != types.Struct {
				continue
			}
			if _, err := tf.factory.NewDecoder([]connectors.ProducedColumn{{Name: cd.Name, Type: t}}, opts); err != nil {
				if inner := errors.Unwrap(err); inner != nil {
					err = inner // the decoder's "column c: ..." says what this message does
				}
				return errAt(cd.Type.At, ErrUnsupported, "unsupported: column '%s' in format '%s': %v", cd.Name, tf.factory.Name, err)
			}
		}
	}
	return nil
}

// jsonMembers checks the values of a JSON_OBJECT or JSON_ARRAY call (ast) and marks, in
// its first argument, those that are themselves JSON_OBJECT or JSON_ARRAY calls, which
// Flink inserts as JSON rather than as strings, so that the constructors nest. Other
// calls are returned as they are.
func jsonMembers(ast *parser.FuncCall, c *Call) (Expr, error) {
	if c.Func != "JSON_OBJECT" && c.Func != "JSON_ARRAY" || len(c.Args) == 0 {
		return c, nil
	}
	mode, ok := c.Args[0].(*Literal)
	if !ok || mode.Value.IsNull() {
		return c, nil
	}
	onNull, _, ok := funcs.ParseJSONMode(mode.Value.Str())
	if !ok {
		return c, nil
	}
	var raw []bool
	for i := 1; i < len(c.Args); i++ {
		if c.Func == "JSON_OBJECT" && i%2 == 1 {
			continue // a key
		}
		if t := c.Args[i].Type(); !funcs.JSONEncodable(t) {
			return nil, errAt(ast.Args[i].Pos(), ErrUnsupported, "unsupported: %s of a value of type %s (pipesql writes numbers, BOOLEAN, strings, and ARRAY, MAP and ROW of them, as JSON)", c.Func, t.Nullable())
		}
		n, ok := c.Args[i].(*Call)
		raw = append(raw, ok && (n.Func == "JSON_OBJECT" || n.Func == "JSON_ARRAY"))
	}
	args := append([]Expr{&Literal{Value: types.StringValue(funcs.JSONMode(onNull, raw)), T: mode.T}}, c.Args[1:]...)
	return &Call{Func: c.Func, Args: args, T: c.T}, nil
}

// formatJSON prints JSON_OBJECT and JSON_ARRAY calls in their SQL syntax.
func formatJSON(c *Call, args []string) (string, bool) {
	if c.Func != "JSON_OBJECT" && c.Func != "JSON_ARRAY" || len(c.Args) == 0 {
		return "", false
	}
	mode, ok := c.Args[0].(*Literal)
	if !ok || mode.Value.IsNull() {
		return "", false
	}
	onNull, _, ok := funcs.ParseJSONMode(mode.Value.Str())
	if !ok {
		return "", false
	}
	var members []string
	for i := 1; i < len(args); i++ {
		if c.Func == "JSON_OBJECT" && i+1 < len(args) {
			members = append(members, "KEY "+args[i]+" VALUE "+args[i+1])
			i++
			continue
		}
		members = append(members, args[i])
	}
	s := c.Func + "(" + strings.Join(members, ", ")
	if len(members) > 0 {
		s += " "
	}
	return s + onNull + " ON NULL)", true
}
