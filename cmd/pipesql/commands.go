package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/shell"
)

// prepare builds a runner over the process's engine, with the flags applied and the
// init files executed. engineOpts are the front end's engine options (its job ids).
func prepare(ctx context.Context, cf *commonFlags, stdout, stderr io.Writer, explainOnly bool, engineOpts engine.Options) (*shell.Runner, error) {
	o, err := cf.obs.open(stdout, stderr)
	if err != nil {
		return nil, shell.UserError(err)
	}
	eng, err := cf.obs.newEngine(o, engineOpts)
	if err != nil {
		return nil, shell.UserError(err)
	}
	r := shell.NewRunner(shell.RunnerOptions{Out: o.stdout, Engine: eng, ExplainOnly: explainOnly, Watch: o.watch,
		Warn: func(msg string) { o.log.Warn(msg) }})
	if err := r.ApplySets(cf.sets); err != nil {
		return nil, err
	}
	for _, f := range cf.initFiles {
		stmts, err := r.ParseFile(f)
		if err != nil {
			return nil, err
		}
		for _, s := range stmts {
			if err := r.Execute(ctx, s); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// signalContext is cancelled by SIGINT or SIGTERM: jobs stop cleanly, flushing their sinks.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cf commonFlags
	fs := newFlagSet("run", stderr, &cf)
	addCheckpointFlags(fs, &cf)
	files, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(files) != 1 {
		return usageError(stderr, "run needs exactly one job file (got %d)", len(files))
	}
	ctx, stop := signalContext()
	defer stop()
	defer cf.obs.close()
	err = runFile(ctx, &cf, files[0], stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pipesql: %v\n", err)
	}
	return exitCode(err)
}

func runFile(ctx context.Context, cf *commonFlags, file string, stdin io.Reader, stdout, stderr io.Writer) error {
	r, err := prepare(ctx, cf, stdout, stderr, false, engine.Options{})
	if err != nil {
		return err
	}
	var stmts []parser.Statement
	if file == "-" {
		src, err := io.ReadAll(stdin)
		if err != nil {
			return err
		}
		stmts, err = r.ParseText("<stdin>", string(src))
		if err != nil {
			return err
		}
	} else if stmts, err = r.ParseFile(file); err != nil {
		return err
	}
	for _, s := range stmts {
		if err := r.Execute(ctx, s); err != nil {
			return err
		}
	}
	return r.RunJobs(ctx)
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	var cf commonFlags
	fs := newFlagSet("explain", stderr, &cf)
	files, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(files) != 1 {
		return usageError(stderr, "explain needs exactly one job file (got %d)", len(files))
	}
	defer cf.obs.close()
	ctx := context.Background()
	r, err := prepare(ctx, &cf, stdout, stderr, true, engine.Options{})
	if err == nil {
		var stmts []parser.Statement
		stmts, err = r.ParseFile(files[0])
		for _, s := range stmts {
			if err = r.Execute(ctx, s); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "pipesql: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// cmdShell runs the shell: interactive on a terminal, else (-f FILE or a pipe) a script,
// which means what it means to `pipesql run`.
func cmdShell(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cf commonFlags
	fs := newFlagSet("shell", stderr, &cf)
	fs.StringVar(&cf.file, "f", "", "run `FILE` non-interactively and exit")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) != 0 {
		return usageError(stderr, "shell takes no arguments (got %q); use -f FILE to run a file", rest)
	}
	defer cf.obs.close()
	if in, ok := stdin.(*os.File); ok && cf.file == "" && shell.IsTerminal(in) {
		err := shell.Interactive(shell.Config{
			Version: version, In: in, Out: stdout, Err: stderr,
			Prepare: func(stdout, stderr io.Writer) (*shell.Runner, error) {
				// Jobs have ids shaped like Flink's, and their log records say whose they are.
				return prepare(context.Background(), &cf, stdout, stderr, false, engine.Options{JobID: engine.FlinkJobID, TagLogs: true})
			},
		})
		if err != nil {
			fmt.Fprintf(stderr, "pipesql: %v\n", err)
		}
		return exitCode(err)
	}
	file := cf.file
	if file == "" {
		file = "-"
	}
	ctx, stop := signalContext()
	defer stop()
	err = runFile(ctx, &cf, file, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pipesql: %v\n", err)
	}
	return exitCode(err)
}
