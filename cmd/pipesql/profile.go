package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiling writes a CPU profile to $PIPESQL_CPUPROFILE and, at the end, a heap
// profile to $PIPESQL_MEMPROFILE, for `go tool pprof`. The returned function stops both.
func startProfiling(stderr io.Writer) func() {
	var stops []func()
	if path := os.Getenv("PIPESQL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pipesql: PIPESQL_CPUPROFILE: %v\n", err)
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("PIPESQL_MEMPROFILE"); path != "" {
		stops = append(stops, func() {
			f, err := os.Create(path)
			if err == nil {
				runtime.GC()
				err = pprof.WriteHeapProfile(f)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "pipesql: PIPESQL_MEMPROFILE: %v\n", err)
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
