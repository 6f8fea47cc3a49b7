package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/types"
)

// TestFilesystemParallelDecodeMatchesPoll reads files of several thousand lines (blank
// lines, bad records, a last line without a break) with the decoding workers and with
// Poll decoding alone: the rows, the final position, the skipped records and the error
// must be the same, and no poll may return more than maxBatch rows. A source restored
// from a position the parallel reader gave mid-file must read the rest exactly.
func TestFilesystemParallelDecodeMatchesPoll(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // the workers are started with 2 processors or more
	dir := t.TempDir()
	var a, b strings.Builder
	for i := range 5000 {
		switch {
		case i%997 == 0:
			a.WriteString("\n")
		case i%1301 == 0:
			a.WriteString(`{"user_id":"bad","n":"x"}` + "\n")
		default:
			fmt.Fprintf(&a, `{"user_id":"u%d","app":"a%d","n":%d,"ts":"2024-01-01 00:00:%02d"}`+"\r\n", i, i%7, i, i%60)
		}
	}
	for i := range 1500 {
		fmt.Fprintf(&b, `{"user_id":"v%d","n":%d}`, i, i)
		if i < 1499 {
			b.WriteString("\n")
		}
	}
	writeFile(t, filepath.Join(dir, "a.json"), a.String())
	writeFile(t, filepath.Join(dir, "b.json"), b.String())

	type result struct {
		polls     []string
		rows      []types.Row
		skipped   int64
		err       error
		snapshots [][]byte
	}
	read := func(parallel bool, opts map[string]string, restored []byte) result {
		src, err := newFileSource(fsSourceConfig(dir, "json", opts, nil, restored), newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if !parallel {
			src.par.stop()
			src.par = nil
		} else if src.par == nil {
			t.Fatal("the source does not decode in parallel (GOMAXPROCS 1?)")
		}
		var r result
		for {
			batches, err := src.Poll(context.Background(), time.Second)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.err = err
				break
			}
			var desc []string
			for _, sb := range batches {
				desc = append(desc, fmt.Sprintf("%s:%d", filepath.Base(sb.Split), len(sb.Rows)))
				r.rows = append(r.rows, sb.Rows...)
			}
			r.polls = append(r.polls, strings.Join(desc, ","))
			snap, err := src.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r.snapshots = append(r.snapshots, snap)
		}
		r.skipped = src.Skipped()
		return r
	}
	same := func(name string, seq, par result) {
		t.Helper()
		if fmt.Sprint(seq.err) != fmt.Sprint(par.err) {
			t.Fatalf("%s: error %v by Poll, %v in parallel", name, seq.err, par.err)
		}
		if seq.skipped != par.skipped {
			t.Errorf("%s: %d skipped by Poll, %d in parallel", name, seq.skipped, par.skipped)
		}
		n := len(seq.rows)
		if seq.err != nil {
			n = min(n, len(par.rows)) // the rows before the error depend on how polls are cut
		} else if len(seq.rows) != len(par.rows) {
			t.Fatalf("%s: %d rows by Poll, %d in parallel", name, len(seq.rows), len(par.rows))
		}
		for i := range n {
			if fmt.Sprint(seq.rows[i]) != fmt.Sprint(par.rows[i]) {
				t.Fatalf("%s: row %d is %v by Poll, %v in parallel", name, i, seq.rows[i], par.rows[i])
			}
		}
		for i, p := range par.polls {
			if rows := pollRows(p); rows > maxBatch {
				t.Errorf("%s: parallel poll %d returned %d rows (%s), more than %d", name, i, rows, p, maxBatch)
			}
		}
		if seq.err == nil && string(seq.snapshots[len(seq.snapshots)-1]) != string(par.snapshots[len(par.snapshots)-1]) {
			t.Errorf("%s: final position %s by Poll, %s in parallel", name, seq.snapshots[len(seq.snapshots)-1], par.snapshots[len(par.snapshots)-1])
		}
	}

	ignore := map[string]string{"json.ignore-parse-errors": "true"}
	seq, par := read(false, ignore, nil), read(true, ignore, nil)
	same("ignore-parse-errors", seq, par)
	if seq.skipped != 3 || len(seq.rows) != 5000-6-3+1500 {
		t.Errorf("%d rows, %d skipped", len(seq.rows), seq.skipped)
	}
	same("first bad record", read(false, nil, nil), read(true, nil, nil))

	// Restore from positions the parallel reader took: the rest is read exactly once.
	for _, k := range []int{0, 2, len(par.snapshots) / 2} {
		snap := par.snapshots[k]
		rest := read(true, ignore, snap)
		seqRest := read(false, ignore, snap)
		same(fmt.Sprintf("restored after poll %d", k), seqRest, rest)
		before := 0
		for _, p := range par.polls[:k+1] {
			before += pollRows(p)
		}
		if before+len(rest.rows) != len(par.rows) {
			t.Errorf("restored after poll %d: %d rows before, %d after, want %d in all", k, before, len(rest.rows), len(par.rows))
		}
	}
}

// pollRows is the number of rows of a poll described as "file:rows,file:rows".
func pollRows(desc string) int {
	total := 0
	for _, part := range strings.Split(desc, ",") {
		var n int
		fmt.Sscanf(part[strings.Index(part, ":")+1:], "%d", &n)
		total += n
	}
	return total
}
