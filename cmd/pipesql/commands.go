package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
)

func functionNames() []string { return funcs.Names() }

// newLogger logs warnings and errors to stderr as text.
func newLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// prepare builds a runner with the flags applied and the init files executed.
func prepare(ctx context.Context, cf *commonFlags, stdout, stderr io.Writer, explainOnly bool) (*runner, error) {
	o, err := cf.obs.open(stdout, stderr)
	if err != nil {
		return nil, sqlError{err}
	}
	r := newRunner(o.stdout, o.log)
	r.obs = o
	if r.eng, err = cf.obs.newEngine(o, engine.Options{}); err != nil {
		return nil, sqlError{err}
	}
	r.explainOnly = explainOnly
	if err := r.applySets(cf.sets); err != nil {
		return nil, err
	}
	for _, f := range cf.initFiles {
		stmts, err := r.parseFile(f)
		if err != nil {
			return nil, err
		}
		for _, s := range stmts {
			if err := r.execute(ctx, s); err != nil {
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
	r, err := prepare(ctx, cf, stdout, stderr, false)
	if err != nil {
		return err
	}
	var stmts []parser.Statement
	if file == "-" {
		src, err := io.ReadAll(stdin)
		if err != nil {
			return err
		}
		stmts, err = r.parseText("<stdin>", string(src))
		if err != nil {
			return err
		}
	} else if stmts, err = r.parseFile(file); err != nil {
		return err
	}
	for _, s := range stmts {
		if err := r.execute(ctx, s); err != nil {
			return err
		}
	}
	return r.runJobs(ctx)
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
	ctx := context.Background()
	r, err := prepare(ctx, &cf, stdout, stderr, true)
	if err == nil {
		var stmts []parser.Statement
		stmts, err = r.parseFile(files[0])
		for _, s := range stmts {
			if err = r.execute(ctx, s); err != nil {
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
