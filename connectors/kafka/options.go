package kafka

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Option keys, as Flink's Kafka and Upsert Kafka SQL connectors name them.
const (
	optTopic               = "topic"
	optTopicPattern        = "topic-pattern"
	optBootstrap           = "properties.bootstrap.servers"
	optGroupID             = "properties.group.id"
	optFormat              = "format"
	optValueFormat         = "value.format"
	optKeyFormat           = "key.format"
	optKeyFields           = "key.fields"
	optKeyFieldsPrefix     = "key.fields-prefix"
	optValueFieldsInclude  = "value.fields-include"
	optStartupMode         = "scan.startup.mode"
	optStartupOffsets      = "scan.startup.specific-offsets"
	optStartupTimestamp    = "scan.startup.timestamp-millis"
	optBoundedMode         = "scan.bounded.mode"
	optBoundedOffsets      = "scan.bounded.specific-offsets"
	optBoundedTimestamp    = "scan.bounded.timestamp-millis"
	optDiscoveryInterval   = "scan.topic-partition-discovery.interval"
	optIdleTimeout         = "scan.watermark.idle-timeout"
	optScanParallelism     = "scan.parallelism"
	optSinkPartitioner     = "sink.partitioner"
	optDeliveryGuarantee   = "sink.delivery-guarantee"
	optSinkSemantic        = "sink.semantic"
	optTransactionalPrefix = "sink.transactional-id-prefix"
	optSinkParallelism     = "sink.parallelism"
	optBufferFlushRows     = "sink.buffer-flush.max-rows"
	optBufferFlushInterval = "sink.buffer-flush.interval"
)

// Startup and bounded modes ('scan.startup.mode', 'scan.bounded.mode').
const (
	modeEarliest  = "earliest-offset"
	modeLatest    = "latest-offset"
	modeGroup     = "group-offsets"
	modeTimestamp = "timestamp"
	modeSpecific  = "specific-offsets"
	modeUnbounded = "unbounded"
)

// Delivery guarantees ('sink.delivery-guarantee').
const (
	deliveryNone        = "none"
	deliveryAtLeastOnce = "at-least-once"
	deliveryExactlyOnce = "exactly-once"
)

// Sink partitioners ('sink.partitioner').
const (
	partitionerDefault    = "default"
	partitionerFixed      = "fixed"
	partitionerRoundRobin = "round-robin"
)

// defaultDiscoveryInterval is Flink's default 'scan.topic-partition-discovery.interval'.
const defaultDiscoveryInterval = 5 * time.Minute

// tableOptions is a Kafka table's WITH clause read and checked once.
type tableOptions struct {
	table  string
	upsert bool // 'connector' = 'upsert-kafka'

	topics  []string
	pattern *regexp.Regexp

	startupMode      string
	startupOffsets   map[int32]int64
	startupTimestamp int64 // milliseconds since the epoch
	boundedMode      string
	boundedOffsets   map[int32]int64
	boundedTimestamp int64

	discoveryInterval time.Duration // 0: discovery off
	idleTimeout       time.Duration

	value     formatChoice
	key       formatChoice // factory nil when the record key is not used
	keyFields []string     // table column names, in key order (with the prefix)
	keyPrefix string
	exceptKey bool // 'value.fields-include' = 'EXCEPT_KEY'

	partitioner       string
	delivery          string
	transactionPrefix string
	flushRows         int64
	flushInterval     time.Duration
}

// formatChoice is one configured format and its options (prefix removed).
type formatChoice struct {
	factory *connectors.FormatFactory
	options map[string]string
	prefix  string // of its options' keys: "", "key." or "value."
}

func optionError(table, key, value string, err error) error {
	if sensitive(key) {
		value = "******"
	}
	return &connectors.OptionError{Table: table, Key: key, Value: value, Err: err}
}

// sensitive reports whether an option holds a secret that errors must not print.
func sensitive(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "secret", "jaas", "key.pem", "keystore.key", "passphrase"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func badOption(table, key, value, format string, args ...any) error {
	return optionError(table, key, value, fmt.Errorf("%w: "+format, append([]any{ErrBadOptions}, args...)...))
}

// parseOptions reads and cross-checks a table's options. It does not know whether the
// table will be read or written; checks that depend on that are in sourceOptions and
// sinkOptions.
func parseOptions(t connectors.TableInfo, upsert bool) (*tableOptions, error) {
	o := &tableOptions{table: t.Name, upsert: upsert}
	opts := connectors.NewOptions(t.Name, t.Options, optionSpecs(upsert))
	raw := t.Options

	if strings.TrimSpace(raw[optBootstrap]) == "" {
		return nil, badOption(t.Name, optBootstrap, raw[optBootstrap], "the brokers to start from are required")
	}

	topic, hasTopic := raw[optTopic]
	pattern, hasPattern := raw[optTopicPattern]
	switch {
	case hasTopic && hasPattern:
		return nil, badOption(t.Name, optTopicPattern, pattern, "set either 'topic' or 'topic-pattern', not both")
	case hasTopic:
		for _, tp := range strings.Split(topic, ";") {
			if tp = strings.TrimSpace(tp); tp != "" {
				o.topics = append(o.topics, tp)
			}
		}
		if len(o.topics) == 0 {
			return nil, badOption(t.Name, optTopic, topic, "no topic named")
		}
	case hasPattern:
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			return nil, badOption(t.Name, optTopicPattern, pattern, "not a regular expression: %v", err)
		}
		o.pattern = re
	default:
		return nil, badOption(t.Name, optTopic, "", "set 'topic' (one topic or a ';' list) or 'topic-pattern'")
	}
	if upsert && (hasPattern || len(o.topics) != 1) {
		return nil, badOption(t.Name, optTopic, topic, "upsert-kafka reads and writes exactly one topic")
	}

	var err error
	if err = o.parseModes(opts, raw); err != nil {
		return nil, err
	}
	if o.discoveryInterval, err = discoveryIntervalOption(t.Name, raw); err != nil {
		return nil, err
	}
	if d, set, err := opts.Duration(optIdleTimeout); err != nil {
		return nil, err
	} else if set {
		o.idleTimeout = d
	}
	if err = o.parseFormats(t, opts); err != nil {
		return nil, err
	}
	if err = o.parseSinkOptions(opts); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *tableOptions) parseModes(opts connectors.Options, raw map[string]string) error {
	var err error
	startModes := []string{modeEarliest, modeLatest, modeGroup, modeTimestamp, modeSpecific}
	if o.startupMode, err = opts.Enum(optStartupMode, startModes...); err != nil {
		return err
	}
	if o.upsert {
		// Upsert Kafka always reads the whole changelog.
		o.startupMode = modeEarliest
	}
	if o.boundedMode, err = opts.Enum(optBoundedMode, append([]string{modeUnbounded}, startModes[1:]...)...); err != nil {
		return err
	}
	type modeArgs struct {
		mode, offsetsKey, tsKey string
		offsets                 *map[int32]int64
		ts                      *int64
	}
	for _, m := range []modeArgs{
		{o.startupMode, optStartupOffsets, optStartupTimestamp, &o.startupOffsets, &o.startupTimestamp},
		{o.boundedMode, optBoundedOffsets, optBoundedTimestamp, &o.boundedOffsets, &o.boundedTimestamp},
	} {
		switch m.mode {
		case modeSpecific:
			v, ok := raw[m.offsetsKey]
			if !ok {
				return badOption(o.table, m.offsetsKey, "", "required when the mode is 'specific-offsets', "+
					"e.g. 'partition:0,offset:42;partition:1,offset:300'")
			}
			if len(o.topics) != 1 {
				return badOption(o.table, m.offsetsKey, v, "specific offsets need exactly one 'topic'")
			}
			if *m.offsets, err = parseSpecificOffsets(v); err != nil {
				return optionError(o.table, m.offsetsKey, v, err)
			}
		case modeTimestamp:
			n, set, err := opts.Int(m.tsKey)
			if err != nil {
				return err
			}
			if !set {
				return badOption(o.table, m.tsKey, "", "required when the mode is 'timestamp'")
			}
			if n < 0 {
				return badOption(o.table, m.tsKey, raw[m.tsKey], "must not be negative")
			}
			*m.ts = n
		}
	}
	return nil
}

// checkSource checks what only matters when the table is read. Like Flink, pipesql
// checks it when the source is created, not at CREATE TABLE: a table only written to
// needs no consumer group.
func (o *tableOptions) checkSource(raw map[string]string) error {
	if strings.TrimSpace(raw[optGroupID]) != "" {
		return nil
	}
	if o.startupMode == modeGroup {
		return badOption(o.table, optGroupID, "", "'scan.startup.mode' = 'group-offsets' (the default) "+
			"reads the group's committed offsets: set 'properties.group.id' or another startup mode")
	}
	if o.boundedMode == modeGroup {
		return badOption(o.table, optGroupID, "", "'scan.bounded.mode' = 'group-offsets' needs 'properties.group.id'")
	}
	return nil
}

// checkSink checks what only matters when the table is written.
func (o *tableOptions) checkSink() error {
	if len(o.topics) != 1 || o.pattern != nil {
		return badOption(o.table, optTopic, strings.Join(o.topics, ";"), "a sink writes exactly one topic")
	}
	if o.delivery == deliveryExactlyOnce && o.transactionPrefix == "" {
		return badOption(o.table, optTransactionalPrefix, "", "'sink.delivery-guarantee' = 'exactly-once' needs a transactional id prefix")
	}
	return nil
}

// parseSpecificOffsets reads 'partition:0,offset:42;partition:1,offset:300'.
func parseSpecificOffsets(v string) (map[int32]int64, error) {
	out := map[int32]int64{}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ",")
		if len(fields) != 2 {
			return nil, fmt.Errorf("%w: %q is not 'partition:<n>,offset:<n>'", ErrBadOptions, part)
		}
		p, perr := keyedInt(fields[0], "partition")
		off, oerr := keyedInt(fields[1], "offset")
		if perr != nil || oerr != nil || p < 0 || p > 1<<31-1 || off < 0 {
			return nil, fmt.Errorf("%w: %q is not 'partition:<n>,offset:<n>' with non-negative numbers", ErrBadOptions, part)
		}
		if _, dup := out[int32(p)]; dup {
			return nil, fmt.Errorf("%w: partition %d is given twice", ErrBadOptions, p)
		}
		out[int32(p)] = off
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no offsets given", ErrBadOptions)
	}
	return out, nil
}

func keyedInt(field, key string) (int64, error) {
	k, v, ok := strings.Cut(strings.TrimSpace(field), ":")
	if !ok || strings.TrimSpace(k) != key {
		return 0, ErrBadOptions
	}
	return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
}

// discoveryIntervalOption reads 'scan.topic-partition-discovery.interval'. Like Flink,
// '0' (and, as in Flink's DataStream API, a negative value) turns discovery off. Flink's
// KafkaSource property 'properties.partition.discovery.interval.ms' is the fallback.
func discoveryIntervalOption(table string, raw map[string]string) (time.Duration, error) {
	v, ok := raw[optDiscoveryInterval]
	if !ok {
		if ms, set := raw[propertiesPrefix+"partition.discovery.interval.ms"]; set {
			d, err := millis(ms)
			if err != nil {
				return 0, optionError(table, propertiesPrefix+"partition.discovery.interval.ms", ms, err)
			}
			return max(d, 0), nil
		}
		return defaultDiscoveryInterval, nil
	}
	t := strings.TrimSpace(v)
	if strings.HasPrefix(t, "-") {
		if _, err := connectors.ParseDuration(t[1:]); err != nil {
			return 0, optionError(table, optDiscoveryInterval, v, err)
		}
		return 0, nil
	}
	d, err := connectors.ParseDuration(t)
	if err != nil {
		return 0, optionError(table, optDiscoveryInterval, v, err)
	}
	return d, nil
}

func (o *tableOptions) parseFormats(t connectors.TableInfo, opts connectors.Options) error {
	raw := t.Options
	f, hasF := raw[optFormat]
	vf, hasVF := raw[optValueFormat]
	switch {
	case hasF && hasVF:
		return badOption(o.table, optValueFormat, vf, "set either 'format' or 'value.format', not both")
	case o.upsert && !hasVF:
		return badOption(o.table, optValueFormat, "", "upsert-kafka needs 'value.format'")
	case hasF:
		c, err := lookupFormat(o.table, optFormat, f, raw, "")
		if err != nil {
			return err
		}
		o.value = c
	case hasVF:
		c, err := lookupFormat(o.table, optValueFormat, vf, raw, "value.")
		if err != nil {
			return err
		}
		o.value = c
	default:
		return badOption(o.table, optFormat, "", "set 'format' (or 'value.format'), e.g. 'json'")
	}

	include, err := opts.Enum(optValueFieldsInclude, "ALL", "EXCEPT_KEY")
	if err != nil {
		return err
	}
	o.exceptKey = include == "EXCEPT_KEY"
	o.keyPrefix = raw[optKeyFieldsPrefix]

	kf, hasKF := raw[optKeyFormat]
	fields, hasFields := raw[optKeyFields]
	if o.upsert {
		if !hasKF {
			return badOption(o.table, optKeyFormat, "", "upsert-kafka needs 'key.format' for the primary key")
		}
		if hasFields {
			return badOption(o.table, optKeyFields, fields, "upsert-kafka takes its key from the PRIMARY KEY")
		}
		if len(t.PrimaryKey) == 0 {
			return badOption(o.table, optKeyFormat, kf, "upsert-kafka needs a PRIMARY KEY (...) NOT ENFORCED")
		}
		o.keyFields = append([]string(nil), t.PrimaryKey...)
	} else {
		switch {
		case hasKF && !hasFields:
			return badOption(o.table, optKeyFormat, kf, "'key.format' needs 'key.fields'")
		case hasFields && !hasKF:
			return badOption(o.table, optKeyFields, fields, "'key.fields' needs 'key.format'")
		}
		for _, k := range strings.Split(fields, ";") {
			if k = strings.TrimSpace(k); k != "" {
				o.keyFields = append(o.keyFields, k)
			}
		}
		if hasFields && len(o.keyFields) == 0 {
			return badOption(o.table, optKeyFields, fields, "no column named")
		}
	}
	if hasKF {
		c, err := lookupFormat(o.table, optKeyFormat, kf, raw, "key.")
		if err != nil {
			return err
		}
		o.key = c
	}
	if o.keyPrefix != "" && !o.exceptKey {
		return badOption(o.table, optKeyFieldsPrefix, o.keyPrefix, "a key prefix needs 'value.fields-include' = 'EXCEPT_KEY'")
	}
	seen := map[string]bool{}
	for _, k := range o.keyFields {
		i := t.Schema.Index(k)
		if i < 0 {
			return badOption(o.table, optKeyFields, fields, "%s is not a physical column of the table", k)
		}
		name := t.Schema[i].Name
		if seen[name] {
			return badOption(o.table, optKeyFields, fields, "%s is named twice", k)
		}
		seen[name] = true
		if !strings.HasPrefix(name, o.keyPrefix) {
			return badOption(o.table, optKeyFields, fields, "key column %s does not start with the prefix '%s'", name, o.keyPrefix)
		}
	}
	if o.exceptKey && len(o.keyFields) == len(t.Schema) {
		return badOption(o.table, optValueFieldsInclude, "EXCEPT_KEY", "every column is in the key: the value would be empty")
	}
	o.defaultSubjects()
	return o.checkRegistryURL()
}

// registryFormats are the formats that register their schema under a subject, whose
// default Flink's Kafka connector completes for a table of one topic
// (autoCompleteSchemaRegistrySubject): '<topic>-value' and '<topic>-key', the subjects
// of Confluent's TopicNameStrategy.
var registryFormats = map[string]bool{"avro-confluent": true, "debezium-avro-confluent": true, "protobuf-confluent": true}

func (o *tableOptions) defaultSubjects() {
	if len(o.topics) != 1 {
		return
	}
	for _, f := range []struct {
		c      *formatChoice
		suffix string
	}{{&o.value, "-value"}, {&o.key, "-key"}} {
		if f.c.factory == nil || !registryFormats[f.c.factory.Name] {
			continue
		}
		_, set := f.c.options["subject"]
		_, deprecated := f.c.options["schema-registry.subject"]
		if !set && !deprecated {
			f.c.options["subject"] = o.topics[0] + f.suffix
		}
	}
}

// checkRegistryURL checks that a format of the Avro schema registry has its url,
// written as 'url' or Flink's fallback key 'schema-registry.url' (so the format cannot
// declare either required).
func (o *tableOptions) checkRegistryURL() error {
	for _, c := range []formatChoice{o.value, o.key} {
		if c.factory == nil || (c.factory.Name != "avro-confluent" && c.factory.Name != "debezium-avro-confluent") {
			continue
		}
		if c.options["url"] == "" && c.options["schema-registry.url"] == "" {
			return badOption(o.table, c.prefix+c.factory.Name+".url", "", "format '%s' needs the schema registry's URL", c.factory.Name)
		}
	}
	return nil
}

// lookupFormat finds a registered format and the options written for it.
func lookupFormat(table, key, name string, raw map[string]string, prefix string) (formatChoice, error) {
	f, ok := connectors.LookupFormat(strings.TrimSpace(name))
	if !ok {
		return formatChoice{}, badOption(table, key, name, "unknown format (registered: %s)",
			strings.Join(connectors.FormatNames(), ", "))
	}
	return formatChoice{factory: f, options: connectors.FormatOptions(raw, prefix, f.Name), prefix: prefix}, nil
}

func (o *tableOptions) parseSinkOptions(opts connectors.Options) error {
	var err error
	if o.partitioner, err = opts.Enum(optSinkPartitioner, partitionerDefault, partitionerFixed, partitionerRoundRobin); err != nil {
		return err
	}
	guarantees := []string{deliveryNone, deliveryAtLeastOnce, deliveryExactlyOnce}
	if o.delivery, err = opts.Enum(optDeliveryGuarantee, guarantees...); err != nil {
		return err
	}
	if !opts.IsSet(optDeliveryGuarantee) && opts.IsSet(optSinkSemantic) {
		// 'sink.semantic' is Flink's deprecated name, with '_' where the new one has '-'.
		v := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(opts.Raw[optSinkSemantic])), "_", "-")
		ok := false
		for _, g := range guarantees {
			ok = ok || g == v
		}
		if !ok {
			return badOption(o.table, optSinkSemantic, opts.Raw[optSinkSemantic], "expected one of %s", strings.Join(guarantees, ", "))
		}
		o.delivery = v
	}
	o.transactionPrefix = strings.TrimSpace(opts.Raw[optTransactionalPrefix])
	if o.upsert {
		n, _, err := opts.Int(optBufferFlushRows)
		if err != nil {
			return err
		}
		d, _, err := opts.Duration(optBufferFlushInterval)
		if err != nil {
			return err
		}
		if n < 0 {
			return badOption(o.table, optBufferFlushRows, opts.Raw[optBufferFlushRows], "must not be negative")
		}
		if (n > 0) != (d > 0) {
			return badOption(o.table, optBufferFlushRows, opts.Raw[optBufferFlushRows],
				"'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must both be set (or both 0)")
		}
		o.flushRows, o.flushInterval = n, d
	}
	return nil
}

// keyColumns returns the key columns of schema (names with the prefix removed, as the
// key format sees them) and their positions in schema.
func (o *tableOptions) keyColumns(schema types.Schema) (types.Schema, []int) {
	cols := make(types.Schema, len(o.keyFields))
	idx := make([]int, len(o.keyFields))
	for i, k := range o.keyFields {
		j := schema.Index(k)
		idx[i] = j
		cols[i] = types.Column{Name: strings.TrimPrefix(schema[j].Name, o.keyPrefix), Type: schema[j].Type}
	}
	return cols, idx
}

// valueColumns returns the columns of schema the value format holds and their positions.
func (o *tableOptions) valueColumns(schema types.Schema) (types.Schema, []int) {
	inKey := map[int]bool{}
	if o.exceptKey {
		_, idx := o.keyColumns(schema)
		for _, i := range idx {
			inKey[i] = true
		}
	}
	var cols types.Schema
	var idx []int
	for i, c := range schema {
		if !inKey[i] {
			cols = append(cols, c)
			idx = append(idx, i)
		}
	}
	return cols, idx
}

// optionSpecs declares the options of 'kafka' (upsert false) or 'upsert-kafka'.
func optionSpecs(upsert bool) []connectors.OptionSpec {
	both := func(s connectors.OptionSpec) connectors.OptionSpec { s.Source, s.Sink = true, true; return s }
	src := func(s connectors.OptionSpec) connectors.OptionSpec { s.Source = true; return s }
	snk := func(s connectors.OptionSpec) connectors.OptionSpec { s.Sink = true; return s }
	modes := []string{modeEarliest, modeLatest, modeGroup, modeTimestamp, modeSpecific}
	specs := []connectors.OptionSpec{
		both(connectors.OptionSpec{Key: optTopic, Type: connectors.StringOption, Required: upsert,
			Description: "Topic to read (one, or several separated by ';') or the one topic to write."}),
		both(connectors.OptionSpec{Key: optBootstrap, Type: connectors.StringOption, Required: true,
			Description: "Comma separated list of Kafka brokers."}),
		src(connectors.OptionSpec{Key: optGroupID, Type: connectors.StringOption,
			Description: "Consumer group whose committed offsets 'group-offsets' reads and where offsets are committed."}),
		both(connectors.OptionSpec{Key: optValueFormat, Type: connectors.StringOption, Required: upsert,
			Description: "Format of the record value."}),
		both(connectors.OptionSpec{Key: optKeyFormat, Type: connectors.StringOption, Required: upsert,
			Description: "Format of the record key."}),
		both(connectors.OptionSpec{Key: optKeyFieldsPrefix, Type: connectors.StringOption,
			Description: "Prefix of the key columns' names in the table (needs 'value.fields-include' = 'EXCEPT_KEY')."}),
		both(connectors.OptionSpec{Key: optValueFieldsInclude, Type: connectors.EnumOption, Default: "ALL",
			Enum: []string{"ALL", "EXCEPT_KEY"}, Description: "Whether the value also holds the key columns."}),
		src(connectors.OptionSpec{Key: optBoundedMode, Type: connectors.EnumOption, Default: modeUnbounded,
			Enum: append([]string{modeUnbounded}, modes[1:]...), Description: "Where a bounded read ends."}),
		src(connectors.OptionSpec{Key: optBoundedOffsets, Type: connectors.StringOption,
			Description: "End offsets for 'specific-offsets', e.g. 'partition:0,offset:42;partition:1,offset:300'."}),
		src(connectors.OptionSpec{Key: optBoundedTimestamp, Type: connectors.IntOption,
			Description: "End timestamp (epoch milliseconds) for 'timestamp'."}),
		src(connectors.OptionSpec{Key: optDiscoveryInterval, Type: connectors.StringOption, Default: "5 min",
			Description: "How often new partitions (and topics of 'topic-pattern') are discovered; 0 disables."}),
		src(connectors.OptionSpec{Key: optIdleTimeout, Type: connectors.DurationOption,
			Description: "A partition without records for this long stops holding the watermark back."}),
		src(connectors.OptionSpec{Key: optScanParallelism, Type: connectors.IntOption,
			Description: "Accepted for Flink compatibility; pipesql reads all partitions in one source."}),
		snk(connectors.OptionSpec{Key: optDeliveryGuarantee, Type: connectors.EnumOption, Default: deliveryAtLeastOnce,
			Enum: []string{deliveryNone, deliveryAtLeastOnce, deliveryExactlyOnce}, Description: "Delivery guarantee of the sink."}),
		snk(connectors.OptionSpec{Key: optTransactionalPrefix, Type: connectors.StringOption,
			Description: "Prefix of the transactional id for 'exactly-once'."}),
		snk(connectors.OptionSpec{Key: optSinkParallelism, Type: connectors.IntOption,
			Description: "Accepted for Flink compatibility; pipesql writes with one producer."}),
	}
	if upsert {
		return append(specs,
			snk(connectors.OptionSpec{Key: optBufferFlushRows, Type: connectors.IntOption, Default: "0",
				Description: "Buffer up to this many rows, keeping the last per key, before sending."}),
			snk(connectors.OptionSpec{Key: optBufferFlushInterval, Type: connectors.DurationOption, Default: "0",
				Description: "Send the buffered rows at least this often."}),
		)
	}
	return append(specs,
		src(connectors.OptionSpec{Key: optTopicPattern, Type: connectors.StringOption,
			Description: "Regular expression of the topics to read."}),
		both(connectors.OptionSpec{Key: optFormat, Type: connectors.StringOption,
			Description: "Format of the record value (same as 'value.format')."}),
		both(connectors.OptionSpec{Key: optKeyFields, Type: connectors.ListOption,
			Description: "Columns of the record key, separated by ';'."}),
		src(connectors.OptionSpec{Key: optStartupMode, Type: connectors.EnumOption, Default: modeGroup, Enum: modes,
			Description: "Where reading starts when there is no checkpoint."}),
		src(connectors.OptionSpec{Key: optStartupOffsets, Type: connectors.StringOption,
			Description: "Start offsets for 'specific-offsets', e.g. 'partition:0,offset:42;partition:1,offset:300'."}),
		src(connectors.OptionSpec{Key: optStartupTimestamp, Type: connectors.IntOption,
			Description: "Start timestamp (epoch milliseconds) for 'timestamp'."}),
		snk(connectors.OptionSpec{Key: optSinkPartitioner, Type: connectors.EnumOption, Default: partitionerDefault,
			Enum: []string{partitionerDefault, partitionerFixed, partitionerRoundRobin}, Description: "How rows are spread over partitions."}),
		snk(connectors.OptionSpec{Key: optSinkSemantic, Type: connectors.StringOption,
			Description: "Deprecated name of 'sink.delivery-guarantee'."}),
	)
}
