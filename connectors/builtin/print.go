package builtin

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// print option keys, as Flink's Print connector names them.
const (
	optPrintIdentifier = "print-identifier"
	optStandardError   = "standard-error"
)

var printOptions = []connectors.OptionSpec{
	{Key: optPrintIdentifier, Type: connectors.StringOption, Sink: true,
		Description: "a prefix of every printed row: '<identifier>> '"},
	{Key: optStandardError, Type: connectors.BoolOption, Default: "false", Sink: true,
		Description: "print to standard error instead of standard output"},
	{Key: optSinkParallelism, Type: connectors.IntOption, Sink: true,
		Description: "accepted for compatibility: pipesql prints with one writer"},
}

var printFactory = &connectors.Factory{
	Name:    "print",
	Options: printOptions,
	NewSink: func(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
		return newPrintSink(cfg)
	},
}

// printOut is where print sinks write. printMu also serializes the writes of all
// print sinks, so that lines of two tables never interleave within a line.
var (
	printMu     sync.Mutex
	printStdout io.Writer = os.Stdout
	printStderr io.Writer = os.Stderr
)

// SetPrintOutput redirects the print connector: rows of tables with 'standard-error' =
// 'false' go to stdout, the others to stderr; nil restores os.Stdout or os.Stderr. It
// affects print sinks created afterwards and returns a function that restores the
// previous writers. The CLI and shell use it to route rows; tests use it to read them
// (and must not run in parallel with other tests that print).
func SetPrintOutput(stdout, stderr io.Writer) (restore func()) {
	printMu.Lock()
	defer printMu.Unlock()
	prevOut, prevErr := printStdout, printStderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	printStdout, printStderr = stdout, stderr
	return func() {
		printMu.Lock()
		defer printMu.Unlock()
		printStdout, printStderr = prevOut, prevErr
	}
}

// printSink prints each row as Flink's print connector does: "+I[2024-01-01, app1, 42]",
// prefixed by "<print-identifier>> " when an identifier is set.
type printSink struct {
	out    io.Writer
	prefix string
	schema types.Schema
	buf    []byte
}

func newPrintSink(cfg connectors.SinkConfig) (*printSink, error) {
	o := connectors.NewOptions(cfg.Name, cfg.Options, printOptions)
	toErr, err := o.Bool(optStandardError)
	if err != nil {
		return nil, err
	}
	if _, _, err := o.Int(optSinkParallelism); err != nil {
		return nil, err
	}
	s := &printSink{schema: cfg.Input}
	if id := o.String(optPrintIdentifier); id != "" {
		s.prefix = id + "> "
	}
	printMu.Lock()
	s.out = printStdout
	if toErr {
		s.out = printStderr
	}
	printMu.Unlock()
	return s, nil
}

func (s *printSink) Write(ctx context.Context, batch connectors.ChangeBatch) error {
	s.buf = s.buf[:0]
	for i, row := range batch.Rows {
		kind := connectors.Insert
		if i < len(batch.Kinds) {
			kind = batch.Kinds[i]
		}
		s.buf = append(s.buf, s.prefix...)
		s.buf = formats.AppendPrintRow(s.buf, kind, row, s.schema)
		s.buf = append(s.buf, '\n')
	}
	if len(s.buf) == 0 {
		return nil
	}
	printMu.Lock()
	defer printMu.Unlock()
	_, err := s.out.Write(s.buf)
	return err
}

// Flush has nothing to do: every Write reaches the writer before it returns.
func (s *printSink) Flush(context.Context) error { return nil }

func (s *printSink) Close() error { return nil }
