package formats

import "github.com/pipesql/pipesql/connectors"

func init() {
	connectors.RegisterFormat(JSONFormat)
	connectors.RegisterFormat(CSVFormat)
	connectors.RegisterFormat(RawFormat)
	connectors.RegisterFormat(AvroFormat)
	connectors.RegisterFormat(AvroConfluentFormat)
	connectors.RegisterFormat(ProtobufFormat)
	connectors.RegisterFormat(ProtobufConfluentFormat)
}
