//go:build !unix

package workbench

import "os"

// lockFile is a no-op where flock(2) is not: two processes on one data dir
// are then not refused.
func lockFile(*os.File) error { return nil }
