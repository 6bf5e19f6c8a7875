//go:build unix

package workbench

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; it lasts until f
// is closed (or the process ends, however it ends).
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
