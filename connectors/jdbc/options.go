package jdbc

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// The option keys, as Flink's JDBC connector names them.
const (
	optURL         = "url"
	optTable       = "table-name"
	optDriver      = "driver"
	optUsername    = "username"
	optPassword    = "password"
	optFlushRows   = "sink.buffer-flush.max-rows"
	optFlushEvery  = "sink.buffer-flush.interval"
	optMaxRetries  = "sink.max-retries"
	optParallelism = "sink.parallelism"
)

// postgresDriver is the only 'driver' value accepted: the class Flink users name for
// PostgreSQL, which pgx stands in for.
const postgresDriver = "org.postgresql.Driver"

var commonOptions = []connectors.OptionSpec{
	{Key: optURL, Type: connectors.StringOption, Required: true, Source: true, Sink: true,
		Description: "the database: jdbc:postgresql://host[:port]/database[?user=...&password=...&sslmode=...&currentSchema=...]"},
	{Key: optTable, Type: connectors.StringOption, Required: true, Source: true, Sink: true,
		Description: "the table in the database, [schema.]table (unquoted names fold to lower case, as PostgreSQL folds them)"},
	{Key: optDriver, Type: connectors.StringOption, Source: true, Sink: true,
		Description: "accepted for compatibility when it is " + postgresDriver + ": pipesql speaks PostgreSQL's protocol itself"},
	{Key: optUsername, Type: connectors.StringOption, Source: true, Sink: true, Description: "the database user"},
	{Key: optPassword, Type: connectors.StringOption, Source: true, Sink: true, Description: "the user's password"},
}

var sinkOptions = []connectors.OptionSpec{
	{Key: optFlushRows, Type: connectors.IntOption, Default: "100", Sink: true,
		Description: "buffered rows (after folding changes of one key) that trigger a flush; 0 flushes at checkpoints and intervals only"},
	{Key: optFlushEvery, Type: connectors.DurationOption, Default: "1 s", Sink: true,
		Description: "how long buffered rows wait at most before a flush; 0 flushes at checkpoints and by size only"},
	{Key: optMaxRetries, Type: connectors.IntOption, Default: "3", Sink: true,
		Description: "how often a flush refused by the database (a constraint, a value out of range) is retried before the job fails; a lost connection is retried until it is back"},
	{Key: optParallelism, Type: connectors.IntOption, Sink: true,
		Description: "accepted for compatibility: pipesql writes with one writer"},
}

// tableOptions are a jdbc table's options, read and checked.
type tableOptions struct {
	table    string // the pipesql table's name, for messages
	dsn      string // a libpq connection URL
	where    string // host:port/database, for messages
	dbTable  string // table-name as written
	user     string
	password string

	flushRows  int
	flushEvery time.Duration
	maxRetries int
}

func parseOptions(t connectors.TableInfo, specs []connectors.OptionSpec) (*tableOptions, error) {
	o := connectors.NewOptions(t.Name, t.Options, specs)
	to := &tableOptions{table: t.Name, dbTable: o.String(optTable), user: o.String(optUsername), password: o.String(optPassword)}
	if d := o.String(optDriver); d != "" && d != postgresDriver {
		return nil, fmt.Errorf("table %s: %w: option 'driver' = '%s': pipesql's jdbc connector speaks to PostgreSQL only (driver %s)",
			t.Name, ErrBadOptions, d, postgresDriver)
	}
	if strings.TrimSpace(to.dbTable) == "" {
		return nil, fmt.Errorf("table %s: %w: option 'table-name' is empty", t.Name, ErrBadOptions)
	}
	if err := to.parseURL(o.String(optURL)); err != nil {
		return nil, err
	}
	n, _, err := o.Int(optFlushRows)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("table %s: %w: option '%s' = '%d' must not be negative", t.Name, ErrBadOptions, optFlushRows, n)
	}
	to.flushRows = int(n)
	if to.flushEvery, _, err = o.Duration(optFlushEvery); err != nil {
		return nil, err
	}
	if n, _, err = o.Int(optMaxRetries); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("table %s: %w: option '%s' = '%d' must not be negative", t.Name, ErrBadOptions, optMaxRetries, n)
	}
	to.maxRetries = int(n)
	if n, set, err := o.Int(optParallelism); err != nil {
		return nil, err
	} else if set && n < 1 {
		return nil, fmt.Errorf("table %s: %w: option '%s' = '%d' must be at least 1", t.Name, ErrBadOptions, optParallelism, n)
	}
	return to, nil
}

// jdbcParams maps the PostgreSQL JDBC driver's URL parameters pipesql understands onto
// libpq's names.
var jdbcParams = map[string]string{
	"user": "user", "password": "password", "sslmode": "sslmode", "currentSchema": "search_path",
	"ApplicationName": "application_name", "connectTimeout": "connect_timeout", "options": "options",
}

// parseURL reads jdbc:postgresql://host[:port][/database][?params] into a libpq URL.
func (to *tableOptions) parseURL(raw string) error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("table %s: %w: option 'url' = '%s': %s", to.table, ErrBadOptions, raw, fmt.Sprintf(why, args...))
	}
	rest, ok := strings.CutPrefix(raw, "jdbc:postgresql:")
	if !ok {
		if i := strings.Index(raw, "://"); strings.HasPrefix(raw, "jdbc:") && i > 0 {
			return bad("the %s database is not supported; pipesql's jdbc connector writes to PostgreSQL (jdbc:postgresql://host:port/database)", raw[len("jdbc:"):i])
		}
		return bad("want jdbc:postgresql://host:port/database")
	}
	if !strings.HasPrefix(rest, "//") {
		return bad("want jdbc:postgresql://host:port/database")
	}
	u, err := url.Parse("postgres:" + rest)
	if err != nil {
		return bad("%v", err)
	}
	if strings.Contains(u.Host, ",") {
		return bad("several hosts are not supported yet")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "5432"
	}
	if _, err := strconv.Atoi(port); err != nil {
		return bad("port %q is not a number", port)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "postgres"
	}
	q := url.Values{}
	user, password := to.user, to.password
	for k, vs := range u.Query() {
		name, known := jdbcParams[k]
		if !known {
			return bad("unknown parameter %q (pipesql reads %s)", k, strings.Join(slices.Sorted(maps.Keys(jdbcParams)), ", "))
		}
		v := vs[len(vs)-1]
		switch name {
		case "user":
			if user == "" {
				user = v
			}
		case "password":
			if password == "" {
				password = v
			}
		default:
			q.Set(name, v)
		}
	}
	if !q.Has("sslmode") {
		q.Set("sslmode", "prefer")
	}
	if !q.Has("connect_timeout") {
		q.Set("connect_timeout", "10")
	}
	d := url.URL{Scheme: "postgres", Host: host + ":" + port, Path: "/" + db, RawQuery: q.Encode()}
	if user != "" {
		if password != "" {
			d.User = url.UserPassword(user, password)
		} else {
			d.User = url.User(user)
		}
	}
	to.dsn = d.String()
	to.where = host + ":" + port + "/" + db
	return nil
}
