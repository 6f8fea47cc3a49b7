package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
)

// historyLimit is how many statements the history keeps, in memory and in its file.
const historyLimit = 1000

// historyFile returns where the history is kept: $PIPESQL_HISTORY, else
// ~/.pipesql_history. It returns "" (no history file) when neither can be found.
func historyFile() string {
	if p := os.Getenv("PIPESQL_HISTORY"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".pipesql_history")
}

// history is the shell's statement history, one statement per entry and per line of its
// file. The shell owns it rather than readline: readline would store each line of a
// multi-line statement on its own, and its explicit save (with automatic saving off)
// records the line last edited instead of the text given when the user browsed the
// history before typing. So readline's own history is kept in memory only and rebuilt
// from this one after each statement.
type history struct {
	path    string // "" when there is no file
	entries []string
}

// loadHistory reads the history file at path. A missing file is an empty history.
func loadHistory(path string) (*history, error) {
	h := &history{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("reading history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			h.entries = append(h.entries, line)
		}
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("reading history %s: %w", path, err)
	}
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
		return h, h.rewrite()
	}
	return h, nil
}

// add records a statement (as typed, possibly over several lines) and appends it to the
// file. A statement equal to the previous entry is not repeated.
func (h *history) add(text string) error {
	line := HistoryLine(text)
	if line == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == line) {
		return nil
	}
	h.entries = append(h.entries, line)
	if len(h.entries) > historyLimit {
		// Rewrite rarely: let the file grow to twice the limit before trimming it.
		if len(h.entries) >= 2*historyLimit {
			h.entries = h.entries[len(h.entries)-historyLimit:]
			return h.rewrite()
		}
	}
	if h.path == "" {
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("saving history: %w", err)
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("saving history: %w", err)
	}
	return nil
}

// rewrite replaces the file with the entries, through a temporary file so that a crash
// leaves the old or the new history, never half of one.
func (h *history) rewrite() error {
	if h.path == "" {
		return nil
	}
	tmp := h.path + ".tmp"
	data := strings.Join(h.entries, "\n") + "\n"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return fmt.Errorf("saving history: %w", err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		return fmt.Errorf("saving history: %w", err)
	}
	return nil
}

// load replaces readline's in-memory history with the entries and puts its cursor after
// the last one, where the up arrow starts.
func (h *history) load(rl *readline.Instance) {
	rl.ResetHistory()
	for _, e := range h.entries {
		// In-memory only: the Config has no HistoryFile, so this cannot fail.
		_ = rl.SaveHistory(e)
	}
}
