//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reme-dev/reme/jobs/llm/llmtest"
)

// longTermRun is auto_memory once the card is written: only the long-term
// pass is left, and the fake model has it write one entry.
func longTermRun(t *testing.T, root string, env ...string) *exec.Cmd {
	var replies []llmtest.FakeReply
	err := json.Unmarshal([]byte(`[
 {"tool_calls":[{"name":"memory_write","arguments":{"type":"project","name":"backup-schedule","description":"Nightly backups at 02:00 UTC, kept 30 days.","content":"Decision: the nightly backup runs at 02:00 UTC and is kept 30 days.\n"}}]},
 {"text":"Saved the backup decision."}
]`), &replies)
	if err != nil {
		t.Fatal(err)
	}
	return modelRun(t, root, replies, env...)
}

// TestLongTermPassKilledAtEveryStep kills the long-term pass (SIGKILL)
// after each journaled step in turn: the next command rolls the pass back
// to the workspace as the card left it, its messages stay pending for the
// pass, and the next call gives the same entry, MEMORY.md and index as an
// uninterrupted one.
func TestLongTermPassKilledAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	withCard := func() string {
		root := memoryWorkspace(t)
		if out, err := memoryRun(t, root).CombinedOutput(); err != nil {
			t.Fatalf("auto_memory (card): %v\n%s", err, out)
		}
		return root
	}
	ref := withCard()
	before := withoutSession(mustTreeSums(t, ref))
	if out, err := longTermRun(t, ref).CombinedOutput(); err != nil || !strings.Contains(string(out), "long-term: created memory/entries/backup-schedule.md") {
		t.Fatalf("long-term pass: %v\n%s", err, out)
	}
	want := withoutSession(mustTreeSums(t, ref))
	if !strings.Contains(want, "memory/entries/backup-schedule.md") || !strings.Contains(want, "MEMORY.md") {
		t.Fatalf("the reference run wrote no entry:\n%s", want)
	}
	killed := 0
	for n := 1; n < 100; n++ {
		root := withCard()
		out, err := longTermRun(t, root, fmt.Sprintf("REME_CRASH_AT=#%d", n)).CombinedOutput()
		if err == nil {
			break
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("step %d: the pass failed instead of being killed: %v\n%s", n, err, out)
		}
		killed++
		hist, err := remeCmd(root, nil, "history").CombinedOutput()
		if err != nil {
			t.Fatalf("step %d: the next command failed: %v\n%s", n, err, hist)
		}
		if !strings.Contains(string(hist), "rolled_back") {
			t.Errorf("step %d: the journal does not say the pass was rolled back:\n%s", n, hist)
		}
		if got := withoutSession(mustTreeSums(t, root)); got != before {
			t.Errorf("step %d: workspace after recovery differs from the card's:\n%s", n, cmp.Diff(before, got))
		}
		if openRuns(t, root) != 0 {
			t.Errorf("step %d: a run is still open", n)
		}
		if out, err := longTermRun(t, root).CombinedOutput(); err != nil || !strings.Contains(string(out), "long-term: created") {
			t.Fatalf("step %d: the pass after recovery: %v\n%s", n, err, out)
		}
		if got := withoutSession(mustTreeSums(t, root)); got != want {
			t.Errorf("step %d: the entry after recovery differs from an uninterrupted run:\n%s", n, cmp.Diff(want, got))
		}
	}
	t.Logf("killed at %d steps", killed)
	if killed < 2 {
		t.Fatalf("only %d steps were tried", killed)
	}
}
