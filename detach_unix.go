//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach puts the child in a session of its own: it outlives the hook and
// is not killed with the hook's process group.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
