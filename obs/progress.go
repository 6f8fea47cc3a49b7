package obs

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pipesql/pipesql/connectors"
)

// FormatProgress renders the compact one-line progress of pipesql run:
//
//	RUNNING | 18,402 rec/s | 1,204,331 records | lag 2,311,009, caught up in ~2m05s | watermark 2024-05-01 13:04:55.000 (41m12s behind) | checkpoint #12 8s ago | 0 restarts
//
// The state comes first and its reason last, so that a narrow terminal cuts the reason,
// not the numbers. Parts that are unknown (no lag reported, no watermark yet, no
// checkpoint) are left out.
func FormatProgress(s JobStatus) string {
	var parts []string
	head := string(s.State)
	if s.State == Restarting {
		head = fmt.Sprintf("RESTARTING (restart %d, next attempt in %s)", s.Restarts, shortDuration(s.NextAttempt.Sub(s.At)))
	}
	parts = append(parts, head)
	switch s.State {
	case Running, Degraded, Initializing:
		parts = append(parts, Count(int64(s.RecordsPerSecond))+" rec/s")
	}
	parts = append(parts, Count(s.Records)+" records")
	if s.State == Finished || s.State == Canceled || s.State == Failed {
		if !s.Started.IsZero() && !s.Ended.IsZero() {
			parts[len(parts)-1] += " in " + shortDuration(s.Ended.Sub(s.Started))
		}
	}
	if s.LagKnown && (s.State == Running || s.State == Degraded) {
		lag := "lag " + Count(s.Lag)
		switch {
		case s.CatchUp > 0:
			lag += ", caught up in ~" + shortDuration(s.CatchUp)
		case s.LagGrowing:
			lag += ", growing"
		}
		parts = append(parts, lag)
	}
	switch {
	case s.WatermarkEnd:
		parts = append(parts, "watermark end of input")
	case !s.Watermark.IsZero():
		wm := "watermark " + s.WatermarkText
		switch {
		case s.State != Running && s.State != Degraded:
		case s.WatermarkDelay >= 0:
			wm += " (" + shortDuration(s.WatermarkDelay) + " behind)"
		default: // event time from the future: a clock off, or generated data
			wm += " (" + shortDuration(-s.WatermarkDelay) + " ahead)"
		}
		parts = append(parts, wm)
	}
	if c := s.Checkpoints; c.LastID != 0 {
		ck := fmt.Sprintf("checkpoint #%d", c.LastID)
		if !c.LastAt.IsZero() {
			ck += " " + shortDuration(s.At.Sub(c.LastAt)) + " ago"
		}
		if c.Failed > 0 {
			ck += fmt.Sprintf(" (%d failed)", c.Failed)
		}
		parts = append(parts, ck)
	} else if c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d checkpoints failed", c.Failed))
	}
	if s.Restarts == 1 {
		parts = append(parts, "1 restart")
	} else {
		parts = append(parts, fmt.Sprintf("%d restarts", s.Restarts))
	}
	if s.LateRecords > 0 {
		parts = append(parts, Count(s.LateRecords)+" late")
	}
	if s.BadRecords > 0 {
		parts = append(parts, Count(s.BadRecords)+" bad")
	}
	if r := s.Checkpoints.Resumed; r != nil && (s.Started.IsZero() || s.At.Sub(s.Started) < resumeShown) {
		parts = append(parts, "resumed from "+r.Text)
	}
	if s.Reason != "" {
		parts = append(parts, s.Reason)
	}
	return strings.Join(parts, " | ")
}

// resumeShown is how long after the start the progress line says what the job resumed
// from (its first frames; the log and /status keep saying it).
const resumeShown = 10 * time.Second

// Combine merges the statuses of the jobs of one pipesql run into one, for its single
// progress line: the worst state (with its reason), summed counts and rates, the least
// watermark, the latest checkpoint.
func Combine(ss []JobStatus) JobStatus {
	if len(ss) == 1 {
		return ss[0]
	}
	var c JobStatus
	rank := map[State]int{Finished: 0, Canceled: 1, Created: 2, Running: 3, Initializing: 4, Degraded: 5, Restarting: 6, Failed: 7}
	for i, s := range ss {
		if i == 0 || rank[s.State] > rank[c.State] {
			c.State, c.Reason, c.NextAttempt = s.State, s.Reason, s.NextAttempt
		}
		if i == 0 || s.Started.Before(c.Started) {
			c.Started = s.Started
		}
		c.Ended = later(c.Ended, s.Ended)
		c.At = later(c.At, s.At)
		c.Restarts += s.Restarts
		c.Records += s.Records
		c.RecordsPerSecond += s.RecordsPerSecond
		if s.LagKnown {
			c.Lag += s.Lag
			c.LagKnown = true
		}
		c.CatchUp = max(c.CatchUp, s.CatchUp)
		c.LagGrowing = c.LagGrowing || s.LagGrowing
		switch {
		case s.Watermark.IsZero() && !s.WatermarkEnd:
		case c.Watermark.IsZero() && !c.WatermarkEnd, c.WatermarkEnd && !s.WatermarkEnd, !s.WatermarkEnd && s.Watermark.Before(c.Watermark):
			c.Watermark, c.WatermarkEnd, c.WatermarkText, c.WatermarkDelay = s.Watermark, s.WatermarkEnd, s.WatermarkText, s.WatermarkDelay
		}
		if s.Checkpoints.LastAt.After(c.Checkpoints.LastAt) || c.Checkpoints.LastID == 0 {
			c.Checkpoints.LastID, c.Checkpoints.LastAt = s.Checkpoints.LastID, s.Checkpoints.LastAt
		}
		c.Checkpoints.Completed += s.Checkpoints.Completed
		c.Checkpoints.Failed += s.Checkpoints.Failed
		c.LateRecords += s.LateRecords
		c.BadRecords += s.BadRecords
		if c.Checkpoints.Resumed == nil {
			c.Checkpoints.Resumed = s.Checkpoints.Resumed
		}
		c.Sources = append(c.Sources, s.Sources...)
	}
	return c
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Count writes n with thousands separators: 1,204,331.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shortDuration writes d to the second (to the millisecond below a second), without
// the zero parts Go's Duration.String writes: 2m05s, 41m12s, 3h02m, 250ms.
func shortDuration(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Second:
		s = d.Round(time.Millisecond).String()
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Second)
		s = fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		s = fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		d = d.Round(time.Hour)
		s = fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
	if neg {
		return "-" + s
	}
	return s
}

// Truncate cuts line to at most width characters, ending it with "…" when cut.
func Truncate(line string, width int) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	runes := []rune(line)
	return string(runes[:max(width-1, 0)]) + "…"
}

// ProgressMode is how pipesql run shows its progress.
type ProgressMode int

const (
	// ProgressOff shows nothing.
	ProgressOff ProgressMode = iota
	// ProgressTerminal redraws one line in place at the bottom of a terminal.
	ProgressTerminal
	// ProgressLog logs the status of each job periodically, for a log collector.
	ProgressLog
)

// Default refresh intervals of the progress.
const (
	DefaultTerminalInterval = time.Second
	DefaultLogInterval      = 30 * time.Second
)

// ProgressOptions configures ShowProgress.
type ProgressOptions struct {
	Mode ProgressMode
	// Interval is the time between refreshes. Default: DefaultTerminalInterval on a
	// terminal, DefaultLogInterval in the log.
	Interval time.Duration
	// Line is the terminal line the progress is drawn on (ProgressTerminal).
	Line *StatusLine
	// Width returns the terminal's width, to which the line is cut. Default: 100.
	Width func() int
	// Log receives the progress records (ProgressLog), at INFO.
	Log *slog.Logger
	// Clock is where the time comes from. Default: the wall clock.
	Clock connectors.Clock
}

// ShowProgress shows the progress of the jobs of reg until ctx is done. On a terminal it
// then draws the line a last time and leaves it, ending it with a newline, so that the
// final state (FINISHED, FAILED, CANCELED) stays on the screen.
func ShowProgress(ctx context.Context, reg *Registry, opts ProgressOptions) {
	if opts.Clock == nil {
		opts.Clock = connectors.WallClock{}
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultTerminalInterval
		if opts.Mode == ProgressLog {
			opts.Interval = DefaultLogInterval
		}
	}
	if opts.Width == nil {
		opts.Width = func() int { return 100 }
	}
	switch {
	case opts.Mode == ProgressTerminal && opts.Line != nil:
	case opts.Mode == ProgressLog && opts.Log != nil:
	default:
		<-ctx.Done()
		return
	}
	show := func() {
		ss := reg.Statuses()
		if len(ss) == 0 {
			return
		}
		if opts.Mode == ProgressTerminal {
			opts.Line.Set(Truncate(FormatProgress(Combine(ss)), opts.Width()-1))
			return
		}
		for _, s := range ss {
			LogStatus(ctx, opts.Log, s)
		}
	}
	tick := opts.Clock.NewTicker(opts.Interval)
	defer tick.Stop()
	if opts.Mode == ProgressTerminal {
		show()
	}
	for {
		select {
		case <-ctx.Done():
			if opts.Mode == ProgressTerminal {
				show()
				opts.Line.Done()
			}
			return
		case <-tick.C():
			show()
		}
	}
}

// LogStatus logs s as one record at INFO: the message "progress" and the status as
// attributes, typed, for a log collector.
func LogStatus(ctx context.Context, log *slog.Logger, s JobStatus) {
	attrs := []slog.Attr{
		slog.String("job", s.Name), slog.String("state", string(s.State)),
		slog.Int64("records", s.Records), slog.Int64("records_per_second", int64(s.RecordsPerSecond)),
	}
	if s.LagKnown {
		attrs = append(attrs, slog.Int64("lag", s.Lag))
		if s.CatchUp > 0 {
			attrs = append(attrs, slog.Duration("caught_up_in", s.CatchUp.Round(time.Second)))
		}
	}
	if s.WatermarkText != "" {
		attrs = append(attrs, slog.String("watermark", s.WatermarkText))
		if !s.Watermark.IsZero() {
			attrs = append(attrs, slog.Duration("watermark_delay", s.WatermarkDelay.Round(time.Second)))
		}
	}
	if c := s.Checkpoints; c.LastID != 0 {
		attrs = append(attrs, slog.Uint64("checkpoint", c.LastID))
	}
	if s.Checkpoints.Failed > 0 {
		attrs = append(attrs, slog.Int64("checkpoints_failed", s.Checkpoints.Failed))
	}
	if r := s.Checkpoints.Resumed; r != nil {
		attrs = append(attrs, slog.String("resumed_from", r.Text))
	}
	attrs = append(attrs, slog.Int("restarts", s.Restarts))
	if s.State == Restarting {
		attrs = append(attrs, slog.Time("next_attempt", s.NextAttempt))
	}
	if s.Reason != "" {
		attrs = append(attrs, slog.String("reason", s.Reason))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "progress", attrs...)
}
