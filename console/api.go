package console

import (
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// jobSummary is a job in the jobs list (GET /api/jobs).
type jobSummary struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	State            string   `json:"state"`
	Status           string   `json:"status"`
	Reason           string   `json:"reason,omitempty"`
	Started          string   `json:"started,omitempty"`
	Ended            string   `json:"ended,omitempty"`
	UptimeSec        float64  `json:"uptime_seconds"`
	Records          int64    `json:"records"`
	RecordsPerSecond float64  `json:"records_per_second"`
	Restarts         int      `json:"restarts"`
	Lag              *int64   `json:"lag,omitempty"`
	Watermark        string   `json:"watermark,omitempty"`
	WatermarkDelay   *float64 `json:"watermark_delay_seconds,omitempty"`
	Savepoint        string   `json:"savepoint,omitempty"`
}

func summarize(s obs.JobStatus) jobSummary {
	v := jobSummary{ID: s.ID, Name: s.Name, State: string(s.State), Status: s.String(), Reason: s.Reason,
		Started: stamp(s.Started), Ended: stamp(s.Ended), Records: s.Records, RecordsPerSecond: round(s.RecordsPerSecond),
		Restarts: s.Restarts, Watermark: s.WatermarkText, Savepoint: s.Savepoint}
	if !s.Started.IsZero() {
		end := s.At
		if !s.Ended.IsZero() {
			end = s.Ended
		}
		v.UptimeSec = round(end.Sub(s.Started).Seconds())
	}
	if s.LagKnown {
		lag := s.Lag
		v.Lag = &lag
	}
	if !s.Watermark.IsZero() {
		d := round(s.WatermarkDelay.Seconds())
		v.WatermarkDelay = &d
	}
	return v
}

// jobDetail is one job's page (GET /api/jobs/{id}).
type jobDetail struct {
	Job jobSummary `json:"job"`
	// Status is the job's full status, as /status shows it.
	Status      obs.JobStatus    `json:"status"`
	SQL         []string         `json:"sql"`
	Plan        string           `json:"plan"`
	Graph       []graphView      `json:"graph"`
	Partitions  []partitionView  `json:"partitions"`
	Checkpoints checkpointsView  `json:"checkpoints"`
	Exceptions  []exceptionView  `json:"exceptions"`
	Sources     []sourceView     `json:"sources"`
	Watermark   watermarkView    `json:"watermark"`
	Results     []resultsView    `json:"results"`
	At          string           `json:"at"`
	Savepoints  savepointSetting `json:"savepoints"`
}

type savepointSetting struct {
	// Dir is the job's execution.checkpointing.savepoint-dir, "" when unset (the
	// actions then need a directory of their own).
	Dir          string `json:"dir,omitempty"`
	Checkpointed bool   `json:"checkpointing"`
}

// resultsView is the latest rows a sink (or a SELECT's collect) wrote.
type resultsView struct {
	Node      string `json:"node"`            // the graph node of the sink
	Table     string `json:"table,omitempty"` // "" for a SELECT's results
	Connector string `json:"connector,omitempty"`
	// Columns are the columns written; Rows the latest rows, oldest first, at most
	// exec.RecentRowsKept; Written how many rows were written since the console first
	// asked for them (the sink keeps rows only from then on).
	Columns []string    `json:"columns"`
	Rows    []resultRow `json:"rows"`
	Written int64       `json:"rows_written"`
}

// resultRow is one row written: its change kind (+I, -U, +U, -D) and its values as
// the print connector shows them.
type resultRow struct {
	Kind   string   `json:"kind"`
	Values []string `json:"values"`
}

type watermarkView struct {
	Text     string   `json:"text,omitempty"`
	DelaySec *float64 `json:"delay_seconds,omitempty"`
	End      bool     `json:"end_of_input,omitempty"`
}

type graphView struct {
	*graphNode
	RecordsIn    *int64   `json:"records_in,omitempty"`
	RecordsOut   *int64   `json:"records_out,omitempty"`
	InPerSecond  *float64 `json:"records_in_per_second,omitempty"`
	OutPerSecond *float64 `json:"records_out_per_second,omitempty"`
	Watermark    string   `json:"watermark,omitempty"`
	LateDropped  int64    `json:"late_records,omitempty"`
	BadRecords   int64    `json:"bad_records,omitempty"`
	PauseSec     float64  `json:"checkpoint_pause_seconds,omitempty"`
	// BackpressuredSec is how long the task's output waited, in all, for room in the
	// next task's input queue; Backpressure the share of the recent wall time it did
	// (0 to 1) and BackpressureLevel Flink's name for it: OK up to 10%, LOW up to 50%,
	// HIGH above.
	BackpressuredSec  *float64 `json:"backpressured_seconds,omitempty"`
	Backpressure      *float64 `json:"backpressure,omitempty"`
	BackpressureLevel string   `json:"backpressure_level,omitempty"`
	StateGroups       *int64   `json:"state_groups,omitempty"`
	Degraded          string   `json:"degraded,omitempty"`
}

type partitionView struct {
	Table      string   `json:"table"`
	Split      string   `json:"split"`
	Records    int64    `json:"records"`
	Offset     *int64   `json:"offset,omitempty"`
	EndOffset  *int64   `json:"end_offset,omitempty"`
	Lag        *int64   `json:"lag,omitempty"`
	Watermark  string   `json:"watermark,omitempty"`
	Idle       bool     `json:"idle,omitempty"`
	LastActive string   `json:"last_active,omitempty"`
	PerSecond  *float64 `json:"records_per_second,omitempty"`
}

type sourceView struct {
	Table    string `json:"table"`
	Records  int64  `json:"records"`
	Lag      *int64 `json:"lag,omitempty"`
	Degraded string `json:"degraded,omitempty"`
	Splits   int    `json:"splits"`
}

type checkpointsView struct {
	Completed int64            `json:"completed"`
	Failed    int64            `json:"failed"`
	MaxPause  float64          `json:"max_pause_seconds"`
	History   []checkpointView `json:"history"`
}

type checkpointView struct {
	ID          uint64  `json:"id"`
	Triggered   string  `json:"triggered"`
	Ended       string  `json:"ended"`
	DurationSec float64 `json:"duration_seconds"`
	Bytes       int64   `json:"size_bytes"`
	PauseSec    float64 `json:"pause_seconds"`
	Savepoint   string  `json:"savepoint,omitempty"`
	Failure     string  `json:"failure,omitempty"`
}

type exceptionView struct {
	At      string `json:"at"`
	Error   string `json:"error"`
	Restart int    `json:"restart,omitempty"`
}

// rateWindow is how far back per-operator and per-partition rates look.
const rateWindow = 10 * time.Second

// counts is one sample of a job's per-task and per-split counters.
type counts struct {
	at       time.Time
	restarts int
	in, out  []int64
	blocked  []int64 // nanoseconds
	splits   map[string]int64
}

// rates keeps, per job, the recent samples of its counters, taken when its page is
// asked for: a job nobody looks at costs nothing.
type rates struct {
	mu   sync.Mutex
	jobs map[string][]counts
}

// add samples c for job and returns the oldest sample in the window to measure rates
// against (ok false when there is none yet).
func (r *rates) add(job string, c counts) (base counts, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[string][]counts{}
	}
	s := r.jobs[job]
	if n := len(s); n > 0 && (s[n-1].restarts != c.restarts || len(s[n-1].in) != len(c.in)) {
		s = nil // a restart starts the counters again
	}
	if n := len(s); n == 0 || c.at.Sub(s[n-1].at) >= 500*time.Millisecond {
		s = append(s, c)
	}
	for len(s) > 2 && c.at.Sub(s[1].at) >= rateWindow {
		s = s[1:]
	}
	r.jobs[job] = s
	if c.at.Sub(s[0].at) < 500*time.Millisecond {
		return counts{}, false
	}
	return s[0], true
}

// detail builds the page of job j.
func (h *handler) detail(j *engine.Job) jobDetail {
	t := h.tracker(j.ID())
	var st obs.JobStatus
	var m exec.Metrics
	if t != nil {
		st, m = t.Snapshot()
	} else {
		st, m = j.Status(), j.Exec().Metrics()
	}
	et := obs.EventTime{}
	if t != nil {
		et = t.EventTime()
	}
	now := st.At
	prog := j.Program()
	d := jobDetail{Job: summarize(st), Status: st, Plan: planner.Explain(prog), At: stamp(now),
		Partitions: []partitionView{}, Exceptions: []exceptionView{}, Sources: []sourceView{}}
	for _, p := range prog.Pipelines {
		if p != nil {
			d.SQL = append(d.SQL, p.Statement)
		}
	}
	d.Savepoints.Dir = prog.Settings["execution.checkpointing.savepoint-dir"]
	if d.Savepoints.Dir == "" {
		d.Savepoints.Dir = prog.Settings["state.savepoints.dir"]
	}
	d.Savepoints.Checkpointed = prog.Settings["execution.checkpointing.interval"] != ""
	d.Watermark = watermarkView{Text: st.WatermarkText, End: st.WatermarkEnd}
	if !st.Watermark.IsZero() {
		s := round(st.WatermarkDelay.Seconds())
		d.Watermark.DelaySec = &s
	}

	// Rates, from the samples taken by earlier requests.
	cur := counts{at: now, restarts: st.Restarts, splits: map[string]int64{}}
	for _, op := range m.Operators {
		cur.in = append(cur.in, op.RecordsIn)
		cur.out = append(cur.out, op.RecordsOut)
		cur.blocked = append(cur.blocked, int64(op.Backpressured))
	}
	for _, src := range m.Sources {
		for _, sp := range src.Splits {
			cur.splits[src.Table+"/"+sp.Split] = sp.Records
		}
	}
	base, haveRates := h.rates.add(j.ID(), cur)
	dt := cur.at.Sub(base.at).Seconds()
	rate := func(now, then int64) *float64 {
		if !haveRates || dt <= 0 {
			return nil
		}
		r := round(float64(now-then) / dt)
		return &r
	}

	for _, n := range buildGraph(prog, m.Operators) {
		v := graphView{graphNode: n}
		if n.op >= 0 && !n.Fused {
			op := m.Operators[n.op]
			in, out := op.RecordsIn, op.RecordsOut
			v.RecordsIn, v.RecordsOut = &in, &out
			v.InPerSecond, v.OutPerSecond = rate(in, base.at0(base.in, n.op)), rate(out, base.at0(base.out, n.op))
			v.Watermark = wmText(et, op.Watermark)
			v.LateDropped, v.BadRecords, v.Degraded = op.LateDropped, op.BadRecords, op.Degraded
			v.PauseSec = round(op.SnapshotPause.Seconds())
			bp := round(op.Backpressured.Seconds())
			v.BackpressuredSec = &bp
			if haveRates && dt > 0 {
				share := round(min(max(float64(int64(op.Backpressured)-base.at0(base.blocked, n.op))/1e9/dt, 0), 1))
				v.Backpressure, v.BackpressureLevel = &share, backpressureLevel(share)
			}
			if op.State != nil {
				g := op.State.Groups
				v.StateGroups = &g
			}
		}
		d.Graph = append(d.Graph, v)
	}

	d.Results = results(j, d.Graph)

	for _, src := range m.Sources {
		measures := map[string]map[string]float64{} // split -> name -> value
		for _, ms := range src.Connector {
			if ms.Split == "" {
				continue
			}
			if measures[ms.Split] == nil {
				measures[ms.Split] = map[string]float64{}
			}
			measures[ms.Split][ms.Name] = ms.Value
		}
		for _, sp := range src.Splits {
			pv := partitionView{Table: src.Table, Split: sp.Split, Records: sp.Records, Watermark: wmText(et, sp.Watermark),
				Idle: sp.Idle, LastActive: stamp(sp.LastActive)}
			if ms := measures[sp.Split]; ms != nil {
				pv.Offset = measure(ms, connectors.MeasureOffset)
				pv.EndOffset = measure(ms, connectors.MeasureEndOffset)
				pv.Lag = measure(ms, connectors.MeasureLag)
			}
			if haveRates {
				if then, ok := base.splits[src.Table+"/"+sp.Split]; ok {
					pv.PerSecond = rate(sp.Records, then)
				}
			}
			d.Partitions = append(d.Partitions, pv)
		}
	}
	sort.SliceStable(d.Partitions, func(a, b int) bool {
		pa, pb := d.Partitions[a], d.Partitions[b]
		if pa.Table != pb.Table {
			return pa.Table < pb.Table
		}
		return splitLess(pa.Split, pb.Split)
	})
	for _, s := range st.Sources {
		sv := sourceView{Table: s.Table, Records: s.Records, Degraded: s.Degraded, Splits: s.Splits}
		if s.LagKnown {
			lag := s.Lag
			sv.Lag = &lag
		}
		d.Sources = append(d.Sources, sv)
	}

	c := m.Checkpoints
	d.Checkpoints = checkpointsView{Completed: c.Completed, Failed: c.Failed, MaxPause: round(c.MaxPause.Seconds()),
		History: []checkpointView{}}
	for _, r := range c.History {
		d.Checkpoints.History = append(d.Checkpoints.History, checkpointView{ID: r.ID, Triggered: stamp(r.Triggered),
			Ended: stamp(r.Ended), DurationSec: round(r.Ended.Sub(r.Triggered).Seconds()), Bytes: r.Bytes,
			PauseSec: round(r.Pause.Seconds()), Savepoint: r.Savepoint, Failure: r.Failure})
	}
	for _, e := range j.Exec().Lifecycle().Exceptions {
		d.Exceptions = append(d.Exceptions, exceptionView{At: stamp(e.At), Error: e.Err, Restart: e.Restart})
	}
	return d
}

// results gives the latest rows of each sink whose output can be read: every sink
// but a blackhole, and a SELECT's collect.
func results(j *engine.Job, graph []graphView) []resultsView {
	out := []resultsView{}
	for _, n := range graph {
		if n.op < 0 {
			continue
		}
		v := resultsView{Node: n.ID, Rows: []resultRow{}, Columns: []string{}}
		switch p := n.plan.(type) {
		case *planner.Sink:
			v.Table = p.Table
			if p.Connector != nil {
				v.Connector = p.Connector.Name
			}
			if v.Connector == "blackhole" {
				continue
			}
		case *planner.Collect:
		default:
			continue
		}
		cols, rows, written, ok := j.Exec().RecentRows(n.op)
		if !ok {
			continue
		}
		for _, c := range cols {
			v.Columns = append(v.Columns, c.Name)
		}
		var buf []byte
		for _, r := range rows {
			row := resultRow{Kind: r.Kind.String(), Values: make([]string, len(r.Row))}
			for i, val := range r.Row {
				var t types.Type
				if i < len(cols) {
					t = cols[i].Type
				}
				buf = formats.AppendPrintValue(buf[:0], val, t)
				row.Values[i] = string(buf)
			}
			v.Rows = append(v.Rows, row)
		}
		v.Written = written
		out = append(out, v)
	}
	return out
}

// backpressureLevel names a share of time backpressured as Flink's web UI does.
func backpressureLevel(share float64) string {
	switch {
	case share <= 0.1:
		return "OK"
	case share <= 0.5:
		return "LOW"
	}
	return "HIGH"
}

// at0 is the sample's count of task i, 0 when it has none.
func (c counts) at0(xs []int64, i int) int64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

func measure(ms map[string]float64, name string) *int64 {
	v, ok := ms[name]
	if !ok {
		return nil
	}
	n := int64(v)
	return &n
}

// splitLess orders "events-2" before "events-10".
func splitLess(a, b string) bool {
	ia, ib := strings.LastIndexByte(a, '-'), strings.LastIndexByte(b, '-')
	if ia > 0 && ib > 0 && a[:ia] == b[:ib] && len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func wmText(et obs.EventTime, wm int64) string {
	switch wm {
	case exec.NoWatermark:
		return ""
	case exec.MaxWatermark:
		return "end of input"
	}
	return et.Text(wm)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// round keeps three decimals: rates and seconds need no more.
func round(f float64) float64 { return math.Round(f*1000) / 1000 }
