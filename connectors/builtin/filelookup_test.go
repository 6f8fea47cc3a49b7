package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// TestFileLookup looks keys up in a json file, rewrites the file, and sees the new rows
// once the reload interval has passed, not before.
func TestFileLookup(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "customers.json")
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"id": 1, "name": "one"}` + "\n" + `{"id": 2, "name": "two"}` + "\n" + `{"id": 2, "name": "deux"}` + "\n")
	f, _ := connectors.LookupOf("filesystem")
	clock := &stepClock{now: time.Unix(1_000_000, 0)}
	schema := types.Schema{{Name: "id", Type: types.TypeInt}, {Name: "name", Type: types.TypeString}}
	ctx := context.Background()
	l, err := f(ctx, connectors.LookupConfig{TableInfo: connectors.TableInfo{Name: "customers", Schema: schema,
		Options: map[string]string{"connector": "filesystem", "path": dir, "format": "json",
			"lookup.full-cache.periodic-reload.interval": "10 s"}},
		Keys: []string{"id"}, Log: discardLog{}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	look := func(id int64) string {
		rows, err := l.Lookup(ctx, types.Row{types.BigIntValue(id)})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(rows)
	}
	if got := look(2) + look(1) + look(3); got != "[[2 two] [2 deux]][[1 one]][]" {
		t.Fatalf("lookups %s", got)
	}
	write(`{"id": 1, "name": "uno"}` + "\n" + `{"id": 3, "name": "three"}` + "\n")
	clock.now = clock.now.Add(9 * time.Second)
	if got := look(1) + look(3); got != "[[1 one]][]" {
		t.Fatalf("before the reload: %s", got)
	}
	clock.now = clock.now.Add(time.Second)
	if got := look(1) + look(3) + look(2); got != "[[1 uno]][[3 three]][]" {
		t.Fatalf("after the reload: %s", got)
	}
}

// stepClock is a clock the test moves; timers and tickers never fire.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time                            { return c.now }
func (c *stepClock) NewTimer(time.Duration) connectors.Timer   { return stoppedTimer{} }
func (c *stepClock) NewTicker(time.Duration) connectors.Ticker { return stoppedTicker{} }

type stoppedTimer struct{}

func (stoppedTimer) C() <-chan time.Time { return nil }
func (stoppedTimer) Stop() bool          { return true }

type stoppedTicker struct{}

func (stoppedTicker) C() <-chan time.Time { return nil }
func (stoppedTicker) Stop()               {}

type discardLog struct{}

func (discardLog) Warn(string, ...any) {}
func (discardLog) Info(string, ...any) {}

// TestFileLookupChangelog looks keys up in a debezium-json file: the lookup sees the
// table as its changes leave it (an update replaces the row, a delete removes it).
func TestFileLookupChangelog(t *testing.T) {
	dir := t.TempDir()
	lines := `{"before":null,"after":{"id":1,"name":"one"},"op":"c"}
{"before":null,"after":{"id":2,"name":"two"},"op":"c"}
{"before":{"id":1,"name":"one"},"after":{"id":1,"name":"uno"},"op":"u"}
{"before":null,"after":{"id":3,"name":"three"},"op":"r"}
{"before":{"id":2,"name":"two"},"after":null,"op":"d"}
`
	if err := os.WriteFile(filepath.Join(dir, "customers.json"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := connectors.LookupOf("filesystem")
	schema := types.Schema{{Name: "id", Type: types.TypeInt}, {Name: "name", Type: types.TypeString}}
	ctx := context.Background()
	l, err := f(ctx, connectors.LookupConfig{TableInfo: connectors.TableInfo{Name: "customers", Schema: schema,
		Options: map[string]string{"connector": "filesystem", "path": dir, "format": "debezium-json"}},
		Keys: []string{"id"}, Log: discardLog{}, Clock: &stepClock{now: time.Unix(1_000_000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got string
	for id := range int64(4) {
		rows, err := l.Lookup(ctx, types.Row{types.BigIntValue(id)})
		if err != nil {
			t.Fatal(err)
		}
		got += fmt.Sprint(rows)
	}
	if got != "[][[1 uno]][][[3 three]]" {
		t.Fatalf("lookups %s", got)
	}
}
