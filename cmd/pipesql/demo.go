package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/internal/demo"
	"github.com/pipesql/pipesql/shell"
)

// cmdDemo runs a job file (examples/dau.sql by default) unchanged against an embedded
// Kafka cluster on localhost:9092.., filled with generated clicks, and shows the results
// topic as it updates.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	var cf commonFlags
	fs := newFlagSet("demo", stderr, &cf)
	brokers := fs.Int("brokers", 3, "brokers in the embedded cluster")
	port := fs.Int("port", 9092, "port of the first broker; the others follow")
	rate := fs.Int("rate", 2000, "generated events per second")
	speedup := fs.Duration("speedup", time.Hour, "event time that passes per second of wall-clock time")
	duration := fs.Duration("duration", 0, "stop after this long (default: run until Ctrl-C)")
	eventsTopic := fs.String("events-topic", "events", "topic the generator fills")
	resultsTopic := fs.String("results-topic", "dau", "topic the viewer follows")
	postgres := fs.String("postgres", "", "also upsert the DAU into table "+demo.PostgresTable+" of this PostgreSQL database when it is reachable (jdbc:postgresql://host:port/db?user=...)")
	files, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	file := "examples/dau.sql"
	switch len(files) {
	case 0:
	case 1:
		file = files[0]
	default:
		return usageError(stderr, "demo takes at most one job file (got %d)", len(files))
	}

	ctx, stop := signalContext()
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}

	cluster, err := demo.StartCluster(*brokers, *port, map[string]int32{*eventsTopic: 6, *resultsTopic: 3})
	if err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitJobFailed
	}
	defer cluster.Close()

	logs := &logTail{max: 5}
	// Metrics and /status as for run (--metrics-addr); the screen is the progress display.
	cf.obs.progress = "off"
	o, err := cf.obs.open(io.Discard, logs)
	if err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitUsage
	}
	defer cf.obs.close()
	eng, err := cf.obs.newEngine(o, engine.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitUsage
	}
	r := shell.NewRunner(shell.RunnerOptions{Out: io.Discard, Engine: eng})
	// The embedded cluster is new each time, so the job's checkpoints must be too: a
	// restore would point at offsets this cluster never had.
	checkpoints, err := os.MkdirTemp("", "pipesql-demo-checkpoints")
	if err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitJobFailed
	}
	defer os.RemoveAll(checkpoints)
	if err := r.Session().Set("state.checkpoints.dir", checkpoints); err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitJobFailed
	}
	if err := r.ApplySets(cf.sets); err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitUsage
	}
	stmts, err := r.ParseFile(file)
	var pg *demo.Postgres
	pgNote := ""
	if *postgres != "" && err == nil {
		// The variant: the same DAU, upserted into PostgreSQL as well.
		var perr error
		if pg, perr = demo.ConnectPostgres(ctx, *postgres); perr != nil {
			pgNote = "PostgreSQL not reachable (" + perr.Error() + "): the DAU goes to Kafka only"
		} else {
			defer pg.Close()
			more, perr := r.ParseText("postgres variant", pg.Statements())
			if perr != nil {
				fmt.Fprintf(stderr, "pipesql demo: %v\n", perr)
				return exitUsage
			}
			stmts = append(stmts, more...)
		}
	}
	for _, s := range stmts {
		if err != nil {
			break
		}
		err = r.Execute(ctx, s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", err)
		return exitCode(err)
	}

	var stats demo.Stats
	var results demo.Table
	var wg sync.WaitGroup
	start := time.Now()
	simStart := time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour) // 20:00 in Asia/Shanghai
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := demo.Generate(ctx, demo.GeneratorOptions{
			Topic: *eventsTopic, Brokers: cluster.Addrs, EventsPerSec: *rate, Speedup: *speedup,
			Start: simStart, Apps: []string{"shop", "news", "game", "mail", "maps"}, Users: 200_000, Seed: 1,
		}, &stats)
		if err != nil {
			logs.Write([]byte("generator: " + err.Error() + "\n"))
		}
	}()
	go func() {
		defer wg.Done()
		demo.Follow(ctx, cluster.Addrs, *resultsTopic, &results)
	}()
	jobDone := make(chan error, 1)
	go func() { jobDone <- r.RunJobs(ctx) }()

	screen := shell.IsTerminal(os.Stdout) && stdout == os.Stdout
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var jobErr error
	running := true
	for running {
		select {
		case <-ctx.Done():
			running = false
			jobErr = <-jobDone
		case jobErr = <-jobDone:
			running = false
		case <-ticker.C:
		}
		note := pgNote
		if pg != nil {
			if n, latest, err := pg.Rows(context.WithoutCancel(ctx)); err != nil { // the last frame comes after ctx ends
				note = "PostgreSQL " + demo.PostgresTable + ": " + err.Error()
			} else {
				note = fmt.Sprintf("PostgreSQL %s: %d rows, latest day %s", demo.PostgresTable, n, latest)
			}
		}
		drawDemo(stdout, screen, cluster.Addrs, file, *speedup, &stats, &results, logs, time.Since(start), jobErr, note)
	}
	wg.Wait()
	if jobErr != nil && !errors.Is(jobErr, context.Canceled) {
		fmt.Fprintf(stderr, "pipesql demo: %v\n", jobErr)
		return exitJobFailed
	}
	return exitOK
}

func drawDemo(w io.Writer, screen bool, addrs []string, file string, speedup time.Duration, stats *demo.Stats, results *demo.Table, logs *logTail, up time.Duration, jobErr error, note string) {
	var b strings.Builder
	if screen {
		b.WriteString("\x1b[H\x1b[2J")
	}
	produced, late, sim := stats.Snapshot()
	fmt.Fprintf(&b, "pipesql demo: %s against an embedded cluster of %d brokers (%s)\n", file, len(addrs), strings.Join(addrs, ", "))
	fmt.Fprintf(&b, "up %s | generated %d events (%d late) | event time %s\n",
		up.Truncate(time.Second), produced, late, sim.Format("2006-01-02 15:04 MST"))
	status := "RUNNING"
	if jobErr != nil {
		status = "FAILED: " + jobErr.Error()
	}
	fmt.Fprintf(&b, "job: %s | a day of event time passes every %s; each day's DAU appears when the watermark closes it\n\n",
		status, time.Duration(float64(24*time.Hour)/float64(max(speedup, time.Millisecond))*float64(time.Second)).Truncate(time.Second))
	rows := results.Rows([]string{"day", "app", "dau"})
	shell.PrintBoxed(&b, []string{"day", "app", "dau"}, rows)
	if len(rows) == 0 {
		b.WriteString("(no day has closed yet)\n")
	}
	if note != "" {
		b.WriteString(note + "\n")
	}
	if tail := logs.String(); tail != "" {
		b.WriteString("\nrecent warnings:\n")
		b.WriteString(tail)
	}
	if !screen {
		b.WriteString("\n")
	}
	io.WriteString(w, b.String())
}

// logTail keeps the last few log lines for the demo screen.
type logTail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.lines = append(l.lines, line)
	}
	if len(l.lines) > l.max {
		l.lines = l.lines[len(l.lines)-l.max:]
	}
	return len(p), nil
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return ""
	}
	return strings.Join(l.lines, "\n") + "\n"
}
