package obs

import (
	"io"
	"sync"
)

// StatusLine is a line redrawn in place at the bottom of a terminal, below what the
// program writes: whatever goes through one of its Writers (log lines on stderr, rows
// of a print table on stdout) first erases the line, then appears, then the line is
// drawn again under it. It is safe for concurrent use.
type StatusLine struct {
	mu    sync.Mutex
	term  io.Writer // where the line is drawn
	text  string
	shown bool // the line is on the screen
	// midLine is true while a Writer has written a partial line: the status line
	// waits for its end, so as not to break it.
	midLine bool
}

// eraseLine returns the cursor to the start of the line and clears it.
const eraseLine = "\r\x1b[K"

// NewStatusLine returns a StatusLine drawn on term (the terminal's stderr).
func NewStatusLine(term io.Writer) *StatusLine { return &StatusLine{term: term} }

// Set replaces the line's text and draws it.
func (l *StatusLine) Set(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = text
	l.draw()
}

// draw shows the line unless a partial line is being written; l.mu is held.
func (l *StatusLine) draw() {
	if l.midLine || l.text == "" {
		return
	}
	io.WriteString(l.term, eraseLine+l.text)
	l.shown = true
}

// erase removes the line from the screen; l.mu is held.
func (l *StatusLine) erase() {
	if l.shown {
		io.WriteString(l.term, eraseLine)
		l.shown = false
	}
}

// Done leaves the line on the screen, ended by a newline, and stops drawing it.
func (l *StatusLine) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		io.WriteString(l.term, "\n")
	}
	l.shown, l.text = false, ""
}

// Clear removes the line from the screen and stops drawing it.
func (l *StatusLine) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.erase()
	l.text = ""
}

// Writer returns a Writer whose output appears above the line. w must write to the same
// terminal (stdout or stderr).
func (l *StatusLine) Writer(w io.Writer) io.Writer { return &aboveLine{l: l, w: w} }

type aboveLine struct {
	l *StatusLine
	w io.Writer
}

func (a *aboveLine) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.erase()
	n, err := a.w.Write(p)
	l.midLine = p[len(p)-1] != '\n'
	l.draw()
	return n, err
}
