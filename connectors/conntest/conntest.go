// Package conntest is a conformance suite for connectors, in the spirit of
// testing/fstest: a connector's tests hand it a way to build the connector and it
// checks the contract every runtime relies on.
//
// TestBoundedSource checks that a bounded source ends with io.EOF and stays ended,
// that the rows it returns are not reused afterwards, and above all that a snapshot
// taken between two polls restores to a source that emits exactly the rest: no row
// lost, none repeated, in the same order per split. TestSink checks a sink takes
// batches, flushes and closes.
package conntest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// maxPolls bounds the polls of one read so that a source that never ends fails the
// test instead of hanging it.
const maxPolls = 100_000

// NewSource builds the source under test, restored from state (nil for a fresh start).
type NewSource func(restored []byte) (connectors.Source, error)

// RowKey renders a row with its value kinds, for comparing rows across sources.
func RowKey(r types.Row) string {
	var b strings.Builder
	for i, v := range r {
		if i > 0 {
			b.WriteString("|")
		}
		b.WriteString(v.Kind().String())
		b.WriteString(":")
		b.WriteString(v.String())
	}
	return b.String()
}

// record is one row as returned, keyed by split; key is taken at receipt so that a
// source that later reuses the row's memory is caught.
type record struct {
	split string
	key   string
	row   types.Row
}

// readAll polls src until io.EOF, or until stopAfter rows when stopAfter >= 0 (then
// it returns before EOF, at a poll boundary).
func readAll(t *testing.T, src connectors.Source, stopAfter int) ([]record, bool) {
	t.Helper()
	ctx := context.Background()
	var out []record
	for range maxPolls {
		batches, err := src.Poll(ctx, 10*time.Millisecond)
		if errors.Is(err, io.EOF) {
			if len(batches) > 0 {
				t.Fatalf("Poll returned %d batches with io.EOF; batches must come before the EOF", len(batches))
			}
			return out, true
		}
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		for _, b := range batches {
			if b.Split == "" {
				t.Fatalf("Poll returned a batch without a split")
			}
			for _, r := range b.Rows {
				out = append(out, record{split: b.Split, key: RowKey(r), row: r})
			}
		}
		if stopAfter >= 0 && len(out) >= stopAfter {
			return out, false
		}
	}
	t.Fatalf("source did not end after %d polls", maxPolls)
	return nil, false
}

func checkNotReused(t *testing.T, recs []record) {
	t.Helper()
	for i, r := range recs {
		if RowKey(r.row) != r.key {
			t.Fatalf("row %d changed after it was returned (was %s, now %s): a source must not reuse rows", i, r.key, RowKey(r.row))
		}
	}
}

// perSplit groups row keys by split, keeping each split's order.
func perSplit(recs []record) map[string][]string {
	m := map[string][]string{}
	for _, r := range recs {
		m[r.split] = append(m[r.split], r.key)
	}
	return m
}

// TestBoundedSource runs the conformance checks on a bounded source that emits at
// least one row. newSource must build sources that produce the same rows every time
// (inject a fixed clock where rows depend on time).
func TestBoundedSource(t *testing.T, newSource NewSource) {
	t.Helper()
	src, err := newSource(nil)
	if err != nil {
		t.Fatalf("new source: %v", err)
	}
	all, _ := readAll(t, src, -1)
	if len(all) == 0 {
		t.Fatal("the source emitted no rows; give the suite a source with data")
	}
	checkNotReused(t, all)
	for range 3 {
		if _, err := src.Poll(context.Background(), time.Millisecond); !errors.Is(err, io.EOF) {
			t.Fatalf("Poll after the end: %v, want io.EOF", err)
		}
	}
	if err := src.CheckpointComplete(context.Background(), 1); err != nil {
		t.Fatalf("CheckpointComplete: %v", err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	want := perSplit(all)

	// Restore at several cuts: before the first poll, after one row, in the middle,
	// just before the end and at the end.
	cuts := []int{0, 1, len(all) / 2, len(all) - 1, len(all)}
	for _, cut := range cuts {
		t.Run(fmt.Sprintf("restore-after-%d", cut), func(t *testing.T) {
			first, err := newSource(nil)
			if err != nil {
				t.Fatalf("new source: %v", err)
			}
			var head []record
			if cut > 0 {
				head, _ = readAll(t, first, cut)
			}
			state, err := first.Snapshot()
			if err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			if err := first.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			second, err := newSource(state)
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			defer second.Close()
			tail, _ := readAll(t, second, -1)
			got := perSplit(append(head, tail...))
			if len(got) != len(want) {
				t.Fatalf("restored read has %d splits, want %d", len(got), len(want))
			}
			for split, keys := range want {
				g := got[split]
				if len(g) != len(keys) {
					t.Fatalf("split %s: %d rows before and after the restore, want %d (lost or duplicated rows)", split, len(g), len(keys))
				}
				for i := range keys {
					if g[i] != keys[i] {
						t.Fatalf("split %s row %d: got %s, want %s", split, i, g[i], keys[i])
					}
				}
			}
		})
	}
	t.Run("corrupt-state", func(t *testing.T) {
		for _, bad := range [][]byte{{}, {0xff}, {0xff, 0xff, 0xff}} {
			if s, err := newSource(bad); err == nil {
				s.Close()
				t.Errorf("restoring from %x succeeded; a source must refuse state it cannot read", bad)
			}
		}
	})
}

// TestSink writes batches into a sink, flushing between them, then closes it. It
// checks that Flush and Close succeed, also with nothing written.
func TestSink(t *testing.T, sink connectors.Sink, batches []connectors.ChangeBatch) {
	t.Helper()
	ctx := context.Background()
	if err := sink.Flush(ctx); err != nil {
		t.Fatalf("Flush before any write: %v", err)
	}
	for i, b := range batches {
		if err := sink.Write(ctx, b); err != nil {
			t.Fatalf("Write batch %d: %v", i, err)
		}
		if i%2 == 1 {
			if err := sink.Flush(ctx); err != nil {
				t.Fatalf("Flush after batch %d: %v", i, err)
			}
		}
	}
	if err := sink.Write(ctx, connectors.ChangeBatch{}); err != nil {
		t.Fatalf("Write of an empty batch: %v", err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatalf("second Flush: %v", err)
	}
	if err := sink.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// Logger is a connectors.Logger that records warnings, for tests. It is safe for
// concurrent use.
type Logger struct {
	T        testing.TB
	mu       sync.Mutex
	warnings []string
}

// Warnings returns the warnings logged so far.
func (l *Logger) Warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.warnings...)
}

func (l *Logger) Warn(msg string, args ...any) {
	l.mu.Lock()
	l.warnings = append(l.warnings, fmt.Sprint(append([]any{msg, " "}, args...)...))
	l.mu.Unlock()
	if l.T != nil {
		l.T.Logf("warn: %s %v", msg, args)
	}
}

func (l *Logger) Info(msg string, args ...any) {
	if l.T != nil {
		l.T.Logf("info: %s %v", msg, args)
	}
}
