package obs

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scraped is one scrape of a /metrics endpoint.
type scraped map[string]*dto.MetricFamily

// scrape reads url (…/metrics) as Prometheus would.
func scrape(t *testing.T, url string) scraped {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape %s: %s\n%s", url, resp.Status, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return fams
}

// value returns the value of the series of name whose labels include want ("k=v" pairs).
func (s scraped) value(name string, want ...string) (float64, bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// sum adds the values of every series of name whose labels include want.
func (s scraped) sum(name string, want ...string) float64 {
	f := s[name]
	if f == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if labels[k] != v {
				continue next
			}
		}
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return total
}

// series lists the label sets of name, for failure messages.
func (s scraped) series(name string) string {
	f := s[name]
	if f == nil {
		return name + ": none"
	}
	var out []string
	for _, m := range f.Metric {
		var ls []string
		for _, l := range m.Label {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		out = append(out, fmt.Sprintf("{%s} %v", strings.Join(ls, ","), m.GetCounter().GetValue()+m.GetGauge().GetValue()))
	}
	sort.Strings(out)
	return name + ":\n  " + strings.Join(out, "\n  ")
}

// statusDoc is the /status document.
type statusDoc struct {
	Jobs []struct {
		ID          string  `json:"id"`
		Name        string  `json:"name"`
		State       string  `json:"state"`
		Status      string  `json:"status"`
		Reason      string  `json:"reason"`
		Restarts    int     `json:"restarts"`
		NextAttempt string  `json:"next_attempt"`
		Records     int64   `json:"records"`
		Lag         *int64  `json:"lag"`
		Watermark   string  `json:"watermark"`
		RatePerSec  float64 `json:"records_per_second"`
		Checkpoints struct {
			Completed int64  `json:"completed"`
			Failed    int64  `json:"failed"`
			LastID    uint64 `json:"last_id"`
		} `json:"checkpoints"`
		Sources []struct {
			Table    string `json:"table"`
			Degraded string `json:"degraded"`
		} `json:"sources"`
	} `json:"jobs"`
}

// getStatus reads url (…/status).
func getStatus(t *testing.T, url string) statusDoc {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("get %s: %v", url, err)
	}
	defer resp.Body.Close()
	var doc statusDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("decode %s: %v", url, err)
	}
	return doc
}

// deadline bounds the waits of the Kafka tests: reaching it fails the test. It is not a
// timing threshold: healthy runs finish far sooner.
const deadline = 90 * time.Second

// eventually polls cond until it holds, failing the test at the deadline with what
// describe says.
func eventually(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			msg := ""
			if describe != nil {
				msg = "\n" + describe()
			}
			t.Fatalf("timed out waiting for %s%s", what, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
