package obs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// LogOptions configures NewLogger.
type LogOptions struct {
	// Format is "text" (key=value lines, the default) or "json" (one object per line).
	Format string
	// Level is the least level logged: "debug", "info", "warn" (the default) or "error".
	Level string
	// DedupWindow is how long repeats of a line are folded into one (see Dedup).
	// Default: DefaultDedupWindow; negative: every line is written.
	DedupWindow time.Duration
	// Now is where the folding reads the time. Default: time.Now.
	Now func() time.Time
}

// DefaultDedupWindow is how long a repeated log line stays folded by default.
const DefaultDedupWindow = 30 * time.Second

// ParseLevel reads a log level name (debug, info, warn or warning, error; any case).
// The error wraps ErrLogOptions.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "", "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%w: log level %q (want debug, info, warn or error)", ErrLogOptions, s)
}

// NewLogHandler returns a handler writing records at level and above to w, as text or
// JSON. The error wraps ErrLogOptions.
func NewLogHandler(w io.Writer, format string, level slog.Leveler) (slog.Handler, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "text":
		return slog.NewTextHandler(w, opts), nil
	case "json":
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, fmt.Errorf("%w: log format %q (want text or json)", ErrLogOptions, format)
}

// NewLogger returns the logger of a pipesql process writing to w, and its Dedup handler
// (nil when folding is off), whose Flush reports what is still folded at exit.
func NewLogger(w io.Writer, opts LogOptions) (*slog.Logger, *Dedup, error) {
	level, err := ParseLevel(opts.Level)
	if err != nil {
		return nil, nil, err
	}
	h, err := NewLogHandler(w, opts.Format, level)
	if err != nil {
		return nil, nil, err
	}
	if opts.DedupWindow < 0 {
		return slog.New(h), nil, nil
	}
	if opts.DedupWindow == 0 {
		opts.DedupWindow = DefaultDedupWindow
	}
	d := NewDedup(h, opts.DedupWindow, opts.Now)
	return slog.New(d), d, nil
}

// Dedup is a slog.Handler that folds repeats: a line like one written less than the
// window ago is not written, only counted, and when the window has passed the last of
// them is written once with suppressed=N (how many were not written). Two lines are
// alike when they differ only in the digits of their message (librdkafka writes
// "Connect to ... failed (after 12ms in state CONNECT)" at each reconnection) and of
// their error attributes ("timed out after 5000ms"): same level, same attributes
// otherwise. A counter or an id in an attribute makes a line new, so "checkpoint
// completed checkpoint=21" is never folded.
//
// So a broker that stays down, whose clients log each reconnection, writes one line
// and then one per window, instead of thousands. The folding state is shared by the
// handlers WithAttrs and WithGroup derive.
type Dedup struct {
	next   slog.Handler
	st     *dedupState
	prefix string // the key part of the attributes added by WithAttrs and WithGroup
}

type dedupState struct {
	window time.Duration
	now    func() time.Time

	mu        sync.Mutex
	seen      map[string]*folded
	lastSweep time.Time
}

// folded is a line being folded.
type folded struct {
	since time.Time // when it was last written
	count int       // repeats not written since
	last  slog.Record
	h     slog.Handler // the handler the last repeat went through
}

// maxFolded bounds the lines remembered: beyond it, the oldest windows are dropped.
const maxFolded = 4096

// NewDedup returns a Dedup writing to next, folding repeats within window. now is where
// it reads the time (nil: time.Now).
func NewDedup(next slog.Handler, window time.Duration, now func() time.Time) *Dedup {
	if now == nil {
		now = time.Now
	}
	return &Dedup{next: next, st: &dedupState{window: window, now: now, seen: map[string]*folded{}}}
}

// Enabled reports whether the next handler takes records at level.
func (d *Dedup) Enabled(ctx context.Context, level slog.Level) bool {
	return d.next.Enabled(ctx, level)
}

// WithAttrs returns a Dedup whose lines carry attrs, sharing this one's folding.
func (d *Dedup) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(d.prefix)
	for _, a := range attrs {
		keyAttr(&b, "", a)
	}
	return &Dedup{next: d.next.WithAttrs(attrs), st: d.st, prefix: b.String()}
}

// WithGroup returns a Dedup whose attributes go in group name, sharing this one's folding.
func (d *Dedup) WithGroup(name string) slog.Handler {
	return &Dedup{next: d.next.WithGroup(name), st: d.st, prefix: d.prefix + "[" + name + "]"}
}

// Handle writes r unless it repeats a line written less than the window ago.
func (d *Dedup) Handle(ctx context.Context, r slog.Record) error {
	key := d.key(r)
	st := d.st
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if now.Sub(st.lastSweep) >= time.Second || len(st.seen) >= maxFolded {
		st.sweep(ctx, now)
	}
	if f := st.seen[key]; f != nil {
		if now.Sub(f.since) < st.window {
			f.count++
			f.last, f.h = r.Clone(), d.next
			return nil
		}
		st.report(ctx, f)
	}
	st.seen[key] = &folded{since: now}
	return d.next.Handle(ctx, r)
}

// Flush writes the last repeat of every line still folded, with its count, and forgets
// them: what a process does before it exits.
func (d *Dedup) Flush(ctx context.Context) {
	st := d.st
	st.mu.Lock()
	defer st.mu.Unlock()
	for key, f := range st.seen {
		st.report(ctx, f)
		delete(st.seen, key)
	}
}

// sweep reports and forgets the lines whose window has passed; st.mu is held.
func (st *dedupState) sweep(ctx context.Context, now time.Time) {
	st.lastSweep = now
	for key, f := range st.seen {
		if now.Sub(f.since) >= st.window || len(st.seen) >= maxFolded {
			st.report(ctx, f)
			delete(st.seen, key)
		}
	}
}

// report writes the last repeat of a folded line with how many were not written.
func (st *dedupState) report(ctx context.Context, f *folded) {
	if f.count == 0 {
		return
	}
	r := f.last.Clone()
	r.AddAttrs(slog.Int("suppressed", f.count), slog.Duration("suppressed_within", st.window))
	_ = f.h.Handle(ctx, r) // a log line that cannot be written has nowhere to report to
	f.count = 0
}

// key is what makes two records alike.
func (d *Dedup) key(r slog.Record) string {
	var b strings.Builder
	b.WriteString(r.Level.String())
	b.WriteByte('|')
	writeFolded(&b, r.Message)
	b.WriteByte('|')
	b.WriteString(d.prefix)
	r.Attrs(func(a slog.Attr) bool {
		keyAttr(&b, "", a)
		return true
	})
	return b.String()
}

// keyAttr adds an attribute to a key: its value, with the digits of an error folded.
func keyAttr(b *strings.Builder, group string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, ga := range v.Group() {
			keyAttr(b, group+a.Key+".", ga)
		}
		return
	}
	b.WriteString(group + a.Key + "=")
	_, isErr := v.Any().(error)
	if isErr || a.Key == "error" || a.Key == "err" {
		writeFolded(b, v.String())
	} else {
		b.WriteString(v.String())
	}
	b.WriteByte(';')
}

// writeFolded writes s with each run of digits replaced by '#'.
func writeFolded(b *strings.Builder, s string) {
	digits := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
}
