package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// readSome reads one poll from a new source of dir and returns its snapshot and identity.
func readSome(t *testing.T, dir string) (snap, ident []byte) {
	t.Helper()
	src, err := newFileSource(fsSourceConfig(dir, "json", nil, nil, nil), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Poll(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if snap, err = src.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if ident, err = src.Identity(); err != nil {
		t.Fatal(err)
	}
	return snap, ident
}

func checkRestored(t *testing.T, dir string, snap, ident []byte) error {
	t.Helper()
	src, err := newFileSource(fsSourceConfig(dir, "json", nil, nil, snap), newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return src.CheckRestored(context.Background(), ident)
}

func TestFilesystemIdentity(t *testing.T) {
	line := `{"user_id":"u1","app":"a1","n":1,"ts":"2024-01-01 00:00:01"}` + "\n"
	setup := func(t *testing.T) (dir, path string, snap, ident []byte) {
		dir = t.TempDir()
		path = filepath.Join(dir, "a.json")
		writeFile(t, path, strings.Repeat(line, 3))
		snap, ident = readSome(t, dir)
		return dir, path, snap, ident
	}
	t.Run("unchanged", func(t *testing.T) {
		dir, _, snap, ident := setup(t)
		if err := checkRestored(t, dir, snap, ident); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
	t.Run("new file beside", func(t *testing.T) {
		dir, _, snap, ident := setup(t)
		writeFile(t, filepath.Join(dir, "b.json"), line)
		if err := checkRestored(t, dir, snap, ident); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
	t.Run("rewritten", func(t *testing.T) {
		dir, path, snap, ident := setup(t)
		writeFile(t, path, strings.Repeat(line, 5))
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		err := checkRestored(t, dir, snap, ident)
		var me *connectors.InputMismatchError
		if !errors.As(err, &me) {
			t.Fatalf("err = %v, want an *InputMismatchError", err)
		}
		for _, want := range []string{"file " + path + " changed", fmt.Sprintf("%d bytes", 3*len(line)), fmt.Sprintf("%d bytes", 5*len(line)), "table events"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not say %q: %v", want, err)
			}
		}
	})
	t.Run("same size, touched", func(t *testing.T) {
		dir, path, snap, ident := setup(t)
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
		if err := checkRestored(t, dir, snap, ident); !errors.Is(err, connectors.ErrInputMismatch) {
			t.Fatalf("err = %v, want a mismatch", err)
		}
	})
	t.Run("truncated, no saved identity", func(t *testing.T) {
		dir, path, snap, _ := setup(t)
		writeFile(t, path, line)
		err := checkRestored(t, dir, snap, nil)
		if !errors.Is(err, connectors.ErrInputMismatch) || !strings.Contains(err.Error(), "beyond its end") {
			t.Fatalf("err = %v, want a position beyond the end", err)
		}
	})
	t.Run("gone after being read to its end", func(t *testing.T) {
		dir, path, snap, ident := setup(t)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := checkRestored(t, dir, snap, ident); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
}
