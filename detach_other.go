//go:build !unix && !windows

package main

import "os/exec"

// detach has nothing to set where there are no sessions or process groups.
func detach(cmd *exec.Cmd) {}
