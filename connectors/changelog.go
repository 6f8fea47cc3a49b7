package connectors

import "github.com/pipesql/pipesql/types"

// Changelog sources
//
// A source emits a changelog: every row of a SourceBatch carries a RowKind (Kinds nil:
// every row is an insert). What kinds a table's rows can have is its ChangelogMode, as
// Flink's ChangelogMode: an append-only table (json on kafka), an upsert table
// (upsert-kafka: +I/+U by key, a tombstone is -D, no -U), or a full changelog
// (debezium-json and the other CDC formats: +I, -U, +U, -D). The planner reads the mode
// from the connector (Factory.Changelog) or, for a connector that leaves it to its
// format, from the value format (FormatFactory.Changelog), and plans what the mode needs:
// an upsert table gets a ChangelogNormalize keyed by its PRIMARY KEY, which turns the
// upserts into a retracting changelog.
//
// A format of a changelog (debezium-json) decodes one record into zero or more rows,
// each with a kind (an update is a -U and a +U): its decoders implement ChangeDecoder,
// and a source reads each record through it when the decoder has it.

// ChangelogMode says what kinds of rows a source emits.
type ChangelogMode uint8

const (
	// InsertOnlyMode: +I only (an append stream).
	InsertOnlyMode ChangelogMode = iota
	// UpsertMode: +I/+U of a key's latest row and -D of a key (the other columns may be
	// NULL), never -U. Needs a PRIMARY KEY; the planner adds ChangelogNormalize.
	UpsertMode
	// AllChangesMode: +I, -U, +U, -D, each -U and -D carrying the whole old row.
	AllChangesMode
)

func (m ChangelogMode) String() string {
	return [...]string{"insert-only", "upsert", "all changes"}[m]
}

// TableChangelog returns the changelog mode of reading table t of connector f whose
// value format is format (nil when it has none): the connector's Changelog when it has
// one, else the format's.
func TableChangelog(f *Factory, format *FormatFactory, t TableInfo) ChangelogMode {
	if f != nil && f.Changelog != nil {
		return f.Changelog(t)
	}
	if format != nil {
		return format.Changelog
	}
	return InsertOnlyMode
}

// ChangeDecoder is implemented by decoders of changelog formats (debezium-json,
// canal-json, maxwell-json). One record gives zero or more rows (a debezium update is a
// -U of its before image and a +U of its after image; a canal record holds several).
type ChangeDecoder interface {
	Decoder
	// DecodeChanges appends the rows of data (each len(cols) wide, cols as given to
	// NewDecoder) to rows and their kinds to kinds. A record that is only a marker (a
	// tombstone after a debezium delete) appends nothing. Errors are as Decode's.
	DecodeChanges(data []byte, rows []types.Row, kinds []RowKind) ([]types.Row, []RowKind, error)
}

// ChangeEncoder is implemented by encoders of changelog formats (debezium-json,
// canal-json, maxwell-json), which write a row's kind into its record; sinks that take
// an updating changelog in such a format write each row through it. Encode writes an
// insert.
type ChangeEncoder interface {
	Encoder
	// EncodeChange appends the record of row, a change of kind, to dst.
	EncodeChange(dst []byte, kind RowKind, row types.Row) ([]byte, error)
}

// MetadataDecoder is implemented by decoders of formats that offer metadata columns
// (FormatFactory.Metadata: debezium-json's source.timestamp): each row DecodeChanges
// appends gets the values of the keys the decoder was told to fill.
type MetadataDecoder interface {
	// SetMetadata tells the decoder which metadata keys (of FormatFactory.Metadata,
	// without the connector's prefix) to fill, in order, and with which types; the values
	// go after the cols of every decoded row, so rows are len(cols)+len(keys) wide.
	SetMetadata(keys []string, ts []types.Type) error
}
