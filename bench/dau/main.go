// Command dau is pipesql's end-to-end benchmark: a file of JSON click events through the
// DAU query to a blackhole sink, measured against bare decoding of the same file with
// encoding/json in the same run, so that the ratio survives a noisy shared machine.
//
//	go run ./bench/dau                      # 10M events, 1M users per day, in $TMPDIR
//	go run ./bench/dau -events 2000000 -users 200000 -dir /tmp/dau-bench
//	go run ./bench/dau -slope               # also 2M users per day: memory per extra million
//
// It reports events/s, CPU seconds and peak RSS of the pipesql process, and the same
// figures for the encoding/json baseline (run as a child process of this command, so
// that both are measured the same way).
//
// Peak RSS includes what any pipesql process holds before it reads an event (its
// binary's pages, the Go runtime), so RSS divided by users overstates what a user
// costs. -slope runs the job a second time on as many events with twice the users and
// reports the difference of the two peaks per million users: the marginal memory of
// a user, which is what a larger job pays.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pipesql/pipesql/bench/internal/measure"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-decode-baseline" {
		if err := decodeBaseline(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	events := flag.Int("events", 10_000_000, "events to generate")
	users := flag.Int("users", 1_000_000, "distinct users per day")
	days := flag.Int("days", 2, "days the events span")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "pipesql-dau-bench"), "where the events file and job live")
	binary := flag.String("pipesql", "", "pipesql binary (default: build ./cmd/pipesql)")
	slope := flag.Bool("slope", false, "also run with twice the users and report the marginal RSS per million users")
	flag.Parse()

	if err := run(*events, *users, *days, *dir, *binary, *slope); err != nil {
		fmt.Fprintln(os.Stderr, "dau bench:", err)
		os.Exit(1)
	}
}

func run(events, users, days int, dir, binary string, slope bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := eventsFile(dir, events, users, days)
	if err != nil {
		return err
	}
	info, err := os.Stat(data)
	if err != nil {
		return err
	}
	if binary == "" {
		if binary, err = measure.BuildPipesql(dir); err != nil {
			return err
		}
	}
	job, err := writeJob(dir, "dau-blackhole.sql", data)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	fmt.Printf("input: %d events, %.0f bytes each, %d distinct users per day, %d days\n",
		events, float64(info.Size())/float64(events), users, days)
	base, err := measure.Run(self, "-decode-baseline", data)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	engine, err := measure.Run(binary, "run", job)
	if err != nil {
		return fmt.Errorf("pipesql: %w", err)
	}
	report := func(name string, m measure.Result) {
		fmt.Printf("%-34s %7.2f s wall  %7.2f s CPU  %12.0f events/s  %12.0f events/CPU-s  peak RSS %6.0f MB\n",
			name, m.Wall.Seconds(), m.CPU.Seconds(), float64(events)/m.Wall.Seconds(),
			float64(events)/m.CPU.Seconds(), float64(m.MaxRSS)/(1<<20))
	}
	report("encoding/json decode (baseline)", base)
	report("pipesql DAU -> blackhole", engine)
	fmt.Printf("pipesql wall time / baseline: %.2fx; CPU / baseline: %.2fx\n",
		engine.Wall.Seconds()/base.Wall.Seconds(), engine.CPU.Seconds()/base.CPU.Seconds())
	fmt.Printf("pipesql peak RSS per million distinct users: %.1f MB\n",
		float64(engine.MaxRSS)/(1<<20)/(float64(users)/1e6))
	if !slope {
		return nil
	}

	data2, err := eventsFile(dir, events, 2*users, days)
	if err != nil {
		return err
	}
	job2, err := writeJob(dir, fmt.Sprintf("dau-blackhole-%d-users.sql", 2*users), data2)
	if err != nil {
		return err
	}
	engine2, err := measure.Run(binary, "run", job2)
	if err != nil {
		return fmt.Errorf("pipesql with %d users: %w", 2*users, err)
	}
	report(fmt.Sprintf("pipesql DAU, %d users per day", 2*users), engine2)
	fmt.Printf("pipesql marginal peak RSS per million distinct users: %.1f MB (%.0f MB at %d users, %.0f MB at %d)\n",
		float64(engine2.MaxRSS-engine.MaxRSS)/(1<<20)/(float64(users)/1e6),
		float64(engine.MaxRSS)/(1<<20), users, float64(engine2.MaxRSS)/(1<<20), 2*users)
	return nil
}

// eventsFile returns the path of the events file for these parameters, generating it
// first if it does not exist yet.
func eventsFile(dir string, events, users, days int) (string, error) {
	data := filepath.Join(dir, fmt.Sprintf("events-%d-%d-%d.json", events, users, days))
	if _, err := os.Stat(data); err != nil {
		fmt.Printf("generating %s ...\n", data)
		if err := generate(data, events, users, days); err != nil {
			return "", err
		}
	}
	return data, nil
}

// writeJob writes the DAU job over the events file data to dir/name.
func writeJob(dir, name, data string) (string, error) {
	job := filepath.Join(dir, name)
	return job, os.WriteFile(job, []byte(fmt.Sprintf(jobText, data)), 0o644)
}

const jobText = `
CREATE TABLE events (
  app STRING, user_id STRING, event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE sink (window_start TIMESTAMP(3), app STRING, dau BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink
SELECT window_start, app, COUNT(DISTINCT user_id)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
`

// event is a click as the generator writes it: 8 fields, of which the DAU job reads 3.
type event struct {
	App       string `json:"app"`
	UserID    string `json:"user_id"`
	EventTime int64  `json:"event_time"`
	Action    string `json:"action"`
	Page      string `json:"page"`
	Session   string `json:"session"`
	Device    string `json:"device"`
	Country   string `json:"country"`
}

// generate writes events in event-time order with up to 3 s of disorder, users drawn
// uniformly from users ids per day (so about users distinct ids a day), 16-byte ids.
func generate(path string, events, users, days int) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	apps := []string{"shop", "news", "game", "mail", "maps"}
	devices := []string{"android", "ios", "web"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	span := int64(days) * 86_400_000
	buf := make([]byte, 0, 256)
	for i := 0; i < events; i++ {
		ts := start + span*int64(i)/int64(events) - rng.Int64N(3000)
		buf = buf[:0]
		buf = append(buf, `{"app":"`...)
		buf = append(buf, apps[rng.IntN(len(apps))]...)
		buf = append(buf, `","user_id":"user`...)
		buf = appendPadded(buf, rng.IntN(users), 12)
		buf = append(buf, `","event_time":`...)
		buf = strconv.AppendInt(buf, ts, 10)
		buf = append(buf, `,"action":"click","page":"/products/`...)
		buf = appendPadded(buf, rng.IntN(100000), 6)
		buf = append(buf, `","session":"s-`...)
		buf = appendPadded(buf, rng.IntN(1<<30), 12)
		buf = append(buf, `","device":"`...)
		buf = append(buf, devices[rng.IntN(len(devices))]...)
		buf = append(buf, `","country":"CN","referrer":"https://example.com/"}`...)
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func appendPadded(buf []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

// decodeBaseline decodes every line with encoding/json into the event struct and does
// nothing else: the cost of bare parsing.
func decodeBaseline(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var e event
	n := 0
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return err
		}
		n++
	}
	fmt.Println(n, e.App)
	return sc.Err()
}
