//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package agg

// Without mmap every region lives on the Go heap (see offheap.go): correct, but counted
// by the GC's pacer.

func mapAnon(int, bool) ([]byte, bool) { return nil, false }

func unmap([]byte) {}
