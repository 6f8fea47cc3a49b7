package jdbc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Lookup option keys, as Flink names them.
const (
	optLookupCache        = "lookup.cache"
	optLookupMaxRows      = "lookup.partial-cache.max-rows"
	optLookupExpireWrite  = "lookup.partial-cache.expire-after-write"
	optLookupExpireAccess = "lookup.partial-cache.expire-after-access"
	optLookupCacheMissing = "lookup.partial-cache.cache-missing-key"
	optLookupMaxRetries   = "lookup.max-retries"
)

var lookupOptions = []connectors.OptionSpec{
	{Key: optLookupCache, Type: connectors.EnumOption, Default: "NONE", Enum: []string{"NONE", "PARTIAL"}, Source: true,
		Description: "NONE looks every key up in the database; PARTIAL caches the rows of keys looked up lately"},
	{Key: optLookupMaxRows, Type: connectors.IntOption, Source: true, Description: "keys the PARTIAL cache holds at most (the least recently used go first)"},
	{Key: optLookupExpireWrite, Type: connectors.DurationOption, Source: true, Description: "a cached key is looked up again this long after it was read from the database"},
	{Key: optLookupExpireAccess, Type: connectors.DurationOption, Source: true, Description: "a cached key is looked up again this long after it was last used"},
	{Key: optLookupCacheMissing, Type: connectors.BoolOption, Default: "true", Source: true, Description: "cache keys that have no row too"},
	{Key: optLookupMaxRetries, Type: connectors.IntOption, Default: "3", Source: true, Description: "how often a failed lookup is retried (reconnecting) before the job fails"},
}

// Lookup finds rows of a jdbc table by key for lookup joins, through Flink's PARTIAL
// cache when 'lookup.cache' = 'PARTIAL'.
type Lookup struct {
	o       *tableOptions
	log     connectors.Logger
	clock   connectors.Clock
	schema  types.Schema
	keys    []types.Type
	sql     string
	retries int
	cache   *connectors.LookupCache // nil without a cache
	conn    *pgx.Conn
	keyBuf  []byte
}

// NewLookup opens a lookup source of a jdbc table (registered with
// connectors.RegisterLookup).
func NewLookup(ctx context.Context, cfg connectors.LookupConfig) (connectors.LookupSource, error) {
	o, err := parseOptions(cfg.TableInfo, allOptions)
	if err != nil {
		return nil, err
	}
	opts := connectors.NewOptions(cfg.Name, cfg.Options, allOptions)
	l := &Lookup{o: o, log: cfg.Log, clock: connectors.ClockOr(cfg.Clock), schema: cfg.Schema}
	n, _, err := opts.Int(optLookupMaxRetries)
	if err != nil {
		return nil, err
	}
	l.retries = int(n)
	mode, err := opts.Enum(optLookupCache, "NONE", "PARTIAL")
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(mode, "PARTIAL") {
		var co connectors.LookupCacheOptions
		rows, set, err := opts.Int(optLookupMaxRows)
		if err != nil {
			return nil, err
		}
		if !set || rows < 1 {
			return nil, fmt.Errorf("table %s: %w: 'lookup.cache' = 'PARTIAL' needs '%s' of at least 1", cfg.Name, ErrBadOptions, optLookupMaxRows)
		}
		co.MaxRows = int(rows)
		if co.ExpireAfterWrite, _, err = opts.Duration(optLookupExpireWrite); err != nil {
			return nil, err
		}
		if co.ExpireAfterAccess, _, err = opts.Duration(optLookupExpireAccess); err != nil {
			return nil, err
		}
		if co.CacheMissing, err = opts.Bool(optLookupCacheMissing); err != nil {
			return nil, err
		}
		l.cache = connectors.NewLookupCache(co, l.clock)
	}
	conn, err := connect(ctx, o)
	if err != nil {
		if connectionLost(err) {
			err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return nil, fmt.Errorf("jdbc lookup %s: connect to %s: %w", cfg.Name, o.where, err)
	}
	l.conn = conn
	t, err := describeTable(ctx, conn, o)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	dbCols, err := t.match(cfg.Name, cfg.Schema, reading)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	var sel, where []string
	for _, c := range dbCols {
		sel = append(sel, pgx.Identifier{c.name}.Sanitize())
	}
	for i, k := range cfg.Keys {
		j := cfg.Schema.Index(k)
		if j < 0 {
			conn.Close(context.Background())
			return nil, fmt.Errorf("jdbc lookup %s: %w: key column %s", cfg.Name, ErrSchemaMismatch, k)
		}
		l.keys = append(l.keys, cfg.Schema[j].Type)
		where = append(where, fmt.Sprintf("%s = $%d", pgx.Identifier{dbCols[j].name}.Sanitize(), i+1))
	}
	l.sql = fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), t.ident(), strings.Join(where, " AND "))
	return l, nil
}

// Lookup returns the rows of key, from the cache when it holds them fresh.
func (l *Lookup) Lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	for _, v := range key {
		if v.IsNull() {
			return nil, nil // NULL equals nothing
		}
	}
	if l.cache != nil {
		l.keyBuf = l.keyBuf[:0]
		for _, v := range key {
			l.keyBuf = types.AppendValue(l.keyBuf, v, types.Canonical)
		}
		if rows, ok := l.cache.Get(string(l.keyBuf)); ok {
			return rows, nil
		}
	}
	args := make([]any, len(key))
	for i, v := range key {
		args[i] = toArg(v, l.keys[i])
	}
	var rows []types.Row
	var err error
	for attempt := 0; ; attempt++ {
		if rows, err = l.query(ctx, args); err == nil {
			break
		}
		if ctx.Err() != nil || attempt >= l.retries {
			return nil, fmt.Errorf("jdbc lookup %s: %w", l.o.table, err)
		}
		l.log.Warn("jdbc lookup failed, retrying", "table", l.o.table, "attempt", attempt+1, "error", err.Error())
		if l.conn != nil && l.conn.IsClosed() {
			l.conn = nil
		}
		if err := sleep(ctx, l.clock, time.Duration(attempt+1)*time.Second); err != nil {
			return nil, err
		}
	}
	if l.cache != nil {
		l.cache.Put(string(l.keyBuf), rows)
	}
	return rows, nil
}

func (l *Lookup) query(ctx context.Context, args []any) ([]types.Row, error) {
	if l.conn == nil {
		conn, err := connect(ctx, l.o)
		if err != nil {
			return nil, err
		}
		l.conn = conn
	}
	rs, err := l.conn.Query(ctx, l.sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []types.Row
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, err
		}
		row := make(types.Row, len(l.schema))
		for i, c := range l.schema {
			row[i] = fromDB(vals[i], c.Type)
		}
		out = append(out, row)
	}
	return out, rs.Err()
}

// Close closes the connection.
func (l *Lookup) Close() error {
	if l.conn != nil {
		l.conn.Close(context.Background())
		l.conn = nil
	}
	return nil
}
