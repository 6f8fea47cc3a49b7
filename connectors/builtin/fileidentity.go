package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// The identity of what a filesystem source read (connectors.Identified): the size and
// modification time of every file it read from, as they were when it opened the file.
// A file rewritten under the same name is another input: positions in the old one
// mean nothing in the new one.

const fileIdentityVersion = 1

// fileIdentity is one file as the source saw it.
type fileIdentity struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
}

func identityOfInfo(info fs.FileInfo) fileIdentity {
	return fileIdentity{Size: info.Size(), ModTime: info.ModTime().UnixNano()}
}

func (f fileIdentity) describe(path string) string {
	return fmt.Sprintf("%s (%d bytes, modified %s)", path, f.Size, time.Unix(0, f.ModTime).UTC().Format("2006-01-02 15:04:05.000"))
}

var _ connectors.Identified = (*fileSource)(nil)

// Identity returns the size and modification time of each file the source has read
// from, as when it opened the file (a restored file it has not opened again: as
// CheckRestored found it).
func (s *fileSource) Identity() ([]byte, error) {
	out := map[string]fileIdentity{}
	for p, st := range s.files {
		if st.Offset == 0 && st.Rows == 0 && !st.Done {
			continue
		}
		id, ok := s.idents[p]
		if !ok {
			info, err := os.Stat(p)
			if err != nil {
				continue // gone: nothing more will be read from it
			}
			id = identityOfInfo(info)
			s.idents[p] = id
		}
		out[p] = id
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return append([]byte{fileIdentityVersion}, b...), nil
}

// CheckRestored refuses to resume when a file the checkpoint read from is gone or has
// another size or modification time, or when a restored position is beyond a file's end.
func (s *fileSource) CheckRestored(ctx context.Context, saved []byte) error {
	want := map[string]fileIdentity{}
	if saved != nil {
		if len(saved) < 1 || saved[0] != fileIdentityVersion {
			return tableError("filesystem", "source", s.table, fmt.Errorf("%w: unknown identity version", ErrBadState))
		}
		if err := json.Unmarshal(saved[1:], &want); err != nil {
			return tableError("filesystem", "source", s.table, fmt.Errorf("%w: identity: %v", ErrBadState, err))
		}
	}
	paths := make([]string, 0, len(s.files))
	for p, st := range s.files {
		if st.Offset > 0 || st.Rows > 0 || st.Done {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var reasons, was, now []string
	for _, p := range paths {
		st := s.files[p]
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if st.Done {
				continue // read to its end: nothing more is read from it
			}
			reasons = append(reasons, fmt.Sprintf("file %s no longer exists", p))
			if w, ok := want[p]; ok {
				was = append(was, w.describe(p))
			}
			now = append(now, p+" missing")
			continue
		}
		if err != nil {
			return tableError("filesystem", "source", s.table, err)
		}
		cur := identityOfInfo(info)
		w, ok := want[p]
		switch {
		case ok && w != cur:
			reasons = append(reasons, fmt.Sprintf("file %s changed", p))
		case st.Offset > cur.Size:
			reasons = append(reasons, fmt.Sprintf("the restored position %d in %s is beyond its end", st.Offset, p))
			w = fileIdentity{Size: st.Offset, ModTime: w.ModTime}
		default:
			s.idents[p] = cur
			continue
		}
		if ok {
			was = append(was, w.describe(p))
		} else {
			was = append(was, fmt.Sprintf("%s up to byte %d", p, st.Offset))
		}
		now = append(now, cur.describe(p))
	}
	if len(reasons) == 0 {
		return nil
	}
	return &connectors.InputMismatchError{
		Table: s.table, Reason: strings.Join(reasons, "; "),
		Saved: "files " + strings.Join(was, ", "), Current: strings.Join(now, ", "),
	}
}
