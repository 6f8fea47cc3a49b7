// Package registrytest runs a Confluent Schema Registry for tests: an in-process HTTP
// server that speaks the registry's documented REST API
// (https://docs.confluent.io/platform/current/schema-registry/develop/api.html), so the
// registry client of confluent-kafka-go, and pipesql's avro-confluent and
// protobuf-confluent formats through it, talk to it as they talk to a production
// registry.
//
// # What it serves
//
//   - POST /subjects/{s}/versions registers a schema (AVRO, the default, PROTOBUF or
//     JSON, with references) and answers its id; the same schema (same type, references
//     and JSON text up to whitespace) gets the same id under every subject, and
//     registering it again under a subject adds no version.
//   - GET /schemas/ids/{id} (and /schema, /versions under it), GET /schemas/types.
//   - GET /subjects, GET /subjects/{s}/versions, GET /subjects/{s}/versions/{v|latest|-1}
//     (and /schema under it), POST /subjects/{s} (is this schema registered here?),
//     DELETE /subjects/{s} and DELETE /subjects/{s}/versions/{v}; ids stay readable after
//     a delete, as they do in the registry.
//   - GET/PUT /config and GET/PUT/DELETE /config/{s} (compatibility levels, BACKWARD by
//     default; GET /config/{s} without defaultToGlobal=true answers 40408 when the
//     subject has no level of its own), GET /mode.
//   - POST /compatibility/subjects/{s}/versions/{v|latest} and
//     /compatibility/subjects/{s}/versions (is_compatible, messages with verbose=true).
//
// Errors carry the registry's body {"error_code": ..., "message": ...} and codes: 40401
// subject not found, 40402 version not found, 40403 schema not found, 40408 no subject
// level, 409 incompatible schema, 42201 invalid schema, 42202 invalid version, 42203
// invalid compatibility level, 40101 unauthorized.
//
// # Compatibility
//
// Avro schemas are checked for real, with hamba/avro's schema resolution rules: BACKWARD
// means the new schema reads what the latest version wrote (a field added with a
// default is compatible, one added without a default is not), FORWARD the reverse, FULL
// both, the _TRANSITIVE levels against every version, NONE nothing. A new version whose
// schemaType differs from the latest one's is incompatible. Protobuf and JSON Schema
// versions are stored and served but not checked against each other (any new version of
// those types is compatible); an Avro schema that does not parse is a 42201.
//
// # Options
//
// WithBasicAuth requires HTTP basic auth on every request, WithBearerToken a bearer
// token, WithTLS serves HTTPS with a certificate whose CA is written to a file
// (Server.CAFile) for the client's ssl.ca.location. Server.Requests counts the requests
// a route received, so a test can see that a client caches schemas by id.
package registrytest
