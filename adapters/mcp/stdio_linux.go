//go:build linux

package mcp

import (
	"os/exec"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until cmd's process has exited, leaving it unreaped
// (WNOWAIT): its pid, and so its process group's id, stays reserved
// until cmd.Wait. It reports whether it waited so.
func awaitExit(cmd *exec.Cmd) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
