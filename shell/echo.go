//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package shell

import (
	"os"

	"golang.org/x/sys/unix"
)

// quietInput turns off the terminal's echo of keys typed while a statement has the
// screen: an Enter echoed into a live view would scroll it, and the view, redrawn over
// the lines it drew, would tear. The keys are not lost; they wait for the next prompt.
// Ctrl-C still interrupts (ISIG stays on).
func quietInput(f *os.File) (restore func()) {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	old := *t
	t.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, t); err != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, &old) }
}
