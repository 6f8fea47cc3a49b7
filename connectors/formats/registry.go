package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"

	"github.com/pipesql/pipesql/connectors"
)

// The Confluent Schema Registry, as avro-confluent, debezium-avro-confluent and
// protobuf-confluent use it: the registry options (avroConfluentOptions, the keys
// without the format's prefix) read into a client's configuration, the client, the
// registration of a written schema and the wire format's header.

// registryConfig is what the registry options say: the registry's url, the subject a
// written schema is registered under, avro-confluent's explicit schema (protobuf-confluent
// has none) and the client's configuration.
type registryConfig struct {
	url     string
	subject string
	schema  string
	client  *schemaregistry.Config
}

// readRegistryConfig reads the registry options of opts (keys without the
// format's prefix); format names the format in errors.
func readRegistryConfig(opts map[string]string, format string) (registryConfig, error) {
	o := connectors.NewOptions("", opts, avroConfluentOptions)
	var c registryConfig
	bad := func(key, msg string, args ...any) error {
		return &connectors.OptionError{Key: format + "." + key, Value: opts[key],
			Err: fmt.Errorf("%w: "+msg, append([]any{connectors.ErrInvalidOption}, args...)...)}
	}
	c.url = strings.TrimSpace(o.String(AvroConfluentURL))
	if c.url == "" {
		c.url = strings.TrimSpace(o.String(AvroConfluentURLDeprecated))
	}
	if c.url == "" {
		return c, bad(AvroConfluentURL, "the schema registry URL is required")
	}
	c.subject = strings.TrimSpace(o.String(AvroConfluentSubjectDeprecated))
	if s := strings.TrimSpace(o.String(AvroConfluentSubject)); s != "" {
		c.subject = s
	}
	c.schema = o.String(AvroConfluentSchema)
	conf := schemaregistry.NewConfig(c.url)
	conf.MaxRetries = 2
	props := map[string]string{}
	for k, v := range opts {
		if p, ok := strings.CutPrefix(k, avroConfluentPropertiesPrefix); ok {
			supported := false
			for _, s := range avroConfluentProperties {
				supported = supported || s == p
			}
			if !supported {
				return c, bad(k, "unsupported registry client property (supported: %s)", strings.Join(avroConfluentProperties, ", "))
			}
			props[p] = v
		}
	}
	pick := func(key, prop string) string {
		if v := strings.TrimSpace(opts[key]); v != "" {
			return v
		}
		return strings.TrimSpace(props[prop])
	}
	basicSource := strings.ToUpper(pick(AvroConfluentBasicAuthSource, "basic.auth.credentials.source"))
	userInfo := pick(AvroConfluentBasicAuthUserInfo, "basic.auth.user.info")
	if userInfo != "" && basicSource == "" {
		basicSource = "USER_INFO"
	}
	switch basicSource {
	case "":
	case "USER_INFO":
		if !strings.Contains(userInfo, ":") {
			return c, bad(AvroConfluentBasicAuthUserInfo, "USER_INFO needs basic-auth.user-info as 'user:password'")
		}
		conf.BasicAuthCredentialsSource, conf.BasicAuthUserInfo = "USER_INFO", userInfo
	case "URL":
		conf.BasicAuthCredentialsSource = "URL"
	default:
		return c, bad(AvroConfluentBasicAuthSource, "unsupported credentials source %q (supported: USER_INFO, URL; SASL_INHERIT is not)", basicSource)
	}
	bearerSource := strings.ToUpper(pick(AvroConfluentBearerAuthSource, "bearer.auth.credentials.source"))
	token := pick(AvroConfluentBearerAuthToken, "bearer.auth.token")
	if token != "" && bearerSource == "" {
		bearerSource = "STATIC_TOKEN"
	}
	switch bearerSource {
	case "":
	case "STATIC_TOKEN":
		if basicSource != "" {
			return c, bad(AvroConfluentBearerAuthSource, "set basic or bearer auth, not both")
		}
		if token == "" {
			return c, bad(AvroConfluentBearerAuthToken, "STATIC_TOKEN needs bearer-auth.token")
		}
		// The Go client's own STATIC_TOKEN insists on Confluent Cloud's identity pool
		// and logical cluster; a custom provider sends just the token, as Flink does.
		conf.BearerAuthCredentialsSource = "CUSTOM"
		conf.AuthenticationHeaderProvider = bearerToken(token)
	default:
		return c, bad(AvroConfluentBearerAuthSource, "unsupported credentials source %q (supported: STATIC_TOKEN)", bearerSource)
	}
	for _, k := range []string{AvroConfluentKeystorePassword, AvroConfluentTruststorePassword} {
		if opts[k] != "" {
			return c, bad(k, "not supported: give the keystore and truststore as PEM files (an unencrypted key; a truststore has no password)")
		}
	}
	if ks := pick(AvroConfluentKeystoreLocation, "schema.registry.ssl.keystore.location"); ks != "" {
		conf.SslCertificateLocation, conf.SslKeyLocation = ks, ks
	}
	conf.SslCaLocation = pick(AvroConfluentTruststoreLocation, "schema.registry.ssl.truststore.location")
	c.client = conf
	return c, nil
}

// bearerToken is an authentication header provider of a static bearer token.
type bearerToken string

func (t bearerToken) GetAuthenticationHeader() (string, error) { return "Bearer " + string(t), nil }
func (t bearerToken) GetIdentityPoolID() (string, error)       { return "", nil }
func (t bearerToken) GetLogicalCluster() (string, error)       { return "", nil }

// newRegistryClient returns a registry client for a decoder or encoder. Each has its own:
// ids are immutable in a registry, but a client shared by URL would carry one
// registry's ids over to another later served at the same address (tests' servers on
// reused ports); a decoder fetches each id once anyway.
func newRegistryClient(c registryConfig) (schemaregistry.Client, error) {
	cl, err := schemaregistry.NewClient(c.client)
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %w", c.url, err)
	}
	return cl, nil
}

// ErrRegistryUnavailable is returned (wrapped) when the schema registry cannot be reached or
// answers an error other than "not found": the record may be fine, the job should
// fail and retry rather than count it as bad.
var ErrRegistryUnavailable = errors.New("schema registry request failed")

// registerSchema registers info under cfg's subject (avro-confluent's and
// protobuf-confluent's encoders) and returns its id. A schema the registry refuses
// (incompatible, invalid) is an error of the job; a failed request is an
// ErrRegistryUnavailable.
func registerSchema(cl schemaregistry.Client, cfg registryConfig, info schemaregistry.SchemaInfo) (int, error) {
	id, err := cl.Register(cfg.subject, info, false)
	if err != nil {
		var re *rest.Error
		if errors.As(err, &re) && (re.Code == 409 || re.Code == 42201) {
			return 0, fmt.Errorf("schema registry %s refused the schema for subject %s: %s (error %d)", cfg.url, cfg.subject, re.Message, re.Code)
		}
		return 0, fmt.Errorf("%w: %s: registering the schema under subject %s: %v", ErrRegistryUnavailable, cfg.url, cfg.subject, err)
	}
	return id, nil
}

// confluentHeader is the Confluent wire format's header of schema id: the magic byte,
// then the id as a big-endian int32.
func confluentHeader(id int) []byte {
	return binary.BigEndian.AppendUint32([]byte{avroConfluentMagic}, uint32(id))
}
