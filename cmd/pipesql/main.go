// Command pipesql runs streaming SQL jobs written in the Flink SQL dialect.
//
// See README.md for the reference; `pipesql --help` for a summary.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/shell"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes, as documented in --help.
const (
	exitOK        = 0
	exitJobFailed = 1
	exitUsage     = 2
)

const usageText = `pipesql runs streaming SQL jobs written in the Flink SQL dialect.

Usage:
  pipesql run [flags] FILE       run the statements of a job file until its jobs finish
  pipesql explain [flags] FILE   validate a job file and print the plan of each job (connects to nothing)
  pipesql shell [flags]          interactive SQL shell
  pipesql demo [FILE]            run examples/dau.sql (or FILE) against an embedded Kafka cluster
                                 on localhost:9092.. filled with generated clicks; shows the results
  pipesql --version

Flags of run, explain and shell:
  -i FILE            run FILE first (CREATE TABLE and SET statements shared by several jobs); repeatable
  --set KEY=VALUE    set a configuration option, as SET 'KEY' = 'VALUE' would; repeatable
  --metrics-addr HOST:PORT   serve Prometheus metrics on /metrics and job status as JSON on
                     /status (or SET 'metrics.address' = 'HOST:PORT'); port 0 picks one; the web
                     console is at / on the same server (--web-addr HOST:PORT is the same flag)
  --web-allow-remote allow an address other hosts reach (default: loopback only); the
                     console's actions then need --web-token TOKEN (default: a random one, logged)
  --log-format text|json     log lines as key=value text (default) or JSON objects
  --log-level LEVEL  least level logged: debug, info, warn (default) or error
  --progress MODE    run's progress: auto (default: a line redrawn on a terminal, else a log
                     record per job every 30s), line, log or off; --progress-interval DURATION

Flags of run (checkpoints: SET 'execution.checkpointing.interval' = '10 s' turns them on):
  --from-savepoint DIR         start from the savepoint in DIR (execution.savepoint.path)
  --savepoint-dir DIR          on SIGTERM, also write a savepoint under DIR
  --allow-non-restored-state   start even when saved state no longer matches the job: changed
                               operators start empty (execution.savepoint.ignore-unclaimed-state)
  --fresh                      start without restoring the job's checkpoints; they are kept,
                               renamed to DIR.<time> (pipesql.restore.fresh)

Flags of shell:
  -f FILE            run FILE non-interactively, exactly as run does; piped input does the same
  History is kept in $PIPESQL_HISTORY, else ~/.pipesql_history.

Examples:
  pipesql run examples/dau-datagen.sql
  pipesql run --set table.local-time-zone=UTC -i tables.sql job.sql
  pipesql explain examples/dau.sql

Exit codes: 0 success, 1 a job failed, 2 usage or SQL error, or saved state that does not
match the job or its input.
`

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// runMain is main without the process: tests call it directly.
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	defer startProfiling(stderr)()
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	case "-version", "--version", "version":
		fmt.Fprintf(stdout, "pipesql %s\n", version)
		return exitOK
	case "run":
		return cmdRun(args[1:], stdin, stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "shell":
		return cmdShell(args[1:], stdin, stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "pipesql: unknown command %q%s\n\n%s", args[0], suggestCommand(args[0]), usageText)
	return exitUsage
}

func suggestCommand(cmd string) string {
	if c := config.Closest(cmd, []string{"run", "explain", "shell", "demo"}, 2); c != "" {
		return fmt.Sprintf(": did you mean %q?", c)
	}
	return ""
}

// commonFlags are the flags of run, explain and shell.
type commonFlags struct {
	initFiles []string
	sets      []string
	file      string   // -f for the shell
	obs       obsFlags // --metrics-addr, --log-format, --log-level, --progress (observe.go)
}

type repeated struct{ values *[]string }

func (r repeated) String() string {
	if r.values == nil {
		return ""
	}
	return strings.Join(*r.values, ",")
}

func (r repeated) Set(v string) error { *r.values = append(*r.values, v); return nil }

// parseFlags parses flags anywhere among the arguments (pipesql run job.sql --set k=v
// works as well as the other order) and returns the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name string, stderr io.Writer, cf *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(repeated{&cf.initFiles}, "i", "run `FILE` first; repeatable")
	fs.Var(repeated{&cf.sets}, "set", "set a configuration option `KEY=VALUE`; repeatable")
	cf.obs.register(fs)
	fs.Usage = func() { fmt.Fprint(stderr, usageText) }
	return fs
}

// usageError prints msg and the usage and returns the usage exit code.
func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "pipesql: "+format+"\n", args...)
	fmt.Fprintf(stderr, "Run 'pipesql --help' for usage.\n")
	return exitUsage
}

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, shell.ErrUser):
		return exitUsage
	}
	return exitJobFailed
}
