package kafka

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/config"
)

// Translation says what a Kafka client property written in a Flink job means in pipesql.
// Flink jobs carry properties of the Java client ('properties.default.api.timeout.ms');
// pipesql talks to Kafka through librdkafka, which names some of them differently, lacks
// some and has no need for others. PropertyTranslations lists them, for the README.
type Translation struct {
	Java       string // the property as written after 'properties.'
	Librdkafka string // the librdkafka property it sets, "" when none
	Meaning    string // what it does in pipesql
}

// role says which client a property is resolved for: settings such as
// request.timeout.ms mean different things to a consumer and to a producer.
type role uint8

const (
	forSource role = iota
	forSink
)

func (r role) String() string {
	if r == forSink {
		return "sink"
	}
	return "source"
}

// javaReconnectBackoffMax is the Java client's default reconnect.backoff.max.ms, which
// pipesql's clients use unless the table sets either reconnect backoff.
const javaReconnectBackoffMax = "1000"

// Defaults of the settings pipesql derives from Java properties.
const (
	defaultAPITimeout     = 60 * time.Second // Java's default.api.timeout.ms
	defaultMaxBlock       = 60 * time.Second // Java's max.block.ms
	defaultMaxPollRecords = 2048
	defaultCommitInterval = 5 * time.Second // Java's auto.commit.interval.ms
)

// clientSettings is what a table's 'properties.*' say, split into the librdkafka
// configuration and the settings pipesql applies itself.
type clientSettings struct {
	rd        map[string]string // librdkafka configuration properties
	bootstrap []string
	groupID   string // "" when the user set none

	apiTimeout         time.Duration // bound on each discovery / offset lookup attempt
	maxBlock           time.Duration // sink: wait for room in a full producer queue
	maxPollRecords     int
	autoCommit         *bool // enable.auto.commit as written; nil when unset
	commitInterval     time.Duration
	commitOnCheckpoint bool
	discoveryInterval  *time.Duration // partition.discovery.interval.ms; nil when unset
	offsetReset        string         // earliest, latest or none
	excludeInternal    bool
	truststoreType     string
	keystoreType       string
	clientIDPrefix     string

	ignored []string // "key.deserializer: ..." lines for the log
}

type propertyRule struct {
	Translation
	// apply records value in s; role tells which client is being configured.
	apply func(s *clientSettings, value string, r role) error
}

// sameName passes a property through to librdkafka under its own name.
func sameName(name, meaning string) propertyRule {
	return propertyRule{
		Translation: Translation{Java: name, Librdkafka: name, Meaning: meaning},
		apply: func(s *clientSettings, v string, _ role) error {
			s.rd[name] = v
			return nil
		},
	}
}

// renamed passes a property to librdkafka under another name.
func renamed(java, rd, meaning string) propertyRule {
	return propertyRule{
		Translation: Translation{Java: java, Librdkafka: rd, Meaning: meaning},
		apply: func(s *clientSettings, v string, _ role) error {
			s.rd[rd] = v
			return nil
		},
	}
}

// ignored accepts a property and does nothing with it, saying why in the log.
func ignored(name, librdkafka, meaning string) propertyRule {
	return propertyRule{
		Translation: Translation{Java: name, Librdkafka: librdkafka, Meaning: meaning},
		apply: func(s *clientSettings, _ string, _ role) error {
			s.ignored = append(s.ignored, name+": "+meaning)
			return nil
		},
	}
}

// refused is a property pipesql cannot honour; setting it is an error.
func refused(name, meaning string) propertyRule {
	return propertyRule{
		Translation: Translation{Java: name, Meaning: meaning},
		apply: func(_ *clientSettings, _ string, _ role) error {
			return fmt.Errorf("%w: %s", ErrUnsupportedProperty, meaning)
		},
	}
}

func millis(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a number of milliseconds", ErrBadOptions, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func positiveMillis(v string) (time.Duration, error) {
	d, err := millis(v)
	if err == nil && d <= 0 {
		err = fmt.Errorf("%w: %q must be positive", ErrBadOptions, v)
	}
	return d, err
}

const noGroupMembership = "Accepted with no effect: pipesql assigns partitions itself and never joins " +
	"the consumer group, so there is no rebalance and no liveness deadline."

// propertyRules are the properties whose meaning here is not simply librdkafka's
// property of the same name. Every other librdkafka property passes through.
var propertyRules = []propertyRule{
	{
		Translation: Translation{Java: "default.api.timeout.ms", Meaning: "Bounds each partition-discovery " +
			"and offset-lookup attempt of the source (default 60000). A failed or timed-out attempt is logged, " +
			"counted, shown as degraded and retried with backoff; it never stops the readers."},
		apply: func(s *clientSettings, v string, r role) error {
			d, err := positiveMillis(v)
			s.apiTimeout = d
			return err
		},
	},
	{
		Translation: Translation{Java: "request.timeout.ms", Librdkafka: "socket.timeout.ms (source), request.timeout.ms (sink)",
			Meaning: "Source: the timeout of each network request, librdkafka's socket.timeout.ms (10 to 300000). " +
				"Sink: librdkafka's request.timeout.ms, how long the broker may take to acknowledge a produce request."},
		apply: func(s *clientSettings, v string, r role) error {
			if _, err := positiveMillis(v); err != nil {
				return err
			}
			if r == forSink {
				s.rd["request.timeout.ms"] = v
			} else {
				s.rd["socket.timeout.ms"] = v
			}
			return nil
		},
	},
	{
		Translation: Translation{Java: "max.block.ms", Meaning: "Sink: how long Write waits for room in a full " +
			"producer queue before failing (default 60000); librdkafka never blocks, pipesql waits. Source: unused."},
		apply: func(s *clientSettings, v string, _ role) error {
			d, err := positiveMillis(v)
			s.maxBlock = d
			return err
		},
	},
	{
		Translation: Translation{Java: "max.poll.records", Meaning: "The most records one Poll of the source " +
			"returns (default 2048)."},
		apply: func(s *clientSettings, v string, _ role) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: max.poll.records must be a positive integer", ErrBadOptions)
			}
			s.maxPollRecords = n
			return nil
		},
	},
	ignored("max.poll.interval.ms", "max.poll.interval.ms", noGroupMembership),
	ignored("session.timeout.ms", "session.timeout.ms", noGroupMembership),
	ignored("heartbeat.interval.ms", "heartbeat.interval.ms", noGroupMembership),
	ignored("partition.assignment.strategy", "partition.assignment.strategy", noGroupMembership),
	ignored("group.instance.id", "group.instance.id", noGroupMembership),
	ignored("key.deserializer", "", "Ignored: 'key.format' decodes keys."),
	ignored("value.deserializer", "", "Ignored: 'format' / 'value.format' decodes values."),
	ignored("key.serializer", "", "Ignored: 'key.format' encodes keys."),
	ignored("value.serializer", "", "Ignored: 'format' / 'value.format' encodes values."),
	{
		Translation: Translation{Java: "auto.offset.reset", Librdkafka: "auto.offset.reset",
			Meaning: "Where a partition without a committed offset starts when 'scan.startup.mode' is " +
				"'group-offsets' (earliest, latest, or none to fail; default earliest), and where a reader resumes " +
				"when its offset is no longer in the log. The other startup modes decide the start themselves, as in Flink."},
		apply: func(s *clientSettings, v string, _ role) error {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "earliest", "smallest", "beginning":
				s.offsetReset = "earliest"
			case "latest", "largest", "end":
				s.offsetReset = "latest"
			case "none", "error":
				s.offsetReset = "none"
			default:
				return fmt.Errorf("%w: auto.offset.reset must be earliest, latest or none", ErrBadOptions)
			}
			return nil
		},
	},
	{
		Translation: Translation{Java: "enable.auto.commit", Meaning: "true: also commit the positions of the " +
			"records read so far every auto.commit.interval.ms. pipesql commits after every completed checkpoint " +
			"anyway, and periodically when checkpointing is off unless this is false. Commits only show progress."},
		apply: func(s *clientSettings, v string, _ role) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%w: enable.auto.commit must be true or false", ErrBadOptions)
			}
			s.autoCommit = &b
			return nil
		},
	},
	{
		Translation: Translation{Java: "auto.commit.interval.ms", Meaning: "Period of the periodic commits above " +
			"(default 5000)."},
		apply: func(s *clientSettings, v string, _ role) error {
			d, err := positiveMillis(v)
			s.commitInterval = d
			return err
		},
	},
	{
		Translation: Translation{Java: "commit.offsets.on.checkpoint", Meaning: "Flink's KafkaSource property: " +
			"false stops committing offsets after completed checkpoints (default true)."},
		apply: func(s *clientSettings, v string, _ role) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%w: commit.offsets.on.checkpoint must be true or false", ErrBadOptions)
			}
			s.commitOnCheckpoint = b
			return nil
		},
	},
	{
		Translation: Translation{Java: "metadata.max.age.ms", Librdkafka: "topic.metadata.refresh.interval.ms",
			Meaning: "The Java client refreshes metadata this often; librdkafka's metadata.max.age.ms is a cache " +
				"lifetime instead, so pipesql sets topic.metadata.refresh.interval.ms."},
		apply: func(s *clientSettings, v string, _ role) error {
			if _, err := positiveMillis(v); err != nil {
				return err
			}
			s.rd["topic.metadata.refresh.interval.ms"] = v
			return nil
		},
	},
	{
		Translation: Translation{Java: "partition.discovery.interval.ms", Meaning: "Flink's KafkaSource property: " +
			"the partition discovery interval, used when 'scan.topic-partition-discovery.interval' is not set; " +
			"0 or negative disables discovery."},
		apply: func(s *clientSettings, v string, _ role) error {
			d, err := millis(v)
			s.discoveryInterval = &d
			return err
		},
	},
	{
		Translation: Translation{Java: "client.id.prefix", Librdkafka: "client.id", Meaning: "Flink's KafkaSource " +
			"property: client.id becomes <prefix>-source or <prefix>-sink."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.clientIDPrefix = v
			return nil
		},
	},
	ignored("register.consumer.metrics", "", "Ignored: pipesql exposes its own counters."),
	{
		Translation: Translation{Java: "sasl.jaas.config", Librdkafka: "sasl.username, sasl.password, sasl.kerberos.*",
			Meaning: "PlainLoginModule and ScramLoginModule give sasl.username and sasl.password; Krb5LoginModule " +
				"gives sasl.kerberos.keytab, sasl.kerberos.principal and sasl.kerberos.service.name. Other login " +
				"modules are refused."},
		apply: applyJAAS,
	},
	{
		Translation: Translation{Java: "ssl.truststore.location", Librdkafka: "ssl.ca.location",
			Meaning: "Only a PEM trust store ('ssl.truststore.type' = 'PEM'): librdkafka cannot read JKS or " +
				"PKCS12 trust stores; export the CA certificate as PEM (keytool -exportcert -rfc)."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.rd["ssl.ca.location"] = v
			return nil
		},
	},
	{
		Translation: Translation{Java: "ssl.truststore.type", Meaning: "PEM is accepted (see " +
			"ssl.truststore.location); JKS and PKCS12 are refused."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.truststoreType = strings.ToUpper(strings.TrimSpace(v))
			return nil
		},
	},
	ignored("ssl.truststore.password", "", "Ignored: a PEM trust store has no password."),
	renamed("ssl.truststore.certificates", "ssl.ca.pem", "The trusted CA certificates as PEM text."),
	{
		Translation: Translation{Java: "ssl.keystore.type", Meaning: "PKCS12 (ssl.keystore.location, read by " +
			"librdkafka) and PEM (ssl.keystore.certificate.chain and ssl.keystore.key) are accepted; JKS is refused."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.keystoreType = strings.ToUpper(strings.TrimSpace(v))
			return nil
		},
	},
	renamed("ssl.keystore.certificate.chain", "ssl.certificate.pem", "The client certificate chain as PEM text."),
	renamed("ssl.keystore.key", "ssl.key.pem", "The client private key as PEM text."),
	{
		Translation: Translation{Java: "ssl.endpoint.identification.algorithm", Librdkafka: "ssl.endpoint.identification.algorithm",
			Meaning: "Same meaning; the Java client's empty value (no host name check) becomes none."},
		apply: func(s *clientSettings, v string, _ role) error {
			if strings.TrimSpace(v) == "" {
				v = "none"
			}
			s.rd["ssl.endpoint.identification.algorithm"] = v
			return nil
		},
	},
	ignored("ssl.protocol", "", "Ignored: OpenSSL negotiates the TLS version."),
	ignored("ssl.enabled.protocols", "", "Ignored: OpenSSL negotiates the TLS version."),
	renamed("fetch.max.wait.ms", "fetch.wait.max.ms", "Same meaning under librdkafka's name."),
	{
		Translation: Translation{Java: "receive.buffer.bytes", Librdkafka: "socket.receive.buffer.bytes",
			Meaning: "Same meaning; the Java client's -1 (system default) becomes 0."},
		apply: socketBuffer("socket.receive.buffer.bytes"),
	},
	{
		Translation: Translation{Java: "send.buffer.bytes", Librdkafka: "socket.send.buffer.bytes",
			Meaning: "Same meaning; the Java client's -1 (system default) becomes 0."},
		apply: socketBuffer("socket.send.buffer.bytes"),
	},
	{
		Translation: Translation{Java: "buffer.memory", Librdkafka: "queue.buffering.max.kbytes",
			Meaning: "Bytes in the Java client, kilobytes in librdkafka: divided by 1024."},
		apply: func(s *clientSettings, v string, _ role) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: buffer.memory must be a positive number of bytes", ErrBadOptions)
			}
			s.rd["queue.buffering.max.kbytes"] = strconv.FormatInt(max(1, n/1024), 10)
			return nil
		},
	},
	renamed("max.request.size", "message.max.bytes", "Same meaning under librdkafka's name."),
	ignored("socket.connection.setup.timeout.max.ms", "", "Ignored: librdkafka has one connection setup "+
		"timeout, socket.connection.setup.timeout.ms."),
	ignored("metadata.max.idle.ms", "", "Ignored: librdkafka keeps the metadata of the topics it uses."),
	{
		Translation: Translation{Java: "exclude.internal.topics", Meaning: "'topic-pattern' skips internal " +
			"topics (names starting with '__') unless this is false."},
		apply: func(s *clientSettings, v string, _ role) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%w: exclude.internal.topics must be true or false", ErrBadOptions)
			}
			s.excludeInternal = b
			return nil
		},
	},
	refused("interceptor.classes", "Java interceptor classes cannot run in pipesql."),
	refused("partitioner.class", "Java partitioner classes cannot run in pipesql: use 'sink.partitioner'."),
	refused("transactional.id", "pipesql derives transactional ids from 'sink.transactional-id-prefix'."),
	ignored("metric.reporters", "", "Ignored: Java metrics reporters; pipesql exposes its own counters."),
	ignored("metrics.num.samples", "", "Ignored: Java client metrics."),
	ignored("metrics.sample.window.ms", "", "Ignored: Java client metrics."),
	ignored("metrics.recording.level", "", "Ignored: Java client metrics."),
	ignored("auto.include.jmx.reporter", "", "Ignored: Java client metrics."),
	ignored("enable.partition.eof", "enable.partition.eof", "Ignored: the source sets it itself (end-of-partition "+
		"events end bounded reads)."),
	ignored("enable.auto.offset.store", "enable.auto.offset.store", "Ignored: the source stores offsets itself."),
	{
		Translation: Translation{Java: "bootstrap.servers", Librdkafka: "bootstrap.servers", Meaning: "Same " +
			"meaning: the brokers to start from, separated by commas."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.rd["bootstrap.servers"] = v
			s.bootstrap = splitBrokers(v)
			return nil
		},
	},
	{
		Translation: Translation{Java: "group.id", Librdkafka: "group.id", Meaning: "The consumer group offsets are " +
			"committed to (and read from with 'group-offsets'). Without it the source commits nothing."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.groupID = strings.TrimSpace(v)
			return nil
		},
	},
	{
		Translation: Translation{Java: "security.protocol", Librdkafka: "security.protocol", Meaning: "Same " +
			"meaning (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)."},
		apply: func(s *clientSettings, v string, _ role) error {
			s.rd["security.protocol"] = strings.ToLower(strings.TrimSpace(v))
			return nil
		},
	},
	sameName("retry.backoff.ms", "Same meaning: the first backoff before retrying a request."),
	sameName("retry.backoff.max.ms", "Same meaning."),
	sameName("sasl.mechanism", "Same meaning."),
	sameName("client.id", "Same meaning."),
	sameName("fetch.max.bytes", "Same meaning."),
	sameName("fetch.min.bytes", "Same meaning."),
	sameName("max.partition.fetch.bytes", "Same meaning."),
	sameName("isolation.level", "Same meaning (librdkafka's default is read_committed)."),
	sameName("acks", "Same meaning."),
	sameName("retries", "Same meaning."),
	sameName("linger.ms", "Same meaning."),
	sameName("batch.size", "Same meaning."),
	sameName("compression.type", "Same meaning."),
	sameName("enable.idempotence", "Same meaning."),
	sameName("delivery.timeout.ms", "Same meaning."),
	sameName("transaction.timeout.ms", "Same meaning."),
	sameName("max.in.flight.requests.per.connection", "Same meaning."),
	sameName("reconnect.backoff.ms", "Same meaning."),
	sameName("reconnect.backoff.max.ms", "Same meaning."),
	sameName("connections.max.idle.ms", "Same meaning."),
	sameName("socket.connection.setup.timeout.ms", "Same meaning."),
	sameName("client.rack", "Same meaning."),
	sameName("allow.auto.create.topics", "Same meaning."),
	sameName("check.crcs", "Same meaning."),
}

var rulesByName = func() map[string]*propertyRule {
	m := make(map[string]*propertyRule, len(propertyRules))
	for i := range propertyRules {
		m[propertyRules[i].Java] = &propertyRules[i]
	}
	return m
}()

var librdkafkaSet = func() map[string]bool {
	m := make(map[string]bool, len(librdkafkaNames))
	for _, n := range librdkafkaNames {
		m[n] = true
	}
	return m
}()

// PropertyTranslations returns what each Java-client (and Flink KafkaSource) property a
// Flink job may set means in pipesql, sorted by name. Properties not listed that
// librdkafka knows pass through to librdkafka unchanged.
func PropertyTranslations() []Translation {
	out := make([]Translation, len(propertyRules))
	for i, r := range propertyRules {
		out[i] = r.Translation
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Java < out[j].Java })
	return out
}

// LibrdkafkaProperties returns the librdkafka properties that 'properties.*' may set,
// sorted.
func LibrdkafkaProperties() []string {
	out := append([]string(nil), librdkafkaNames...)
	sort.Strings(out)
	return out
}

// validPropertyNames is every name 'properties.*' accepts: librdkafka's and the
// translated ones.
func validPropertyNames() []string {
	names := LibrdkafkaProperties()
	for _, r := range propertyRules {
		if !librdkafkaSet[r.Java] {
			names = append(names, r.Java)
		}
	}
	sort.Strings(names)
	return names
}

const propertiesPrefix = "properties."

// resolveProperties reads every 'properties.*' option of a table for role r. Translated
// properties are applied first so that a librdkafka property written explicitly wins
// over a Java property that maps onto it.
func resolveProperties(table string, options map[string]string, r role) (*clientSettings, error) {
	s := &clientSettings{
		rd:                 map[string]string{},
		apiTimeout:         defaultAPITimeout,
		maxBlock:           defaultMaxBlock,
		maxPollRecords:     defaultMaxPollRecords,
		commitInterval:     defaultCommitInterval,
		commitOnCheckpoint: true,
		offsetReset:        "earliest",
		excludeInternal:    true,
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		if strings.HasPrefix(k, propertiesPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var native []string
	for _, k := range keys {
		name := k[len(propertiesPrefix):]
		rule, ok := rulesByName[name]
		if !ok {
			if !librdkafkaSet[name] {
				return nil, optionError(table, k, options[k], fmt.Errorf("%w; did you mean '%s%s'?",
					ErrUnknownProperty, propertiesPrefix, config.Closest(name, validPropertyNames(), math.MaxInt32)))
			}
			native = append(native, name)
			continue
		}
		if err := rule.apply(s, options[k], r); err != nil {
			return nil, optionError(table, k, options[k], err)
		}
	}
	for _, name := range native {
		switch name {
		case "metadata.broker.list":
			s.bootstrap = splitBrokers(options[propertiesPrefix+name])
		}
		s.rd[name] = options[propertiesPrefix+name]
	}
	if err := s.checkStores(table, options); err != nil {
		return nil, err
	}
	// librdkafka waits up to 10 s between attempts to reach a broker that was down; the
	// Java client, whose defaults Flink jobs were tuned with, at most 1 s. With the Java
	// default a job resumes within about a second of a broker (or the whole cluster)
	// coming back, instead of idling for up to 10 s.
	_, maxSet := s.rd["reconnect.backoff.max.ms"]
	_, minSet := s.rd["reconnect.backoff.ms"]
	if !maxSet && !minSet {
		s.rd["reconnect.backoff.max.ms"] = javaReconnectBackoffMax
	}
	if s.clientIDPrefix != "" {
		if _, set := s.rd["client.id"]; !set {
			s.rd["client.id"] = s.clientIDPrefix + "-" + r.String()
		}
	}
	return s, nil
}

func (s *clientSettings) checkStores(table string, options map[string]string) error {
	if loc, set := options[propertiesPrefix+"ssl.truststore.location"]; set && s.truststoreType != "PEM" {
		return optionError(table, propertiesPrefix+"ssl.truststore.location", loc, fmt.Errorf(
			"%w: librdkafka reads only PEM trust stores: set 'properties.ssl.truststore.type' = 'PEM' "+
				"for a PEM file, or export the CA certificate as PEM and set 'properties.ssl.ca.location'",
			ErrUnsupportedProperty))
	}
	if t := s.truststoreType; t != "" && t != "PEM" {
		return optionError(table, propertiesPrefix+"ssl.truststore.type", t, fmt.Errorf(
			"%w: librdkafka reads only PEM trust stores", ErrUnsupportedProperty))
	}
	if t := s.keystoreType; t != "" && t != "PKCS12" && t != "PEM" {
		return optionError(table, propertiesPrefix+"ssl.keystore.type", t, fmt.Errorf(
			"%w: librdkafka reads PKCS12 or PEM key stores, not %s", ErrUnsupportedProperty, t))
	}
	return nil
}

func socketBuffer(rd string) func(*clientSettings, string, role) error {
	return func(s *clientSettings, v string, _ role) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("%w: %q is not a number of bytes", ErrBadOptions, v)
		}
		s.rd[rd] = strconv.FormatInt(max(n, 0), 10)
		return nil
	}
}

var jaasOption = regexp.MustCompile(`([A-Za-z_.]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^\s;]+)`)

// applyJAAS turns a Java JAAS login module configuration into librdkafka's SASL settings.
func applyJAAS(s *clientSettings, v string, _ role) error {
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return fmt.Errorf("%w: sasl.jaas.config is empty", ErrBadOptions)
	}
	module := fields[0]
	opts := map[string]string{}
	for _, m := range jaasOption.FindAllStringSubmatch(v, -1) {
		val := m[2]
		if strings.HasPrefix(val, `"`) {
			val = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[3])
		}
		opts[m[1]] = val
	}
	switch {
	case strings.HasSuffix(module, ".PlainLoginModule"), strings.HasSuffix(module, ".ScramLoginModule"):
		user, okU := opts["username"]
		pass, okP := opts["password"]
		if !okU || !okP {
			return fmt.Errorf("%w: sasl.jaas.config needs username=\"...\" and password=\"...\"", ErrBadOptions)
		}
		s.rd["sasl.username"] = user
		s.rd["sasl.password"] = pass
	case strings.HasSuffix(module, ".Krb5LoginModule"):
		if kt, ok := opts["keyTab"]; ok {
			s.rd["sasl.kerberos.keytab"] = kt
		}
		if p, ok := opts["principal"]; ok {
			s.rd["sasl.kerberos.principal"] = p
		}
		if sn, ok := opts["serviceName"]; ok {
			s.rd["sasl.kerberos.service.name"] = sn
		}
		if _, set := s.rd["sasl.mechanism"]; !set {
			s.rd["sasl.mechanism"] = "GSSAPI"
		}
	default:
		return fmt.Errorf("%w: login module %s (supported: PlainLoginModule, ScramLoginModule, Krb5LoginModule)",
			ErrUnsupportedProperty, module)
	}
	return nil
}

// splitBrokers splits a bootstrap list "a:9092, b:9092" into its brokers.
func splitBrokers(v string) []string {
	var out []string
	for _, b := range strings.Split(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}
