package shell

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pipesql/pipesql/config"
	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// How the shell shows the results of a SELECT, after Flink's SQL client
// (sql-client.execution.result-mode):
//
//   - table: the result as a table, redrawn in place as it changes. The changelog is
//     materialized: +I and +U add a row, -U and -D retract one, and the +U that follows a
//     -U takes the retracted row's place, so that an updated count changes where it is.
//   - changelog: the latest changes with their kinds (+I -U +U -D), redrawn in place.
//   - tableau: rows appended below a header, as `pipesql run` prints them; the mode of
//     non-interactive runs, and the only one when the output is not a terminal.
//
// A view is drawn on a terminal in cooked mode (between readline's prompts), so lines
// end with "\n" and the terminal adds the carriage return.

// Result modes, as sql-client.execution.result-mode names them.
const (
	modeTable     = "table"
	modeChangelog = "changelog"
	modeTableau   = "tableau"
)

const (
	// refreshInterval is how often a live view and a status line are redrawn.
	refreshInterval = 250 * time.Millisecond
	// changelogKept is how many of the latest changes the changelog view keeps.
	changelogKept = 500
)

// ANSI control sequences of the terminals the shell draws on.
const (
	clearLine   = "\r\x1b[K" // to the line's start, erase it
	clearBelow  = "\r\x1b[J" // to the line's start, erase it and everything below
	hideCursor  = "\x1b[?25l"
	showCursor  = "\x1b[?25h"
	cursorUpFmt = "\x1b[%dA"
)

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// outcome is how a query ended.
type outcome int

const (
	finished outcome = iota
	cancelled
	failed
)

// resultView shows the rows of a running SELECT.
type resultView interface {
	// collect receives one change; the job calls it from one goroutine of its own.
	collect(kind connectors.RowKind, row types.Row)
	// refresh redraws the view with the query's status; the shell calls it on each tick.
	refresh(status string)
	// finish draws the view a last time, once the query ended.
	finish(how outcome, status string)
}

// termSize returns the width and height of the terminal (or a default of 80x24).
type termSize func() (width, height int)

// viewOptions are what a view needs besides the schema.
type viewOptions struct {
	out         io.Writer
	size        termSize
	live        bool // out is a terminal: a status line can be erased
	maxColWidth int  // sql-client.display.max-column-width
	maxRows     int  // sql-client.execution.max-table-result.rows
}

func newResultView(mode string, schema types.Schema, o viewOptions) resultView {
	switch mode {
	case modeTable:
		return &tableView{opts: o, names: schema.Names(), store: newMaterialized(o.maxRows), frame: liveFrame{w: o.out, size: o.size}}
	case modeChangelog:
		return &changelogView{opts: o, names: append([]string{"op"}, schema.Names()...), frame: liveFrame{w: o.out, size: o.size}}
	}
	return &tableauView{out: o.out, live: o.live, tw: newTableau(o.out, schema)}
}

// ---- tableau ----

// tableauView appends rows to a text table. Until the first row it shows the status on
// a line of its own, erased when rows come.
type tableauView struct {
	mu       sync.Mutex
	out      io.Writer
	live     bool
	tw       *tableau
	header   bool
	status   bool // the status line is on screen
	received bool
	tick     int
}

func (v *tableauView) collect(kind connectors.RowKind, row types.Row) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.begin()
	if v.status {
		fmt.Fprint(v.out, clearLine)
		v.status = false
	}
	v.received = true
	v.tw.row(kind, row)
}

func (v *tableauView) begin() {
	if !v.header {
		v.header = true
		v.tw.header()
	}
}

func (v *tableauView) refresh(status string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.begin()
	if v.received || !v.live {
		return
	}
	v.tick++
	fmt.Fprintf(v.out, "%s%s %s", clearLine, spinner[v.tick%len(spinner)], status)
	v.status = true
}

func (v *tableauView) finish(how outcome, status string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.begin()
	if v.status {
		fmt.Fprint(v.out, clearLine)
		v.status = false
	}
	switch how {
	case cancelled:
		if v.tw.rows > 0 {
			fmt.Fprintln(v.out, borderLine(v.tw.widths))
		}
		fmt.Fprintf(v.out, "Query cancelled, received a total of %s\n", plural(int64(v.tw.rows), "row"))
	case failed:
		if v.tw.rows > 0 {
			fmt.Fprintln(v.out, borderLine(v.tw.widths))
		}
	default:
		v.tw.footer()
	}
}

// ---- table ----

// tableView shows the materialized result, redrawn in place.
type tableView struct {
	mu      sync.Mutex
	opts    viewOptions
	names   []string
	store   *materialized
	changes int64
	frame   liveFrame
	tick    int
}

func (v *tableView) collect(kind connectors.RowKind, row types.Row) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.store.apply(kind, row)
	v.changes++
}

func (v *tableView) refresh(status string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tick++
	v.draw(spinner[v.tick%len(spinner)]+" "+status, "Ctrl-C stops the query.")
}

func (v *tableView) finish(how outcome, status string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.draw(status, "")
	v.frame.done()
}

func (v *tableView) draw(status, hint string) {
	width, height := v.opts.size()
	// Title, status, three borders, header, summary: 7 lines besides the rows; one more
	// is left free so that the frame never scrolls the screen.
	room := max(height-8, 1)
	rows, live := v.store.visible(room)
	summary := fmt.Sprintf("%s, %s", plural(int64(live), "row"), plural(v.changes, "change"))
	if live > len(rows) {
		summary += fmt.Sprintf(" (%d not shown: the terminal is too small)", live-len(rows))
	}
	if hint != "" {
		summary += ". " + hint
	}
	lines := []string{"SQL Query Result (Table)", status}
	lines = append(lines, boxLines(v.names, rows, v.opts.maxColWidth)...)
	lines = append(lines, summary)
	v.frame.draw(lines, width)
}

// ---- changelog ----

// changelogView shows the latest changes, redrawn in place.
type changelogView struct {
	mu      sync.Mutex
	opts    viewOptions
	names   []string
	latest  [][]string // op column first, oldest first, at most changelogKept
	changes int64
	frame   liveFrame
	tick    int
}

func (v *changelogView) collect(kind connectors.RowKind, row types.Row) {
	v.mu.Lock()
	defer v.mu.Unlock()
	cells := append([]string{kind.String()}, rowCells(row)...)
	if len(v.latest) == changelogKept {
		copy(v.latest, v.latest[1:])
		v.latest = v.latest[:changelogKept-1]
	}
	v.latest = append(v.latest, cells)
	v.changes++
}

func (v *changelogView) refresh(status string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tick++
	v.draw(spinner[v.tick%len(spinner)]+" "+status, "Ctrl-C stops the query.")
}

func (v *changelogView) finish(how outcome, status string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.draw(status, "")
	v.frame.done()
}

func (v *changelogView) draw(status, hint string) {
	width, height := v.opts.size()
	room := max(height-8, 1)
	rows := v.latest
	if len(rows) > room {
		rows = rows[len(rows)-room:]
	}
	summary := plural(v.changes, "change")
	if int64(len(rows)) < v.changes {
		summary += fmt.Sprintf(", the latest %d shown", len(rows))
	}
	if hint != "" {
		summary += ". " + hint
	}
	lines := []string{"SQL Query Result (Changelog)", status}
	lines = append(lines, boxLines(v.names, rows, v.opts.maxColWidth)...)
	lines = append(lines, summary)
	v.frame.draw(lines, width)
}

// ---- drawing ----

// liveFrame redraws a block of lines in place: it moves the cursor back up over the
// lines it drew last, erases them, and draws the new ones. Lines are cut to the width of
// the terminal, so that none wraps and the count of lines to move over stays right.
type liveFrame struct {
	w     io.Writer
	size  termSize
	lines int // lines drawn last time
}

func (f *liveFrame) draw(lines []string, width int) {
	var b strings.Builder
	if f.lines == 0 {
		b.WriteString(hideCursor)
	} else {
		fmt.Fprintf(&b, cursorUpFmt, f.lines)
	}
	b.WriteString(clearBelow)
	for _, l := range lines {
		b.WriteString(cut(l, width-1))
		b.WriteByte('\n')
	}
	f.lines = len(lines)
	io.WriteString(f.w, b.String())
}

// done leaves the last frame on screen and gives the cursor back.
func (f *liveFrame) done() {
	io.WriteString(f.w, showCursor)
}

// boxLines renders a boxed table, its columns as wide as their widest cell, at most
// maxWidth characters (longer cells end in "...").
func boxLines(header []string, rows [][]string, maxWidth int) []string {
	if maxWidth < 4 {
		maxWidth = 4
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = min(utf8.RuneCountInString(h), maxWidth)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], min(utf8.RuneCountInString(controlChars.Replace(c)), maxWidth))
			}
		}
	}
	fit := func(cells []string) []string {
		out := make([]string, len(widths))
		for i := range widths {
			if i < len(cells) {
				out[i] = cut(controlChars.Replace(cells[i]), widths[i])
			}
		}
		return out
	}
	border := borderLine(widths)
	lines := []string{border, boxedRow(widths, fit(header)), border}
	for _, r := range rows {
		lines = append(lines, boxedRow(widths, fit(r)))
	}
	return append(lines, border)
}

// controlChars shows the control characters a value may hold as escapes: a line break
// printed into a view redrawn in place would shift every line below it.
var controlChars = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`, "\x1b", `\e`)

// cut shortens s to n runes, ending it in "..." when it was longer.
func cut(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n <= 3 {
		return string(r[:n])
	}
	return string(r[:n-3]) + "..."
}

// rowCells renders a row as Flink's SQL client does, NULL as <NULL>.
func rowCells(row types.Row) []string {
	cells := make([]string, len(row))
	for i, v := range row {
		if v.IsNull() {
			cells[i] = "<NULL>"
		} else {
			cells[i] = v.String()
		}
	}
	return cells
}

// plural formats a count of things: "1 row", "1,234 rows".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return thousands(n) + " " + thing + "s"
}

// thousands formats n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ---- materializing a changelog ----

// materialized is the result table a changelog describes. Rows keep their place: a
// retracted row leaves a hole that the +U following its -U fills, and holes are swept
// out once they outnumber the rows. Beyond limit rows, the oldest goes, as Flink's
// sql-client.execution.max-table-result.rows says.
type materialized struct {
	rows    []*matRow
	index   map[string][]int // row key -> positions of live rows holding it
	live    int
	holes   int
	limit   int
	pending int // the hole the last -U left, where the next +U goes; -1 when none
	first   int // no live row before this position
}

type matRow struct {
	key   string
	cells []string
}

func newMaterialized(limit int) *materialized {
	if limit <= 0 {
		limit = 1_000_000
	}
	return &materialized{index: map[string][]int{}, limit: limit, pending: -1}
}

// rowKey identifies a row by its values (NULL apart from every string).
func rowKey(row types.Row) string {
	var b strings.Builder
	for _, v := range row {
		if v.IsNull() {
			b.WriteString("\x01")
		} else {
			b.WriteString(v.String())
		}
		b.WriteByte(0)
	}
	return b.String()
}

func (m *materialized) apply(kind connectors.RowKind, row types.Row) {
	key := rowKey(row)
	switch kind {
	case connectors.Insert, connectors.UpdateAfter:
		r := &matRow{key: key, cells: rowCells(row)}
		pos := -1
		if kind == connectors.UpdateAfter && m.pending >= 0 && m.rows[m.pending] == nil {
			pos = m.pending
			m.rows[pos] = r
			m.holes--
		} else {
			pos = len(m.rows)
			m.rows = append(m.rows, r)
		}
		m.pending = -1
		m.index[key] = append(m.index[key], pos)
		m.live++
		for m.live > m.limit {
			m.evictOldest()
		}
	case connectors.UpdateBefore, connectors.Delete:
		m.pending = -1
		at := m.index[key]
		if len(at) == 0 {
			return // retracting a row evicted by the limit
		}
		pos := at[len(at)-1]
		m.drop(key, pos)
		if kind == connectors.UpdateBefore {
			m.pending = pos
		}
	}
}

// drop removes the live row at pos, whose key is key.
func (m *materialized) drop(key string, pos int) {
	at := m.index[key]
	for i, p := range at {
		if p == pos {
			at = append(at[:i], at[i+1:]...)
			break
		}
	}
	if len(at) == 0 {
		delete(m.index, key)
	} else {
		m.index[key] = at
	}
	m.rows[pos] = nil
	m.holes++
	m.live--
}

func (m *materialized) evictOldest() {
	for m.first < len(m.rows) && m.rows[m.first] == nil {
		m.first++
	}
	if m.first < len(m.rows) {
		m.drop(m.rows[m.first].key, m.first)
	}
}

// visible returns the first n live rows, in order, and how many rows are live.
func (m *materialized) visible(n int) ([][]string, int) {
	if m.pending < 0 && m.holes > 64 && m.holes > m.live {
		m.compact()
	}
	var out [][]string
	for _, r := range m.rows {
		if len(out) == n {
			break
		}
		if r != nil {
			out = append(out, r.cells)
		}
	}
	return out, m.live
}

// compact sweeps out the holes.
func (m *materialized) compact() {
	rows := make([]*matRow, 0, m.live)
	m.index = make(map[string][]int, len(m.index))
	for _, r := range m.rows {
		if r != nil {
			m.index[r.key] = append(m.index[r.key], len(rows))
			rows = append(rows, r)
		}
	}
	m.rows, m.holes, m.first = rows, 0, 0
}

// ---- status while starting ----

// startup describes a program's sources, to say what a query or job is doing before its
// sources deliver records: a slow start (a broker far away, partitions to discover, a
// large directory to list) must never look like a hang.
type startup struct {
	sources []sourceDesc
	// restoreFrom is the savepoint the job starts from (execution.savepoint.path), "" if none.
	restoreFrom string
}

type sourceDesc struct {
	pipeline int
	table    string
	// connecting says what the source does before it reports its splits.
	connecting string
	unit       string // what its splits are: partitions, files, splits
}

func newStartup(prog *planner.Program) *startup {
	s := &startup{restoreFrom: config.Read(prog.Settings).Dir(config.SavepointPath)}
	for i, p := range prog.Pipelines {
		n := p.Root
		for len(n.Children()) > 0 {
			n = n.Children()[0]
		}
		scan, ok := n.(*planner.TableSourceScan)
		if !ok {
			continue
		}
		d := sourceDesc{pipeline: i, table: scan.Table, unit: "splits"}
		opts := scan.Info.Options
		conn := ""
		if scan.Connector != nil {
			conn = scan.Connector.Name
		}
		switch conn {
		case "kafka", "upsert-kafka":
			topic := opts["topic"]
			if topic == "" {
				topic = opts["topic-pattern"]
			}
			d.connecting = fmt.Sprintf("connecting to kafka at %s, discovering partitions of %s", opts["properties.bootstrap.servers"], topic)
			d.unit = "partitions"
		case "filesystem":
			d.connecting = "listing " + opts["path"]
			d.unit = "files"
		default:
			d.connecting = fmt.Sprintf("starting the %s source of %s", conn, scan.Table)
		}
		s.sources = append(s.sources, d)
	}
	return s
}

// phase describes what the sources are doing. started reports that every source is
// connected: it has read records or found its splits.
func (s *startup) phase(m exec.Metrics) (text string, started bool) {
	if s.restoreFrom != "" && m.Checkpoints.RestoredFrom == "" && recordsRead(m) == 0 {
		return "restoring from savepoint " + s.restoreFrom, false
	}
	var total int64
	waiting := "" // the first source connected but without records yet
	for _, d := range s.sources {
		var sm *exec.SourceMetrics
		for i := range m.Sources {
			if m.Sources[i].Pipeline == d.pipeline && m.Sources[i].Table == d.table {
				sm = &m.Sources[i]
				break
			}
		}
		degraded := ""
		if sm != nil && sm.Degraded != "" {
			degraded = " (" + sm.Degraded + ")"
		}
		switch {
		case sm == nil || (sm.RecordsRead == 0 && len(sm.Splits) == 0):
			return d.connecting + degraded, false
		case sm.RecordsRead == 0:
			if waiting == "" {
				waiting = fmt.Sprintf("reading %d %s of %s, no records yet", len(sm.Splits), d.unit, d.table) + degraded
			}
		default:
			total += sm.RecordsRead
		}
	}
	switch {
	case waiting != "":
		return waiting, true
	case len(s.sources) == 0:
		return "running", true
	}
	return fmt.Sprintf("running, %s read", plural(total, "record")), true
}

// recordsRead is the rows the job's sources produced: what each pipeline's first task,
// the source, took in.
func recordsRead(m exec.Metrics) int64 {
	var n int64
	seen := map[int]bool{}
	for _, op := range m.Operators {
		if !seen[op.Pipeline] {
			seen[op.Pipeline] = true
			n += op.RecordsIn
		}
	}
	return n
}
