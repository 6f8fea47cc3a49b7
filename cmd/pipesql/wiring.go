package main

// The connectors and formats the binary ships: each registers itself in init().
import (
	_ "github.com/pipesql/pipesql/connectors/builtin"
	_ "github.com/pipesql/pipesql/connectors/formats"
	_ "github.com/pipesql/pipesql/connectors/jdbc"
	_ "github.com/pipesql/pipesql/connectors/kafka"
	_ "github.com/pipesql/pipesql/connectors/nexmark"
)
