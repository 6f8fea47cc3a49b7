package console

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/exec"
)

// terminal collects what print sinks write.
type terminal struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *terminal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *terminal) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
}

// TestBrowserResults watches a job whose print sink writes a changelog (a running
// aggregate: +I, then -U/+U per update) from its page until it ends: the results table
// shows the latest rows, newest first, and they are the last lines the sink printed,
// kinds and values.
func TestBrowserResults(t *testing.T) {
	ctx := browser(t)
	term := &terminal{}
	defer builtin.SetPrintOutput(term, nil)()
	e, base := serve(t, Options{})
	j, err := e.Submit(context.Background(), plan(t, `
CREATE TABLE gen (a BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50', 'number-of-rows' = '400',
  'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '400');
CREATE TABLE totals (k BIGINT, n BIGINT, top BIGINT) WITH ('connector' = 'print');
INSERT INTO totals SELECT a % 5, COUNT(*), MAX(a) FROM gen GROUP BY a % 5;`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/job/"+j.ID())); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "FINISHED", `document.getElementById('job-status').textContent`, func(s string) bool { return s == "FINISHED" })
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	type pageResults struct {
		Table, Head string
		Rows        []string
	}
	// A poll after the end shows every row written.
	var want []string
	lines := term.lines()
	for i := len(lines) - 1; i >= 0 && len(want) < exec.RecentRowsKept; i-- {
		want = append(want, lines[i])
	}
	got := waitPage(t, ctx, "the results table", `[...document.querySelectorAll('#results .results')].map(r => ({
		Table: r.dataset.table, Head: [...r.querySelectorAll('thead th')].map(th => th.textContent).join(' '),
		Rows: [...r.querySelectorAll('tbody tr')].map(tr => tr.cells[0].textContent + '[' + [...tr.cells].slice(1).map(c => c.textContent).join(', ') + ']')}))`,
		func(rs []pageResults) bool {
			return len(rs) == 1 && len(rs[0].Rows) == len(want) && rs[0].Rows[0] == want[0]
		})[0]
	if got.Table != "totals" || got.Head != "kind k n top" {
		t.Errorf("results of %q with columns %q, want totals with kind k n top", got.Table, got.Head)
	}
	if strings.Join(got.Rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("the page shows, newest first:\n%s\nthe sink printed, last first:\n%s", strings.Join(got.Rows, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]bool{}
	for _, r := range got.Rows {
		kinds[r[:2]] = true
	}
	if !kinds["-U"] || !kinds["+U"] {
		t.Errorf("the rows %q lack the updates' -U/+U", got.Rows)
	}
	t.Logf("%d lines printed; the page shows the last %d, from %s to %s", len(lines), len(got.Rows), got.Rows[len(got.Rows)-1], got.Rows[0])
}
