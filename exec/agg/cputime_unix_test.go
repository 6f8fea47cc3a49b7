//go:build unix

package agg

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used. The development machines are shared
// by several builds, so wall-clock rates swing with their load; adds per CPU second
// ("per core") are steadier.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
