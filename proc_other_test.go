//go:build !unix

package main

import "os"

// processGone reports whether a process has ended, as far as this system
// tells without being its parent.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
