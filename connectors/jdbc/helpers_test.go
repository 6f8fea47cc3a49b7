package jdbc

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/pgtest"
	"github.com/pipesql/pipesql/types"
)

// testLog collects what a connector logs.
type testLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *testLog) Warn(msg string, args ...any) { l.add("WARN", msg, args) }
func (l *testLog) Info(msg string, args ...any) { l.add("INFO", msg, args) }
func (l *testLog) add(level, msg string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(level, " ", msg, " ", args))
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.lines)
}

// sinkConfig is the SinkConfig of a jdbc table on server pg.
func sinkConfig(pg *pgtest.Server, table string, schema types.Schema, pk []string, extra map[string]string) connectors.SinkConfig {
	opts := map[string]string{"connector": "jdbc", "url": pg.JDBCURL("postgres"), "table-name": table, "username": "postgres"}
	for k, v := range extra {
		opts[k] = v
	}
	return connectors.SinkConfig{
		TableInfo: connectors.TableInfo{Name: "t_" + table, Options: opts, Schema: schema, PrimaryKey: pk},
		Input:     schema,
		Updating:  len(pk) > 0,
		Log:       &testLog{},
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func col(name string, t types.Type) types.Column { return types.Column{Name: name, Type: t} }

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
