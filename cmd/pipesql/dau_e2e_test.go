package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The DAU job through the real binary, checked row by row against an answer computed
// here by a straightforward, separate implementation.
//
// The events are out of order within the 5 s watermark bound, cross two midnights of
// Asia/Shanghai (16:00 UTC), come from several apps with skewed users, and include rows
// with NULL users or apps, malformed JSON, a mistyped field, and rows so late that their
// day closed thousands of rows earlier.

const dauJob = `
SET 'table.local-time-zone' = 'Asia/Shanghai';

CREATE TABLE events (
  app        STRING,
  user_id    STRING,
  event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '%s',
  'format' = 'json',
  'json.ignore-parse-errors' = '%s'
);

CREATE TABLE dau_tvf (
  {day} STRING, app STRING, dau BIGINT, events BIGINT
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');

CREATE TABLE dau_legacy (
  {day} STRING, app STRING, dau BIGINT, events BIGINT
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');

INSERT INTO dau_tvf
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;

INSERT INTO dau_legacy
SELECT DATE_FORMAT(TUMBLE_START(ts, INTERVAL '1' DAY), 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id), COUNT(*)
FROM events
GROUP BY TUMBLE(ts, INTERVAL '1' DAY), app;
`

// dauJobText fills in the job's paths; {day} stands for the backquoted column name,
// which a raw string cannot hold.
func dauJobText(in, ignoreErrors, outTVF, outLegacy string) string {
	return strings.ReplaceAll(fmt.Sprintf(dauJob, in, ignoreErrors, outTVF, outLegacy), "{day}", "`day`")
}

type dauKey struct{ day, app string }

type dauTruth struct {
	users  map[dauKey]map[string]bool
	events map[dauKey]int
}

// lateGap is how many rows before a late row the watermark must already have passed the
// end of its day, so that the row is late however the runtime batches its input.
const lateGap = 5000

// writeDAUEvents writes the events to dir/events.json and returns the truth.
func writeDAUEvents(t *testing.T, dir string) dauTruth {
	t.Helper()
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 5)), 1.2, 1, 20000)
	apps := []string{"shop", "news", "game", "mail"}
	truth := dauTruth{users: map[dauKey]map[string]bool{}, events: map[dauKey]int{}}
	dayOf := func(ms int64) string { return time.UnixMilli(ms).In(shanghai).Format("2006-01-02") }
	dayEnd := func(ms int64) int64 {
		d := time.UnixMilli(ms).In(shanghai)
		return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, shanghai).UnixMilli()
	}

	f, err := os.Create(filepath.Join(dir, "events.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, shanghai).UnixMilli()
	end := base + 40*3600*1000 // crosses midnight twice
	var maxTs []int64          // max event time after each written row
	var lateDays []int64       // event times in closed days, for late rows
	maxSoFar := int64(0)
	for base < end {
		base += rng.Int64N(2000)
		row := map[string]any{}
		var ts int64
		late := false
		n := len(maxTs)
		switch {
		case n > lateGap && len(lateDays) > 0 && rng.IntN(500) == 0:
			// A row for a day whose window the watermark closed at least lateGap rows ago.
			ts = lateDays[rng.IntN(len(lateDays))]
			if maxTs[n-lateGap]-5000 < dayEnd(ts) {
				ts = 0
			} else {
				late = true
			}
		}
		if !late {
			ts = base - rng.Int64N(4000) // out of order, within the 5 s bound
			if rng.IntN(50) == 0 {
				lateDays = append(lateDays, ts)
			}
		}
		row["event_time"] = ts
		app := apps[rng.IntN(len(apps))]
		if rng.IntN(4) == 0 {
			app = apps[0] // skew: one busy app
		}
		user := fmt.Sprintf("u-%05d", zipf.Uint64())
		var appVal, userVal any = app, user
		if rng.IntN(200) == 0 {
			appVal = nil
		}
		if rng.IntN(100) == 0 {
			userVal = nil
		}
		row["app"], row["user_id"] = appVal, userVal
		row["action"] = "click"

		switch rng.IntN(300) {
		case 0: // malformed JSON: skipped
			fmt.Fprintf(w, "{\"app\": \"%s\", \"user_id\": \n", app)
			continue
		case 1: // a mistyped field: skipped
			fmt.Fprintf(w, "{\"app\": \"%s\", \"user_id\": \"%s\", \"event_time\": \"yesterday\"}\n", app, user)
			continue
		}
		line, _ := json.Marshal(row)
		w.Write(line)
		w.WriteByte('\n')
		maxSoFar = max(maxSoFar, ts)
		maxTs = append(maxTs, maxSoFar)
		if late {
			continue
		}
		k := dauKey{dayOf(ts), "<NULL>"}
		if appVal != nil {
			k.app = app
		}
		if truth.users[k] == nil {
			truth.users[k] = map[string]bool{}
		}
		if userVal != nil {
			truth.users[k][user] = true
		}
		truth.events[k]++
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return truth
}

// readDAUOutput reads every JSON row the filesystem sink wrote under dir.
func readDAUOutput(t *testing.T, dir string) map[dauKey][2]int64 {
	t.Helper()
	got := map[dauKey][2]int64{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.HasPrefix(info.Name(), ".") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var row struct {
				Day    string  `json:"day"`
				App    *string `json:"app"`
				DAU    int64   `json:"dau"`
				Events int64   `json:"events"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				return fmt.Errorf("%s: %q: %v", path, line, err)
			}
			k := dauKey{row.Day, "<NULL>"}
			if row.App != nil {
				k.app = *row.App
			}
			if _, dup := got[k]; dup {
				t.Errorf("%s: window %v emitted twice", path, k)
			}
			got[k] = [2]int64{row.DAU, row.Events}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDAUAgainstTruth(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	truth := writeDAUEvents(t, in)
	outTVF, outLegacy := filepath.Join(dir, "out-tvf"), filepath.Join(dir, "out-legacy")
	job := filepath.Join(dir, "dau.sql")
	os.WriteFile(job, []byte(dauJobText(in, "true", outTVF, outLegacy)), 0o644)

	r := pipesql(t, "run", job)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	want := map[dauKey][2]int64{}
	for k, users := range truth.users {
		want[k] = [2]int64{int64(len(users)), int64(truth.events[k])}
	}
	if len(want) < 12 {
		t.Fatalf("the generated data has only %d day/app groups; the test needs several days", len(want))
	}
	for name, out := range map[string]string{"TUMBLE TVF": outTVF, "GROUP BY TUMBLE": outLegacy} {
		compareDAU(t, name, readDAUOutput(t, out), want)
	}
}

func compareDAU(t *testing.T, name string, got, want map[dauKey][2]int64) {
	t.Helper()
	var keys []dauKey
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].day+keys[i].app < keys[j].day+keys[j].app
	})
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			t.Errorf("%s: missing row %v, want dau=%d events=%d", name, k, w[0], w[1])
		case !wok:
			t.Errorf("%s: unexpected row %v: dau=%d events=%d", name, k, g[0], g[1])
		case g != w:
			t.Errorf("%s: %v: got dau=%d events=%d, want dau=%d events=%d", name, k, g[0], g[1], w[0], w[1])
		}
	}
}

// Without json.ignore-parse-errors the first bad record fails the job (exit 1) with an
// error naming the source, the position and a snippet of the record.
func TestDAUBadRecordFailsJob(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	writeDAUEvents(t, in)
	job := filepath.Join(dir, "dau.sql")
	os.WriteFile(job, []byte(dauJobText(in, "false", filepath.Join(dir, "a"), filepath.Join(dir, "b"))), 0o644)
	r := pipesql(t, "run", job)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{"events", filepath.Join(in, "events.json") + ":", `"user_id"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("error lacks %q:\n%s", want, r.stderr)
		}
	}
}
