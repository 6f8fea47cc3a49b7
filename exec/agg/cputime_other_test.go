//go:build !unix

package agg

import "time"

// processCPU is not measured on this platform; benchmarks then report wall-clock rates only.
func processCPU() time.Duration { return 0 }
