//go:build !unix

package mcp

import "os/exec"

// ownGroup leaves cmd as it is: without process groups, only the program
// itself is ended.
func ownGroup(*exec.Cmd) {}

// killGroup kills the program.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// termGroup kills the program: there is no gentler signal to send.
func termGroup(cmd *exec.Cmd) { killGroup(cmd) }
