package console

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// plan plans the INSERT that ends script.
func plan(t testing.TB, script string) *planner.Program {
	t.Helper()
	stmts, err := parser.ParseScript("", script)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.NewSession()
	for _, st := range stmts[:len(stmts)-1] {
		if err := s.Apply(st); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := s.Plan(stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// serve starts an engine whose metrics server is the console, on loopback.
func serve(t testing.TB, opts Options) (*engine.Engine, string) {
	t.Helper()
	e, err := engine.New(engine.Options{MetricsAddr: "127.0.0.1:0",
		Handler: func(e *engine.Engine) http.Handler { return Handler(e, opts) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, "http://" + e.MetricsAddr()
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func post(t *testing.T, url string, header map[string]string) (int, map[string]string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// The API of a bounded job that ended: its graph carries the runtime's numbers on the
// right nodes (the truth: 1000 rows generated, the filter keeps a > 500), its
// checkpoints and SQL; the page and /metrics are served beside it.
func TestAPIOfAJob(t *testing.T) {
	ckpt, sp := t.TempDir(), t.TempDir()
	e, base := serve(t, Options{})
	j, err := e.Submit(context.Background(), plan(t, `
SET 'execution.checkpointing.interval' = '20 ms';
SET 'state.checkpoints.dir' = '`+ckpt+`';
SET 'execution.checkpointing.savepoint-dir' = '`+sp+`';
CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '1000');
CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT a FROM gen WHERE a > 500;`))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	var list struct{ Jobs []jobSummary }
	getJSON(t, base+"/api/jobs", &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != j.ID() || list.Jobs[0].State != "FINISHED" || list.Jobs[0].Records != 1000 {
		t.Fatalf("jobs %+v", list.Jobs)
	}
	var d struct {
		Graph []struct {
			Kind       string
			Task       string
			Fused      bool
			Children   []string
			RecordsIn  *int64 `json:"records_in"`
			RecordsOut *int64 `json:"records_out"`
		}
		SQL         []string
		Checkpoints checkpointsView
		Partitions  []partitionView
	}
	getJSON(t, base+"/api/jobs/"+j.ID(), &d)
	kinds := []string{}
	for _, n := range d.Graph {
		kinds = append(kinds, n.Kind)
	}
	if got := strings.Join(kinds, " "); got != "Sink Calc TableSourceScan" {
		t.Fatalf("graph %s, want Sink Calc TableSourceScan", got)
	}
	sink, calc, scan := d.Graph[0], d.Graph[1], d.Graph[2]
	if sink.RecordsIn == nil || *sink.RecordsIn != 500 || len(sink.Children) != 1 {
		t.Errorf("sink node %+v, want 500 records in", sink)
	}
	if !calc.Fused || calc.RecordsIn != nil || calc.Task != "source gen" {
		t.Errorf("calc node %+v, want fused into source gen, no numbers of its own", calc)
	}
	if scan.RecordsIn == nil || *scan.RecordsIn != 1000 || *scan.RecordsOut != 500 {
		t.Errorf("scan node %+v, want 1000 in and 500 out", scan)
	}
	if len(d.SQL) != 1 || !strings.Contains(d.SQL[0], "a > 500") {
		t.Errorf("sql %q", d.SQL)
	}
	h := d.Checkpoints.History
	if d.Checkpoints.Completed == 0 || len(h) == 0 || h[len(h)-1].Failure != "" || h[len(h)-1].Triggered == "" {
		t.Errorf("checkpoints %+v", d.Checkpoints)
	}
	if len(d.Partitions) != 1 || d.Partitions[0].Records != 1000 {
		t.Errorf("partitions %+v", d.Partitions)
	}
	for _, path := range []string{"/", "/assets/app.js", "/metrics", "/status"} {
		resp, err := http.Get(base + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %v %v", path, err, resp.Status)
		}
		resp.Body.Close()
	}
	if code, body := post(t, base+"/api/jobs/"+j.ID()+"/savepoint", map[string]string{TokenHeader: ""}); code != http.StatusConflict {
		t.Errorf("savepoint of an ended job: %d %v, want 409", code, body)
	}
	if code, _ := post(t, base+"/api/jobs/nope/stop-with-savepoint", map[string]string{TokenHeader: ""}); code != http.StatusNotFound {
		t.Errorf("stop of no job: %d, want 404", code)
	}
}

// Actions: the header always, the token when the request came in on an address other
// hosts reach, a loopback host name on loopback; a savepoint of a running job and a
// stop with one.
func TestActions(t *testing.T) {
	ckpt, sp := t.TempDir(), t.TempDir()
	e, base := serve(t, Options{Token: "s3cret"})
	j, err := e.Submit(context.Background(), plan(t, `
SET 'execution.checkpointing.interval' = '1 h';
SET 'state.checkpoints.dir' = '`+ckpt+`';
SET 'execution.checkpointing.savepoint-dir' = '`+sp+`';
CREATE TABLE gen (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT a FROM gen;`))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); j.Status().Records == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no records: %s", j.Status())
		}
	}
	url := base + "/api/jobs/" + j.ID()
	if code, _ := post(t, url+"/savepoint", nil); code != http.StatusForbidden {
		t.Errorf("an action without the header: %d, want 403", code)
	}
	code, body := post(t, url+"/savepoint", map[string]string{TokenHeader: ""})
	if code != http.StatusOK || body["savepoint"] == "" {
		t.Fatalf("savepoint: %d %v", code, body)
	}
	if _, err := os.Stat(body["savepoint"]); err != nil || !j.Running() {
		t.Errorf("savepoint %s: %v; running %v", body["savepoint"], err, j.Running())
	}

	h := &handler{e: e, opts: Options{Token: "s3cret"}}
	remote := func(token *string) *http.Request {
		r := httptest.NewRequest("POST", "http://10.1.2.3:9249/api/jobs/1/savepoint", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 9249}))
		if token != nil {
			r.Header.Set(TokenHeader, *token)
		}
		return r
	}
	wrong, right := "nope", "s3cret"
	if code, _ := h.authorize(remote(&wrong)); code != http.StatusUnauthorized {
		t.Errorf("a remote action with a wrong token: %d, want 401", code)
	}
	if code, _ := h.authorize(remote(&right)); code != 0 {
		t.Errorf("a remote action with the token: %d, want allowed", code)
	}
	h.opts.Token = ""
	if code, msg := h.authorize(remote(&right)); code != http.StatusForbidden || !strings.Contains(msg, "--web-token") {
		t.Errorf("a remote action without a configured token: %d %q, want 403 naming --web-token", code, msg)
	}
	rebound := httptest.NewRequest("POST", "http://evil.example/api/jobs/1/savepoint", nil)
	rebound = rebound.WithContext(context.WithValue(rebound.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}))
	rebound.Header.Set(TokenHeader, "")
	if code, _ := h.authorize(rebound); code != http.StatusForbidden {
		t.Errorf("a loopback action for another host name: %d, want 403", code)
	}

	code, body = post(t, url+"/stop-with-savepoint", map[string]string{TokenHeader: ""})
	if code != http.StatusOK || body["savepoint"] == "" {
		t.Fatalf("stop with savepoint: %d %v", code, body)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if st := j.Status(); st.State != "FINISHED" || st.Savepoint != body["savepoint"] {
		t.Errorf("after the stop: %s, savepoint %q; want FINISHED with %q", st.State, st.Savepoint, body["savepoint"])
	}
}
