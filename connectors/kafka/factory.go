package kafka

import (
	"github.com/pipesql/pipesql/connectors"
)

func init() {
	connectors.Register(&connectors.Factory{
		Name:     "kafka",
		Options:  optionSpecs(false),
		Prefixes: []string{propertiesPrefix},
		Metadata: metadataSpecs(),
		Formats:  formatNames,
		Validate: func(t connectors.TableInfo) error { return Validate(t, false) },
		ValidateWrite: func(t connectors.TableInfo, settings map[string]string) error {
			return ValidateWrite(t, settings, false)
		},
		SplitNoun: "partitions",
		// debezium-json's source.timestamp is read as 'value.source.timestamp'.
		FormatMetadata:       true,
		FormatMetadataPrefix: valueMetaPrefix,
		NewSource:            NewSource,
		NewSink:              NewSink,
	})
	connectors.Register(&connectors.Factory{
		Name:     "upsert-kafka",
		Options:  optionSpecs(true),
		Prefixes: []string{propertiesPrefix},
		Metadata: metadataSpecs(),
		Formats:  formatNames,
		Validate: func(t connectors.TableInfo) error { return Validate(t, true) },
		ValidateWrite: func(t connectors.TableInfo, settings map[string]string) error {
			return ValidateWrite(t, settings, true)
		},
		// Reading upsert-kafka yields a changelog (+I per key, -D of a tombstone).
		Changelog: upsertChangelog,
		NewSource: NewUpsertSource,
		NewSink:   NewUpsertSink,
	})
}

// formatNames are the 'format' values the connectors accept: every registered format
// that can read and write, looked up when the table is validated.
var formatNames = []string{"json", "csv", "raw", "avro", "avro-confluent", "protobuf", "protobuf-confluent", "debezium-avro-confluent"}

// Validate checks a Kafka table's options together: 'topic' against 'topic-pattern',
// the startup and bounded modes and their offsets, the key and value formats and
// columns, and every 'properties.*' key (an unknown one is an error naming the closest
// valid key). upsert selects the rules of 'upsert-kafka'.
func Validate(t connectors.TableInfo, upsert bool) error {
	if _, err := parseOptions(t, upsert); err != nil {
		return err
	}
	for _, r := range []role{forSource, forSink} {
		if _, err := resolveProperties(t.Name, t.Options, r); err != nil {
			return err
		}
	}
	return nil
}
