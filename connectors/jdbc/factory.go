package jdbc

import "github.com/pipesql/pipesql/connectors"

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
		NewSource: NewSource,
		NewSink:   NewSink,
	})
	connectors.RegisterLookup("jdbc", NewLookup)
	connectors.Register(&connectors.Factory{
		Name:     "postgres-cdc",
		Options:  cdcOptions,
		Metadata: cdcMetadata,
		Validate: func(t connectors.TableInfo) error {
			_, err := parseCDC(t)
			return err
		},
		Changelog: func(connectors.TableInfo) connectors.ChangelogMode { return connectors.AllChangesMode },
		NewSource: NewCDCSource,
	})
}
