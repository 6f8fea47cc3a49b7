package obs

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec"
)

// NewPrometheusRegistry returns a Prometheus registry with the metrics of the jobs of
// reg (read at each scrape) and the Go runtime's and the process's own.
func NewPrometheusRegistry(reg *Registry) *prometheus.Registry {
	pr := prometheus.NewRegistry()
	pr.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		NewCollector(reg),
	)
	return pr
}

// Collector is a prometheus.Collector of the jobs of a Registry: at each scrape it reads
// every job's status and metrics and turns them into the series documented in doc.go.
// It is unchecked (Describe sends nothing): the series come and go with jobs, tables,
// partitions and operators.
type Collector struct {
	reg *Registry

	mu    sync.Mutex
	descs map[string]*prometheus.Desc // by name and label names
}

// NewCollector returns a Collector of reg's jobs.
func NewCollector(reg *Registry) *Collector {
	return &Collector{reg: reg, descs: map[string]*prometheus.Desc{}}
}

// Describe sends nothing: the Collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Labels of every job series.
var jobLabels = []string{"job_id", "job_name"}

// Names of the source series the runtime itself measures; a connector measure of the
// same name is left out rather than clash with them.
var sourceBuiltins = map[string]bool{
	"records_total": true, "skipped_records_total": true, "null_rowtime_records_total": true,
	"degraded": true, "watermark_seconds": true, "watermark_delay_seconds": true,
	"split_records_total": true, "split_idle": true, "split_watermark_seconds": true,
}

// Collect sends the series of every job.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.reg.Trackers() {
		s, m := t.Snapshot()
		e := &emitter{c: c, ch: ch}
		c.collectJob(e, t, s, m)
	}
}

// emitter sends series, creating their descriptions on first use.
type emitter struct {
	c  *Collector
	ch chan<- prometheus.Metric
}

func (e *emitter) send(kind prometheus.ValueType, name, help string, labelNames, labelValues []string, v float64) {
	key := name + "\x00" + strings.Join(labelNames, ",")
	e.c.mu.Lock()
	d := e.c.descs[key]
	if d == nil {
		d = prometheus.NewDesc(name, help, labelNames, nil)
		e.c.descs[key] = d
	}
	e.c.mu.Unlock()
	m, err := prometheus.NewConstMetric(d, kind, v, labelValues...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	e.ch <- m
}

// histogram sends a connector's Histogram measure.
func (e *emitter) histogram(name, help string, labelNames, labelValues []string, m connectors.Measure) {
	key := name + "\x00" + strings.Join(labelNames, ",")
	e.c.mu.Lock()
	d := e.c.descs[key]
	if d == nil {
		d = prometheus.NewDesc(name, help, labelNames, nil)
		e.c.descs[key] = d
	}
	e.c.mu.Unlock()
	buckets := make(map[float64]uint64, len(m.Buckets))
	for _, b := range m.Buckets {
		buckets[b.UpperBound] = b.Count
	}
	h, err := prometheus.NewConstHistogram(d, m.Count, m.Value, buckets, labelValues...)
	if err != nil {
		h = prometheus.NewInvalidMetric(d, err)
	}
	e.ch <- h
}

func (e *emitter) counter(name, help string, names, values []string, v float64) {
	e.send(prometheus.CounterValue, name, help, names, values, v)
}

func (e *emitter) gauge(name, help string, names, values []string, v float64) {
	e.send(prometheus.GaugeValue, name, help, names, values, v)
}

func with(base []string, more ...string) []string {
	return append(append(make([]string, 0, len(base)+len(more)), base...), more...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c *Collector) collectJob(e *emitter, t *Tracker, s JobStatus, m exec.Metrics) {
	jl := []string{t.ID(), t.Name()}
	for _, st := range States {
		e.gauge("pipesql_job_state", "1 for the state the job is in (RUNNING, DEGRADED, RESTARTING, FAILED, FINISHED, CANCELED, INITIALIZING, CREATED), 0 for the others.",
			with(jobLabels, "state"), with(jl, string(st)), boolValue(s.State == st))
	}
	e.counter("pipesql_job_restarts_total", "Restarts of the job under its restart strategy.", jobLabels, jl, float64(s.Restarts))
	if !s.Started.IsZero() {
		end := s.At
		if !s.Ended.IsZero() {
			end = s.Ended
		}
		e.gauge("pipesql_job_uptime_seconds", "Seconds since the job started (until it ended).", jobLabels, jl, end.Sub(s.Started).Seconds())
	}
	e.gauge("pipesql_job_records_per_second", "Rows the job's sources produced per second, over the last seconds.", jobLabels, jl, s.RecordsPerSecond)
	if s.LagKnown {
		e.gauge("pipesql_job_lag_records", "Records the job's sources have yet to read to reach the end of their inputs.", jobLabels, jl, float64(s.Lag))
		e.gauge("pipesql_job_catch_up_seconds", "Seconds until the lag is read at the rate it shrinks, 0 when it does not shrink.", jobLabels, jl, s.CatchUp.Seconds())
	}
	if !s.Watermark.IsZero() {
		e.gauge("pipesql_job_watermark_seconds", "The least watermark of the job's sinks, as Unix time.", jobLabels, jl, float64(s.Watermark.UnixMicro())/1e6)
		e.gauge("pipesql_job_watermark_delay_seconds", "How far the job's watermark is behind the wall clock.", jobLabels, jl, s.WatermarkDelay.Seconds())
	}

	cp := m.Checkpoints
	e.counter("pipesql_checkpoints_completed_total", "Checkpoints completed.", jobLabels, jl, float64(cp.Completed))
	e.counter("pipesql_checkpoints_failed_total", "Checkpoints that failed (storage errors, timeouts).", jobLabels, jl, float64(cp.Failed))
	e.gauge("pipesql_checkpoint_last_id", "Id of the latest completed checkpoint, 0 before the first.", jobLabels, jl, float64(cp.LastID))
	e.gauge("pipesql_checkpoint_last_duration_seconds", "Duration of the latest completed checkpoint, from its trigger to its commit.", jobLabels, jl, cp.LastDuration.Seconds())
	e.gauge("pipesql_checkpoint_last_write_seconds", "Part of the latest checkpoint spent writing to storage in the background.", jobLabels, jl, cp.LastWrite.Seconds())
	e.gauge("pipesql_checkpoint_last_size_bytes", "Bytes of state the latest completed checkpoint wrote.", jobLabels, jl, float64(cp.LastBytes))
	e.gauge("pipesql_checkpoint_last_reused_values", "Values the latest checkpoint carried over unchanged from the one before.", jobLabels, jl, float64(cp.LastReused))
	e.gauge("pipesql_checkpoint_last_pause_seconds", "Longest in-line pause an operator took for the latest checkpoint.", jobLabels, jl, cp.LastPause.Seconds())
	e.gauge("pipesql_checkpoint_max_pause_seconds", "Longest in-line pause an operator took for any checkpoint.", jobLabels, jl, cp.MaxPause.Seconds())
	if at := s.Checkpoints.LastAt; !at.IsZero() {
		e.gauge("pipesql_checkpoint_last_completed_timestamp_seconds", "When the latest checkpoint was seen completed, as Unix time.", jobLabels, jl, float64(at.UnixMicro())/1e6)
	}

	et := t.EventTime()
	opLabels := with(jobLabels, "pipeline", "operator")
	seen := map[string]int{}
	for _, op := range m.Operators {
		pipeline := strconv.Itoa(op.Pipeline)
		name := op.Name
		if n := seen[pipeline+"\x00"+name]; n > 0 {
			name = fmt.Sprintf("%s %d", name, n+1) // two operators of a kind in one pipeline
		}
		seen[pipeline+"\x00"+op.Name]++
		ol := with(jl, pipeline, name)
		e.counter("pipesql_operator_records_in_total", "Rows the operator received.", opLabels, ol, float64(op.RecordsIn))
		e.counter("pipesql_operator_records_out_total", "Rows the operator emitted.", opLabels, ol, float64(op.RecordsOut))
		e.counter("pipesql_operator_late_records_total", "Rows dropped because every window they belong to had fired.", opLabels, ol, float64(op.LateDropped))
		e.counter("pipesql_operator_bad_records_total", "Rows dropped because they cannot be processed (a NULL event time).", opLabels, ol, float64(op.BadRecords))
		e.gauge("pipesql_operator_checkpoint_pause_seconds", "How long the operator last stopped processing for a checkpoint.", opLabels, ol, op.SnapshotPause.Seconds())
		e.counter("pipesql_operator_backpressured_seconds_total", "Time the operator waited to send downstream because the next operator's input queue was full (Flink's back-pressured time).", opLabels, ol, op.Backpressured.Seconds())
		if wm := op.Watermark; wm != exec.NoWatermark && wm != exec.MaxWatermark {
			at := et.instant(wm)
			e.gauge("pipesql_operator_watermark_seconds", "The operator's input watermark, as Unix time.", opLabels, ol, float64(at.UnixMicro())/1e6)
			e.gauge("pipesql_operator_watermark_delay_seconds", "How far the operator's input watermark is behind the wall clock.", opLabels, ol, s.At.Sub(at).Seconds())
		}
		if st := op.State; st != nil {
			e.gauge("pipesql_aggregate_groups", "Group entries the aggregate holds (per open window slice for a window aggregate).", opLabels, ol, float64(st.Groups))
			aggLabels := with(opLabels, "aggregate")
			for _, a := range st.Aggregates {
				al := with(ol, a.Name)
				e.gauge("pipesql_aggregate_shared_state_bytes", "Memory of the state an aggregate's groups share: the dictionary of a COUNT(DISTINCT) over strings or 64-bit numbers.",
					aggLabels, al, float64(a.SharedBytes))
				e.gauge("pipesql_aggregate_dictionary_entries", "Distinct values in the dictionary of a COUNT(DISTINCT) over strings or 64-bit numbers.",
					aggLabels, al, float64(a.DictionaryEntries))
			}
		}
		if table, ok := strings.CutPrefix(name, "sink "); ok && len(op.Connector) > 0 {
			collectMeasures(e, "pipesql_sink_", op.Connector, with(jobLabels, "pipeline", "table"), with(jl, pipeline, table))
		}
	}

	srcLabels := with(jobLabels, "pipeline", "table")
	splitLabels := with(srcLabels, "split")
	seenSrc := map[string]int{}
	for _, src := range m.Sources {
		pipeline, table := strconv.Itoa(src.Pipeline), src.Table
		if n := seenSrc[pipeline+"\x00"+table]; n > 0 {
			table = fmt.Sprintf("%s %d", table, n+1) // a table read twice in one pipeline (a self-join)
		}
		seenSrc[pipeline+"\x00"+src.Table]++
		sl := with(jl, pipeline, table)
		e.counter("pipesql_source_records_total", "Rows the source's connector returned.", srcLabels, sl, float64(src.RecordsRead))
		e.counter("pipesql_source_skipped_records_total", "Records the format could not decode and skipped.", srcLabels, sl, float64(src.Skipped))
		e.counter("pipesql_source_null_rowtime_records_total", "Rows dropped because their event time was NULL.", srcLabels, sl, float64(src.NullRowtime))
		e.gauge("pipesql_source_degraded", "1 while the connector works in a reduced way (discovery or commits failing, no broker reachable); the reason is in /status.",
			srcLabels, sl, boolValue(src.Degraded != ""))
		if wm := src.Watermark; wm != exec.NoWatermark && wm != exec.MaxWatermark {
			at := et.instant(wm)
			e.gauge("pipesql_source_watermark_seconds", "The watermark the source emitted last, as Unix time.", srcLabels, sl, float64(at.UnixMicro())/1e6)
			e.gauge("pipesql_source_watermark_delay_seconds", "How far the source's watermark is behind the wall clock.", srcLabels, sl, s.At.Sub(at).Seconds())
		}
		for _, sp := range src.Splits {
			spl := with(sl, sp.Split)
			e.counter("pipesql_source_split_records_total", "Rows read from the split.", splitLabels, spl, float64(sp.Records))
			e.gauge("pipesql_source_split_idle", "1 while the split is idle and holds the watermark back no longer.", splitLabels, spl, boolValue(sp.Idle))
			if wm := sp.Watermark; wm != exec.NoWatermark && wm != exec.MaxWatermark {
				e.gauge("pipesql_source_split_watermark_seconds", "The largest watermark value seen in the split, as Unix time.",
					splitLabels, spl, float64(et.instant(wm).UnixMicro())/1e6)
			}
		}
		collectMeasures(e, "pipesql_source_", src.Connector, srcLabels, sl)
	}
}

// collectMeasures sends what a connector reported. A measure name reported for splits
// gets the split label on all its series, so that each name has one set of labels.
func collectMeasures(e *emitter, prefix string, ms []connectors.Measure, labels, values []string) {
	perSplit := map[string]bool{}
	for _, m := range ms {
		if m.Split != "" {
			perSplit[m.Name] = true
		}
	}
	splitLabels := with(labels, "split")
	for _, m := range ms {
		name := metricName(m.Name)
		if name == "" || sourceBuiltins[name] {
			continue
		}
		kind := prometheus.GaugeValue
		if m.Kind == connectors.Counter {
			kind = prometheus.CounterValue
		}
		help := m.Help
		if help == "" {
			help = "Reported by the connector."
		}
		if m.Kind == connectors.Histogram {
			e.histogram(prefix+name, help, labels, values, m)
			continue
		}
		if perSplit[m.Name] {
			e.send(kind, prefix+name, help, splitLabels, with(values, m.Split), m.Value)
		} else {
			e.send(kind, prefix+name, help, labels, values, m.Value)
		}
	}
}

// metricName keeps the characters a Prometheus metric name may have.
func metricName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}
