package formats

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/valyala/fastjson"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// CDC formats: debezium-json, canal-json and maxwell-json
//
// Each record of a change-data-capture stream describes a change of one database row
// (canal: of several): an insert, an update with the row before and after, a delete.
// The decoders turn a record into rows with their kinds (connectors.ChangeDecoder), as
// Flink's formats of these names do: an insert is +I of the new row, an update -U of the
// old row and +U of the new one, a delete -D of the old row. The row images are decoded
// as the json format decodes an object, with its options (timestamp-format.standard,
// ignore-parse-errors). Their metadata (the source database and table, the time of the
// change) is offered as FormatFactory.Metadata; Kafka reads it as 'value.<key>'.

// Option keys, after the format's prefix ('debezium-json.schema-include').
const (
	CDCIgnoreParseErrors  = "ignore-parse-errors"
	CDCTimestampStandard  = "timestamp-format.standard"
	DebeziumSchemaInclude = "schema-include"
	CDCDatabaseInclude    = "database.include"
	CDCTableInclude       = "table.include"
)

func cdcOptions(extra ...connectors.OptionSpec) []connectors.OptionSpec {
	return append([]connectors.OptionSpec{
		{Key: CDCIgnoreParseErrors, Type: connectors.BoolOption, Default: "false", Source: true,
			Description: "skip records that cannot be parsed instead of failing"},
		{Key: CDCTimestampStandard, Type: connectors.EnumOption, Default: "SQL", Enum: []string{"SQL", "ISO-8601"}, Source: true, Sink: true,
			Description: "SQL reads and writes 'yyyy-MM-dd HH:mm:ss.SSS', ISO-8601 'yyyy-MM-ddTHH:mm:ss.SSS'"},
		{Key: JSONMapNullKeyMode, Type: connectors.EnumOption, Default: "FAIL", Enum: []string{"FAIL", "DROP", "LITERAL"},
			Sink: true, Description: "what to do with a NULL map key when writing"},
		{Key: JSONMapNullKeyLiteral, Type: connectors.StringOption, Default: "null", Sink: true,
			Description: "the key written for a NULL map key when map-null-key.mode is LITERAL"},
		{Key: JSONEncodeDecimalPlain, Type: connectors.BoolOption, Default: "false", Sink: true,
			Description: "write decimals without scientific notation"},
	}, extra...)
}

var ltz3 = types.TimestampLTZType(3)

// cdcFormat is the factory of a CDC format: its decoder reads kind's records into rows
// of every change kind.
func cdcFormat(name string, kind cdcKind, options []connectors.OptionSpec, meta []connectors.MetadataSpec) *connectors.FormatFactory {
	return &connectors.FormatFactory{
		Name:    name,
		Options: options,
		NewDecoder: func(cols []connectors.ProducedColumn, opts map[string]string) (connectors.Decoder, error) {
			return newCDCDecoder(kind, cols, opts)
		},
		NewEncoder: func(schema types.Schema, opts map[string]string) (connectors.Encoder, error) {
			return newCDCEncoder(kind, schema, opts) // cdcenc.go
		},
		Changelog: connectors.AllChangesMode,
		Metadata:  meta,
	}
}

// DebeziumJSONFormat is 'format' = 'debezium-json'.
var DebeziumJSONFormat = cdcFormat("debezium-json", debezium, debeziumOptions, debeziumMetadata)

var debeziumOptions = cdcOptions(connectors.OptionSpec{Key: DebeziumSchemaInclude, Type: connectors.BoolOption, Default: "false", Source: true,
	Description: "records carry Debezium's schema: the change is under 'payload'"})

var debeziumMetadata = []connectors.MetadataSpec{
	{Key: "schema", Type: types.TypeString},
	{Key: "ingestion-timestamp", Type: ltz3},
	{Key: "source.timestamp", Type: ltz3},
	{Key: "source.database", Type: types.TypeString},
	{Key: "source.schema", Type: types.TypeString},
	{Key: "source.table", Type: types.TypeString},
	{Key: "source.properties", Type: types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &types.TypeString}},
}

// CanalJSONFormat is 'format' = 'canal-json'.
var CanalJSONFormat = cdcFormat("canal-json", canal, canalOptions, canalMetadata)

var canalOptions = cdcOptions(
	connectors.OptionSpec{Key: CDCDatabaseInclude, Type: connectors.StringOption, Source: true,
		Description: "a regular expression: only records of matching databases are read"},
	connectors.OptionSpec{Key: CDCTableInclude, Type: connectors.StringOption, Source: true,
		Description: "a regular expression: only records of matching tables are read"})

var canalMetadata = []connectors.MetadataSpec{
	{Key: "database", Type: types.TypeString},
	{Key: "table", Type: types.TypeString},
	{Key: "sql-type", Type: types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &types.TypeInt}},
	{Key: "pk-names", Type: types.Type{Kind: types.Array, Elem: &types.TypeString}},
	{Key: "ingestion-timestamp", Type: ltz3},
	{Key: "event-timestamp", Type: ltz3},
}

// MaxwellJSONFormat is 'format' = 'maxwell-json'.
var MaxwellJSONFormat = cdcFormat("maxwell-json", maxwell, cdcOptions(), maxwellMetadata)

var maxwellMetadata = []connectors.MetadataSpec{
	{Key: "database", Type: types.TypeString},
	{Key: "table", Type: types.TypeString},
	{Key: "primary-key-columns", Type: types.Type{Kind: types.Array, Elem: &types.TypeString}},
	{Key: "ingestion-timestamp", Type: ltz3},
}

func init() {
	connectors.RegisterFormat(DebeziumJSONFormat)
	connectors.RegisterFormat(CanalJSONFormat)
	connectors.RegisterFormat(MaxwellJSONFormat)
}

type cdcKind uint8

const (
	debezium cdcKind = iota
	canal
	maxwell
)

// ErrUpdateWithoutBefore is returned (inside a *DecodeError) for a debezium update
// without its old row image.
var ErrUpdateWithoutBefore = errors.New(`the "before" field of an update is null: if you use the Debezium PostgreSQL connector, set the table's REPLICA IDENTITY to FULL`)

// cdcDecoder decodes the records of one CDC format.
type cdcDecoder struct {
	kind          cdcKind
	json          *jsonDecoder // decodes a row image
	width         int
	schemaInclude bool
	dbInclude     *regexp.Regexp
	tableInclude  *regexp.Regexp
	parser        fastjson.Parser
	meta          []cdcMeta
}

type cdcMeta struct {
	key string
	t   types.Type
}

func newCDCDecoder(kind cdcKind, cols []connectors.ProducedColumn, opts map[string]string) (*cdcDecoder, error) {
	o := connectors.NewOptions("", opts, canalOptions)
	jsonOpts := map[string]string{}
	for _, k := range []string{CDCIgnoreParseErrors, CDCTimestampStandard} {
		if v, ok := opts[k]; ok {
			jsonOpts[k] = v
		}
	}
	jd, err := NewJSONDecoder(cols, jsonOpts)
	if err != nil {
		return nil, err
	}
	d := &cdcDecoder{kind: kind, json: jd.(*jsonDecoder), width: len(cols)}
	if kind == debezium {
		do := connectors.NewOptions("", opts, debeziumOptions)
		if d.schemaInclude, err = do.Bool(DebeziumSchemaInclude); err != nil {
			return nil, err
		}
	}
	if kind == canal {
		for _, x := range []struct {
			key string
			re  **regexp.Regexp
		}{{CDCDatabaseInclude, &d.dbInclude}, {CDCTableInclude, &d.tableInclude}} {
			if s := o.String(x.key); s != "" {
				re, err := regexp.Compile("^(?:" + s + ")$")
				if err != nil {
					return nil, &connectors.OptionError{Key: "canal-json." + x.key, Value: s,
						Err: fmt.Errorf("%w: not a regular expression: %v", connectors.ErrInvalidOption, err)}
				}
				*x.re = re
			}
		}
	}
	return d, nil
}

// SetMetadata implements connectors.MetadataDecoder.
func (d *cdcDecoder) SetMetadata(keys []string, ts []types.Type) error {
	var specs []connectors.MetadataSpec
	switch d.kind {
	case debezium:
		specs = debeziumMetadata
	case canal:
		specs = canalMetadata
	default:
		specs = maxwellMetadata
	}
	d.meta = nil
	for i, k := range keys {
		found := false
		for _, s := range specs {
			found = found || s.Key == k
		}
		if !found {
			return fmt.Errorf("%w: unknown metadata key '%s'", connectors.ErrInvalidOption, k)
		}
		if k == "schema" && !d.schemaInclude {
			return fmt.Errorf("%w: metadata 'schema' needs 'debezium-json.schema-include' = 'true'", connectors.ErrInvalidOption)
		}
		d.meta = append(d.meta, cdcMeta{key: k, t: ts[i]})
	}
	return nil
}

func (d *cdcDecoder) fail(field string, data []byte, err error) error {
	return &DecodeError{Field: field, Err: err, Snippet: Snippet(data), Skipped: d.json.cfg.ignoreErrors}
}

// Decode implements connectors.Decoder for callers that want one row: it fails on a
// record that is not exactly one insert.
func (d *cdcDecoder) Decode(data []byte, dst types.Row) error {
	rows, kinds, err := d.DecodeChanges(data, nil, nil)
	if err != nil {
		return err
	}
	if len(rows) != 1 || kinds[0] != connectors.Insert {
		return d.fail("", data, fmt.Errorf("%w: a change record read as one row", connectors.ErrInvalidOption))
	}
	copy(dst, rows[0])
	return nil
}

// DecodeChanges implements connectors.ChangeDecoder.
func (d *cdcDecoder) DecodeChanges(data []byte, rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	if len(trimSpace(data)) == 0 {
		return rows, kinds, nil // a tombstone (after a debezium delete): no change
	}
	v, err := d.parser.ParseBytes(data)
	if err != nil {
		return rows, kinds, d.fail("", data, fmt.Errorf("invalid json: %v", err))
	}
	if v.Type() != fastjson.TypeObject {
		return rows, kinds, d.fail("", data, fmt.Errorf("record is a json %s, not an object", v.Type()))
	}
	switch d.kind {
	case debezium:
		return d.debezium(v, data, rows, kinds)
	case canal:
		return d.canal(v, data, rows, kinds)
	}
	return d.maxwell(v, data, rows, kinds)
}

// image decodes the object at field of rec (a row image) into a new row.
func (d *cdcDecoder) image(rec *fastjson.Value, field string, data []byte) (types.Row, error) {
	obj, err := objectOf(rec.Get(field))
	if err != nil {
		return nil, d.fail(field, data, errors.New("not an object"))
	}
	return d.row(obj, data, field+".")
}

// appendImage appends the row image at field of rec (debezium's before/after, maxwell's
// data) with its kind; on an error rows and kinds come back as they were.
func (d *cdcDecoder) appendImage(rows []types.Row, kinds []connectors.RowKind, rec *fastjson.Value, field string, data []byte, kind connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	row, err := d.image(rec, field, data)
	if err != nil {
		return rows, kinds, err
	}
	return append(rows, row), append(kinds, kind), nil
}

func (d *cdcDecoder) row(obj *fastjson.Object, data []byte, path string) (types.Row, error) {
	row := make(types.Row, d.width+len(d.meta))
	if err := d.json.decodeObject(obj, data, row[:d.width], path); err != nil {
		return nil, err
	}
	return row, nil
}

func isNull(v *fastjson.Value) bool { return v == nil || v.Type() == fastjson.TypeNull }

var (
	errNotObject = errors.New("not an object")
	errNotArray  = errors.New("not an array")
)

// objectOf is v.Object() for a v that may be missing (nil).
func objectOf(v *fastjson.Value) (*fastjson.Object, error) {
	if v == nil {
		return nil, errNotObject
	}
	return v.Object()
}

// arrayOf is v.Array() for a v that may be missing (nil).
func arrayOf(v *fastjson.Value) ([]*fastjson.Value, error) {
	if v == nil {
		return nil, errNotArray
	}
	return v.Array()
}

func (d *cdcDecoder) debezium(v *fastjson.Value, data []byte, rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	rec := v
	if d.schemaInclude {
		rec = v.Get("payload")
		if rec == nil || rec.Type() != fastjson.TypeObject {
			return rows, kinds, d.fail("payload", data, errors.New("missing: with 'debezium-json.schema-include' = 'true' the change is under 'payload'"))
		}
	} else if v.Get("payload") != nil && v.Get("schema") != nil && v.Get("op") == nil {
		return rows, kinds, d.fail("", data, errors.New("the record has 'schema' and 'payload': set 'debezium-json.schema-include' = 'true'"))
	}
	op := string(rec.GetStringBytes("op"))
	if op == "u" && isNull(rec.Get("before")) {
		return rows, kinds, d.fail("before", data, ErrUpdateWithoutBefore)
	}
	n := len(rows)
	rows, kinds, known, err := appendDebeziumChange(rows, kinds, op, func(field string) (types.Row, error) {
		return d.image(rec, field, data)
	})
	if !known {
		return rows, kinds, d.fail("op", data, errUnknownDebeziumOp(op))
	}
	if err != nil {
		return rows, kinds, err
	}
	for _, r := range rows[n:] {
		if err := d.debeziumMeta(v, rec, r[d.width:]); err != nil {
			return rows[:n], kinds[:n], d.fail("source", data, err)
		}
	}
	return rows, kinds, nil
}

// appendDebeziumChange appends the rows of a Debezium change of op with their kinds
// (debezium-json and debezium-avro-confluent): c and r insert the after image, u
// retracts the before image and adds the after image, d deletes the before image;
// image reads the image of field 'before' or 'after'. known is false for another op.
// On an error rows and kinds come back as they were.
func appendDebeziumChange(rows []types.Row, kinds []connectors.RowKind, op string, image func(field string) (types.Row, error)) (_ []types.Row, _ []connectors.RowKind, known bool, err error) {
	var fields []string
	var ks []connectors.RowKind
	switch op {
	case "c", "r":
		fields, ks = debeziumAfter, debeziumInsert
	case "u":
		fields, ks = debeziumBeforeAfter, debeziumUpdate
	case "d":
		fields, ks = debeziumBefore, debeziumDelete
	default:
		return rows, kinds, false, nil
	}
	n := len(rows)
	for i, f := range fields {
		row, err := image(f)
		if err != nil {
			return rows[:n], kinds[:n], true, err
		}
		rows, kinds = append(rows, row), append(kinds, ks[i])
	}
	return rows, kinds, true, nil
}

var (
	debeziumAfter, debeziumBefore, debeziumBeforeAfter = []string{"after"}, []string{"before"}, []string{"before", "after"}
	debeziumInsert, debeziumDelete                     = []connectors.RowKind{connectors.Insert}, []connectors.RowKind{connectors.Delete}
	debeziumUpdate                                     = []connectors.RowKind{connectors.UpdateBefore, connectors.UpdateAfter}
)

func errUnknownDebeziumOp(op string) error {
	return fmt.Errorf("unknown operation %q (want c, r, u or d)", op)
}

func (d *cdcDecoder) debeziumMeta(v, rec *fastjson.Value, dst types.Row) error {
	for i, m := range d.meta {
		var val types.Value
		switch m.key {
		case "schema":
			if s := v.Get("schema"); !isNull(s) {
				val = types.StringValue(s.String())
			}
		case "ingestion-timestamp":
			val = millis(rec.Get("ts_ms"), 1, m.t)
		case "source.timestamp":
			val = millis(rec.Get("source", "ts_ms"), 1, m.t)
		case "source.database":
			val = str(rec.Get("source", "db"))
		case "source.schema":
			val = str(rec.Get("source", "schema"))
		case "source.table":
			val = str(rec.Get("source", "table"))
			if val.IsNull() {
				val = str(rec.Get("source", "collection"))
			}
		case "source.properties":
			val = strMap(rec.Get("source"))
		}
		dst[i] = val
	}
	return nil
}

func str(v *fastjson.Value) types.Value {
	if isNull(v) {
		return types.NullValue
	}
	if v.Type() == fastjson.TypeString {
		return types.StringValue(string(v.GetStringBytes()))
	}
	return types.StringValue(v.String())
}

func strMap(v *fastjson.Value) types.Value {
	obj, err := objectOf(v)
	if err != nil || obj == nil {
		return types.NullValue
	}
	var entries []types.MapEntry
	obj.Visit(func(k []byte, x *fastjson.Value) {
		entries = append(entries, types.MapEntry{Key: types.StringValue(string(k)), Value: str(x)})
	})
	return types.MapValue(entries)
}

// millis reads an epoch time in units of scale milliseconds as a TIMESTAMP_LTZ (or
// TIMESTAMP) value.
func millis(v *fastjson.Value, scale int64, t types.Type) types.Value {
	if isNull(v) || v.Type() != fastjson.TypeNumber {
		return types.NullValue
	}
	us := v.GetInt64() * scale * 1000
	if t.Kind == types.Timestamp {
		return types.TimestampValue(us)
	}
	return types.TimestampLTZValue(us)
}

func (d *cdcDecoder) canal(v *fastjson.Value, data []byte, rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	if v.GetBool("isDdl") {
		return rows, kinds, nil
	}
	db, table := string(v.GetStringBytes("database")), string(v.GetStringBytes("table"))
	if d.dbInclude != nil && !d.dbInclude.MatchString(db) || d.tableInclude != nil && !d.tableInclude.MatchString(table) {
		return rows, kinds, nil
	}
	typ := string(v.GetStringBytes("type"))
	var kind connectors.RowKind
	switch typ {
	case "INSERT":
		kind = connectors.Insert
	case "UPDATE":
		kind = connectors.UpdateAfter
	case "DELETE":
		kind = connectors.Delete
	case "CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "GTID", "XACOMMIT", "XAROLLBACK", "MHEARTBEAT":
		return rows, kinds, nil // DDL and markers carry no row changes
	default:
		return rows, kinds, d.fail("type", data, fmt.Errorf("unknown type %q (want INSERT, UPDATE or DELETE)", typ))
	}
	dataArr, err := arrayOf(v.Get("data"))
	if err != nil {
		if isNull(v.Get("data")) {
			return rows, kinds, nil
		}
		return rows, kinds, d.fail("data", data, errors.New("not an array"))
	}
	var old []*fastjson.Value
	if kind == connectors.UpdateAfter {
		if old, err = arrayOf(v.Get("old")); err != nil || len(old) != len(dataArr) {
			return rows, kinds, d.fail("old", data, fmt.Errorf("an UPDATE needs 'old', an array as long as 'data' (%d)", len(dataArr)))
		}
	}
	n := len(rows)
	for i, item := range dataArr {
		obj, err := objectOf(item)
		if err != nil {
			return rows[:n], kinds[:n], d.fail(fmt.Sprintf("data[%d]", i), data, errors.New("not an object"))
		}
		row, err := d.row(obj, data, fmt.Sprintf("data[%d].", i))
		if err != nil {
			return rows[:n], kinds[:n], err
		}
		if kind == connectors.UpdateAfter {
			before, err := d.beforeImage(obj, old[i], data, fmt.Sprintf("old[%d].", i))
			if err != nil {
				return rows[:n], kinds[:n], err
			}
			rows, kinds = append(rows, before), append(kinds, connectors.UpdateBefore)
		}
		rows, kinds = append(rows, row), append(kinds, kind)
	}
	for _, r := range rows[n:] {
		d.canalMeta(v, r[d.width:])
	}
	return rows, kinds, nil
}

// beforeImage is the row before an update: the fields in old (those that changed)
// over the fields of the new row.
func (d *cdcDecoder) beforeImage(after *fastjson.Object, old *fastjson.Value, data []byte, path string) (types.Row, error) {
	oldObj, err := objectOf(old)
	if err != nil {
		return nil, d.fail(path, data, errors.New("not an object"))
	}
	var merged fastjson.Arena
	m := merged.NewObject()
	after.Visit(func(k []byte, x *fastjson.Value) { m.Set(string(k), x) })
	oldObj.Visit(func(k []byte, x *fastjson.Value) { m.Set(string(k), x) })
	mo, _ := objectOf(m)
	return d.row(mo, data, path)
}

func (d *cdcDecoder) canalMeta(v *fastjson.Value, dst types.Row) {
	for i, m := range d.meta {
		var val types.Value
		switch m.key {
		case "database":
			val = str(v.Get("database"))
		case "table":
			val = str(v.Get("table"))
		case "sql-type":
			if obj, err := objectOf(v.Get("sqlType")); err == nil && obj != nil {
				var entries []types.MapEntry
				obj.Visit(func(k []byte, x *fastjson.Value) {
					e := types.MapEntry{Key: types.StringValue(string(k)), Value: types.NullValue}
					if x.Type() == fastjson.TypeNumber {
						e.Value = types.IntValue(types.Int, x.GetInt64())
					}
					entries = append(entries, e)
				})
				val = types.MapValue(entries)
			}
		case "pk-names":
			val = strArray(v.Get("pkNames"))
		case "ingestion-timestamp":
			val = millis(v.Get("ts"), 1, m.t)
		case "event-timestamp":
			val = millis(v.Get("es"), 1, m.t)
		}
		dst[i] = val
	}
}

func strArray(v *fastjson.Value) types.Value {
	arr, err := arrayOf(v)
	if err != nil || isNull(v) {
		return types.NullValue
	}
	out := make([]types.Value, len(arr))
	for i, x := range arr {
		out[i] = str(x)
	}
	return types.ArrayValue(out)
}

func (d *cdcDecoder) maxwell(v *fastjson.Value, data []byte, rows []types.Row, kinds []connectors.RowKind) ([]types.Row, []connectors.RowKind, error) {
	typ := string(v.GetStringBytes("type"))
	n := len(rows)
	switch typ {
	case "insert", "bootstrap-insert":
		var err error
		if rows, kinds, err = d.appendImage(rows, kinds, v, "data", data, connectors.Insert); err != nil {
			return rows, kinds, err
		}
	case "update":
		obj, err := objectOf(v.Get("data"))
		if err != nil {
			return rows, kinds, d.fail("data", data, errors.New("not an object"))
		}
		after, err := d.row(obj, data, "data.")
		if err != nil {
			return rows, kinds, err
		}
		old := v.Get("old")
		if isNull(old) {
			return rows, kinds, d.fail("old", data, errors.New("an update needs 'old'"))
		}
		before, err := d.beforeImage(obj, old, data, "old.")
		if err != nil {
			return rows, kinds, err
		}
		rows, kinds = append(rows, before, after), append(kinds, connectors.UpdateBefore, connectors.UpdateAfter)
	case "delete":
		var err error
		if rows, kinds, err = d.appendImage(rows, kinds, v, "data", data, connectors.Delete); err != nil {
			return rows, kinds, err
		}
	case "bootstrap-start", "bootstrap-complete", "table-create", "table-alter", "table-drop", "database-create", "database-alter", "database-drop":
		return rows, kinds, nil
	default:
		return rows, kinds, d.fail("type", data, fmt.Errorf("unknown type %q (want insert, update or delete)", typ))
	}
	for _, r := range rows[n:] {
		for i, m := range d.meta {
			var val types.Value
			switch m.key {
			case "database":
				val = str(v.Get("database"))
			case "table":
				val = str(v.Get("table"))
			case "primary-key-columns":
				val = strArray(v.Get("primary_key_columns"))
			case "ingestion-timestamp":
				val = millis(v.Get("ts"), 1000, m.t) // maxwell's ts is in seconds
			}
			r[d.width+i] = val
		}
	}
	return rows, kinds, nil
}
