//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package agg

import "syscall"

// mapAnon maps size bytes of private, zeroed memory. The kernel backs pages only once
// they are written, so the untouched end of an arena chunk costs no RSS.
func mapAnon(size int, random bool) ([]byte, bool) {
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	if random {
		adviseHugePages(mem)
	}
	return mem, true
}

// unmap returns a mapping from mapAnon to the system. Munmap of a mapping this package
// made can only fail on a programming error, which would then fault on the next use
// anyway; the address space is what is lost.
func unmap(mem []byte) { _ = syscall.Munmap(mem) }
