package main

import (
	"os/exec"
	"syscall"
)

// detach starts the child without a console, in a process group of its own,
// so that it outlives the hook.
func detach(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}
