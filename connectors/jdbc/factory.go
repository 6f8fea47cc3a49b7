package jdbc

import (
	"context"

	"github.com/pipesql/pipesql/connectors"
)

// allOptions are the options of a jdbc table.
var allOptions = concat(commonOptions, sinkOptions, scanOptions, lookupOptions)

func concat(lists ...[]connectors.OptionSpec) []connectors.OptionSpec {
	var out []connectors.OptionSpec
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func init() {
	connectors.Register(&connectors.Factory{
		Name:    "jdbc",
		Options: allOptions,
		Validate: func(t connectors.TableInfo) error {
			if _, err := parseOptions(t, allOptions); err != nil {
				return err
			}
			_, err := parseScan(t)
			return err
		},
		NewSource: checkedSource(NewSource),
		NewSink: func(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
			s, err := OpenSink(ctx, cfg)
			if err != nil {
				return nil, misconfigured(err)
			}
			return s, nil
		},
	})
	connectors.RegisterLookup("jdbc", func(ctx context.Context, cfg connectors.LookupConfig) (connectors.LookupSource, error) {
		l, err := NewLookup(ctx, cfg)
		return l, misconfigured(err)
	})
	connectors.Register(&connectors.Factory{
		Name:     "postgres-cdc",
		Options:  cdcOptions,
		Metadata: cdcMetadata,
		Validate: func(t connectors.TableInfo) error {
			_, err := parseCDC(t)
			return err
		},
		Changelog: func(connectors.TableInfo) connectors.ChangelogMode { return connectors.AllChangesMode },
		NewSource: checkedSource(NewCDCSource),
	})
}

// checkedSource marks the table check failures of open as connectors.ErrMisconfigured.
func checkedSource(open func(context.Context, connectors.SourceConfig) (connectors.Source, error)) func(context.Context, connectors.SourceConfig) (connectors.Source, error) {
	return func(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
		s, err := open(ctx, cfg)
		return s, misconfigured(err)
	}
}
