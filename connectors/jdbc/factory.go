package jdbc

import "github.com/pipesql/pipesql/connectors"

// allOptions are the options of a jdbc table.
var allOptions = append(append([]connectors.OptionSpec{}, commonOptions...), sinkOptions...)

func init() {
	connectors.Register(&connectors.Factory{
		Name:    "jdbc",
		Options: allOptions,
		Validate: func(t connectors.TableInfo) error {
			_, err := parseOptions(t, allOptions)
			return err
		},
		NewSink: NewSink,
	})
}
