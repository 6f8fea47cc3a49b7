package funcs

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/pipesql/pipesql/types"
)

// jsonPath is a compiled SQL/JSON path: $, .key, ['key'], ["key"], [n], [*] and .*,
// optionally after a lax or strict mode word. Under the default NULL ON EMPTY and NULL ON
// ERROR behaviours both modes give NULL for a missing member, so the mode is accepted
// and otherwise ignored.
type jsonPath struct {
	text  string
	steps []jsonStep
}

type jsonStep struct {
	key   string
	index int
	kind  byte // 'k' key, 'i' index, '*' wildcard
}

func compileJSONPath(path string) (*jsonPath, error) {
	p := &jsonPath{text: path}
	s := strings.TrimSpace(path)
	for _, mode := range []string{"lax ", "strict "} {
		if len(s) >= len(mode) && strings.EqualFold(s[:len(mode)], mode) {
			s = strings.TrimSpace(s[len(mode):])
		}
	}
	if !strings.HasPrefix(s, "$") {
		return nil, invalidArg("JSON path %q must start with $", path)
	}
	s = s[1:]
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, ".["):
			s = s[1:] // Flink's documented $.['a b'] form
		case strings.HasPrefix(s, ".*"):
			p.steps = append(p.steps, jsonStep{kind: '*'})
			s = s[2:]
		case s[0] == '.':
			end := 1
			for end < len(s) && s[end] != '.' && s[end] != '[' {
				end++
			}
			if end == 1 {
				return nil, invalidArg("JSON path %q has an empty member name", path)
			}
			p.steps = append(p.steps, jsonStep{kind: 'k', key: s[1:end]})
			s = s[end:]
		case s[0] == '[':
			inner := strings.TrimLeft(s[1:], " ")
			if len(inner) > 0 && (inner[0] == '\'' || inner[0] == '"') {
				// A quoted member name may contain ] and dots.
				q := inner[0]
				closeQ := strings.IndexByte(inner[1:], q)
				if closeQ < 0 {
					return nil, invalidArg("JSON path %q has an unclosed quote", path)
				}
				key := inner[1 : 1+closeQ]
				rest := strings.TrimLeft(inner[2+closeQ:], " ")
				if !strings.HasPrefix(rest, "]") {
					return nil, invalidArg("JSON path %q: expected ] after a quoted member name", path)
				}
				p.steps = append(p.steps, jsonStep{kind: 'k', key: key})
				s = rest[1:]
				continue
			}
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, invalidArg("JSON path %q has an unclosed [", path)
			}
			idx := strings.TrimSpace(s[1:end])
			if idx == "*" {
				p.steps = append(p.steps, jsonStep{kind: '*'})
			} else {
				n, err := strconv.Atoi(idx)
				if err != nil || n < 0 {
					return nil, invalidArg("JSON path %q has a bad array index %q", path, idx)
				}
				p.steps = append(p.steps, jsonStep{kind: 'i', index: n})
			}
			s = s[end+1:]
		default:
			return nil, invalidArg("JSON path %q: unexpected %q", path, s)
		}
	}
	return p, nil
}

// eval returns the JSON texts the path selects in doc. ok is false for text that is not
// JSON.
func (p *jsonPath) eval(doc string) (matches []json.RawMessage, ok bool) {
	cur := []json.RawMessage{json.RawMessage(doc)}
	if !json.Valid(cur[0]) {
		return nil, false
	}
	for _, st := range p.steps {
		var next []json.RawMessage
		for _, m := range cur {
			m = bytes.TrimSpace(m)
			if len(m) == 0 {
				continue
			}
			switch {
			case m[0] == '{' && (st.kind == 'k' || st.kind == '*'):
				var obj map[string]json.RawMessage
				if json.Unmarshal(m, &obj) != nil {
					continue
				}
				if st.kind == 'k' {
					if v, ok := obj[st.key]; ok {
						next = append(next, v)
					}
					continue
				}
				for _, v := range obj {
					next = append(next, v)
				}
			case m[0] == '[' && (st.kind == 'i' || st.kind == '*'):
				var arr []json.RawMessage
				if json.Unmarshal(m, &arr) != nil {
					continue
				}
				if st.kind == '*' {
					next = append(next, arr...)
				} else if st.index < len(arr) {
					next = append(next, arr[st.index])
				}
			}
		}
		cur = next
	}
	return cur, true
}

// jsonScalar is the string form of a JSON scalar as Flink's JSON_VALUE returns it:
// strings unquoted, integers as written, other numbers as Java prints a double, booleans
// in lower case. Objects, arrays and null give NULL.
func jsonScalar(m json.RawMessage) types.Value {
	m = bytes.TrimSpace(m)
	if len(m) == 0 {
		return types.NullValue
	}
	switch c := m[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(m, &s) != nil {
			return types.NullValue
		}
		return str(s)
	case c == 't' || c == 'f':
		return str(string(m))
	case c == '-' || c >= '0' && c <= '9':
		text := string(m)
		if !strings.ContainsAny(text, ".eE") {
			return str(text)
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return types.NullValue
		}
		return str(javaDouble(f, 64))
	}
	return types.NullValue
}

func jsonPathArg(site Site) (func(types.Value) (*jsonPath, bool), error) {
	if c, ok := site.constant(1); ok && !c.IsNull() {
		p, err := compileJSONPath(c.Str())
		if err != nil {
			return nil, err
		}
		return func(types.Value) (*jsonPath, bool) { return p, true }, nil
	}
	return func(v types.Value) (*jsonPath, bool) {
		p, err := jsonPathCache.get(v.Str(), compileJSONPath)
		return p, err == nil
	}, nil
}

var jsonPathCache boundedCache[*jsonPath]

func init() {
	def("JSON_VALUE", 2, 2, sig{params: []param{pString}, ret: strRet, mayBeNull: true},
		"JSON_VALUE(json, path)",
		"the scalar at path in json as a STRING; NULL when missing, not scalar or not JSON (RETURNING t is CAST)",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			path, err := jsonPathArg(site)
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call2: func(doc, p types.Value) (types.Value, error) {
				jp, ok := path(p)
				if !ok {
					return types.NullValue, nil
				}
				m, ok := jp.eval(doc.Str())
				if !ok || len(m) != 1 {
					return types.NullValue, nil
				}
				return jsonScalar(m[0]), nil
			}}, nil
		}})
	def("JSON_QUERY", 2, 2, sig{params: []param{pString}, ret: strRet, mayBeNull: true},
		"JSON_QUERY(json, path)", "the object or array at path in json as JSON text; NULL when missing or scalar",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			path, err := jsonPathArg(site)
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call2: func(doc, p types.Value) (types.Value, error) {
				jp, ok := path(p)
				if !ok {
					return types.NullValue, nil
				}
				m, ok := jp.eval(doc.Str())
				if !ok || len(m) != 1 {
					return types.NullValue, nil
				}
				t := bytes.TrimSpace(m[0])
				if len(t) == 0 || t[0] != '{' && t[0] != '[' {
					return types.NullValue, nil
				}
				return str(string(t)), nil
			}}, nil
		}})
	def("JSON_EXISTS", 2, 2, sig{params: []param{pString}, ret: retType(types.TypeBoolean)},
		"JSON_EXISTS(json, path)", "TRUE if path selects something in json; FALSE on error",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			path, err := jsonPathArg(site)
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call2: func(doc, p types.Value) (types.Value, error) {
				jp, ok := path(p)
				if !ok {
					return types.BoolValue(false), nil
				}
				m, ok := jp.eval(doc.Str())
				return types.BoolValue(ok && len(m) > 0), nil
			}}, nil
		}})
	def("IS JSON", 1, 2, sig{params: []param{pString}, ret: retType(types.TypeBoolean.WithNotNull(true)), ownNull: true},
		"string IS JSON [VALUE | SCALAR | ARRAY | OBJECT]", "TRUE if string is JSON (of the given kind); FALSE for NULL",
		Func{operator: true, nullSafe: true, Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			if a[0].IsNull() || !json.Valid([]byte(a[0].Str())) {
				return types.BoolValue(false), nil
			}
			kind := "VALUE"
			if len(a) > 1 && !a[1].IsNull() {
				kind = strings.ToUpper(a[1].Str())
			}
			t := strings.TrimSpace(a[0].Str())
			switch kind {
			case "OBJECT":
				return types.BoolValue(t[0] == '{'), nil
			case "ARRAY":
				return types.BoolValue(t[0] == '['), nil
			case "SCALAR":
				return types.BoolValue(t[0] != '{' && t[0] != '['), nil
			}
			return types.BoolValue(true), nil
		}})
}
