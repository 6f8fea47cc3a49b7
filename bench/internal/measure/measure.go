// Package measure runs a benchmark's child processes and reads what they cost: wall
// time, CPU time (user + system) and peak resident memory, from the kernel's resource
// usage of the child, so that every benchmark command measures pipesql and its baseline
// the same way. It also builds the pipesql binary a benchmark runs.
package measure

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Result is what one run of a child process cost.
type Result struct {
	Wall, CPU time.Duration
	MaxRSS    int64 // bytes
}

// Run runs name with args, discarding its standard output and copying its standard error
// to ours, and returns what it cost. A child that fails returns its error and the tail
// of its standard error.
func Run(name string, args ...string) (Result, error) {
	var tail bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = io.MultiWriter(os.Stderr, &lastBytes{buf: &tail, max: 4096})
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, bytes.TrimSpace(tail.Bytes()))
	}
	usage := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return Result{
		Wall:   wall,
		CPU:    time.Duration(usage.Utime.Nano() + usage.Stime.Nano()),
		MaxRSS: usage.Maxrss * 1024,
	}, nil
}

// BuildPipesql builds ./cmd/pipesql (run from the module root) into dir and returns the path.
func BuildPipesql(dir string) (string, error) {
	binary := filepath.Join(dir, "pipesql")
	build := exec.Command("go", "build", "-o", binary, "./cmd/pipesql")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building pipesql: %w", err)
	}
	return binary, nil
}

// lastBytes keeps the last max bytes written to it.
type lastBytes struct {
	buf *bytes.Buffer
	max int
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.buf.Write(p)
	if over := l.buf.Len() - l.max; over > 0 {
		l.buf.Next(over)
		rest := append([]byte(nil), l.buf.Bytes()...)
		l.buf.Reset()
		l.buf.Write(rest)
	}
	return len(p), nil
}
