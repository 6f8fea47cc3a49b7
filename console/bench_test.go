package console

import (
	"context"
	"io"
	"net/http"
	osexec "os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pipesql/pipesql/engine"
)

// BenchmarkConsoleOpenVsClosed runs one job as fast as its source goes (datagen, a
// filter, a GROUP BY with COUNT(DISTINCT), checkpoints every second) and measures its
// throughput in alternating phases, each round in the same run: nobody watching
// (closed), the page's polling (GET /api/jobs/{id} once a second, what an open job page
// does), and ten times that. It reports records/s per phase and each watched phase as a
// ratio to the closed one; with Debian's chromium, also the job page open in it
// (headless, on the same two cores: its polling and drawing together).
//
//	go test -run '^$' -bench ConsoleOpenVsClosed -benchtime 3x ./console/
func BenchmarkConsoleOpenVsClosed(b *testing.B) {
	ckpt := b.TempDir()
	e, base := serve(b, Options{})
	prog := plan(b, `
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '`+ckpt+`';
CREATE TABLE gen (a INT, u INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000000',
  'fields.u.min' = '1', 'fields.u.max' = '100000');
CREATE TABLE sink (k INT, n BIGINT, users BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT a % 16, COUNT(*), COUNT(DISTINCT u) FROM gen WHERE a > 0 GROUP BY a % 16;`)
	j, err := e.Submit(context.Background(), prog)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Stop(context.Background(), j.ID(), engine.StopOptions{})
	records := func() int64 { return j.Status().Records }
	for deadline := time.Now().Add(30 * time.Second); records() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("no records")
		}
	}
	time.Sleep(time.Second) // past the start
	url := base + "/api/jobs/" + j.ID()
	phase := func(poll time.Duration) float64 {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			if poll == 0 {
				<-stop
				return
			}
			tick := time.NewTicker(poll)
			defer tick.Stop()
			for {
				resp, err := http.Get(url)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		const d = 3 * time.Second
		n0, t0 := records(), time.Now()
		time.Sleep(d)
		n1, t1 := records(), time.Now()
		close(stop)
		<-done
		return float64(n1-n0) / t1.Sub(t0).Seconds()
	}
	// The page itself in headless chromium, when there is one: its polling, and the
	// browser drawing the page and its charts on the same two cores.
	var page context.Context
	if _, err := osexec.LookPath("chromium"); err == nil {
		page = browser(b)
	}
	inBrowser := func() float64 {
		if err := chromedp.Do(page, chromedp.Navigate(url[:len(url)-len("/api/jobs/"+j.ID())]+"/#/job/"+j.ID())); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Second) // the page loaded and polling
		r := phase(0)
		if err := chromedp.Do(page, chromedp.Navigate("about:blank")); err != nil {
			b.Fatal(err)
		}
		return r
	}
	var closed, open, open10, browsing float64
	b.ResetTimer()
	for range b.N {
		closed += phase(0)
		open += phase(time.Second)
		open10 += phase(100 * time.Millisecond)
		if page != nil {
			browsing += inBrowser()
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(closed/n, "closed_rec/s")
	b.ReportMetric(open/n, "open_rec/s")
	b.ReportMetric(open10/n, "open10x_rec/s")
	b.ReportMetric(open/closed, "open/closed")
	b.ReportMetric(open10/closed, "open10x/closed")
	if page != nil {
		b.ReportMetric(browsing/n, "chromium_rec/s")
		b.ReportMetric(browsing/closed, "chromium/closed")
	}
}

// BenchmarkJobAPI is the cost of one GET /api/jobs/{id} of a running job, the request an
// open job page makes once a second: its time per request is the share of a core the
// page costs the process (a request of 200 us each second is 0.02%).
//
//	go test -run '^$' -bench JobAPI ./console/
func BenchmarkJobAPI(b *testing.B) {
	ckpt := b.TempDir()
	e, base := serve(b, Options{})
	j, err := e.Submit(context.Background(), plan(b, `
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '`+ckpt+`';
CREATE TABLE gen (a INT, u INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE sink (k INT, n BIGINT, users BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT a % 16, COUNT(*), COUNT(DISTINCT u) FROM gen WHERE a > 0 GROUP BY a % 16;`))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Stop(context.Background(), j.ID(), engine.StopOptions{})
	url := base + "/api/jobs/" + j.ID()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
