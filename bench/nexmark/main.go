// Command nexmark runs the Nexmark benchmark's queries in pipesql and compares the
// throughput per CPU core with Flink's published figures.
//
//	go run ./bench/nexmark                          # q0..q22, 10M events each
//	go run ./bench/nexmark -events 2000000 -queries q0,q1,q5
//
// Each query is the file of Nexmark's Flink runner (queries/, SQL unchanged) after the
// runner's table configuration (mini-batch, see runnerConf) and DDL (the nexmark
// source, its views), with the runner's ${...} variables filled in, run by `pipesql run` as a child process to the blackhole sink (or the file
// sink q10 declares). The command prints, per query: events/s, CPU seconds, events per
// CPU-second, peak RSS, Flink 2.x's events per core per second from Nexmark's V2 runner
// (its published throughput divided by the cores it used), and pipesql's ratio to it.
// A query pipesql cannot run yet is reported with the first line of its error.
package main

import (
	"embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/bench/internal/measure"
)

//go:embed queries/*.sql
var queries embed.FS

// flinkPerCore is Nexmark's V2 runner figure for Flink per query: throughput (events/s)
// over the cores it used, from GUIDE_V2.md of github.com/nexmark/nexmark (50M events
// per query). q6 has no figure: Flink cannot run it.
var flinkPerCore = map[string]float64{
	"q0": 2.65e6 / 7, "q1": 2.86e6 / 7.24, "q2": 2.95e6 / 7.13, "q3": 1.9e6 / 8.69,
	"q4": 347.84e3 / 12.33, "q5": 920.4e3 / 12.35, "q7": 262.46e3 / 11.45, "q8": 2.08e6 / 12.83,
	"q9": 149.52e3 / 10.86, "q10": 904.32e3 / 6.81, "q11": 427.88e3 / 9.29, "q12": 1.95e6 / 10.03,
	"q13": 1.5e6 / 7.97, "q14": 2.03e6 / 7.83, "q15": 1.37e6 / 8.16, "q16": 487.29e3 / 10.77,
	"q17": 1.63e6 / 10.15, "q18": 769.77e3 / 11.77, "q19": 558.84e3 / 13.09, "q20": 194.96e3 / 10.98,
	"q21": 1.15e6 / 7.81, "q22": 1.63e6 / 7.7,
}

// runnerConf is the table configuration Nexmark's Flink runner sets in its
// flink-conf.yaml for the published figures: table.exec.mini-batch.enabled (with an
// allow-latency of 2 s and a size of 50000, and the distinct-aggregate split, which
// pipesql has no use for: its mini-batch is what the source read in one poll, and its
// planner has fixed rules). An aggregate then emits one change per group per batch,
// not one per event.
const runnerConf = "SET 'table.exec.mini-batch.enabled' = 'true';\n"

// sideInputRows is the size of q13's side input, the ids 0..9999 that the query looks
// up by auction % 10000, as the runner's side input generator writes it.
const sideInputRows = 10000

func main() {
	events := flag.Int64("events", 10_000_000, "events per query")
	tps := flag.Int64("tps", 10_000_000, "event rate of the source (events per second of event time), as the runner's TPS")
	list := flag.String("queries", allQueries(), "comma-separated queries to run")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "pipesql-nexmark-bench"), "where jobs and outputs live")
	binary := flag.String("pipesql", "", "pipesql binary (default: build ./cmd/pipesql)")
	flag.Parse()
	if err := run(*events, *tps, strings.Split(*list, ","), *dir, *binary); err != nil {
		fmt.Fprintln(os.Stderr, "nexmark bench:", err)
		os.Exit(1)
	}
}

func allQueries() string {
	var qs []string
	for i := 0; i <= 22; i++ {
		qs = append(qs, "q"+strconv.Itoa(i))
	}
	return strings.Join(qs, ",")
}

func run(events, tps int64, list []string, dir, binary string) error {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	var err error
	if binary == "" {
		if binary, err = measure.BuildPipesql(dir); err != nil {
			return err
		}
	}
	var side strings.Builder
	for i := 0; i < sideInputRows; i++ {
		fmt.Fprintf(&side, "%d,%d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "side_input.txt"), []byte(side.String()), 0o644); err != nil {
		return err
	}
	vars := map[string]string{
		"TPS": strconv.FormatInt(tps, 10), "EVENTS_NUM": strconv.FormatInt(events, 10),
		"PERSON_PROPORTION": "1", "AUCTION_PROPORTION": "3", "BID_PROPORTION": "46",
		"NEXMARK_TABLE": "datagen", "NEXMARK_DIR": dir, "FLINK_HOME": dir,
		"SUBMIT_TIME": time.Now().Format("20060102150405"),
	}
	prelude, err := script(vars, "ddl_gen.sql", "ddl_views.sql")
	if err != nil {
		return err
	}
	prelude = runnerConf + prelude
	fmt.Printf("Nexmark, %d events per query, pipesql %s on %d CPUs\n\n", events, filepath.Base(binary), runtime.NumCPU())
	fmt.Println("| query | result | events/s | CPU s | events/CPU-s | peak RSS MB | Flink events/core-s | ratio |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, q := range list {
		q = strings.TrimSpace(q)
		body, err := script(vars, q+".sql")
		if err != nil {
			return err
		}
		job := filepath.Join(dir, q+".sql")
		if err := os.WriteFile(job, []byte(prelude+"\n"+body), 0o644); err != nil {
			return err
		}
		flink := "-"
		if f, ok := flinkPerCore[q]; ok {
			flink = fmt.Sprintf("%.0f", f)
		}
		m, err := measure.Run(binary, "run", "--progress", "off", job)
		if err != nil {
			fmt.Printf("| %s | fails: %s | | | | | %s | |\n", q, firstLine(err.Error()), flink)
			continue
		}
		perCPU := float64(events) / m.CPU.Seconds()
		ratio := "-"
		if f, ok := flinkPerCore[q]; ok {
			ratio = fmt.Sprintf("%.1fx", perCPU/f)
		}
		fmt.Printf("| %s | ok | %.0f | %.1f | %.0f | %.0f | %s | %s |\n", q, float64(events)/m.Wall.Seconds(),
			m.CPU.Seconds(), perCPU, float64(m.MaxRSS)/(1<<20), flink, ratio)
	}
	return nil
}

// script returns the named query files with the runner's variables filled in.
func script(vars map[string]string, names ...string) (string, error) {
	var out strings.Builder
	for _, name := range names {
		b, err := queries.ReadFile("queries/" + name)
		if err != nil {
			return "", fmt.Errorf("no query file %s", name)
		}
		text := string(b)
		for k, v := range vars {
			text = strings.ReplaceAll(text, "${"+k+"}", v)
		}
		out.WriteString(strings.TrimSpace(text))
		if !strings.HasSuffix(out.String(), ";") {
			out.WriteString(";")
		}
		out.WriteString("\n")
	}
	return out.String(), nil
}

// firstLine returns the part of a child's error that says what went wrong: the first
// line of pipesql's message (file:line:col: what), without the exit status.
func firstLine(s string) string {
	_, tail, ok := strings.Cut(s, "exit status ")
	if ok {
		_, tail, _ = strings.Cut(tail, ": ")
	} else {
		tail = s
	}
	line, _, _ := strings.Cut(strings.TrimSpace(tail), "\n")
	line = strings.TrimPrefix(line, "pipesql: ")
	return strings.ReplaceAll(line, "|", "/")
}
