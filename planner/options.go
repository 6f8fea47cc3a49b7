package planner

import (
	"sort"
	"strings"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// Option validation
//
// Flink checks a table's options when a query first uses the table; pipesql checks them
// at CREATE TABLE, so that an error points at the line of the bad key. Every key must be
// 'connector', an option the connector declares, an option of one of the table's formats
// under that format's prefix ('json.ignore-parse-errors', 'value.json.ignore-parse-errors'),
// a generic table option, or start with one of the connector's pass-through prefixes
// ('properties.'). Options that only matter when the table is read (or written) are
// required only then, when the connector can do both.

// optionIdleTimeout is the generic source option for idle splits (FLIP-296).
const optionIdleTimeout = "scan.watermark.idle-timeout"

// genericOptions apply to every readable table whatever its connector.
var genericOptions = []connectors.OptionSpec{
	{Key: optionIdleTimeout, Type: connectors.DurationOption, Source: true,
		Description: "how long a split may send nothing before it stops holding the watermark back"},
}

// tableFormat is one format a table uses: 'format' = 'json' gives prefix "json.".
type tableFormat struct {
	key     string // the option naming it: format, key.format, value.format
	prefix  string // the prefix of its options: "json.", "key.json.", "value.json."
	factory *connectors.FormatFactory
}

// validatedOptions is what validateOptions learned about a table's WITH clause.
type validatedOptions struct {
	options   map[string]string
	connector *connectors.Factory
	formats   []tableFormat
	byKey     map[string]parser.Option
}

// validateOptions checks the WITH clause of ct against the registered connector and
// formats. physical are the table's physical columns (for options naming a column, such
// as datagen's fields.#.kind).
func validateOptions(ct *parser.CreateTable, name string, physical types.Schema) (*validatedOptions, error) {
	v := &validatedOptions{options: map[string]string{}, byKey: map[string]parser.Option{}}
	for _, o := range ct.Options {
		if _, dup := v.byKey[o.Key]; dup {
			return nil, errAt(o.At, ErrInvalidOption, "option '%s' is set twice", o.Key)
		}
		v.byKey[o.Key] = o
		v.options[o.Key] = o.Value
	}
	conn, ok := v.byKey["connector"]
	if !ok {
		return nil, errAt(ct.At, ErrMissingOption, "table '%s' has no 'connector' option (connectors: %s)", name, strings.Join(connectors.Names(), ", "))
	}
	f, ok := connectors.Lookup(strings.TrimSpace(conn.Value))
	if !ok {
		if s := didYouMean(conn.Value, connectors.Names()); s != "" {
			return nil, errAt(conn.At, ErrUnknownConnector, "unknown connector '%s'%s", conn.Value, s)
		}
		return nil, errAt(conn.At, ErrUnknownConnector, "unknown connector '%s' (connectors: %s)", conn.Value, strings.Join(connectors.Names(), ", "))
	}
	v.connector = f

	// Formats first: their names decide which prefixed keys are valid.
	for _, spec := range f.Options {
		if spec.Key != "format" && !strings.HasSuffix(spec.Key, ".format") {
			continue
		}
		o, set := v.byKey[spec.Key]
		value := strings.TrimSpace(o.Value)
		if !set {
			if spec.Default == "" {
				continue
			}
			value = spec.Default
			o = conn
		}
		ff, err := lookupFormat(o, value, f)
		if err != nil {
			return nil, err
		}
		v.formats = append(v.formats, tableFormat{
			key:     spec.Key,
			prefix:  strings.TrimSuffix(spec.Key, "format") + ff.Name + ".",
			factory: ff,
		})
	}

	for _, o := range ct.Options {
		if err := v.checkKey(o, physical); err != nil {
			return nil, err
		}
	}
	if err := v.checkRequiredAtCreate(ct.At, name); err != nil {
		return nil, err
	}
	return v, nil
}

// changelogFormats are Flink's CDC formats: each row is an insert, update or delete. A
// connector reads those it lists (kafka and filesystem: debezium-json, canal-json,
// maxwell-json); the others are not supported yet.
var changelogFormats = []string{"debezium-json", "debezium-avro-confluent", "canal-json", "maxwell-json", "ogg-json"}

func lookupFormat(o parser.Option, value string, f *connectors.Factory) (*connectors.FormatFactory, error) {
	if strings.EqualFold(value, "orc") && !containsFold(f.Formats, value) {
		return nil, errAt(o.At, ErrUnsupported, "unsupported: format 'orc': there is no well-kept Go library to read and write ORC files (filesystem tables can use parquet)")
	}
	if containsFold(changelogFormats, value) && !containsFold(f.Formats, value) {
		return nil, errAt(o.At, ErrUnsupported, "unsupported: format '%s': changelog (CDC) formats are not supported yet (connector '%s' reads %s)", value, f.Name, strings.Join(f.Formats, ", "))
	}
	if f.Formats != nil && !containsFold(f.Formats, value) {
		return nil, errAt(o.At, ErrUnknownFormat, "connector '%s' does not support format '%s'%s (formats: %s)", f.Name, value, didYouMean(value, f.Formats), strings.Join(f.Formats, ", "))
	}
	ff, ok := connectors.LookupFormat(value)
	if !ok {
		if s := didYouMean(value, connectors.FormatNames()); s != "" {
			return nil, errAt(o.At, ErrUnknownFormat, "unknown format '%s'%s", value, s)
		}
		return nil, errAt(o.At, ErrUnknownFormat, "unknown format '%s' (formats: %s)", value, strings.Join(connectors.FormatNames(), ", "))
	}
	return ff, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// checkKey checks one option's key and value.
func (v *validatedOptions) checkKey(o parser.Option, physical types.Schema) error {
	f := v.connector
	if o.Key == "connector" {
		return nil
	}
	if spec, ok := connectors.FindSpec(f.Options, o.Key); ok {
		if strings.Contains(spec.Key, "#") {
			if err := checkColumnKey(o, spec.Key, physical); err != nil {
				return err
			}
		}
		return checkValue(o, spec, "connector '"+f.Name+"'")
	}
	if spec, ok := connectors.FindSpec(genericOptions, o.Key); ok {
		return checkValue(o, spec, "table")
	}
	for _, p := range f.Prefixes {
		if strings.HasPrefix(o.Key, p) {
			return nil
		}
	}
	for _, tf := range v.formats {
		if rest, ok := strings.CutPrefix(o.Key, tf.prefix); ok {
			spec, found := connectors.FindSpec(tf.factory.Options, rest)
			if !found {
				return errAt(o.At, ErrUnknownOption, "unknown option '%s' for format '%s'%s", o.Key, tf.factory.Name, didYouMean(o.Key, v.validKeys(physical)))
			}
			return checkValue(o, spec, "format '"+tf.factory.Name+"'")
		}
	}
	// An option of a format the table does not use ('csv.field-delimiter' on a json table)
	// is a mistake worth naming precisely.
	for _, prefix := range []string{"", "key.", "value."} {
		rest, ok := strings.CutPrefix(o.Key, prefix)
		if !ok {
			continue
		}
		fname, _, ok := strings.Cut(rest, ".")
		if _, isFormat := connectors.LookupFormat(fname); !ok || !isFormat {
			continue
		}
		for _, tf := range v.formats {
			if tf.key == prefix+"format" {
				return errAt(o.At, ErrUnknownOption, "option '%s' is for format '%s', but the table's '%s' is '%s'", o.Key, fname, tf.key, tf.factory.Name)
			}
		}
		return errAt(o.At, ErrUnknownOption, "option '%s' is for format '%s', but the table sets no '%sformat'", o.Key, fname, prefix)
	}
	return errAt(o.At, ErrUnknownOption, "unknown option '%s' for connector '%s'%s", o.Key, f.Name, didYouMean(o.Key, v.validKeys(physical)))
}

// checkColumnKey checks the column named by the '#' of a key like fields.#.kind.
func checkColumnKey(o parser.Option, pattern string, physical types.Schema) error {
	prefix, suffix, _ := strings.Cut(pattern, "#")
	col := strings.TrimSuffix(strings.TrimPrefix(o.Key, prefix), suffix)
	if physical.Index(col) >= 0 {
		return nil
	}
	var keys []string
	for _, c := range physical {
		keys = append(keys, prefix+c.Name+suffix)
	}
	return errAt(o.At, ErrUnknownColumn, "option '%s' names no physical column '%s'%s", o.Key, col, didYouMean(o.Key, keys))
}

func checkValue(o parser.Option, spec connectors.OptionSpec, owner string) error {
	if err := checkOptionValue(spec.Type, spec.Enum, o.Value); err != nil {
		return errAt(o.At, ErrInvalidOption, "invalid value '%s' for option '%s' (%s): %v", o.Value, o.Key, owner, err)
	}
	return nil
}

// validKeys lists every key the table could have, for suggestions: the connector's keys
// (with '#' replaced by each physical column), the generic ones, and each format's keys
// under its prefix.
func (v *validatedOptions) validKeys(physical types.Schema) []string {
	keys := []string{"connector"}
	for _, s := range v.connector.Options {
		if strings.Contains(s.Key, "#") {
			for _, c := range physical {
				keys = append(keys, strings.Replace(s.Key, "#", c.Name, 1))
			}
			continue
		}
		keys = append(keys, s.Key)
	}
	for _, s := range genericOptions {
		keys = append(keys, s.Key)
	}
	for _, tf := range v.formats {
		for _, s := range tf.factory.Options {
			keys = append(keys, tf.prefix+s.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

// requiredNow reports whether a required option must be present whichever way the table
// is used: it applies both ways, or the connector can only go the way it applies.
func requiredNow(spec connectors.OptionSpec, f *connectors.Factory) bool {
	switch {
	case spec.Source == spec.Sink:
		return true
	case spec.Source:
		return f.NewSink == nil
	default:
		return f.NewSource == nil
	}
}

func (v *validatedOptions) checkRequiredAtCreate(pos parser.Pos, table string) error {
	for _, spec := range v.connector.Options {
		if spec.Required && !strings.Contains(spec.Key, "#") && requiredNow(spec, v.connector) {
			if _, set := v.options[spec.Key]; !set {
				return errAt(pos, ErrMissingOption, "table '%s' misses required option '%s' for connector '%s'", table, spec.Key, v.connector.Name)
			}
		}
	}
	for _, tf := range v.formats {
		for _, spec := range tf.factory.Options {
			if spec.Required && !strings.Contains(spec.Key, "#") {
				if _, set := v.options[tf.prefix+spec.Key]; !set {
					return errAt(pos, ErrMissingOption, "table '%s' misses required option '%s' for format '%s'", table, tf.prefix+spec.Key, tf.factory.Name)
				}
			}
		}
	}
	return nil
}

// checkRequired checks, when a table is read (source) or written, the required options
// that apply only that way.
func checkRequired(pos parser.Pos, t *Table, source bool) error {
	for _, spec := range t.Connector.Options {
		if !spec.Required || strings.Contains(spec.Key, "#") || requiredNow(spec, t.Connector) {
			continue
		}
		if (source && spec.Source) || (!source && spec.Sink) {
			if _, set := t.Options[spec.Key]; !set {
				use := "written"
				if source {
					use = "read"
				}
				return errAt(pos, ErrMissingOption, "table '%s' cannot be %s: it misses required option '%s' for connector '%s'", t.Name, use, spec.Key, t.Connector.Name)
			}
		}
	}
	return nil
}
