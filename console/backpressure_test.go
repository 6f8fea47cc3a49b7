package console

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pipesql/pipesql/connectors/builtin"
)

// slowTerminal is where a print sink writes in TestBrowserBackpressure: a terminal that
// takes a millisecond per line, as a remote one can, so at most about a thousand rows a
// second get through.
type slowTerminal struct {
	mu    sync.Mutex
	lines int
}

func (w *slowTerminal) Write(p []byte) (int, error) {
	n := bytes.Count(p, []byte("\n"))
	time.Sleep(time.Duration(n) * time.Millisecond)
	w.mu.Lock()
	w.lines += n
	w.mu.Unlock()
	return len(p), nil
}

// TestBrowserBackpressure runs a job whose source generates twenty times what its
// print sink can write: the source task spends most of its time waiting for the sink,
// so the API and the page's graph show it HIGH (Flink's level above 50%), and the sink,
// which sends nowhere, OK.
func TestBrowserBackpressure(t *testing.T) {
	ctx := browser(t)
	term := &slowTerminal{}
	defer builtin.SetPrintOutput(term, nil)()
	e, base := serve(t, Options{})
	j, err := e.Submit(context.Background(), plan(t, `
CREATE TABLE gen (a BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20000', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '100000000');
CREATE TABLE printed (a BIGINT) WITH ('connector' = 'print');
INSERT INTO printed SELECT a FROM gen WHERE a % 2 = 0 OR a % 2 = 1;`))
	if err != nil {
		t.Fatal(err)
	}

	type node struct {
		Kind              string
		Backpressure      *float64
		BackpressureLevel string  `json:"backpressure_level"`
		Backpressured     float64 `json:"backpressured_seconds"`
	}
	var scan, sink node
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var d struct{ Graph []node }
		getJSON(t, base+"/api/jobs/"+j.ID(), &d)
		for _, n := range d.Graph {
			switch n.Kind {
			case "TableSourceScan":
				scan = n
			case "Sink":
				sink = n
			}
		}
		if scan.BackpressureLevel == "HIGH" && sink.Backpressure != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API shows the scan %+v, the sink %+v; want the scan HIGH", scan, sink)
		}
	}
	t.Logf("API: source backpressured %.0f%% (%.1f s in all), sink %.0f%%; %d lines printed",
		*scan.Backpressure*100, scan.Backpressured, *sink.Backpressure*100, term.count())
	if *sink.Backpressure != 0 || sink.BackpressureLevel != "OK" {
		t.Errorf("the sink sends nowhere, yet shows backpressure %v (%s)", *sink.Backpressure, sink.BackpressureLevel)
	}

	// Prometheus has the same time, per operator.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	exported := false
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "pipesql_operator_backpressured_seconds_total{") && strings.Contains(line, `operator="source gen"`) {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			exported = err == nil && v > 0
		}
	}
	if !exported {
		t.Errorf("/metrics has no pipesql_operator_backpressured_seconds_total above 0 for the source:\n%s", body)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/job/"+j.ID())); err != nil {
		t.Fatal(err)
	}
	type pageBP struct{ Kind, Level, Share, Label string }
	shown := waitPage(t, ctx, "the scan HIGH on the graph", `[...document.querySelectorAll('#graph g.node')].filter(g => g.dataset.backpressure !== '').map(g => ({
		Kind: g.dataset.kind, Level: g.dataset.backpressureLevel, Share: g.dataset.backpressure,
		Label: (g.querySelector('text.bp') || {}).textContent || ''}))`,
		func(ns []pageBP) bool {
			for _, n := range ns {
				if n.Kind == "TableSourceScan" && n.Level == "HIGH" && n.Label != "" {
					return true
				}
			}
			return false
		})
	t.Logf("page: %+v", shown)
}

func (w *slowTerminal) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}
