package connectors

import (
	"errors"
	"fmt"
	"sort"

	"github.com/pipesql/pipesql/types"
)

// ErrSkipped is returned (wrapped) by a Decoder when a record is bad but the format is set
// to ignore parse errors (json.ignore-parse-errors): the caller skips and counts it.
var ErrSkipped = errors.New("record skipped")

// FormatFactory describes one format ('format' = 'json'). Its options are written in a
// table's WITH clause prefixed by the format name ('json.ignore-parse-errors'), or by
// 'key.'/'value.' and the format name for key.format/value.format; the factory sees them
// with the prefix removed ("ignore-parse-errors").
type FormatFactory struct {
	Name    string
	Options []OptionSpec // keys without the format prefix
	// NewDecoder returns a decoder that fills exactly cols (projection pushed down).
	// Columns of the NULL type are skipped (left NULL, never read): positional formats
	// (csv) need the table's physical columns in order with the unwanted ones typed
	// NULL. Sources should build decoders with NewProjectedDecoder, which does that.
	NewDecoder func(cols []ProducedColumn, opts map[string]string) (Decoder, error)
	// NewEncoder returns an encoder of rows of schema.
	NewEncoder func(schema types.Schema, opts map[string]string) (Encoder, error)
	// Check, when set, checks at CREATE TABLE what NewDecoder and NewEncoder would find
	// only when the job starts: that the format can hold the table's physical columns
	// (protobuf: its message exists and has fields of their types).
	Check func(schema types.Schema, opts map[string]string) error
	// Bulk is set for formats that encode whole files (parquet; see BulkFormat), whose
	// NewDecoder and NewEncoder are nil.
	Bulk *BulkFormat
	// Changelog is what the format's records say (debezium-json: AllChangesMode); its
	// decoders implement ChangeDecoder when it is not InsertOnlyMode.
	Changelog ChangelogMode
	// Metadata are the metadata keys the format's records offer (debezium-json's
	// source.timestamp), without a connector's prefix (Kafka offers them as
	// 'value.source.timestamp'); its decoders implement MetadataDecoder when there are some.
	Metadata []MetadataSpec
}

// Decoder turns one serialized record into a row. Implementations are not safe for
// concurrent use; make one per goroutine.
type Decoder interface {
	// Decode fills dst (len(dst) == len(cols)) from data. A bad record gives an error
	// describing what is wrong (callers add where it was), wrapping ErrSkipped when the
	// format is configured to ignore it.
	Decode(data []byte, dst types.Row) error
}

// Encoder turns a row into one serialized record, appending to dst.
type Encoder interface {
	Encode(dst []byte, row types.Row) ([]byte, error)
}

var formats = map[string]*FormatFactory{}

// RegisterFormat makes a format available by name. It panics on a duplicate name.
func RegisterFormat(f *FormatFactory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := formats[f.Name]; dup {
		panic(fmt.Sprintf("connectors: format %s registered twice", f.Name))
	}
	formats[f.Name] = f
}

// LookupFormat returns the format registered under name.
func LookupFormat(name string) (*FormatFactory, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := formats[name]
	return f, ok
}

// FormatNames returns the registered format names, sorted.
func FormatNames() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
