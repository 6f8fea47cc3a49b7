// Package formats holds pipesql's record formats, registered with
// connectors.RegisterFormat when the package is imported: 'json' and 'csv', with
// Flink's option names (written in a table as 'json.ignore-parse-errors', seen here
// without the prefix) and Flink's conversions between text and SQL types.
//
// # JSON
//
// A record is one JSON object; fields match columns by name, case-sensitively. The
// decoder parses with github.com/valyala/fastjson, which validates the whole record
// into a reusable parse tree without allocating, and then converts only the columns it
// was asked for: the projection is pushed down into decoding. Conversions follow
// Flink's JsonToRowDataConverters: numbers (and strings holding numbers) to integers,
// floats and decimals; a STRING column takes any JSON value, non-strings as their JSON
// text; DATE is 'yyyy-MM-dd'; TIMESTAMP follows json.timestamp-format.standard ('SQL':
// 'yyyy-MM-dd HH:mm:ss.SSS', 'ISO-8601': 'yyyy-MM-ddTHH:mm:ss.SSS'); TIMESTAMP_LTZ
// the same with a trailing 'Z'; ARRAY, MAP and ROW nest. A missing field or JSON null
// is NULL unless json.fail-on-missing-field is set. A decimal that does not fit its
// precision is NULL, as in Flink.
//
// The encoder writes fields in schema order as Flink does: timestamps with the
// fraction trimmed of trailing zeros ("2024-01-02 03:04:05.5", java.time's
// ISO_LOCAL_TIME), floats as Java prints them (1.0E10), bytes as base64.
//
// # CSV
//
// Fields match the table's physical columns by position, so the decoder must be
// given every physical column; columns a source does not need are passed with the
// NULL type and are skipped without conversion. connectors.NewProjectedDecoder does
// this for any format. A record is one line: quoted values may hold delimiters and
// doubled quotes, but not line breaks.
//
// # CDC formats
//
// debezium-json, canal-json and maxwell-json (cdc.go) read change records: their
// decoders implement connectors.ChangeDecoder, one record giving zero or more rows with
// their kinds (an update is -U of the old row and +U of the new one; canal's old row is
// its 'old' fields over its 'data'). Row images are decoded by the json decoder, so they
// take json's conversions and options. Their metadata (source table, change time) is
// offered through connectors.MetadataDecoder. Their encoders (cdcenc.go) implement
// connectors.ChangeEncoder and write each row with its kind as Flink does: +I and +U as
// a create or insert, -U and -D as a delete.
//
// # Raw
//
// 'raw' is the whole record as one column: text in raw.charset, bytes, or a number in
// its fixed-size binary form in raw.endianness, as Flink's raw format.
//
// # Avro
//
// 'avro' writes and reads Avro's binary encoding with the schema derived from the table
// as Flink's AvroSchemaConverter derives it (avro_schema.go). hamba/avro parses schemas;
// the bytes are read and written by closures compiled from a writer schema and the
// reader's columns (avro_codec.go): fields are resolved by name with Avro's rules, a
// field no column wants is skipped without being converted (so the projection is pushed
// down, the skipped columns' types coming from ProducedColumn.Declared), and a record
// becomes a row without intermediate Go values. 'avro-confluent' adds Confluent's wire
// header (magic byte 0, schema id) and the registry (confluent-kafka-go's client, one
// per decoder or encoder): a writer schema is fetched and compiled once per id;
// the encoder registers its schema under the subject on its first record. An id the
// registry does not know is a bad record, an unreachable registry ErrRegistryUnavailable.
// 'debezium-avro-confluent' reads Debezium's Envelope records in that wire format as
// a changelog (a connectors.ChangeDecoder), with debezium-json's semantics.
//
// # Protobuf
//
// 'protobuf' reads the wire with protowire against the message's descriptor (from a
// descriptor set, or a .proto compiled in process by bufbuild/protocompile): fields
// without a column are skipped unread, the others converted by Flink's protobuf type
// mapping, so the projection is pushed down as in JSON. A field whose wire type is not
// its descriptor's is how a record of another message shows: the error names it. The
// encoder appends fields in number order, as generated code does. 'protobuf-confluent'
// adds Confluent's header (magic byte, schema id, message indexes) and the registry:
// one decoder per writer schema and message, built on first sight of its id; written
// schemas are derived from the table or given as a .proto file.
//
// # Errors
//
// A record that cannot be decoded gives a *DecodeError naming the field and showing
// the start of the record; it wraps ErrBadRecord and, when the format's
// ignore-parse-errors option is set, connectors.ErrSkipped, so a source skips it.
//
// # Parquet
//
// A bulk format (connectors.BulkFormat, FormatFactory.Bulk): a writer buffers rows in
// Apache Arrow builders and writes them into row groups of about parquet.block.size
// bytes through apache/arrow-go's pqarrow, the footer when the file is closed; a reader
// converts the record batches of the columns asked for (found by name). Types map as in
// Flink's parquet format; see ParquetFormat.
//
// AppendPrintRow renders rows as Flink's print connector shows them; it lives here
// because it shares Flink's Java text forms of numbers and times with the encoders.
package formats
