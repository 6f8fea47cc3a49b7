package formats

import (
	"fmt"
	"math"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// pbEncField writes one column (or ROW field) as one protobuf field.
type pbEncField struct {
	fd    protoreflect.FieldDescriptor
	path  string
	slot  int
	col   types.Type // the element type for repeated fields
	list  bool
	isMap bool
	sub   *pbEncMessage // a message field, or a map's entry
	ts    bool
	// later are the slots of the same oneof after this one in the schema: Flink sets
	// oneof members in schema order, so the last non-NULL one is the one written.
	later []int
}

type pbEncMessage struct {
	name   protoreflect.FullName
	fields []pbEncField // in field number order, as protoc's generated code writes them
}

type protobufEncoder struct {
	cfg     protobufConfig
	msg     *pbEncMessage
	width   int
	scratch [][]byte // one buffer per nesting depth for nested messages
}

// NewProtobufEncoder returns an encoder writing rows of schema as binary protobuf
// messages of the configured type. Every column must name a field of the message; a
// NULL column leaves its field unset.
func NewProtobufEncoder(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
	cfg, err := readProtobufConfig(opts, true)
	if err != nil {
		return nil, err
	}
	md, err := cfg.messageDescriptor()
	if err != nil {
		return nil, err
	}
	return newProtobufEncoder(md, schema, cfg)
}

func newProtobufEncoder(md protoreflect.MessageDescriptor, schema types.Schema, cfg protobufConfig) (*protobufEncoder, error) {
	fields := make([]types.Field, len(schema))
	for i, c := range schema {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	m, err := buildPBEncMessage(md, fields, "")
	if err != nil {
		return nil, err
	}
	return &protobufEncoder{cfg: cfg, msg: m, width: len(schema)}, nil
}

func buildPBEncMessage(md protoreflect.MessageDescriptor, fields []types.Field, path string) (*pbEncMessage, error) {
	// The decoder's mapping checks names and types; the encoder uses the same rules.
	dm, err := buildPBMessage(md, fields, protobufConfig{}, path)
	if err != nil {
		return nil, err
	}
	m := &pbEncMessage{name: md.FullName()}
	for _, df := range dm.fields {
		ef := pbEncField{fd: df.fd, path: df.path, slot: df.slot, col: df.col, list: df.list, isMap: df.isMap, ts: df.ts}
		switch {
		case df.isMap:
			t := fields[df.slot].Type
			if ef.sub, err = buildPBEncMessage(df.fd.Message(), []types.Field{{Name: "key", Type: *t.Key}, {Name: "value", Type: *t.Elem}}, df.path); err != nil {
				return nil, err
			}
		case df.sub != nil:
			if ef.sub, err = buildPBEncMessage(df.fd.Message(), df.col.Fields, df.path); err != nil {
				return nil, err
			}
		}
		if df.oneof >= 0 {
			for _, other := range dm.fields {
				if other.oneof == df.oneof && other.slot > df.slot {
					ef.later = append(ef.later, other.slot)
				}
			}
		}
		m.fields = append(m.fields, ef)
	}
	sort.Slice(m.fields, func(i, j int) bool { return m.fields[i].fd.Number() < m.fields[j].fd.Number() })
	return m, nil
}

func (e *protobufEncoder) Encode(dst []byte, row types.Row) ([]byte, error) {
	if len(row) != e.width {
		return dst, fmt.Errorf("encode a row of %d columns, want %d", len(row), e.width)
	}
	return e.encodeMessage(dst, e.msg, row, 0)
}

// buf returns the scratch buffer of a nesting depth, emptied.
func (e *protobufEncoder) buf(depth int) []byte {
	for len(e.scratch) <= depth {
		e.scratch = append(e.scratch, nil)
	}
	return e.scratch[depth][:0]
}

func (e *protobufEncoder) encodeMessage(dst []byte, m *pbEncMessage, row []types.Value, depth int) ([]byte, error) {
	var err error
	for i := range m.fields {
		f := &m.fields[i]
		v := row[f.slot]
		if v.IsNull() || laterSet(f.later, row) {
			continue
		}
		switch {
		case f.isMap:
			for _, en := range v.Entries() {
				entry := []types.Value{en.Key, en.Value}
				if dst, err = e.appendNested(dst, f, f.sub, entry, depth); err != nil {
					return dst, err
				}
			}
		case f.list:
			elems := v.Elems()
			if f.fd.IsPacked() && len(elems) > 0 {
				b := e.buf(depth + 1) // children of a message at depth write at depth+1
				for _, el := range elems {
					if b, err = e.appendScalar(b, f, el, true); err != nil {
						return dst, err
					}
				}
				e.scratch[depth+1] = b
				dst = protowire.AppendTag(dst, f.fd.Number(), protowire.BytesType)
				dst = protowire.AppendBytes(dst, b)
				continue
			}
			for _, el := range elems {
				if dst, err = e.appendSingle(dst, f, el, true, depth); err != nil {
					return dst, err
				}
			}
		default:
			if !f.fd.HasPresence() && isPBZero(f, v) {
				continue // proto3 writes no field holding its zero value
			}
			if dst, err = e.appendSingle(dst, f, v, false, depth); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

func laterSet(later []int, row []types.Value) bool {
	for _, s := range later {
		if !row[s].IsNull() {
			return true
		}
	}
	return false
}

// appendSingle writes one value of f with its tag. NULL (only possible for an element
// of an ARRAY or MAP) is written as the type's default: protobuf has no null.
func (e *protobufEncoder) appendSingle(dst []byte, f *pbEncField, v types.Value, elem bool, depth int) ([]byte, error) {
	if f.sub != nil {
		var fields []types.Value
		if !v.IsNull() {
			fields = v.Elems()
		} else {
			fields = make([]types.Value, len(f.col.Fields))
		}
		return e.appendNested(dst, f, f.sub, fields, depth)
	}
	if f.ts {
		dst = protowire.AppendTag(dst, f.fd.Number(), protowire.BytesType)
		var micros int64
		if !v.IsNull() {
			micros = v.Int()
		}
		secs, rem := micros/1_000_000, micros%1_000_000
		if rem < 0 {
			secs, rem = secs-1, rem+1_000_000
		}
		var b []byte
		if secs != 0 {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(secs))
		}
		if rem != 0 {
			b = protowire.AppendTag(b, 2, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(rem*1000))
		}
		return protowire.AppendBytes(dst, b), nil
	}
	dst = protowire.AppendTag(dst, f.fd.Number(), wantWire(f.fd.Kind()))
	return e.appendScalar(dst, f, v, elem)
}

func (e *protobufEncoder) appendNested(dst []byte, f *pbEncField, sub *pbEncMessage, fields []types.Value, depth int) ([]byte, error) {
	b, err := e.encodeMessage(e.buf(depth+1), sub, fields, depth+1)
	if err != nil {
		return dst, err
	}
	e.scratch[depth+1] = b
	if f.fd.Kind() == protoreflect.GroupKind {
		dst = protowire.AppendTag(dst, f.fd.Number(), protowire.StartGroupType)
		dst = append(dst, b...)
		return protowire.AppendTag(dst, f.fd.Number(), protowire.EndGroupType), nil
	}
	dst = protowire.AppendTag(dst, f.fd.Number(), protowire.BytesType)
	return protowire.AppendBytes(dst, b), nil
}

// isPBZero reports whether v is the zero value of a field without presence.
func isPBZero(f *pbEncField, v types.Value) bool {
	switch f.fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return v.Str() == ""
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return v.Float() == 0 && !math.Signbit(v.Float())
	case protoreflect.EnumKind:
		if f.col.IsString() {
			ev := f.fd.Enum().Values().ByName(protoreflect.Name(v.Str()))
			return ev != nil && ev.Number() == 0
		}
		return v.Int() == 0
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return false
	}
	return v.Int() == 0
}

// appendScalar writes one non-message value without its tag.
func (e *protobufEncoder) appendScalar(dst []byte, f *pbEncField, v types.Value, elem bool) ([]byte, error) {
	null := v.IsNull()
	switch f.fd.Kind() {
	case protoreflect.BoolKind:
		b := uint64(0)
		if !null && v.Bool() {
			b = 1
		}
		return protowire.AppendVarint(dst, b), nil
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		var n int64
		if !null {
			n = v.Int()
		}
		if f.fd.Kind() == protoreflect.Uint32Kind {
			n = int64(uint32(n))
		}
		return protowire.AppendVarint(dst, uint64(n)), nil
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		var n int64
		if !null {
			n = v.Int()
		}
		if f.fd.Kind() == protoreflect.Sint32Kind {
			n = int64(int32(n))
		}
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(n)), nil
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		var n int64
		if !null {
			n = v.Int()
		}
		return protowire.AppendFixed32(dst, uint32(n)), nil
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		var n int64
		if !null {
			n = v.Int()
		}
		return protowire.AppendFixed64(dst, uint64(n)), nil
	case protoreflect.FloatKind:
		var x float64
		if !null {
			x = v.Float()
		}
		return protowire.AppendFixed32(dst, math.Float32bits(float32(x))), nil
	case protoreflect.DoubleKind:
		var x float64
		if !null {
			x = v.Float()
		}
		return protowire.AppendFixed64(dst, math.Float64bits(x)), nil
	case protoreflect.StringKind:
		s := e.cfg.nullString
		if !null {
			s = v.Str()
		}
		return protowire.AppendString(dst, s), nil
	case protoreflect.BytesKind:
		var s string
		if !null {
			s = v.Str()
		}
		return protowire.AppendString(dst, s), nil
	case protoreflect.EnumKind:
		var n int64
		switch {
		case null:
			if vals := f.fd.Enum().Values(); vals.Len() > 0 {
				n = int64(vals.Get(0).Number()) // Flink: the enum's first value
			}
		case f.col.IsString():
			ev := f.fd.Enum().Values().ByName(protoreflect.Name(v.Str()))
			if ev == nil {
				return dst, fmt.Errorf("column %s: '%s' is not a value of enum %s", f.path, v.Str(), f.fd.Enum().FullName())
			}
			n = int64(ev.Number())
		default:
			n = v.Int()
		}
		return protowire.AppendVarint(dst, uint64(n)), nil
	}
	return dst, fmt.Errorf("column %s: cannot write protobuf %s", f.path, f.fd.Kind())
}
