package state_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/state"
)

// killDirEnv tells a re-executed test binary to act as killHelper on the
// Badger directory it names.
const killDirEnv = "PIPESQL_STATE_KILL_HELPER_DIR"

const (
	killJob    = "dau"
	killValues = 16
	killSize   = 2 << 20
)

func blob(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// killHelper writes checkpoint 2 and reports its progress on stdout, for
// the parent test to SIGKILL it at a chosen point. It never returns.
func killHelper(dir string) {
	fail := func(err error) {
		fmt.Println("helper: error:", err)
		os.Exit(1)
	}
	st, err := state.OpenBadger(dir, state.Options{})
	if err != nil {
		fail(err)
	}
	w, err := st.Begin(killJob, 2)
	if err != nil {
		fail(err)
	}
	for i := range killValues {
		if err := w.Put("agg", fmt.Sprint(i), blob(uint64(100+i), killSize)); err != nil {
			fail(err)
		}
		fmt.Printf("helper: put %d\n", i)
	}
	fmt.Println("helper: commit")
	if err := w.Commit(state.Meta{Plan: "2"}); err != nil {
		fail(err)
	}
	fmt.Println("helper: done")
	select {} // wait for the kill
}

// TestKillMidCommit kills a process while it writes a checkpoint and checks
// that the store then holds either the previous checkpoint or the new one,
// whole, and no leftovers.
func TestKillMidCommit(t *testing.T) {
	if dir := os.Getenv(killDirEnv); dir != "" {
		killHelper(dir)
	}
	for _, tc := range []struct {
		at     string   // helper output line at which to kill
		latest []uint64 // acceptable outcomes
	}{
		{at: "put 5", latest: []uint64{1}},
		{at: "commit", latest: []uint64{1, 2}},
		{at: "done", latest: []uint64{2}},
	} {
		t.Run(strings.ReplaceAll(tc.at, " ", "-"), func(t *testing.T) {
			dir := t.TempDir()
			st, err := state.OpenBadger(dir, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := st.Begin(killJob, 1)
			w.Put("agg", "0", []byte("one"))
			if err := w.Commit(state.Meta{Plan: "1"}); err != nil {
				t.Fatal(err)
			}
			st.Close()

			killAt(t, dir, "helper: "+tc.at)

			st, err = state.OpenBadger(dir, state.Options{})
			if err != nil {
				t.Fatalf("reopen after kill: %v", err)
			}
			defer st.Close()
			cp, err := st.Latest(killJob)
			if err != nil {
				t.Fatalf("Latest after kill: %v", err)
			}
			t.Logf("latest checkpoint after kill: %d", cp.ID())
			if !slices.Contains(tc.latest, cp.ID()) {
				t.Fatalf("Latest after kill at %q = %d, want one of %v", tc.at, cp.ID(), tc.latest)
			}
			want := map[string][]byte{"0": []byte("one")}
			if cp.ID() == 2 {
				want = map[string][]byte{}
				for i := range killValues {
					want[fmt.Sprint(i)] = blob(uint64(100+i), killSize)
				}
			}
			n := 0
			err = cp.Scan("agg", func(key string, value []byte) error {
				if !bytes.Equal(value, want[key]) {
					t.Errorf("checkpoint %d key %q: wrong value", cp.ID(), key)
				}
				n++
				return nil
			})
			if err != nil || n != len(want) || cp.Meta().Plan != fmt.Sprint(cp.ID()) {
				t.Errorf("checkpoint %d: Scan read %d values, want %d; %v", cp.ID(), n, len(want), err)
			}
			if got, err := state.CountValues(st); err != nil || got != len(want) {
				t.Errorf("store holds %d values, want %d (%v)", got, len(want), err)
			}
			if cp.ID() == 1 {
				// The interrupted id is free for the next attempt.
				w, err := st.Begin(killJob, 2)
				if err != nil {
					t.Fatal(err)
				}
				w.Abort()
			}
		})
	}
}

// killAt runs killHelper on dir in a child process and SIGKILLs it as soon
// as it prints line.
func killAt(t *testing.T, dir, line string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillMidCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var seen []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if sc.Text() == line {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, out)
			return
		}
	}
	cmd.Process.Kill()
	t.Fatalf("helper ended without printing %q; it printed:\n%s", line, strings.Join(seen, "\n"))
}
