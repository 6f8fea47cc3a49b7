package types

import (
	"fmt"
	"strings"
)

// Kind is the root of a Flink logical type.
type Kind uint8

// The kinds pipesql understands, named as Flink names them.
const (
	Null Kind = iota // the type of the NULL literal before it is cast
	Boolean
	TinyInt
	SmallInt
	Int
	BigInt
	Float
	Double
	Decimal
	Char
	Varchar // STRING is VARCHAR(2147483647)
	Bytes   // BYTES / VARBINARY
	Date
	Time
	Timestamp    // TIMESTAMP(p): wall-clock, no zone
	TimestampLTZ // TIMESTAMP_LTZ(p): an instant, shown in table.local-time-zone
	IntervalDayTime
	IntervalYearMonth
	Array
	Map
	Struct // ROW<...>
)

// MaxLength is the length of STRING, which Flink defines as VARCHAR(2147483647).
const MaxLength = 2147483647

var kindNames = [...]string{
	Null: "NULL", Boolean: "BOOLEAN", TinyInt: "TINYINT", SmallInt: "SMALLINT", Int: "INT",
	BigInt: "BIGINT", Float: "FLOAT", Double: "DOUBLE", Decimal: "DECIMAL", Char: "CHAR",
	Varchar: "VARCHAR", Bytes: "BYTES", Date: "DATE", Time: "TIME", Timestamp: "TIMESTAMP",
	TimestampLTZ: "TIMESTAMP_LTZ", IntervalDayTime: "INTERVAL DAY TO SECOND",
	IntervalYearMonth: "INTERVAL YEAR TO MONTH", Array: "ARRAY", Map: "MAP", Struct: "ROW",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Field is one named field of a ROW type.
type Field struct {
	Name string
	Type Type
}

// Type is a Flink logical type. The zero value is the NULL type.
// Types are small values: compare them with Equal, not ==.
type Type struct {
	Kind     Kind
	NotNull  bool
	Length   int     // CHAR(n), VARCHAR(n)
	Prec     int     // DECIMAL(p, s) precision; TIMESTAMP(p), TIME(p) fractional digits
	Scale    int     // DECIMAL(p, s) scale
	Elem     *Type   // ARRAY<elem>, MAP<key, Elem>
	Key      *Type   // MAP<Key, elem>
	Fields   []Field // ROW<...>
	TimeAttr TimeAttr
	// Multiset marks MULTISET<Key>: a MAP<Key, INT NOT NULL> of each element's count, as
	// Flink holds a multiset (and prints and writes it: {a=2, b=1}).
	Multiset bool
}

// MultisetType returns MULTISET<elem>.
func MultisetType(elem Type) Type {
	count := Type{Kind: Int, NotNull: true}
	return Type{Kind: Map, Key: &elem, Elem: &count, Multiset: true}
}

// TimeAttr marks a timestamp column as a time attribute, as Flink does in DESCRIBE:
// TIMESTAMP(3) *ROWTIME* or TIMESTAMP_LTZ(3) *PROCTIME*.
type TimeAttr uint8

const (
	NoTimeAttr TimeAttr = iota
	RowTime
	ProcTime
)

// Common types, nullable.
var (
	TypeBoolean  = Type{Kind: Boolean}
	TypeInt      = Type{Kind: Int}
	TypeBigInt   = Type{Kind: BigInt}
	TypeDouble   = Type{Kind: Double}
	TypeString   = Type{Kind: Varchar, Length: MaxLength}
	TypeDate     = Type{Kind: Date}
	TypeNull     = Type{Kind: Null}
	TypeInterval = Type{Kind: IntervalDayTime}
)

// TimestampType returns TIMESTAMP(p).
func TimestampType(p int) Type { return Type{Kind: Timestamp, Prec: p} }

// TimestampLTZType returns TIMESTAMP_LTZ(p).
func TimestampLTZType(p int) Type { return Type{Kind: TimestampLTZ, Prec: p} }

// Nullable returns t without its NOT NULL constraint.
func (t Type) Nullable() Type { t.NotNull = false; return t }

// WithNotNull returns t with NOT NULL set to notNull.
func (t Type) WithNotNull(notNull bool) Type { t.NotNull = notNull; return t }

// WithoutTimeAttr returns t as a plain type; time attributes are lost when a column
// is computed into something else.
func (t Type) WithoutTimeAttr() Type { t.TimeAttr = NoTimeAttr; return t }

// IsNumeric reports whether t is an exact or approximate number.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case TinyInt, SmallInt, Int, BigInt, Float, Double, Decimal:
		return true
	}
	return false
}

// IsInteger reports whether t is an exact integer type.
func (t Type) IsInteger() bool {
	switch t.Kind {
	case TinyInt, SmallInt, Int, BigInt:
		return true
	}
	return false
}

// IsString reports whether t is CHAR or VARCHAR.
func (t Type) IsString() bool { return t.Kind == Char || t.Kind == Varchar }

// IsTimestamp reports whether t is TIMESTAMP or TIMESTAMP_LTZ.
func (t Type) IsTimestamp() bool { return t.Kind == Timestamp || t.Kind == TimestampLTZ }

// Equal reports whether two types are the same, including nullability and time attribute.
func (t Type) Equal(u Type) bool { return t.String() == u.String() && t.TimeAttr == u.TimeAttr }

// SameKind reports whether two types are the same ignoring nullability and time attribute.
func (t Type) SameKind(u Type) bool {
	return t.Nullable().WithoutTimeAttr().String() == u.Nullable().WithoutTimeAttr().String()
}

// String formats t the way Flink's DESCRIBE does: STRING, VARCHAR(10), TIMESTAMP(3) NOT NULL,
// MAP<STRING, INT>, ROW<`a` INT, `b` STRING>.
func (t Type) String() string {
	var b strings.Builder
	t.format(&b)
	if t.NotNull {
		b.WriteString(" NOT NULL")
	}
	return b.String()
}

func (t Type) format(b *strings.Builder) {
	switch t.Kind {
	case Varchar:
		if t.Length == MaxLength || t.Length == 0 {
			b.WriteString("STRING")
		} else {
			fmt.Fprintf(b, "VARCHAR(%d)", t.Length)
		}
	case Char:
		fmt.Fprintf(b, "CHAR(%d)", max(t.Length, 1))
	case Decimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.Prec, t.Scale)
	case Timestamp, TimestampLTZ, Time:
		fmt.Fprintf(b, "%s(%d)", t.Kind, t.Prec)
	case Array:
		b.WriteString("ARRAY<")
		b.WriteString(t.Elem.String())
		b.WriteString(">")
	case Map:
		if t.Multiset {
			b.WriteString("MULTISET<")
			b.WriteString(t.Key.String())
			b.WriteString(">")
			return
		}
		b.WriteString("MAP<")
		b.WriteString(t.Key.String())
		b.WriteString(", ")
		b.WriteString(t.Elem.String())
		b.WriteString(">")
	case Struct:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "`%s` %s", f.Name, f.Type)
		}
		b.WriteString(">")
	default:
		b.WriteString(t.Kind.String())
	}
}

// Column is a named, typed column of a schema.
type Column struct {
	Name string
	Type Type
}

// Schema is the ordered list of columns a table or operator produces.
type Schema []Column

// Index returns the position of the column named name (case-insensitive, as Flink
// resolves unquoted identifiers in pipesql), or -1.
func (s Schema) Index(name string) int {
	for i, c := range s {
		if c.Name == name {
			return i
		}
	}
	for i, c := range s {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// Names returns the column names in order.
func (s Schema) Names() []string {
	names := make([]string, len(s))
	for i, c := range s {
		names[i] = c.Name
	}
	return names
}
