package connectors

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/pipesql/pipesql/types"
)

// OptionType is the type of a connector option's value.
type OptionType int

const (
	StringOption   OptionType = iota
	IntOption                 // a decimal integer
	BoolOption                // true or false
	DurationOption            // '5 min', '300000' (milliseconds), '30s', '1 h'
	EnumOption                // one of OptionSpec.Enum (case-insensitive)
	ListOption                // values separated by ';'
)

func (t OptionType) String() string {
	return [...]string{"string", "int", "bool", "duration", "enum", "list"}[t]
}

// OptionSpec declares one option of a connector or format. Keys may contain '#'
// standing for a column name, as in datagen's fields.#.kind.
type OptionSpec struct {
	Key         string
	Type        OptionType
	Default     string // "" when none
	Required    bool
	Enum        []string
	Description string
	Source      bool // applies when the table is read
	Sink        bool // applies when the table is written
}

// MetadataSpec declares a metadata column a connector can read (and maybe write).
type MetadataSpec struct {
	Key      string
	Type     types.Type
	Writable bool
}

// Factory describes one connector: its 'connector' value, options, metadata and constructors.
// Factories are registered by the packages that implement them and looked up by name.
type Factory struct {
	Name     string
	Options  []OptionSpec
	Prefixes []string // option key prefixes passed through unchecked, like "properties."
	Metadata []MetadataSpec
	// Formats says which 'format' values the connector accepts; nil when it has no format option.
	Formats []string
	// Validate checks options together (after each was checked alone); nil when there is nothing to check.
	Validate func(t TableInfo) error
	// ValidateWrite checks a table written by a job against the job's settings (SET),
	// when the planner plans the INSERT; nil when there is nothing to check.
	ValidateWrite func(t TableInfo, settings map[string]string) error
	// Partitioned says the connector writes and reads PARTITIONED BY tables (filesystem's
	// k=v/ directories); the planner refuses PARTITIONED BY for the others.
	Partitioned bool
	// SplitNoun is what the connector's splits are, in the plural, for messages such as
	// "offsets of 3 partitions"; "" says "splits".
	SplitNoun string
	// Changelog returns the changelog mode of reading the table (see changelog.go); nil
	// when the mode is the value format's (FormatFactory.Changelog), insert-only without
	// a format.
	Changelog func(t TableInfo) ChangelogMode
	// FormatMetadata is set when the connector offers the metadata of its value format
	// (FormatFactory.Metadata), each key prefixed by FormatMetadataPrefix: Kafka's
	// 'value.source.timestamp' is debezium-json's 'source.timestamp'; filesystem offers
	// the keys as the format names them, as Flink's FileSystemTableSource does.
	FormatMetadata       bool
	FormatMetadataPrefix string

	NewSource func(ctx context.Context, cfg SourceConfig) (Source, error) // nil when not readable
	NewSink   func(ctx context.Context, cfg SinkConfig) (Sink, error)     // nil when not writable
}

// TableInfo is what a connector is told about the table it serves.
type TableInfo struct {
	Name       string            // the table name as declared
	Options    map[string]string // every WITH option, keys as written
	Schema     types.Schema      // all physical columns of the table in declaration order
	PrimaryKey []string
	// PartitionKeys are the PARTITIONED BY columns (physical columns, as declared); nil when none.
	PartitionKeys []string
}

// SourceConfig is the input of Factory.NewSource.
type SourceConfig struct {
	TableInfo
	// Produce is the schema of the rows the source must emit, in order: the physical
	// columns the plan needs (projection pushed down), then metadata columns.
	Produce []ProducedColumn
	// Settings are the job's SET options (table.*, execution.*, pipeline.* ...).
	Settings map[string]string
	// Restored is the source's state from a checkpoint, or nil to start from the startup mode.
	Restored []byte
	// Log receives warnings the source wants the user to see; never nil.
	Log Logger
	// Clock is the runtime's clock; nil means the wall clock (see ClockOr).
	Clock Clock
}

// ProducedColumn is one column a source emits: a physical column (MetadataKey "") or a metadata column.
type ProducedColumn struct {
	Name        string
	Type        types.Type
	MetadataKey string
	// Declared is, for a column a decoder is given with the NULL type (not wanted, see
	// NewProjectedDecoder), the column's declared type, for formats that must know how a
	// value is encoded to skip it (avro); the zero Type when not known.
	Declared types.Type
}

// SinkConfig is the input of Factory.NewSink.
type SinkConfig struct {
	TableInfo
	// Input is the schema of the rows the sink receives (the table's writable columns, in order).
	Input types.Schema
	// Updating is true when the input is a changelog with updates and deletes.
	Updating bool
	Settings map[string]string
	// Restored is the state a CommittingSink returned from PrepareCommit for the
	// checkpoint the job restarts from, nil on a fresh start. The sink commits what that
	// state says was staged and discards what it wrote after it.
	Restored []byte
	Log      Logger
	// Clock is the runtime's clock; nil means the wall clock (see ClockOr).
	Clock Clock
}

// Logger is how connectors report what the user should know. Implementations must be safe
// for concurrent use.
type Logger interface {
	Warn(msg string, args ...any)
	Info(msg string, args ...any)
}

// RowKind is the change a row carries, as Flink's RowKind: +I, -U, +U, -D.
type RowKind uint8

const (
	Insert RowKind = iota
	UpdateBefore
	UpdateAfter
	Delete
)

func (k RowKind) String() string { return [...]string{"+I", "-U", "+U", "-D"}[k] }

// SourceBatch is rows read from one split (a Kafka partition, a file) in order.
type SourceBatch struct {
	Split string
	Rows  []types.Row
	// Kinds is the change kind of each row, nil when every row is an insert (the only
	// kind of an insert-only table); see ChangelogMode.
	Kinds []RowKind
}

// Source reads one table. All methods are called from one goroutine, so Snapshot sees
// exactly the records returned by Poll before it: that is what makes a checkpoint a
// consistent cut.
type Source interface {
	// Poll returns the batches read since the last call, waiting at most about maxWait
	// when nothing is ready (returning nothing is fine). It returns io.EOF after the last
	// batch of a bounded source.
	Poll(ctx context.Context, maxWait time.Duration) ([]SourceBatch, error)
	// Splits returns the splits currently assigned; a split with no data holds the
	// watermark back until it is idle.
	Splits() []string
	// Snapshot returns the position after the last record returned by Poll.
	Snapshot() ([]byte, error)
	// CheckpointComplete tells the source that the checkpoint holding its last snapshot
	// with this id completed (Kafka commits offsets to its group here). It comes before
	// the Snapshot of any later checkpoint, so the source's last Snapshot is checkpoint
	// id's (postgres-cdc confirms that position to its slot).
	CheckpointComplete(ctx context.Context, id uint64) error
	Close() error
}

// ChangeBatch is rows with their change kinds for a sink.
type ChangeBatch struct {
	Kinds []RowKind
	Rows  []types.Row
}

// Sink writes one table.
type Sink interface {
	Write(ctx context.Context, batch ChangeBatch) error
	// Flush makes everything written durable; called at checkpoints and at the end.
	Flush(ctx context.Context) error
	Close() error
}

// CommittingSink is implemented by sinks whose output becomes visible only when the
// checkpoint covering it completes (a two-phase commit), which makes a job's output
// exactly-once: rows written after the last completed checkpoint, and written again
// after a restart, are never seen twice. When the job checkpoints, the runtime calls
// PrepareCommit at each barrier instead of Flush, and never calls Flush; without
// checkpoints the sink is used as a plain Sink. All methods are called from the sink's
// goroutine.
type CommittingSink interface {
	Sink
	// PrepareCommit makes everything written so far durable but not visible, staged as
	// belonging to checkpoint id, and returns the sink's state: what is staged and not
	// yet committed, and whatever the sink needs to tell its own leftovers apart. The
	// state is stored with the checkpoint and given back in SinkConfig.Restored.
	PrepareCommit(ctx context.Context, id uint64) ([]byte, error)
	// CheckpointComplete makes visible what was staged for checkpoints up to id. A
	// checkpoint may fail, so a later id also commits what earlier ones staged.
	CheckpointComplete(ctx context.Context, id uint64) error
}

// Status is an optional interface of sources (and sinks) that can be degraded while
// they keep working: Kafka discovery failing, commits failing.
type Status interface {
	// Degraded returns "" when healthy, else the reason.
	Degraded() string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Factory{}
)

// Register makes a connector available by its name. It panics on a duplicate name,
// as that is a programming error.
func Register(f *Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[f.Name]; dup {
		panic(fmt.Sprintf("connectors: %s registered twice", f.Name))
	}
	registry[f.Name] = f
}

// Lookup returns the connector registered under name.
func Lookup(name string) (*Factory, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// Names returns the registered connector names, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
