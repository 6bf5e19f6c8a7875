package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target when GOGC is not set. The
// server's live heap is small and a streamed answer allocates per chunk
// (the model SDK decodes every event), so at Go's default of 100 the
// collector ran often enough to be a third of the server's CPU per
// streamed delta (BenchmarkServerCPU: about 44 µs per delta at 100, 30 at
// 400). A heap a few times the live one is a good trade on any machine
// this runs on; GOGC (and GOMEMLIMIT) still decide when set.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless the environment sets GOGC.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
