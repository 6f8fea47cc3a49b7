package builtin

import "github.com/pipesql/pipesql/connectors"

func init() {
	connectors.Register(datagenFactory)
	connectors.Register(filesystemFactory)
	connectors.Register(printFactory)
	connectors.Register(blackholeFactory)
}
