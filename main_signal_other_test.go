//go:build !unix

package main

import "github.com/rogpeppe/go-internal/testscript"

// Scripts that stop a watcher run on Linux only ([!linux] skip).
func cmdWatchSignal(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("watchsignal: no STOP and CONT signals on this system")
}
