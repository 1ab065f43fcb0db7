//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdWatchSignal sends STOP or CONT to the watcher of a workspace (its pid
// is in metadata/watch/state.json): a stopped watcher reads no events.
func cmdWatchSignal(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || (args[0] != "STOP" && args[0] != "CONT") {
		ts.Fatalf("usage: watchsignal STOP|CONT WORKSPACE")
	}
	b, err := os.ReadFile(ts.MkAbs(filepath.Join(args[1], "metadata", "watch", "state.json")))
	ts.Check(err)
	var st struct{ PID int }
	ts.Check(json.Unmarshal(b, &st))
	sig := syscall.SIGSTOP
	if args[0] == "CONT" {
		sig = syscall.SIGCONT
	}
	ts.Check(syscall.Kill(st.PID, sig))
}
