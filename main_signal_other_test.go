//go:build !unix

package main

import "github.com/rogpeppe/go-internal/testscript"

func cmdWatchSignal(ts *testscript.TestScript, neg bool, args []string) {
	ts.Skip("no STOP and CONT signals here")
}
