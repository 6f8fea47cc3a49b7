package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Lookup options of a filesystem table, as Flink names the FULL cache's.
const (
	optLookupCache    = "lookup.cache"
	optLookupReload   = "lookup.full-cache.reload-strategy"
	optLookupInterval = "lookup.full-cache.periodic-reload.interval"
)

var fileLookupOptions = []connectors.OptionSpec{
	{Key: optLookupCache, Type: connectors.EnumOption, Default: "FULL", Enum: []string{"FULL"}, Source: true,
		Description: "as the dimension of a lookup join the files are read whole into memory (Flink's FULL cache)"},
	{Key: optLookupReload, Type: connectors.EnumOption, Default: "PERIODIC", Enum: []string{"PERIODIC"}, Source: true,
		Description: "the files are read again every lookup.full-cache.periodic-reload.interval"},
	{Key: optLookupInterval, Type: connectors.DurationOption, Default: "1 h", Source: true,
		Description: "how often a lookup join reads the files again, so that changes to them show"},
}

func init() {
	filesystemFactory.Options = append(filesystemFactory.Options, fileLookupOptions...)
	connectors.RegisterLookup("filesystem", newFileLookup)
}

// fileLookup is a filesystem table as the dimension of a lookup join: every row of its
// files in memory by key, read again every 'lookup.full-cache.periodic-reload.interval'.
// Files in a changelog format (debezium-json, canal-json, maxwell-json) are applied: a
// -U or -D removes the row its +I or +U added.
type fileLookup struct {
	cfg      connectors.LookupConfig
	clock    connectors.Clock
	keyIdx   []int
	every    time.Duration
	loadedAt time.Time
	rows     map[string][]types.Row
	keyBuf   []byte
}

func newFileLookup(ctx context.Context, cfg connectors.LookupConfig) (connectors.LookupSource, error) {
	o := connectors.NewOptions(cfg.Name, cfg.Options, filesystemFactory.Options)
	every, _, err := o.Duration(optLookupInterval)
	if err != nil {
		return nil, err
	}
	switch f := strings.ToLower(o.String(optFormat)); f {
	case "json", "csv", "debezium-json", "canal-json", "maxwell-json":
	default:
		return nil, fmt.Errorf("table %s: %w: a lookup join reads a filesystem table of json, csv or a JSON CDC format, not %s", cfg.Name, ErrBadOptions, f)
	}
	l := &fileLookup{cfg: cfg, clock: connectors.ClockOr(cfg.Clock), every: every}
	for _, k := range cfg.Keys {
		i := cfg.Schema.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("table %s: lookup key %s is not a column", cfg.Name, k)
		}
		l.keyIdx = append(l.keyIdx, i)
	}
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// load reads every file of the table through the filesystem source, bounded.
func (l *fileLookup) load(ctx context.Context) error {
	info := l.cfg.TableInfo
	opts := make(map[string]string, len(info.Options))
	for k, v := range info.Options {
		if k != optMonitorInterval {
			opts[k] = v
		}
	}
	info.Options = opts
	produce := make([]connectors.ProducedColumn, len(info.Schema))
	for i, c := range info.Schema {
		produce[i] = connectors.ProducedColumn{Name: c.Name, Type: c.Type}
	}
	src, err := filesystemFactory.NewSource(ctx, connectors.SourceConfig{TableInfo: info, Produce: produce,
		Settings: l.cfg.Settings, Log: l.cfg.Log, Clock: l.clock})
	if err != nil {
		return err
	}
	defer src.Close()
	rows := map[string][]types.Row{}
	for {
		bs, err := src.Poll(ctx, 100*time.Millisecond)
		for _, b := range bs {
			for i, r := range b.Rows {
				k := string(l.key(r, l.keyIdx))
				if i < len(b.Kinds) && (b.Kinds[i] == connectors.UpdateBefore || b.Kinds[i] == connectors.Delete) {
					rows[k] = removeRow(rows[k], r)
					if len(rows[k]) == 0 {
						delete(rows, k)
					}
					continue
				}
				rows[k] = append(rows[k], r)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("lookup join: read table %s: %w", l.cfg.Name, err)
		}
	}
	l.rows, l.loadedAt = rows, l.clock.Now()
	return nil
}

// removeRow removes the first of rows equal to r: a changelog format's files (debezium-json
// ...) are applied in order, so that a lookup sees the table as the changes leave it.
func removeRow(rows []types.Row, r types.Row) []types.Row {
	for i, x := range rows {
		if len(x) != len(r) {
			continue
		}
		same := true
		for j := range x {
			if types.Compare(x[j], r[j]) != 0 || x[j].IsNull() != r[j].IsNull() {
				same = false
				break
			}
		}
		if same {
			return append(rows[:i], rows[i+1:]...)
		}
	}
	return rows
}

func (l *fileLookup) key(r types.Row, idx []int) []byte {
	l.keyBuf = l.keyBuf[:0]
	for _, i := range idx {
		l.keyBuf = types.AppendValue(l.keyBuf, r[i], types.Canonical)
	}
	return l.keyBuf
}

// Lookup returns the rows whose key columns equal key, reading the files again first
// when the reload interval has passed.
func (l *fileLookup) Lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	if l.every > 0 && l.clock.Now().Sub(l.loadedAt) >= l.every {
		if err := l.load(ctx); err != nil {
			return nil, err
		}
	}
	l.keyBuf = l.keyBuf[:0]
	for _, v := range key {
		if v.IsNull() {
			return nil, nil
		}
		l.keyBuf = types.AppendValue(l.keyBuf, v, types.Canonical)
	}
	return l.rows[string(l.keyBuf)], nil
}

func (l *fileLookup) Close() error { return nil }
