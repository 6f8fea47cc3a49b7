package planner

import (
	"context"
	"errors"
	"fmt"

	"github.com/pipesql/pipesql/connectors"
	// The real json and csv formats: their option specs are what tables here validate against.
	_ "github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// The planner only reads a connector's declarations (options, metadata, formats, whether
// it can be read or written), never runs it. These factories declare what Flink's kafka,
// upsert-kafka, datagen, print, blackhole and filesystem connectors declare, so that the
// planner's tests neither depend on the connector packages being written in parallel nor
// need cgo for Kafka. Their constructors refuse to run.

var errPlanOnly = errors.New("planner test connector: declarations only")

func planOnlySource(context.Context, connectors.SourceConfig) (connectors.Source, error) {
	return nil, errPlanOnly
}

func planOnlySink(context.Context, connectors.SinkConfig) (connectors.Sink, error) {
	return nil, errPlanOnly
}

func ltz3() types.Type { t := types.TimestampLTZType(3); t.NotNull = true; return t }

func init() {
	str := connectors.StringOption
	both := func(s connectors.OptionSpec) connectors.OptionSpec { s.Source, s.Sink = true, true; return s }
	src := func(s connectors.OptionSpec) connectors.OptionSpec { s.Source = true; return s }
	snk := func(s connectors.OptionSpec) connectors.OptionSpec { s.Sink = true; return s }
	bytesT := types.Type{Kind: types.Bytes, Length: types.MaxLength}
	headers := types.Type{Kind: types.Map, Key: &types.TypeString, Elem: &bytesT, NotNull: true}

	kafkaOptions := []connectors.OptionSpec{
		both(connectors.OptionSpec{Key: "topic", Type: connectors.ListOption}),
		src(connectors.OptionSpec{Key: "topic-pattern", Type: str}),
		both(connectors.OptionSpec{Key: "properties.bootstrap.servers", Type: str, Required: true}),
		src(connectors.OptionSpec{Key: "properties.group.id", Type: str}),
		both(connectors.OptionSpec{Key: "format", Type: str}),
		both(connectors.OptionSpec{Key: "key.format", Type: str}),
		both(connectors.OptionSpec{Key: "key.fields", Type: connectors.ListOption}),
		both(connectors.OptionSpec{Key: "key.fields-prefix", Type: str}),
		both(connectors.OptionSpec{Key: "value.format", Type: str}),
		both(connectors.OptionSpec{Key: "value.fields-include", Type: connectors.EnumOption, Enum: []string{"ALL", "EXCEPT_KEY"}, Default: "ALL"}),
		src(connectors.OptionSpec{Key: "scan.startup.mode", Type: connectors.EnumOption, Default: "group-offsets",
			Enum: []string{"earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets"}}),
		src(connectors.OptionSpec{Key: "scan.startup.specific-offsets", Type: str}),
		src(connectors.OptionSpec{Key: "scan.startup.timestamp-millis", Type: connectors.IntOption}),
		src(connectors.OptionSpec{Key: "scan.topic-partition-discovery.interval", Type: connectors.DurationOption, Default: "5 min"}),
		snk(connectors.OptionSpec{Key: "sink.partitioner", Type: str, Default: "default"}),
		snk(connectors.OptionSpec{Key: "sink.delivery-guarantee", Type: connectors.EnumOption, Enum: []string{"at-least-once", "exactly-once", "none"}, Default: "at-least-once"}),
		snk(connectors.OptionSpec{Key: "sink.transactional-id-prefix", Type: str}),
		snk(connectors.OptionSpec{Key: "sink.parallelism", Type: connectors.IntOption}),
	}
	kafkaMetadata := []connectors.MetadataSpec{
		{Key: "topic", Type: types.TypeString.WithNotNull(true), Writable: true},
		{Key: "partition", Type: types.TypeInt.WithNotNull(true)},
		{Key: "headers", Type: headers, Writable: true},
		{Key: "leader-epoch", Type: types.TypeInt},
		{Key: "offset", Type: types.TypeBigInt.WithNotNull(true)},
		{Key: "timestamp", Type: ltz3(), Writable: true},
		{Key: "timestamp-type", Type: types.TypeString.WithNotNull(true)},
	}
	connectors.Register(&connectors.Factory{
		Name: "kafka", Options: kafkaOptions, Prefixes: []string{"properties."}, Metadata: kafkaMetadata,
		Formats:              []string{"json", "csv", "debezium-json", "canal-json", "maxwell-json"},
		FormatMetadata:       true,
		FormatMetadataPrefix: "value.",
		Validate: func(t connectors.TableInfo) error {
			_, topic := t.Options["topic"]
			_, pattern := t.Options["topic-pattern"]
			_, format := t.Options["format"]
			_, value := t.Options["value.format"]
			if v, ok := t.Options["properties.max.pol.records"]; ok {
				// As the real kafka connector does for a misspelt Java property.
				return &connectors.OptionError{Table: t.Name, Key: "properties.max.pol.records", Value: v,
					Err: fmt.Errorf("unknown Kafka property; did you mean 'properties.max.poll.records'?")}
			}
			switch {
			case topic == pattern:
				return fmt.Errorf("set exactly one of 'topic' and 'topic-pattern'")
			case format == value:
				return fmt.Errorf("set exactly one of 'format' and 'value.format'")
			}
			return nil
		},
		NewSource: planOnlySource, NewSink: planOnlySink,
	})
	connectors.Register(&connectors.Factory{
		Name: "upsert-kafka", Prefixes: []string{"properties."}, Metadata: kafkaMetadata[:3], Formats: []string{"json", "csv"},
		Changelog: func(connectors.TableInfo) connectors.ChangelogMode { return connectors.UpsertMode },
		Options: []connectors.OptionSpec{
			both(connectors.OptionSpec{Key: "topic", Type: str, Required: true}),
			both(connectors.OptionSpec{Key: "properties.bootstrap.servers", Type: str, Required: true}),
			both(connectors.OptionSpec{Key: "key.format", Type: str, Required: true}),
			both(connectors.OptionSpec{Key: "value.format", Type: str, Required: true}),
			both(connectors.OptionSpec{Key: "key.fields-prefix", Type: str}),
			both(connectors.OptionSpec{Key: "value.fields-include", Type: connectors.EnumOption, Enum: []string{"ALL", "EXCEPT_KEY"}, Default: "ALL"}),
			snk(connectors.OptionSpec{Key: "sink.buffer-flush.max-rows", Type: connectors.IntOption, Default: "0"}),
			snk(connectors.OptionSpec{Key: "sink.buffer-flush.interval", Type: connectors.DurationOption, Default: "0 s"}),
			snk(connectors.OptionSpec{Key: "sink.parallelism", Type: connectors.IntOption}),
		},
		Validate: func(t connectors.TableInfo) error {
			if len(t.PrimaryKey) == 0 {
				return fmt.Errorf("'upsert-kafka' tables require a PRIMARY KEY")
			}
			return nil
		},
		NewSource: planOnlySource, NewSink: planOnlySink,
	})
	connectors.Register(&connectors.Factory{
		Name: "datagen",
		Options: []connectors.OptionSpec{
			src(connectors.OptionSpec{Key: "rows-per-second", Type: connectors.IntOption, Default: "10000"}),
			src(connectors.OptionSpec{Key: "number-of-rows", Type: connectors.IntOption}),
			src(connectors.OptionSpec{Key: "fields.#.kind", Type: connectors.EnumOption, Enum: []string{"random", "sequence"}, Default: "random"}),
			src(connectors.OptionSpec{Key: "fields.#.min", Type: str}),
			src(connectors.OptionSpec{Key: "fields.#.max", Type: str}),
			src(connectors.OptionSpec{Key: "fields.#.max-past", Type: connectors.DurationOption}),
			src(connectors.OptionSpec{Key: "fields.#.length", Type: connectors.IntOption}),
			src(connectors.OptionSpec{Key: "fields.#.start", Type: str}),
			src(connectors.OptionSpec{Key: "fields.#.end", Type: str}),
			src(connectors.OptionSpec{Key: "fields.#.null-rate", Type: str}),
		},
		NewSource: planOnlySource,
	})
	connectors.Register(&connectors.Factory{
		Name: "print",
		Options: []connectors.OptionSpec{
			snk(connectors.OptionSpec{Key: "print-identifier", Type: str}),
			snk(connectors.OptionSpec{Key: "standard-error", Type: connectors.BoolOption, Default: "false"}),
			snk(connectors.OptionSpec{Key: "sink.parallelism", Type: connectors.IntOption}),
		},
		NewSink: planOnlySink,
	})
	connectors.Register(&connectors.Factory{Name: "blackhole", NewSink: planOnlySink})
	connectors.Register(&connectors.Factory{
		Name: "filesystem", Formats: []string{"json", "csv", "debezium-json", "canal-json", "maxwell-json"},
		FormatMetadata: true,
		Options: []connectors.OptionSpec{
			both(connectors.OptionSpec{Key: "path", Type: str, Required: true}),
			both(connectors.OptionSpec{Key: "format", Type: str, Required: true}),
			src(connectors.OptionSpec{Key: "source.monitor-interval", Type: connectors.DurationOption}),
			snk(connectors.OptionSpec{Key: "sink.rolling-policy.file-size", Type: str, Default: "128MB"}),
			snk(connectors.OptionSpec{Key: "sink.rolling-policy.rollover-interval", Type: connectors.DurationOption, Default: "30 min"}),
			snk(connectors.OptionSpec{Key: "sink.rolling-policy.check-interval", Type: connectors.DurationOption, Default: "1 min"}),
		},
		Partitioned: true,
		NewSource:   planOnlySource, NewSink: planOnlySink,
	})
}
